//! P4Runtime entities <-> switch tables: tests on tests/programs/features.p4 compiled by the
//! workspace compiler, with packets run through the switch in memory.

use p4::update::Type as T;
use prost::Message;
use sdnperf_p4rt::device::{Device, Event};
use sdnperf_p4rt::pipe::{u128_to_bytes, Pipe};
use sdnperf_p4rt::proto::p4::config::v1 as cfg;
use sdnperf_p4rt::proto::p4::v1 as p4;
use sdnperf_p4rt::proto::p4::v1::entity::Entity as E;
use tonic::Code;

fn compile() -> (cfg::P4Info, String) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/features.p4");
    let o = p4c::compile_file(&path, &p4c::Options::default()).expect("features.p4 compiles");
    (
        cfg::P4Info::decode(o.p4info_binary.as_slice()).unwrap(),
        o.bmv2_json,
    )
}

struct Fx {
    dev: Device,
    info: cfg::P4Info,
}

impl Fx {
    fn new() -> Fx {
        let (info, json) = compile();
        let prog = sdnperf_switch::json::load_str(&json).unwrap();
        let pipe = Pipe::build(info.clone(), json.into_bytes(), Some(7), &prog).unwrap();
        let mut dev = Device::new(Some(255));
        dev.commit(pipe, prog, false);
        Fx { dev, info }
    }
    fn id(&self, name: &str) -> u32 {
        let i = &self.info;
        let pre = i
            .tables
            .iter()
            .map(|x| &x.preamble)
            .chain(i.actions.iter().map(|x| &x.preamble))
            .chain(i.action_profiles.iter().map(|x| &x.preamble))
            .chain(i.counters.iter().map(|x| &x.preamble))
            .chain(i.direct_counters.iter().map(|x| &x.preamble))
            .chain(i.meters.iter().map(|x| &x.preamble))
            .chain(i.registers.iter().map(|x| &x.preamble))
            .chain(i.digests.iter().map(|x| &x.preamble))
            .flatten()
            .find(|p| p.name == name || p.name.ends_with(&format!(".{}", name)))
            .unwrap_or_else(|| panic!("no {}", name));
        pre.id
    }
    /// A ctl (text API) command on the same switch, then the sync the server runs after one.
    fn ctl(&mut self, line: &str) -> String {
        let out = sdnperf_switch::ctl::execute(self.dev.sw.as_mut().unwrap(), line).unwrap();
        self.dev.sync_from_switch();
        out
    }
    fn w(&mut self, t: T, e: E) -> Result<(), (Code, String)> {
        self.dev
            .write(t as i32, &p4::Entity { entity: Some(e) })
            .map_err(|e| (e.code, e.msg))
    }
    fn read(&self, e: E) -> Vec<E> {
        let mut out = vec![];
        self.dev
            .read(&p4::Entity { entity: Some(e) }, &mut out)
            .unwrap();
        out.into_iter().map(|x| x.entity.unwrap()).collect()
    }
    fn action(&self, name: &str, params: &[u128]) -> p4::TableAction {
        p4::TableAction {
            r#type: Some(p4::table_action::Type::Action(p4::Action {
                action_id: self.id(name),
                params: params
                    .iter()
                    .enumerate()
                    .map(|(i, v)| p4::action::Param {
                        param_id: i as u32 + 1,
                        value: u128_to_bytes(*v),
                    })
                    .collect(),
            })),
        }
    }
    /// Writes cell `index` of register `reg` (bytes of a bitstring).
    fn write_register(&mut self, reg: u32, index: i64, bytes: &[u8]) -> Result<(), (Code, String)> {
        self.w(
            T::Modify,
            E::RegisterEntry(p4::RegisterEntry {
                register_id: reg,
                index: Some(p4::Index { index }),
                data: Some(p4::P4Data {
                    data: Some(p4::p4_data::Data::Bitstring(bytes.to_vec())),
                }),
            }),
        )
    }
    /// The bitstring P4Runtime reads from cell `index` of register `reg`.
    fn read_register(&self, reg: u32, index: i64) -> Vec<u8> {
        let E::RegisterEntry(e) = &self.read(E::RegisterEntry(p4::RegisterEntry {
            register_id: reg,
            index: Some(p4::Index { index }),
            data: None,
        }))[0] else {
            panic!()
        };
        match e.data.as_ref().and_then(|d| d.data.clone()) {
            Some(p4::p4_data::Data::Bitstring(b)) => b,
            other => panic!("register data {:?}", other),
        }
    }
    /// Runs a frame through the switch; returns (egress port, bytes) of each output.
    fn packet(&mut self, port: u32, bytes: &[u8]) -> Vec<(u32, Vec<u8>)> {
        let sw = self.dev.sw.as_mut().unwrap();
        let now = sw.now_ns();
        sw.receive(port, bytes, None, now);
        sw.service(now);
        let mut out = vec![];
        for j in sw.take_ready() {
            let mut v = vec![];
            j.out_bytes(&mut v);
            out.push((j.egress_port, v));
            sw.recycle(j);
        }
        out
    }
}

fn exact(id: u32, v: &[u8]) -> p4::FieldMatch {
    p4::FieldMatch {
        field_id: id,
        field_match_type: Some(p4::field_match::FieldMatchType::Exact(
            p4::field_match::Exact { value: v.to_vec() },
        )),
    }
}
fn lpm(id: u32, v: u32, len: i32) -> p4::FieldMatch {
    p4::FieldMatch {
        field_id: id,
        field_match_type: Some(p4::field_match::FieldMatchType::Lpm(p4::field_match::Lpm {
            value: v.to_be_bytes().to_vec(),
            prefix_len: len,
        })),
    }
}
fn ternary(id: u32, v: u128, m: u128) -> p4::FieldMatch {
    p4::FieldMatch {
        field_id: id,
        field_match_type: Some(p4::field_match::FieldMatchType::Ternary(
            p4::field_match::Ternary {
                value: u128_to_bytes(v),
                mask: u128_to_bytes(m),
            },
        )),
    }
}
fn range(id: u32, lo: u128, hi: u128) -> p4::FieldMatch {
    p4::FieldMatch {
        field_id: id,
        field_match_type: Some(p4::field_match::FieldMatchType::Range(
            p4::field_match::Range {
                low: u128_to_bytes(lo),
                high: u128_to_bytes(hi),
            },
        )),
    }
}
fn optional(id: u32, v: u128) -> p4::FieldMatch {
    p4::FieldMatch {
        field_id: id,
        field_match_type: Some(p4::field_match::FieldMatchType::Optional(
            p4::field_match::Optional {
                value: u128_to_bytes(v),
            },
        )),
    }
}

const MAC_A: [u8; 6] = [0, 0, 0, 0, 0, 0xa];
const MAC_B: [u8; 6] = [0, 0, 0, 0, 0, 0xb];

fn eth(dst: [u8; 6], src: [u8; 6], ethertype: u16, rest: &[u8]) -> Vec<u8> {
    let mut v = dst.to_vec();
    v.extend_from_slice(&src);
    v.extend_from_slice(&ethertype.to_be_bytes());
    v.extend_from_slice(rest);
    v.resize(v.len().max(60), 0);
    v
}

fn ipv4(dst: [u8; 6], src_ip: u32, dst_ip: u32, ttl: u8, proto: u8) -> Vec<u8> {
    let mut ip = vec![0x45, 0, 0, 20, 0, 0, 0, 0, ttl, proto, 0, 0];
    ip.extend_from_slice(&src_ip.to_be_bytes());
    ip.extend_from_slice(&dst_ip.to_be_bytes());
    eth(dst, MAC_A, 0x0800, &ip)
}

fn te(table_id: u32, m: Vec<p4::FieldMatch>, a: Option<p4::TableAction>, prio: i32) -> E {
    E::TableEntry(p4::TableEntry {
        table_id,
        r#match: m,
        action: a,
        priority: prio,
        ..Default::default()
    })
}

#[test]
fn pipeline_maps_every_p4info_object() {
    let f = Fx::new();
    let p = f.dev.pipe.as_ref().unwrap();
    assert_eq!(p.tables.len(), 5);
    assert_eq!(p.cookie, Some(7));
    assert!(p.tables[&f.id("acl")].needs_priority);
    assert!(p.tables[&f.id("ipv4_lpm")].idle_timeout);
    assert!(p.tables[&f.id("ipv4_lpm")].direct_counter.is_some());
    assert!(p.tables[&f.id("ecmp")].profile.is_some());
    assert_eq!(p.packet_in.as_ref().unwrap().bytes(), 2);
    assert_eq!(p.digests.len(), 1);
}

#[test]
fn pipeline_rejects_p4info_that_does_not_match_the_program() {
    let (mut info, json) = compile();
    info.tables[0].preamble.as_mut().unwrap().name = "MyIngress.nope".into();
    info.tables[0].preamble.as_mut().unwrap().alias = "nope".into();
    let prog = sdnperf_switch::json::load_str(&json).unwrap();
    let e = Pipe::build(info, vec![], None, &prog).err().unwrap();
    assert!(e.contains("nope"), "{}", e);
}

