//! `--switch SPEC` of sdnperf-switch-grpc (src/members.rs): parsing, the checks that two
//! switches of one process share nothing, and the split of the switches over threads.

use sdnperf_p4rt::members::{check_members, groups, parse_member, MemberSpec};

#[test]
fn groups_are_contiguous_and_near_equal() {
    assert_eq!(
        groups((1..=5).collect(), 2),
        vec![vec![1, 2, 3], vec![4, 5]]
    );
    assert_eq!(groups((1..=4).collect(), 1), vec![vec![1, 2, 3, 4]]);
    // more threads than switches: one switch each
    assert_eq!(groups(vec![1, 2], 4), vec![vec![1], vec![2]]);
    assert_eq!(groups(Vec::<u8>::new(), 2), vec![Vec::<u8>::new()]);
}

#[test]
fn parses_a_full_spec() {
    let m = parse_member("device=3;grpc=127.0.0.1:50003;ctl=/tmp/s3.ctl;ports=1@s3-eth1,2@s3-eth2")
        .unwrap();
    assert_eq!(m.device_id, 3);
    assert_eq!(m.grpc, "127.0.0.1:50003");
    assert_eq!(m.ctl_socket.as_deref(), Some("/tmp/s3.ctl"));
    assert_eq!(
        m.ports,
        vec![(1, "s3-eth1".to_string()), (2, "s3-eth2".to_string())]
    );
}

#[test]
fn ctl_and_ports_are_optional() {
    let m = parse_member("grpc=[::1]:9559;device=1").unwrap();
    assert_eq!((m.device_id, m.ctl_socket, m.ports.len()), (1, None, 0));
}

#[test]
fn errors_name_the_field() {
    let e = parse_member("device=x;grpc=127.0.0.1:1").unwrap_err();
    assert!(e.contains("device \"x\""), "{}", e);
    let e = parse_member("device=1").unwrap_err();
    assert!(e.contains("grpc=ADDR:PORT missing"), "{}", e);
    let e = parse_member("device=1;grpc=127.0.0.1:99999").unwrap_err();
    assert!(e.contains("bad port"), "{}", e);
    let e = parse_member("device=1;grpc=h:1;port=1@a").unwrap_err();
    assert!(e.contains("unknown field \"port\""), "{}", e);
    let e = parse_member("device=1;grpc=h:1;ports=1@a,x@b").unwrap_err();
    assert!(e.contains("ports:"), "{}", e);
}

#[test]
fn two_switches_never_share_an_id_address_socket_or_interface() {
    let a = parse_member("device=1;grpc=h:1;ctl=/a;ports=1@s1-eth1").unwrap();
    let b = parse_member("device=2;grpc=h:2;ctl=/b;ports=1@s2-eth1").unwrap();
    assert!(check_members(&[a.clone(), b.clone()]).is_ok());
    for (field, bad) in [
        (
            "device id 1",
            MemberSpec {
                device_id: 1,
                ..b.clone()
            },
        ),
        (
            "gRPC address h:1",
            MemberSpec {
                grpc: "h:1".into(),
                ..b.clone()
            },
        ),
        (
            "ctl socket /a",
            MemberSpec {
                ctl_socket: Some("/a".into()),
                ..b.clone()
            },
        ),
        (
            "interface s1-eth1",
            MemberSpec {
                ports: vec![(2, "s1-eth1".into())],
                ..b.clone()
            },
        ),
    ] {
        let e = check_members(&[a.clone(), bad]).unwrap_err();
        assert!(e.contains(field), "{}: {}", field, e);
    }
    let twice = MemberSpec {
        ports: vec![(1, "x".into()), (1, "y".into())],
        ..b
    };
    assert!(check_members(&[twice])
        .unwrap_err()
        .contains("port 1 given twice"));
}