#[test]
fn exact_insert_read_modify_delete_and_errors() {
    let mut f = Fx::new();
    let dmac = f.id("dmac");
    let fwd = f.action("forward", &[2]);
    f.w(
        T::Insert,
        te(dmac, vec![exact(1, &MAC_B)], Some(fwd.clone()), 0),
    )
    .unwrap();
    // forwarded by the entry
    let out = f.packet(1, &eth(MAC_B, MAC_A, 0x88b5, &[]));
    assert_eq!(out.iter().map(|o| o.0).collect::<Vec<_>>(), vec![2]);
    // canonical read: leading zeros stripped
    let r = f.read(te(dmac, vec![], None, 0));
    assert_eq!(r.len(), 1);
    let E::TableEntry(e) = &r[0] else { panic!() };
    assert_eq!(e.r#match, vec![exact(1, &[0xb])]);
    assert_eq!(e.action, Some(fwd.clone()));
    // duplicate, wildcard read over all tables
    assert_eq!(
        f.w(
            T::Insert,
            te(dmac, vec![exact(1, &[0xb])], Some(fwd.clone()), 0)
        )
        .unwrap_err()
        .0,
        Code::AlreadyExists
    );
    assert_eq!(f.read(te(0, vec![], None, 0)).len(), 1);
    // malformed: value wider than 48 bits, unknown field, missing exact field, priority on exact table
    for bad in [
        te(
            dmac,
            vec![exact(1, &[1, 0, 0, 0, 0, 0, 0])],
            Some(fwd.clone()),
            0,
        ),
        te(dmac, vec![exact(9, &[1])], Some(fwd.clone()), 0),
        te(dmac, vec![], Some(fwd.clone()), 0),
        te(dmac, vec![exact(1, &[3])], Some(fwd.clone()), 5),
        te(
            dmac,
            vec![exact(1, &[3])],
            Some(f.action("route", &[1, 2])),
            0,
        ),
        te(
            dmac,
            vec![exact(1, &[3])],
            Some(f.action("forward", &[0x200])),
            0,
        ),
        te(dmac, vec![exact(1, &[3])], None, 0),
    ] {
        assert_eq!(f.w(T::Insert, bad).unwrap_err().0, Code::InvalidArgument);
    }
    assert_eq!(f.dev.num_entries(dmac), 1);
    assert_eq!(
        f.dev
            .sw
            .as_ref()
            .unwrap()
            .table(f.dev.pipe.as_ref().unwrap().tables[&dmac].sw)
            .num_entries,
        1
    );
    // modify, then delete
    f.w(
        T::Modify,
        te(
            dmac,
            vec![exact(1, &MAC_B)],
            Some(f.action("forward", &[3])),
            0,
        ),
    )
    .unwrap();
    assert_eq!(f.packet(1, &eth(MAC_B, MAC_A, 0x88b5, &[]))[0].0, 3);
    assert_eq!(
        f.w(
            T::Modify,
            te(dmac, vec![exact(1, &MAC_A)], Some(fwd.clone()), 0)
        )
        .unwrap_err()
        .0,
        Code::NotFound
    );
    f.w(T::Delete, te(dmac, vec![exact(1, &MAC_B)], None, 0))
        .unwrap();
    assert_eq!(
        f.w(T::Delete, te(dmac, vec![exact(1, &MAC_B)], None, 0))
            .unwrap_err()
            .0,
        Code::NotFound
    );
    assert!(f.read(te(dmac, vec![], None, 0)).is_empty());
    // unknown table
    assert_eq!(
        f.w(T::Insert, te(12345, vec![], Some(fwd), 0))
            .unwrap_err()
            .0,
        Code::NotFound
    );
}

#[test]
fn lpm_canonical_form_and_longest_prefix() {
    let mut f = Fx::new();
    let t = f.id("ipv4_lpm");
    let route = |f: &Fx, port| Some(f.action("route", &[0x0200_0000_0001, port]));
    assert_eq!(
        f.w(
            T::Insert,
            te(t, vec![lpm(1, 0x0a00_0001, 24)], route(&f, 1), 0)
        )
        .unwrap_err()
        .0,
        Code::InvalidArgument
    ); // host bits set
    assert_eq!(
        f.w(T::Insert, te(t, vec![lpm(1, 0, 0)], route(&f, 1), 0))
            .unwrap_err()
            .0,
        Code::InvalidArgument
    ); // /0 must be omitted
    f.w(
        T::Insert,
        te(t, vec![lpm(1, 0x0a00_0000, 8)], route(&f, 1), 0),
    )
    .unwrap();
    f.w(
        T::Insert,
        te(t, vec![lpm(1, 0x0a01_0200, 24)], route(&f, 2), 0),
    )
    .unwrap();
    f.w(T::Insert, te(t, vec![], route(&f, 4), 0)).unwrap(); // default route: field omitted
    let port_of = |f: &mut Fx, ip| {
        f.packet(1, &ipv4([9; 6], 1, ip, 64, 17))
            .iter()
            .filter(|o| o.0 != 255)
            .map(|o| o.0)
            .collect::<Vec<_>>()
    };
    assert_eq!(port_of(&mut f, 0x0a01_0203), vec![2]);
    assert_eq!(port_of(&mut f, 0x0a02_0203), vec![1]);
    assert_eq!(port_of(&mut f, 0x0b02_0203), vec![4]);
    assert_eq!(f.read(te(t, vec![], None, 0)).len(), 3);
    assert_eq!(
        f.read(te(t, vec![lpm(1, 0x0a01_0200, 24)], None, 0)).len(),
        1
    );
}

#[test]
fn ternary_range_optional_priorities() {
    let mut f = Fx::new();
    let t = f.id("acl");
    let m = |src: (u128, u128), ttl: (u128, u128), proto: Option<u128>| {
        let mut v = vec![
            exact(1, &[8, 0]),
            ternary(2, src.0, src.1),
            range(3, ttl.0, ttl.1),
        ];
        if let Some(p) = proto {
            v.push(optional(4, p));
        }
        v
    };
    // priority is required; zero masks / full ranges must be omitted; value outside mask
    assert_eq!(
        f.w(
            T::Insert,
            te(
                t,
                m((0xa, 0xff), (1, 10), None),
                Some(f.action("forward", &[1])),
                0
            )
        )
        .unwrap_err()
        .0,
        Code::InvalidArgument
    );
    assert_eq!(
        f.w(
            T::Insert,
            te(
                t,
                m((0, 0), (1, 10), None),
                Some(f.action("forward", &[1])),
                1
            )
        )
        .unwrap_err()
        .0,
        Code::InvalidArgument
    );
    assert_eq!(
        f.w(
            T::Insert,
            te(
                t,
                m((0xa, 0xff), (0, 255), None),
                Some(f.action("forward", &[1])),
                1
            )
        )
        .unwrap_err()
        .0,
        Code::InvalidArgument
    );
    assert_eq!(
        f.w(
            T::Insert,
            te(
                t,
                m((0x1a, 0x0f), (1, 10), None),
                Some(f.action("forward", &[1])),
                1
            )
        )
        .unwrap_err()
        .0,
        Code::InvalidArgument
    );
    assert_eq!(
        f.w(
            T::Insert,
            te(
                t,
                m((0xa, 0xff), (10, 1), None),
                Some(f.action("forward", &[1])),
                1
            )
        )
        .unwrap_err()
        .0,
        Code::InvalidArgument
    );
    // low priority: any ttl 1..100 from MAC_A; high priority: same, protocol 6 only
    let low = vec![exact(1, &[8, 0]), ternary(2, 0xa, 0xff), range(3, 1, 100)];
    f.w(
        T::Insert,
        te(t, low.clone(), Some(f.action("forward", &[1])), 10),
    )
    .unwrap();
    f.w(
        T::Insert,
        te(
            t,
            m((0xa, 0xff), (1, 100), Some(6)),
            Some(f.action("forward", &[2])),
            20,
        ),
    )
    .unwrap();
    // same match, other priority: a different entry
    f.w(
        T::Insert,
        te(t, low.clone(), Some(f.action("forward", &[3])), 5),
    )
    .unwrap();
    let port = |f: &mut Fx, ttl, proto| {
        f.packet(1, &ipv4([9; 6], 1, 2, ttl, proto))
            .iter()
            .map(|o| o.0)
            .filter(|&p| p != 255)
            .collect::<Vec<_>>()
    };
    assert_eq!(port(&mut f, 64, 6), vec![2]); // higher priority number wins (P4Runtime)
    assert_eq!(port(&mut f, 64, 17), vec![1]);
    assert_eq!(f.read(te(t, vec![], None, 0)).len(), 3);
    let one = f.read(te(t, low.clone(), None, 10));
    assert_eq!(one.len(), 1);
    let E::TableEntry(e) = &one[0] else { panic!() };
    assert_eq!(
        e.r#match.len(),
        3,
        "the omitted optional field stays omitted"
    );
    assert_eq!(e.priority, 10);
    f.w(
        T::Delete,
        te(t, m((0xa, 0xff), (1, 100), Some(6)), None, 20),
    )
    .unwrap();
    assert_eq!(port(&mut f, 64, 6), vec![1]);
}

#[test]
fn default_entry_modify_read_reset() {
    let mut f = Fx::new();
    let t = f.id("dmac");
    let def = |a| {
        E::TableEntry(p4::TableEntry {
            table_id: t,
            action: a,
            is_default_action: true,
            ..Default::default()
        })
    };
    let r = f.read(def(None));
    let E::TableEntry(e) = &r[0] else { panic!() };
    assert_eq!(e.action, Some(f.action("to_cpu", &[])));
    assert_eq!(
        f.w(T::Insert, def(Some(f.action("forward", &[3]))))
            .unwrap_err()
            .0,
        Code::InvalidArgument
    );
    f.w(T::Modify, def(Some(f.action("forward", &[3]))))
        .unwrap();
    assert_eq!(f.packet(1, &eth(MAC_B, MAC_A, 0x88b5, &[]))[0].0, 3);
    let E::TableEntry(e) = &f.read(def(None))[0] else {
        panic!()
    };
    assert_eq!(e.action, Some(f.action("forward", &[3])));
    f.w(T::Modify, def(None)).unwrap(); // back to the program's default
    assert_eq!(f.packet(1, &eth(MAC_B, MAC_A, 0x88b5, &[]))[0].0, 255);
}

#[test]
fn action_profile_members_groups_and_indirect_entries() {
    let mut f = Fx::new();
    let prof = f.id("ecmp_sel");
    let t = f.id("ecmp");
    let act = |f: &Fx, p| match f.action("forward", &[p]).r#type {
        Some(p4::table_action::Type::Action(a)) => a,
        _ => unreachable!(),
    };
    for (m, p) in [(1u32, 5u128), (2, 6)] {
        f.w(
            T::Insert,
            E::ActionProfileMember(p4::ActionProfileMember {
                action_profile_id: prof,
                member_id: m,
                action: Some(act(&f, p)),
            }),
        )
        .unwrap();
    }
    let grp = |g, ms: &[u32]| {
        E::ActionProfileGroup(p4::ActionProfileGroup {
            action_profile_id: prof,
            group_id: g,
            members: ms
                .iter()
                .map(|&m| p4::action_profile_group::Member {
                    member_id: m,
                    weight: 1,
                    ..Default::default()
                })
                .collect(),
            max_size: 0,
        })
    };
    f.w(T::Insert, grp(10, &[1, 2])).unwrap();
    assert_eq!(f.w(T::Insert, grp(11, &[9])).unwrap_err().0, Code::NotFound);
    let ind = |g| {
        Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::ActionProfileGroupId(g)),
        })
    };
    f.w(T::Insert, te(t, vec![exact(1, &[10, 0, 0, 1])], ind(10), 0))
        .unwrap();
    f.w(
        T::Insert,
        te(
            t,
            vec![exact(1, &[10, 0, 0, 2])],
            Some(p4::TableAction {
                r#type: Some(p4::table_action::Type::ActionProfileMemberId(2)),
            }),
            0,
        ),
    )
    .unwrap();
    // a direct action in an indirect table is malformed
    assert_eq!(
        f.w(
            T::Insert,
            te(
                t,
                vec![exact(1, &[10, 0, 0, 3])],
                Some(f.action("forward", &[1])),
                0
            )
        )
        .unwrap_err()
        .0,
        Code::InvalidArgument
    );
    let mut seen = std::collections::BTreeSet::new();
    for src in 0..64u32 {
        for (p, _) in f.packet(1, &ipv4([9; 6], src, 0x0a00_0001, 64, 17)) {
            seen.insert(p);
        }
    }
    assert!(seen.contains(&5) && seen.contains(&6), "{:?}", seen);
    assert!(f
        .packet(1, &ipv4([9; 6], 1, 0x0a00_0002, 64, 17))
        .iter()
        .any(|o| o.0 == 6));
    // one-shot action set: hidden members/group, cleaned up on delete
    let fwd_id = f.id("forward");
    let set = |ports: &[u128]| {
        let act = |_: &(), p: u128| p4::Action {
            action_id: fwd_id,
            params: vec![p4::action::Param {
                param_id: 1,
                value: u128_to_bytes(p),
            }],
        };
        Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::ActionProfileActionSet(
                p4::ActionProfileActionSet {
                    action_profile_actions: ports
                        .iter()
                        .map(|&p| p4::ActionProfileAction {
                            action: Some(act(&(), p)),
                            weight: 1,
                            watch_kind: None,
                        })
                        .collect(),
                    ..Default::default()
                },
            )),
        })
    };
    let k = vec![exact(1, &[10, 0, 0, 9])];
    f.w(T::Insert, te(t, k.clone(), set(&[7, 8]), 0)).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for src in 0..64u32 {
        for (p, _) in f.packet(1, &ipv4([9; 6], src, 0x0a00_0009, 64, 17)) {
            seen.insert(p);
        }
    }
    assert!(seen.contains(&7) && seen.contains(&8), "{:?}", seen);
    f.w(T::Modify, te(t, k.clone(), set(&[9]), 0)).unwrap();
    assert!(f
        .packet(1, &ipv4([9; 6], 3, 0x0a00_0009, 64, 17))
        .iter()
        .any(|o| o.0 == 9));
    let E::TableEntry(e) = &f.read(te(t, k.clone(), None, 0))[0] else {
        panic!()
    };
    assert_eq!(e.action, set(&[9]));
    f.w(T::Delete, te(t, k, None, 0)).unwrap();
    let sw = f.dev.sw.as_ref().unwrap();
    let swp = sw.profile(f.dev.pipe.as_ref().unwrap().profiles[&f.id("ecmp_sel")].sw);
    assert_eq!(
        swp.members.iter().flatten().count(),
        2,
        "only the two real members remain"
    );
    assert_eq!(swp.groups.iter().flatten().count(), 1);
    // members in use cannot go
    assert_eq!(
        f.w(
            T::Delete,
            E::ActionProfileMember(p4::ActionProfileMember {
                action_profile_id: prof,
                member_id: 1,
                action: None
            })
        )
        .unwrap_err()
        .0,
        Code::FailedPrecondition
    );
    assert_eq!(
        f.read(E::ActionProfileMember(p4::ActionProfileMember {
            action_profile_id: prof,
            ..Default::default()
        }))
        .len(),
        2
    );
    assert_eq!(
        f.read(E::ActionProfileGroup(p4::ActionProfileGroup {
            action_profile_id: 0,
            ..Default::default()
        }))
        .len(),
        1
    );
}

#[test]
fn counters_direct_counters_registers_meters() {
    let mut f = Fx::new();
    let c = f.id("port_counter");
    f.packet(3, &eth(MAC_B, MAC_A, 0x88b5, &[]));
    f.packet(3, &eth(MAC_B, MAC_A, 0x88b5, &[]));
    let r = f.read(E::CounterEntry(p4::CounterEntry {
        counter_id: c,
        index: Some(p4::Index { index: 3 }),
        data: None,
    }));
    let E::CounterEntry(e) = &r[0] else { panic!() };
    assert_eq!(e.data.unwrap().packet_count, 2);
    assert_eq!(e.data.unwrap().byte_count, 120);
    assert_eq!(
        f.read(E::CounterEntry(p4::CounterEntry {
            counter_id: c,
            ..Default::default()
        }))
        .len(),
        64
    );
    f.w(
        T::Modify,
        E::CounterEntry(p4::CounterEntry {
            counter_id: c,
            index: Some(p4::Index { index: 3 }),
            data: Some(p4::CounterData {
                packet_count: 0,
                byte_count: 0,
            }),
        }),
    )
    .unwrap();
    let E::CounterEntry(e) = &f.read(E::CounterEntry(p4::CounterEntry {
        counter_id: c,
        index: Some(p4::Index { index: 3 }),
        data: None,
    }))[0] else {
        panic!()
    };
    assert_eq!(e.data.unwrap().packet_count, 0);
    assert_eq!(
        f.w(
            T::Modify,
            E::CounterEntry(p4::CounterEntry {
                counter_id: c,
                index: Some(p4::Index { index: 64 }),
                data: None
            })
        )
        .unwrap_err()
        .0,
        Code::OutOfRange
    );
    // direct counter of ipv4_lpm
    let t = f.id("ipv4_lpm");
    f.w(
        T::Insert,
        te(
            t,
            vec![lpm(1, 0x0a00_0000, 8)],
            Some(f.action("route", &[1, 1])),
            0,
        ),
    )
    .unwrap();
    f.packet(1, &ipv4([9; 6], 1, 0x0a00_0005, 64, 17));
    let r = f.read(E::DirectCounterEntry(p4::DirectCounterEntry {
        table_entry: Some(p4::TableEntry {
            table_id: t,
            ..Default::default()
        }),
        data: None,
    }));
    let E::DirectCounterEntry(e) = &r[0] else {
        panic!()
    };
    assert_eq!(e.data.unwrap().packet_count, 1);
    let mut q = p4::TableEntry {
        table_id: t,
        counter_data: Some(Default::default()),
        ..Default::default()
    };
    let E::TableEntry(e) = &f.read(E::TableEntry(q.clone()))[0] else {
        panic!()
    };
    assert_eq!(e.counter_data.unwrap().packet_count, 1);
    q.r#match = vec![lpm(1, 0x0a00_0000, 8)];
    f.w(
        T::Modify,
        E::DirectCounterEntry(p4::DirectCounterEntry {
            table_entry: Some(q.clone()),
            data: Some(p4::CounterData {
                packet_count: 100,
                byte_count: 5,
            }),
        }),
    )
    .unwrap();
    let E::TableEntry(e) = &f.read(E::TableEntry(q))[0] else {
        panic!()
    };
    assert_eq!(e.counter_data.unwrap().packet_count, 100);
    // register
    let reg = f.id("reg");
    assert_eq!(f.read_register(reg, 0), vec![1]);
    f.write_register(reg, 5, &[0x12, 0x34]).unwrap();
    assert_eq!(f.read_register(reg, 5), vec![0x12, 0x34]);
    assert_eq!(
        f.write_register(reg, 1, &[1, 0, 0, 0, 0]).unwrap_err().0,
        Code::InvalidArgument
    );
    // meter config
    let m = f.id("port_meter");
    let mc = p4::MeterConfig {
        cir: 1000,
        cburst: 10,
        pir: 2000,
        pburst: 20,
        eburst: 0,
    };
    f.w(
        T::Modify,
        E::MeterEntry(p4::MeterEntry {
            meter_id: m,
            index: Some(p4::Index { index: 2 }),
            config: Some(mc),
            counter_data: None,
        }),
    )
    .unwrap();
    let E::MeterEntry(e) = &f.read(E::MeterEntry(p4::MeterEntry {
        meter_id: m,
        index: Some(p4::Index { index: 2 }),
        ..Default::default()
    }))[0] else {
        panic!()
    };
    assert_eq!(e.config, Some(mc));
}

#[test]
fn multicast_groups_and_clone_sessions() {
    use p4::packet_replication_engine_entry::Type as P;
    let mut f = Fx::new();
    let rep = |port: u32, inst| p4::Replica {
        instance: inst,
        backup_replicas: vec![],
        port_kind: Some(p4::replica::PortKind::Port(u128_to_bytes(port as u128))),
    };
    let mg = |g, reps: Vec<p4::Replica>| {
        E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry {
            r#type: Some(P::MulticastGroupEntry(p4::MulticastGroupEntry {
                multicast_group_id: g,
                replicas: reps,
                metadata: vec![],
            })),
        })
    };
    f.w(T::Insert, mg(1, vec![rep(1, 0), rep(2, 0), rep(3, 1)]))
        .unwrap();
    // the switch's typed errors (GroupExists, NoMulticastGroup), P4Runtime's codes
    assert_eq!(
        f.w(T::Insert, mg(1, vec![])).unwrap_err(),
        (
            Code::AlreadyExists,
            "multicast group 1 already exists".to_string()
        )
    );
    assert_eq!(
        f.w(T::Modify, mg(2, vec![rep(1, 0)])).unwrap_err(),
        (Code::NotFound, "no multicast group 2".to_string())
    );
    assert_eq!(
        f.w(T::Insert, mg(2, vec![rep(1, 0), rep(1, 0)]))
            .unwrap_err()
            .0,
        Code::InvalidArgument
    );
    f.w(T::Modify, mg(1, vec![rep(4, 0)])).unwrap();
    let r = f.read(mg(0, vec![]));
    assert_eq!(r.len(), 1);
    assert_eq!(f.dev.sw.as_ref().unwrap().pre().groups[&1].len(), 1);
    let cs = |s, reps| {
        E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry {
            r#type: Some(P::CloneSessionEntry(p4::CloneSessionEntry {
                session_id: s,
                replicas: reps,
                class_of_service: 0,
                packet_length_bytes: 100,
            })),
        })
    };
    f.w(T::Insert, cs(5, vec![rep(255, 0)])).unwrap();
    assert_eq!(
        f.dev.sw.as_ref().unwrap().pre().mirror(5).unwrap().port,
        Some(255)
    );
    assert_eq!(f.read(cs(0, vec![])).len(), 1);
    f.w(T::Delete, cs(5, vec![])).unwrap();
    f.w(T::Delete, mg(1, vec![])).unwrap();
    assert!(f.read(mg(0, vec![])).is_empty());
    assert!(f
        .dev
        .sw
        .as_ref()
        .unwrap()
        .pre()
        .mirror_sessions()
        .is_empty());
}

#[test]
fn packet_in_and_packet_out() {
    let mut f = Fx::new();
    // dmac misses -> to_cpu: the switch emits packet_in header + frame on port 255
    let frame = eth(MAC_B, MAC_A, 0x88b5, b"hello");
    let out = f.packet(7, &frame);
    let cpu = out.iter().find(|o| o.0 == 255).expect("to cpu");
    let pi = f.dev.packet_in(&cpu.1).unwrap();
    assert_eq!(pi.payload, frame);
    assert_eq!(
        pi.metadata[0],
        p4::PacketMetadata {
            metadata_id: 1,
            value: vec![7]
        }
    );
    // packet-out with egress_port 3: header prepended, the program sends it to port 3
    let po = p4::PacketOut {
        payload: frame.clone(),
        metadata: vec![p4::PacketMetadata {
            metadata_id: 1,
            value: vec![3],
        }],
    };
    let bytes = f.dev.packet_out_bytes(&po).unwrap();
    assert_eq!(&bytes[..2], &[0x01, 0x80]); // 9-bit port 3 then 7 pad bits
    let out = f.packet(255, &bytes);
    assert_eq!(out, vec![(3, frame.clone())]);
    let bad = p4::PacketOut {
        payload: frame,
        metadata: vec![p4::PacketMetadata {
            metadata_id: 1,
            value: vec![2, 0],
        }],
    };
    assert_eq!(
        f.dev.packet_out_bytes(&bad).unwrap_err().code,
        Code::InvalidArgument
    );
}

#[test]
fn digests_and_idle_timeouts() {
    let mut f = Fx::new();
    let d = f.id("learn_t");
    // without a DigestEntry nothing is sent
    f.packet(4, &eth(MAC_B, MAC_A, 0x88b5, &[]));
    let mut ev = vec![];
    f.dev.poll_events(&mut ev);
    assert!(ev.iter().all(|e| !matches!(e, Event::Digest(_))));
    f.w(
        T::Insert,
        E::DigestEntry(p4::DigestEntry {
            digest_id: d,
            config: Some(p4::digest_entry::Config {
                max_timeout_ns: 0,
                max_list_size: 1,
                ack_timeout_ns: 0,
            }),
        }),
    )
    .unwrap();
    f.packet(4, &eth(MAC_B, MAC_A, 0x88b5, &[]));
    f.packet(5, &eth(MAC_B, MAC_A, 0x88b5, &[]));
    let mut ev = vec![];
    f.dev.poll_events(&mut ev);
    let lists: Vec<&p4::DigestList> = ev
        .iter()
        .filter_map(|e| {
            if let Event::Digest(l) = e {
                Some(l)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(lists.len(), 2, "max_list_size 1");
    let p4::p4_data::Data::Struct(s) = lists[0].data[0].data.as_ref().unwrap() else {
        panic!()
    };
    assert_eq!(
        s.members[0].data,
        Some(p4::p4_data::Data::Bitstring(vec![0xa]))
    );
    assert_eq!(
        s.members[1].data,
        Some(p4::p4_data::Data::Bitstring(vec![4]))
    );
    // with an ack timeout, the same data is suppressed until acked
    f.w(
        T::Modify,
        E::DigestEntry(p4::DigestEntry {
            digest_id: d,
            config: Some(p4::digest_entry::Config {
                max_timeout_ns: 0,
                max_list_size: 10,
                ack_timeout_ns: 10_000_000_000,
            }),
        }),
    )
    .unwrap();
    let count = |f: &mut Fx| {
        let mut ev = vec![];
        f.dev.poll_events(&mut ev);
        ev.into_iter()
            .filter_map(|e| {
                if let Event::Digest(l) = e {
                    Some(l)
                } else {
                    None
                }
            })
            .collect::<Vec<_>>()
    };
    f.packet(4, &eth(MAC_B, MAC_A, 0x88b5, &[]));
    f.packet(4, &eth(MAC_B, MAC_A, 0x88b5, &[]));
    let l = count(&mut f);
    assert_eq!(l.len(), 1);
    assert_eq!(l[0].data.len(), 1, "duplicate within the batch suppressed");
    f.packet(4, &eth(MAC_B, MAC_A, 0x88b5, &[]));
    assert!(count(&mut f).is_empty(), "not acked yet");
    f.dev.digest_ack(d, l[0].list_id);
    f.packet(4, &eth(MAC_B, MAC_A, 0x88b5, &[]));
    assert_eq!(count(&mut f).len(), 1);
    // idle timeout on ipv4_lpm
    let t = f.id("ipv4_lpm");
    let mut e = p4::TableEntry {
        table_id: t,
        r#match: vec![lpm(1, 0x0a00_0000, 8)],
        action: Some(f.action("route", &[1, 1])),
        ..Default::default()
    };
    e.idle_timeout_ns = 30_000_000;
    f.w(T::Insert, E::TableEntry(e.clone())).unwrap();
    assert_eq!(
        f.w(
            T::Insert,
            te(
                f.id("dmac"),
                vec![exact(1, &[1])],
                Some(f.action("forward", &[1])),
                0
            )
        )
        .map(|_| ()),
        Ok(())
    );
    let mut no_idle = p4::TableEntry {
        table_id: f.id("dmac"),
        r#match: vec![exact(1, &[2])],
        action: Some(f.action("forward", &[1])),
        ..Default::default()
    };
    no_idle.idle_timeout_ns = 1;
    assert_eq!(
        f.w(T::Insert, E::TableEntry(no_idle)).unwrap_err().0,
        Code::InvalidArgument
    );
    std::thread::sleep(std::time::Duration::from_millis(80));
    let mut ev = vec![];
    f.dev.poll_events(&mut ev);
    let idle: Vec<&p4::IdleTimeoutNotification> = ev
        .iter()
        .filter_map(|e| {
            if let Event::IdleTimeoutNotification(n) = e {
                Some(n)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(idle.len(), 1);
    assert_eq!(idle[0].table_entry[0].r#match, e.r#match);
    // notified once; a hit re-arms it
    std::thread::sleep(std::time::Duration::from_millis(60));
    let mut ev = vec![];
    f.dev.poll_events(&mut ev);
    assert!(ev.is_empty());
    let q = p4::TableEntry {
        table_id: t,
        time_since_last_hit: Some(Default::default()),
        ..Default::default()
    };
    let E::TableEntry(r) = &f.read(E::TableEntry(q))[0] else {
        panic!()
    };
    assert!(r.time_since_last_hit.unwrap().elapsed_ns >= 100_000_000);
}

#[test]
fn reconcile_keeps_state_and_commit_clears_it() {
    let mut f = Fx::new();
    let t = f.id("dmac");
    f.w(
        T::Insert,
        te(
            t,
            vec![exact(1, &MAC_B)],
            Some(f.action("forward", &[2])),
            0,
        ),
    )
    .unwrap();
    let (info, json) = compile();
    let prog = sdnperf_switch::json::load_str(&json).unwrap();
    let pipe = Pipe::build(info.clone(), json.clone().into_bytes(), None, &prog).unwrap();
    f.dev.commit(pipe, prog, true);
    assert_eq!(f.packet(1, &eth(MAC_B, MAC_A, 0x88b5, &[]))[0].0, 2);
    let prog = sdnperf_switch::json::load_str(&json).unwrap();
    let pipe = Pipe::build(info, json.into_bytes(), None, &prog).unwrap();
    f.dev.commit(pipe, prog, false);
    assert!(f.read(te(t, vec![], None, 0)).is_empty());
}

/// Random, mostly malformed updates never panic and never break forwarding.
#[test]
fn random_updates_never_panic() {
    let mut f = Fx::new();
    let dmac = f.id("dmac");
    f.w(
        T::Insert,
        te(
            dmac,
            vec![exact(1, &MAC_B)],
            Some(f.action("forward", &[2])),
            0,
        ),
    )
    .unwrap();
    let tables: Vec<u32> = f
        .info
        .tables
        .iter()
        .map(|t| t.preamble.as_ref().unwrap().id)
        .chain([0, 7])
        .collect();
    let actions: Vec<u32> = f
        .info
        .actions
        .iter()
        .map(|a| a.preamble.as_ref().unwrap().id)
        .chain([0, 9])
        .collect();
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move |n: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % n.max(1)
    };
    for _ in 0..20_000 {
        let bytes =
            |r: &mut dyn FnMut(u64) -> u64| (0..r(20)).map(|_| r(256) as u8).collect::<Vec<u8>>();
        let nf = rnd(5);
        let mut m = vec![];
        for _ in 0..nf {
            let fid = rnd(6) as u32;
            use p4::field_match::FieldMatchType as M;
            let t = match rnd(6) {
                0 => M::Exact(p4::field_match::Exact {
                    value: bytes(&mut rnd),
                }),
                1 => M::Lpm(p4::field_match::Lpm {
                    value: bytes(&mut rnd),
                    prefix_len: rnd(80) as i32 - 10,
                }),
                2 => M::Ternary(p4::field_match::Ternary {
                    value: bytes(&mut rnd),
                    mask: bytes(&mut rnd),
                }),
                3 => M::Range(p4::field_match::Range {
                    low: bytes(&mut rnd),
                    high: bytes(&mut rnd),
                }),
                4 => M::Optional(p4::field_match::Optional {
                    value: bytes(&mut rnd),
                }),
                _ => M::Other(Default::default()),
            };
            m.push(p4::FieldMatch {
                field_id: fid,
                field_match_type: if rnd(10) == 0 { None } else { Some(t) },
            });
        }
        let params = (0..rnd(4))
            .map(|_| p4::action::Param {
                param_id: rnd(4) as u32,
                value: bytes(&mut rnd),
            })
            .collect();
        let action = match rnd(5) {
            0 => None,
            1 => Some(p4::TableAction {
                r#type: Some(p4::table_action::Type::ActionProfileMemberId(rnd(3) as u32)),
            }),
            2 => Some(p4::TableAction {
                r#type: Some(p4::table_action::Type::ActionProfileGroupId(rnd(3) as u32)),
            }),
            _ => Some(p4::TableAction {
                r#type: Some(p4::table_action::Type::Action(p4::Action {
                    action_id: actions[rnd(actions.len() as u64) as usize],
                    params,
                })),
            }),
        };
        let e = p4::TableEntry {
            table_id: tables[rnd(tables.len() as u64) as usize],
            r#match: m,
            action,
            priority: rnd(5) as i32 - 1,
            is_default_action: rnd(8) == 0,
            idle_timeout_ns: rnd(3) as i64 - 1,
            ..Default::default()
        };
        let ty = [T::Insert, T::Modify, T::Delete][rnd(3) as usize];
        let _ = f.dev.write(
            ty as i32,
            &p4::Entity {
                entity: Some(E::TableEntry(e.clone())),
            },
        );
        let mut out = vec![];
        let _ = f.dev.read(
            &p4::Entity {
                entity: Some(E::TableEntry(e)),
            },
            &mut out,
        );
    }
    // the entry written first may have been modified or deleted by the random stream, but
    // the switch still runs packets through the pipeline
    let _ = f.packet(1, &eth(MAC_B, MAC_A, 0x88b5, &[]));
    let _ = f.packet(1, &ipv4([9; 6], 1, 2, 64, 6));
}

#[test]
fn rollback_on_error_undoes_the_batch() {
    let mut f = Fx::new();
    let t = f.id("dmac");
    let up = |ty: T, e: E| p4::Update {
        r#type: ty as i32,
        entity: Some(p4::Entity { entity: Some(e) }),
    };
    f.w(
        T::Insert,
        te(t, vec![exact(1, &[1])], Some(f.action("forward", &[1])), 0),
    )
    .unwrap();
    f.w(
        T::Insert,
        te(t, vec![exact(1, &[2])], Some(f.action("forward", &[2])), 0),
    )
    .unwrap();
    let batch = vec![
        up(
            T::Insert,
            te(t, vec![exact(1, &[3])], Some(f.action("forward", &[3])), 0),
        ),
        up(
            T::Modify,
            te(t, vec![exact(1, &[1])], Some(f.action("forward", &[4])), 0),
        ),
        up(T::Delete, te(t, vec![exact(1, &[2])], None, 0)),
        up(
            T::Insert,
            te(t, vec![exact(1, &[1])], Some(f.action("forward", &[5])), 0),
        ), // duplicate: fails
        up(
            T::Insert,
            te(t, vec![exact(1, &[6])], Some(f.action("forward", &[6])), 0),
        ),
    ];
    let r = f.dev.write_batch(&batch, true);
    let codes: Vec<Code> = r
        .iter()
        .map(|x| x.as_ref().err().map(|e| e.code).unwrap_or(Code::Ok))
        .collect();
    assert_eq!(
        codes,
        vec![
            Code::Aborted,
            Code::Aborted,
            Code::Aborted,
            Code::AlreadyExists,
            Code::Aborted
        ]
    );
    let mut got: Vec<(Vec<u8>, p4::TableAction)> = f
        .read(te(t, vec![], None, 0))
        .into_iter()
        .map(|e| match e {
            E::TableEntry(e) => (e.r#match[0].encode_to_vec(), e.action.unwrap()),
            _ => unreachable!(),
        })
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].1, f.action("forward", &[1]));
    assert_eq!(got[1].1, f.action("forward", &[2]));
    // without rollback the good ones stay
    let r = f.dev.write_batch(&batch, false);
    assert_eq!(r.iter().filter(|x| x.is_ok()).count(), 4);
}

#[test]
fn parser_value_set_members() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../p4c/tests/corpus/ipv4_options.p4");
    let o = p4c::compile_file(&path, &p4c::Options::default()).unwrap();
    let info = cfg::P4Info::decode(o.p4info_binary.as_slice()).unwrap();
    let prog = sdnperf_switch::json::load_str(&o.bmv2_json).unwrap();
    let vs = info.value_sets[0].preamble.as_ref().unwrap().id;
    let pipe = Pipe::build(info, o.bmv2_json.into_bytes(), None, &prog).unwrap();
    let mut dev = Device::new(None);
    dev.commit(pipe, prog, false);
    let m = |v: &[u8]| p4::ValueSetMember {
        r#match: vec![exact(1, v)],
    };
    let ent = |members| p4::Entity {
        entity: Some(E::ValueSetEntry(p4::ValueSetEntry {
            value_set_id: vs,
            members,
        })),
    };
    dev.write(
        T::Modify as i32,
        &ent(vec![m(&[0x88, 0xb5]), m(&[0x12, 0x34])]),
    )
    .unwrap();
    assert_eq!(
        dev.sw.as_ref().unwrap().value_set(0),
        vec![(0x88b5, 0xffff), (0x1234, 0xffff)]
    );
    let mut out = vec![];
    dev.read(&ent(vec![]), &mut out).unwrap();
    let Some(E::ValueSetEntry(r)) = &out[0].entity else {
        panic!()
    };
    assert_eq!(r.members, vec![m(&[0x88, 0xb5]), m(&[0x12, 0x34])]);
    assert_eq!(
        dev.write(T::Modify as i32, &ent(vec![m(&[1]); 5]))
            .unwrap_err()
            .code,
        Code::ResourceExhausted
    );
    assert_eq!(
        dev.write(T::Insert as i32, &ent(vec![])).unwrap_err().code,
        Code::InvalidArgument
    );
    assert_eq!(
        dev.write(T::Modify as i32, &ent(vec![m(&[1, 0, 0])]))
            .unwrap_err()
            .code,
        Code::InvalidArgument
    );
}

#[test]
fn const_entries_are_readable_and_protected() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4c/tests/corpus/calc.p4");
    let o = p4c::compile_file(&path, &p4c::Options::default()).unwrap();
    let info = cfg::P4Info::decode(o.p4info_binary.as_slice()).unwrap();
    let prog = sdnperf_switch::json::load_str(&o.bmv2_json).unwrap();
    let t = info
        .tables
        .iter()
        .find(|t| t.preamble.as_ref().unwrap().name.ends_with("calculate"))
        .unwrap()
        .clone();
    let tid = t.preamble.as_ref().unwrap().id;
    let pipe = Pipe::build(info, o.bmv2_json.into_bytes(), None, &prog).unwrap();
    let mut dev = Device::new(None);
    dev.commit(pipe, prog, false);
    let mut out = vec![];
    dev.read(
        &p4::Entity {
            entity: Some(E::TableEntry(p4::TableEntry {
                table_id: tid,
                ..Default::default()
            })),
        },
        &mut out,
    )
    .unwrap();
    assert_eq!(out.len(), 5);
    let Some(E::TableEntry(e)) = &out[0].entity else {
        panic!()
    };
    assert!(e.is_const);
    let mut e = e.clone();
    e.is_const = false;
    let r = dev.write(
        T::Delete as i32,
        &p4::Entity {
            entity: Some(E::TableEntry(e)),
        },
    );
    if t.is_const_table {
        assert_eq!(r.unwrap_err().code, Code::PermissionDenied);
    }
}

/// ctl text commands and P4Runtime act on one switch without diverging: an entry ctl adds
/// is read by P4Runtime (and can be deleted by it), a ctl modify shows in the Read, and an
/// entry ctl deletes is gone from the Read.
#[test]
fn ctl_and_p4runtime_see_the_same_entries() {
    let mut f = Fx::new();
    let dmac = f.id("dmac");
    f.ctl("table_add dmac forward 0x00000000000b => 2");
    let r = f.read(te(dmac, vec![], None, 0));
    assert_eq!(r.len(), 1, "{:?}", r);
    let E::TableEntry(e) = &r[0] else { panic!() };
    assert_eq!(e.r#match, vec![exact(1, &[0xb])]);
    assert_eq!(e.action, Some(f.action("forward", &[2])));
    assert!(!e.is_const);
    // P4Runtime sees it as existing, and a ctl modify shows
    assert_eq!(
        f.w(
            T::Insert,
            te(
                dmac,
                vec![exact(1, &MAC_B)],
                Some(f.action("forward", &[3])),
                0
            )
        )
        .unwrap_err()
        .0,
        Code::AlreadyExists
    );
    f.ctl("table_modify dmac forward 0 => 3");
    let E::TableEntry(e) = &f.read(te(dmac, vec![], None, 0))[0] else {
        panic!()
    };
    assert_eq!(e.action, Some(f.action("forward", &[3])));
    // P4Runtime deletes what ctl added; ctl's next entry reuses the handle
    f.w(T::Delete, te(dmac, vec![exact(1, &MAC_B)], None, 0))
        .unwrap();
    assert!(f.read(te(dmac, vec![], None, 0)).is_empty());
    f.w(
        T::Insert,
        te(
            dmac,
            vec![exact(1, &MAC_A)],
            Some(f.action("forward", &[1])),
            0,
        ),
    )
    .unwrap();
    f.ctl("table_delete dmac 0");
    assert!(f.read(te(dmac, vec![], None, 0)).is_empty());
    assert_eq!(f.dev.num_entries(dmac), 0);
}

/// An entry ctl added is refused as a P4Runtime duplicate even before any sync (the
/// switch's table is the only copy of each entry): the switch's typed DuplicateEntry error
/// maps to ALREADY_EXISTS.
#[test]
fn a_duplicate_the_switch_finds_is_already_exists() {
    let mut f = Fx::new();
    let dmac = f.id("dmac");
    sdnperf_switch::ctl::execute(
        f.dev.sw.as_mut().unwrap(),
        "table_add dmac forward 0x00000000000b => 2",
    )
    .unwrap();
    let e = f
        .w(
            T::Insert,
            te(
                dmac,
                vec![exact(1, &MAC_B)],
                Some(f.action("forward", &[3])),
                0,
            ),
        )
        .unwrap_err();
    assert_eq!(e.0, Code::AlreadyExists, "{}", e.1);
    assert!(e.1.contains("duplicate entry"), "{}", e.1);
}

/// ctl and P4Runtime share one switch's registers both ways, and the action profile
/// members, groups, multicast groups and clone sessions P4Runtime writes are the switch's
/// own (the state ctl's commands change), through the switch's one control API.
#[test]
fn ctl_and_p4runtime_share_registers_profiles_and_the_pre() {
    use p4::packet_replication_engine_entry::Type as P;
    let mut f = Fx::new();
    let reg = f.id("reg");
    // ctl writes, P4Runtime reads
    f.ctl("register_write reg 3 0x42");
    assert_eq!(f.read_register(reg, 3), u128_to_bytes(0x42));
    // P4Runtime writes, ctl reads; ctl resets, P4Runtime reads zero
    f.write_register(reg, 5, &[0x12, 0x34]).unwrap();
    assert_eq!(f.ctl("register_read reg 5"), "4660");
    f.ctl("register_reset reg");
    assert_eq!(f.read_register(reg, 5), u128_to_bytes(0));

    // a P4Runtime member and group are the profile's, and ctl adds to the same profile
    let prof = f.id("ecmp_sel");
    let Some(p4::table_action::Type::Action(fwd5)) = f.action("forward", &[5]).r#type else {
        unreachable!()
    };
    f.w(
        T::Insert,
        E::ActionProfileMember(p4::ActionProfileMember {
            action_profile_id: prof,
            member_id: 1,
            action: Some(fwd5),
        }),
    )
    .unwrap();
    f.w(
        T::Insert,
        E::ActionProfileGroup(p4::ActionProfileGroup {
            action_profile_id: prof,
            group_id: 10,
            members: vec![p4::action_profile_group::Member {
                member_id: 1,
                weight: 1,
                ..Default::default()
            }],
            max_size: 0,
        }),
    )
    .unwrap();
    let sw = f.dev.sw.as_ref().unwrap();
    let pi = sw.program().profile_by_name("ecmp_sel").unwrap();
    let forward = sw.program().action_by_name("forward").unwrap() as u32;
    let members: Vec<_> = sw.profile(pi).members.iter().flatten().collect();
    assert_eq!(members.len(), 1);
    assert_eq!(members[0].0, forward);
    assert_eq!(&*members[0].1, &[5]);
    assert_eq!(
        sw.profile(pi).groups.iter().flatten().collect::<Vec<_>>(),
        vec![&vec![0]]
    );
    assert_eq!(
        f.ctl("act_prof_create_member ecmp_sel forward 7"),
        "Member has been created with handle 1"
    );
    f.ctl("act_prof_add_member_to_group ecmp_sel 1 0");
    let sw = f.dev.sw.as_ref().unwrap();
    assert_eq!(sw.profile(pi).groups[0], Some(vec![0, 1]));

    // P4Runtime's multicast group and clone session are the switch's PRE
    let rep = |port: u32| p4::Replica {
        instance: 0,
        backup_replicas: vec![],
        port_kind: Some(p4::replica::PortKind::Port(u128_to_bytes(port as u128))),
    };
    f.w(
        T::Insert,
        E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry {
            r#type: Some(P::MulticastGroupEntry(p4::MulticastGroupEntry {
                multicast_group_id: 3,
                replicas: vec![rep(1), rep(2)],
                metadata: vec![],
            })),
        }),
    )
    .unwrap();
    f.w(
        T::Insert,
        E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry {
            r#type: Some(P::CloneSessionEntry(p4::CloneSessionEntry {
                session_id: 4,
                replicas: vec![rep(6)],
                class_of_service: 0,
                packet_length_bytes: 0,
            })),
        }),
    )
    .unwrap();
    let pre = f.dev.sw.as_ref().unwrap().pre();
    let mut ports = vec![];
    pre.replicas(3, &mut ports);
    ports.sort();
    assert_eq!(ports, vec![(0, 1), (0, 2)]); // (rid, port)
    assert_eq!(pre.mirror(4).unwrap().port, Some(6));
    // ctl acts on the same group and session
    let n = f.ctl("mc_node_create 9 7");
    let h = n.rsplit(' ').next().unwrap();
    f.ctl(&format!("mc_node_associate 3 {}", h));
    f.ctl("mirroring_add 4 8");
    let pre = f.dev.sw.as_ref().unwrap().pre();
    let mut ports = vec![];
    pre.replicas(3, &mut ports);
    assert_eq!(ports.len(), 3);
    assert_eq!(pre.mirror(4).unwrap().port, Some(8));
}

/// Multicast groups and clone sessions ctl makes are read by P4Runtime (replicas as the
/// switch holds them), and go from the Read when ctl removes them.
#[test]
fn p4runtime_reads_the_multicast_groups_and_clone_sessions_ctl_makes() {
    use p4::packet_replication_engine_entry::Type as P;
    let mut f = Fx::new();
    f.ctl("mc_mgrp_create 7");
    let n = f.ctl("mc_node_create 3 1 2");
    let h = n.rsplit(' ').next().unwrap().to_string();
    f.ctl(&format!("mc_node_associate 7 {}", h));
    f.ctl("mirroring_add 9 4 64");
    let pre_entries = |f: &Fx, e: P| {
        f.read(E::PacketReplicationEngineEntry(
            p4::PacketReplicationEngineEntry { r#type: Some(e) },
        ))
    };
    let groups = pre_entries(&f, P::MulticastGroupEntry(Default::default()));
    assert_eq!(groups.len(), 1, "{:?}", groups);
    let E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry {
        r#type: Some(P::MulticastGroupEntry(m)),
    }) = &groups[0]
    else {
        panic!()
    };
    assert_eq!(m.multicast_group_id, 7);
    let ports: Vec<_> = m
        .replicas
        .iter()
        .map(|r| (r.instance, r.port_kind.clone()))
        .collect();
    assert_eq!(
        ports,
        vec![
            (3, Some(p4::replica::PortKind::Port(u128_to_bytes(1)))),
            (3, Some(p4::replica::PortKind::Port(u128_to_bytes(2))))
        ]
    );
    let sessions = pre_entries(&f, P::CloneSessionEntry(Default::default()));
    let E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry {
        r#type: Some(P::CloneSessionEntry(c)),
    }) = &sessions[0]
    else {
        panic!()
    };
    assert_eq!((c.session_id, c.packet_length_bytes), (9, 64));
    assert_eq!(c.replicas.len(), 1);
    f.ctl("mc_mgrp_destroy 7");
    f.ctl("mirroring_delete 9");
    assert!(pre_entries(&f, P::MulticastGroupEntry(Default::default())).is_empty());
    assert!(pre_entries(&f, P::CloneSessionEntry(Default::default())).is_empty());
}

/// Action profile members and groups ctl makes are read by P4Runtime (as the switch holds
/// them, under ids P4Runtime's own writes cannot collide with), can be used by P4Runtime
/// table entries, and go from the Read when ctl deletes them; a member P4Runtime wrote
/// and ctl deleted is gone too.
#[test]
fn p4runtime_reads_the_action_profile_members_and_groups_ctl_makes() {
    let mut f = Fx::new();
    let prof = f.id("ecmp_sel");
    let ecmp = f.id("ecmp");
    let Some(p4::table_action::Type::Action(fwd5)) = f.action("forward", &[5]).r#type else {
        unreachable!()
    };
    // P4Runtime's member 1 takes switch handle 0; ctl's member takes handle 1
    f.w(
        T::Insert,
        E::ActionProfileMember(p4::ActionProfileMember {
            action_profile_id: prof,
            member_id: 1,
            action: Some(fwd5.clone()),
        }),
    )
    .unwrap();
    assert_eq!(
        f.ctl("act_prof_create_member ecmp_sel forward 7"),
        "Member has been created with handle 1"
    );
    assert_eq!(
        f.ctl("act_prof_create_group ecmp_sel"),
        "Group has been created with handle 0"
    );
    f.ctl("act_prof_add_member_to_group ecmp_sel 1 0");
    f.ctl("act_prof_add_member_to_group ecmp_sel 0 0");
    let members = |f: &Fx| -> Vec<p4::ActionProfileMember> {
        let mut v: Vec<_> = f
            .read(E::ActionProfileMember(p4::ActionProfileMember {
                action_profile_id: prof,
                ..Default::default()
            }))
            .into_iter()
            .map(|e| match e {
                E::ActionProfileMember(m) => m,
                other => panic!("{:?}", other),
            })
            .collect();
        v.sort_by_key(|m| m.member_id);
        v
    };
    let ms = members(&f);
    assert_eq!(ms.len(), 2, "{:?}", ms);
    assert_eq!((ms[0].member_id, ms[0].action.clone()), (1, Some(fwd5)));
    let ctl_member = ms[1].member_id;
    assert_ne!(ctl_member, 1);
    let Some(p4::table_action::Type::Action(fwd7)) = f.action("forward", &[7]).r#type else {
        unreachable!()
    };
    assert_eq!(ms[1].action, Some(fwd7));
    // P4Runtime cannot take the id ctl's member shows under
    let dup = f.w(
        T::Insert,
        E::ActionProfileMember(p4::ActionProfileMember {
            action_profile_id: prof,
            member_id: ctl_member,
            action: ms[0].action.clone(),
        }),
    );
    assert_eq!(dup.unwrap_err().0, Code::AlreadyExists);
    let groups = f.read(E::ActionProfileGroup(p4::ActionProfileGroup {
        action_profile_id: prof,
        ..Default::default()
    }));
    assert_eq!(groups.len(), 1, "{:?}", groups);
    let E::ActionProfileGroup(g) = &groups[0] else {
        panic!()
    };
    let gm: Vec<_> = g.members.iter().map(|m| (m.member_id, m.weight)).collect();
    assert_eq!(gm, vec![(ctl_member, 1), (1, 1)]);
    // a P4Runtime entry can point at ctl's group
    let grp_entry = te(
        ecmp,
        vec![exact(1, &[10, 0, 0, 1])],
        Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::ActionProfileGroupId(g.group_id)),
        }),
        0,
    );
    f.w(T::Insert, grp_entry.clone()).unwrap();
    f.w(T::Delete, grp_entry).unwrap();
    // what ctl deletes (its own group, P4Runtime's member) goes from the Read
    f.ctl("act_prof_delete_group ecmp_sel 0");
    f.ctl("act_prof_delete_member ecmp_sel 0");
    let ms = members(&f);
    assert_eq!(
        ms.iter().map(|m| m.member_id).collect::<Vec<_>>(),
        vec![ctl_member]
    );
    assert!(f
        .read(E::ActionProfileGroup(p4::ActionProfileGroup {
            action_profile_id: prof,
            ..Default::default()
        }))
        .is_empty());
}

/// A clone session P4Runtime made and ctl then changed reads back as ctl left it (the
/// switch's session, not a copy of what P4Runtime wrote); a multicast group P4Runtime made
/// and ctl added a node to reads back with that node.
#[test]
fn p4runtime_reads_the_pre_as_ctl_changed_it() {
    use p4::packet_replication_engine_entry::Type as P;
    let mut f = Fx::new();
    let rep = |port: u32, instance| p4::Replica {
        instance,
        backup_replicas: vec![],
        port_kind: Some(p4::replica::PortKind::Port(u128_to_bytes(port as u128))),
    };
    let cs = |s, replicas, len| {
        E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry {
            r#type: Some(P::CloneSessionEntry(p4::CloneSessionEntry {
                session_id: s,
                replicas,
                class_of_service: 2,
                packet_length_bytes: len,
            })),
        })
    };
    let mg = |g, replicas| {
        E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry {
            r#type: Some(P::MulticastGroupEntry(p4::MulticastGroupEntry {
                multicast_group_id: g,
                replicas,
                metadata: vec![1, 2],
            })),
        })
    };
    f.w(T::Insert, cs(4, vec![rep(6, 0)], 0)).unwrap();
    f.w(T::Insert, mg(3, vec![rep(1, 0), rep(2, 0)])).unwrap();
    // unchanged, both read back as written
    assert_eq!(f.read(cs(4, vec![], 0)), vec![cs(4, vec![rep(6, 0)], 0)]);
    assert_eq!(
        f.read(mg(3, vec![])),
        vec![mg(3, vec![rep(1, 0), rep(2, 0)])]
    );
    f.ctl("mirroring_add 4 8 128");
    assert_eq!(f.read(cs(4, vec![], 0)), vec![cs(4, vec![rep(8, 0)], 128)]);
    // the switch's typed errors, P4Runtime's codes and messages: a session ctl made exists
    // for P4Runtime, one ctl deleted is gone
    assert_eq!(
        f.w(T::Insert, cs(4, vec![rep(6, 0)], 0)).unwrap_err(),
        (Code::AlreadyExists, "clone session 4 exists".to_string())
    );
    f.ctl("mirroring_add 5 9");
    f.ctl("mirroring_delete 5");
    assert_eq!(
        f.w(T::Modify, cs(5, vec![rep(6, 0)], 0)).unwrap_err(),
        (Code::NotFound, "no clone session 5".to_string())
    );
    let n = f.ctl("mc_node_create 9 7");
    let h = n.rsplit(' ').next().unwrap().to_string();
    f.ctl(&format!("mc_node_associate 3 {}", h));
    assert_eq!(
        f.read(mg(3, vec![])),
        vec![mg(3, vec![rep(1, 0), rep(2, 0), rep(7, 9)])]
    );
    // P4Runtime deletes both; nothing of them is left in the switch
    f.w(T::Delete, cs(4, vec![], 0)).unwrap();
    f.w(T::Delete, mg(3, vec![])).unwrap();
    let pre = f.dev.sw.as_ref().unwrap().pre();
    assert!(pre.mirror_sessions().is_empty() && pre.groups.is_empty());
    assert!(pre.nodes.iter().all(|n| n.is_none()), "{:?}", pre.nodes);
}

/// The pipeline's cookie is the switch's config version: ctl reads the one P4Runtime set;
/// a pipeline set without a cookie has the program's fingerprint.
#[test]
fn the_config_cookie_is_the_switchs_version() {
    let mut f = Fx::new(); // committed with cookie 7
    assert_eq!(f.ctl("config_version"), "7");
    let (info, json) = compile();
    let prog = sdnperf_switch::json::load_str(&json).unwrap();
    let fingerprint = prog.fingerprint;
    let pipe = Pipe::build(info, json.into_bytes(), None, &prog).unwrap();
    f.dev.commit(pipe, prog, false);
    assert_ne!(fingerprint, 7);
    assert_eq!(f.ctl("config_version"), fingerprint.to_string());
}

/// An action bound with a different `out` argument in two tables' action lists is one
/// P4Info action; an entry of each table runs that table's copy (its own field), and
/// reads back as the one P4Info action.
#[test]
fn one_p4info_action_runs_each_tables_copy() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../p4c/tests/corpus/action_copies.p4");
    let o = p4c::compile_file(&path, &p4c::Options::default()).unwrap();
    let info = cfg::P4Info::decode(o.p4info_binary.as_slice()).unwrap();
    let id = |name: &str| {
        info.tables
            .iter()
            .map(|x| &x.preamble)
            .chain(info.actions.iter().map(|x| &x.preamble))
            .flatten()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("no {}", name))
            .id
    };
    let setbyte = id("Ing.setbyte");
    assert_eq!(
        info.actions
            .iter()
            .filter(|a| a.preamble.as_ref().unwrap().name == "Ing.setbyte")
            .count(),
        1
    );
    let (ta, tb) = (id("Ing.ta"), id("Ing.tb"));
    let prog = sdnperf_switch::json::load_str(&o.bmv2_json).unwrap();
    let pipe = Pipe::build(info.clone(), o.bmv2_json.into_bytes(), None, &prog).unwrap();
    let mut dev = Device::new(None);
    dev.commit(pipe, prog, false);
    let set = |v: u8| p4::TableAction {
        r#type: Some(p4::table_action::Type::Action(p4::Action {
            action_id: setbyte,
            params: vec![p4::action::Param {
                param_id: 1,
                value: vec![v],
            }],
        })),
    };
    for (t, v) in [(ta, 0x11), (tb, 0x22)] {
        dev.write(
            T::Insert as i32,
            &p4::Entity {
                entity: Some(te(t, vec![exact(1, &[1])], Some(set(v)), 0)),
            },
        )
        .unwrap();
    }
    let sw = dev.sw.as_mut().unwrap();
    let now = sw.now_ns();
    sw.receive(0, &[1, 0, 0, 0], None, now);
    sw.service(now);
    let mut out = vec![];
    for j in sw.take_ready() {
        j.out_bytes(&mut out);
        sw.recycle(j);
    }
    // ta's copy writes a, tb's b; the apply block copies a into c
    assert_eq!(out, vec![1, 0x11, 0x22, 0x11]);
    for t in [ta, tb] {
        let mut got = vec![];
        dev.read(
            &p4::Entity {
                entity: Some(E::TableEntry(p4::TableEntry {
                    table_id: t,
                    ..Default::default()
                })),
            },
            &mut got,
        )
        .unwrap();
        let Some(E::TableEntry(e)) = &got[0].entity else {
            panic!()
        };
        let Some(p4::table_action::Type::Action(a)) =
            e.action.as_ref().and_then(|a| a.r#type.as_ref())
        else {
            panic!("table {} entry has no action", t)
        };
        assert_eq!(a.action_id, setbyte);
    }
}

/// The switch's table is the only copy of each entry: a ternary duplicate (same match and
/// priority) is ALREADY_EXISTS from the switch's own check, MODIFY/DELETE find entries by
/// match there, an entry ctl adds is read without any sync, and the P4Runtime-only fields
/// (metadata) of an entry ctl deleted never show on the entry ctl adds at its handle.
#[test]
fn the_switch_table_is_the_only_copy_of_each_entry() {
    let mut f = Fx::new();
    let acl = f.id("acl");
    let m = vec![exact(1, &[8, 0]), ternary(2, 0xa, 0xff), range(3, 1, 10)];
    let mut e = te(acl, m.clone(), Some(f.action("forward", &[1])), 5);
    if let E::TableEntry(x) = &mut e {
        x.metadata = b"cookie".to_vec();
    }
    f.w(T::Insert, e.clone()).unwrap();
    let dup = f.w(T::Insert, e.clone()).unwrap_err();
    assert_eq!(dup.0, Code::AlreadyExists, "{}", dup.1);
    // another priority is another entry
    f.w(
        T::Insert,
        te(acl, m.clone(), Some(f.action("forward", &[2])), 6),
    )
    .unwrap();
    assert_eq!(f.dev.num_entries(acl), 2);
    let sw = f.dev.sw.as_ref().unwrap();
    let ti = f.dev.pipe.as_ref().unwrap().tables[&acl].sw;
    assert_eq!(sw.table(ti).num_entries, 2);
    let r = f.read(te(acl, m.clone(), None, 5));
    let [E::TableEntry(got)] = r.as_slice() else {
        panic!("{:?}", r)
    };
    assert_eq!(got.metadata, b"cookie");
    assert_eq!(got.action, Some(f.action("forward", &[1])));
    f.w(
        T::Modify,
        te(acl, m.clone(), Some(f.action("forward", &[3])), 6),
    )
    .unwrap();
    let r = f.read(te(acl, m.clone(), None, 6));
    let [E::TableEntry(got)] = r.as_slice() else {
        panic!("{:?}", r)
    };
    assert_eq!(got.action, Some(f.action("forward", &[3])));
    assert!(got.metadata.is_empty());
    assert_eq!(
        f.w(T::Delete, te(acl, m.clone(), None, 7)).unwrap_err().0,
        Code::NotFound
    );
    f.w(T::Delete, te(acl, m.clone(), None, 6)).unwrap();
    // ctl deletes the P4Runtime entry (handle 0) and adds another there: no sync needed
    // for Reads, and the old entry's metadata is not the new one's
    sdnperf_switch::ctl::execute(f.dev.sw.as_mut().unwrap(), "table_delete acl 0").unwrap();
    sdnperf_switch::ctl::execute(
        f.dev.sw.as_mut().unwrap(),
        "table_add acl drop 0x0800 0xb&&&0xff 1->10 0&&&0 => 9",
    )
    .unwrap();
    let r = f.read(te(acl, vec![], None, 0));
    let [E::TableEntry(got)] = r.as_slice() else {
        panic!("{:?}", r)
    };
    assert!(got.metadata.is_empty(), "{:?}", got);
    assert_eq!(got.r#match[1], ternary(2, 0xb, 0xff));
}

/// The switch's meter cells are the one copy of each meter's configuration: after ctl
/// changes a meter P4Runtime configured, a P4Runtime Read shows ctl's configuration (rates
/// per microsecond there, per second here), indirect and direct meters alike.
#[test]
fn p4runtime_reads_the_meter_configs_ctl_changed() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../p4c/tests/corpus/acl_stateful.p4");
    let o = p4c::compile_file(&path, &p4c::Options::default()).unwrap();
    let info = cfg::P4Info::decode(o.p4info_binary.as_slice()).unwrap();
    let prog = sdnperf_switch::json::load_str(&o.bmv2_json).unwrap();
    let meter = info.meters[0].preamble.as_ref().unwrap().id;
    let flows = info
        .tables
        .iter()
        .map(|t| t.preamble.as_ref().unwrap())
        .find(|p| p.name.ends_with("flows"))
        .unwrap()
        .id;
    let no_action = info
        .actions
        .iter()
        .map(|a| a.preamble.as_ref().unwrap())
        .find(|p| p.name == "NoAction")
        .unwrap()
        .id;
    let pipe = Pipe::build(info, o.bmv2_json.into_bytes(), None, &prog).unwrap();
    let mut dev = Device::new(None);
    dev.commit(pipe, prog, false);
    let write = |dev: &mut Device, ty: T, e: E| {
        dev.write(ty as i32, &p4::Entity { entity: Some(e) })
            .unwrap()
    };
    let read = |dev: &Device, e: E| {
        let mut out = vec![];
        dev.read(&p4::Entity { entity: Some(e) }, &mut out).unwrap();
        out.into_iter()
            .map(|x| x.entity.unwrap())
            .collect::<Vec<_>>()
    };
    let ctl = |dev: &mut Device, line: &str| {
        sdnperf_switch::ctl::execute(dev.sw.as_mut().unwrap(), line).unwrap();
        dev.sync_from_switch();
    };
    let cfg = |cir, cburst, pir, pburst, eburst| p4::MeterConfig {
        cir,
        cburst,
        pir,
        pburst,
        eburst,
    };
    // indirect meter, cell 3
    let cell = |config| {
        E::MeterEntry(p4::MeterEntry {
            meter_id: meter,
            index: Some(p4::Index { index: 3 }),
            config,
            counter_data: None,
        })
    };
    write(&mut dev, T::Modify, cell(Some(cfg(1000, 10, 2000, 20, 30))));
    assert_eq!(
        read(&dev, cell(None)),
        vec![cell(Some(cfg(1000, 10, 2000, 20, 30)))]
    );
    ctl(&mut dev, "meter_set_rates port_meter 3 0.5:7 0.75:9");
    assert_eq!(
        read(&dev, cell(None)),
        vec![cell(Some(cfg(500_000, 7, 750_000, 9, 0)))]
    );
    write(&mut dev, T::Modify, cell(None));
    assert_eq!(read(&dev, cell(None)), vec![cell(None)]);
    // direct meter of the entry P4Runtime inserts (the switch's handle 0)
    let entry = |config| p4::TableEntry {
        table_id: flows,
        r#match: vec![exact(1, &[10, 0, 0, 1])],
        action: Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::Action(p4::Action {
                action_id: no_action,
                params: vec![],
            })),
        }),
        meter_config: config,
        ..Default::default()
    };
    write(
        &mut dev,
        T::Insert,
        E::TableEntry(entry(Some(cfg(4000, 40, 8000, 80, 0)))),
    );
    let query = E::TableEntry(p4::TableEntry {
        table_id: flows,
        ..Default::default()
    });
    assert_eq!(
        read(&dev, query.clone()),
        vec![E::TableEntry(entry(Some(cfg(4000, 40, 8000, 80, 0))))]
    );
    ctl(&mut dev, "meter_set_rates flows 0 0.001:3 0.002:6");
    assert_eq!(
        read(&dev, query.clone()),
        vec![E::TableEntry(entry(Some(cfg(1000, 3, 2000, 6, 0))))]
    );
    let direct = read(
        &dev,
        E::DirectMeterEntry(p4::DirectMeterEntry {
            table_entry: Some(p4::TableEntry {
                table_id: flows,
                ..Default::default()
            }),
            ..Default::default()
        }),
    );
    let [E::DirectMeterEntry(d)] = direct.as_slice() else {
        panic!("{:?}", direct)
    };
    assert_eq!(d.config, Some(cfg(1000, 3, 2000, 6, 0)));
    // an entry added where the old one was starts with no meter configuration
    write(&mut dev, T::Delete, E::TableEntry(entry(None)));
    write(&mut dev, T::Insert, E::TableEntry(entry(None)));
    assert_eq!(read(&dev, query), vec![E::TableEntry(entry(None))]);
}
