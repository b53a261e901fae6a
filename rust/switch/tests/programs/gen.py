#!/usr/bin/env python3
"""Generates the hand-written BMv2 JSON test programs and their STF tests.

Each program exercises a group of switch features; expected packets (checksums, hashes)
are computed here in Python, independently of the switch. Run from this directory:
    python3 gen.py
The generated .json/.stf files are committed; rerun after editing.
"""
import json
import struct
import zlib

STD_META = [
    ("ingress_port", 9), ("egress_spec", 9), ("egress_port", 9), ("instance_type", 32),
    ("packet_length", 32), ("enq_timestamp", 32), ("enq_qdepth", 19), ("deq_timedelta", 32),
    ("deq_qdepth", 19), ("ingress_global_timestamp", 48), ("egress_global_timestamp", 48),
    ("mcast_grp", 16), ("egress_rid", 16), ("checksum_error", 1), ("parser_error", 32),
    ("priority", 3), ("_padding", 3),
]
ETH = [("dstAddr", 48), ("srcAddr", 48), ("etherType", 16)]
IPV4 = [("version", 4), ("ihl", 4), ("diffserv", 8), ("totalLen", 16), ("identification", 16),
        ("flags", 3), ("fragOffset", 13), ("ttl", 8), ("protocol", 8), ("hdrChecksum", 16),
        ("srcAddr", 32), ("dstAddr", 32)]


def F(h, f):
    return {"type": "field", "value": [h, f]}


def H(v):
    return {"type": "hexstr", "value": hex(v) if v >= 0 else "-" + hex(-v)}


def P(i):
    return {"type": "runtime_data", "value": i}


def HDR(h):
    return {"type": "header", "value": h}


def E(op, l, r, cond=None):
    v = {"op": op, "left": l, "right": r}
    if cond is not None:
        v["cond"] = cond
    return {"type": "expression", "value": v}


def MASK(e, w):
    return E("&", e, H((1 << w) - 1))


def prim(op, *params):
    return {"op": op, "parameters": list(params)}


def assign(dst, src):
    return prim("assign", dst, src)


class Prog:
    def __init__(self, name):
        self.name = name
        self.header_types = []
        self.headers = []
        self.actions = []
        self.pipelines = {"ingress": {"tables": [], "conditionals": [], "init": None},
                          "egress": {"tables": [], "conditionals": [], "init": None}}
        self.states = []
        self.deparser = []
        self.calcs = []
        self.checksums = []
        self.registers = []
        self.counters = []
        self.meters = []
        self.field_lists = []
        self.learn_lists = []
        self.stacks = []
        self.header("standard_metadata", STD_META, metadata=True)

    def header(self, name, fields, metadata=False, type_name=None):
        tn = type_name or (name + "_t")
        if not any(t["name"] == tn for t in self.header_types):
            self.header_types.append({"name": tn, "id": len(self.header_types),
                                      "fields": [[f, w, False] for f, w in fields]})
        self.headers.append({"name": name, "id": len(self.headers), "header_type": tn,
                             "metadata": metadata, "pi_omit": True})

    def stack(self, name, type_name, fields, size):
        ids = []
        for i in range(size):
            self.header("%s[%d]" % (name, i), fields, type_name=type_name)
            ids.append(len(self.headers) - 1)
        self.stacks.append({"name": name, "id": len(self.stacks), "header_type": type_name,
                            "size": size, "header_ids": ids})

    def action(self, name, params, prims):
        self.actions.append({"name": name, "id": len(self.actions),
                             "runtime_data": [{"name": n, "bitwidth": w} for n, w in params],
                             "primitives": prims})
        return len(self.actions) - 1

    def table(self, pipe, name, keys, actions, default, nexts=None, default_data=None,
              entries=None, with_counters=False, direct_meter=None, hit_miss=None):
        aids = [self.aid(a) for a in actions]
        nt = hit_miss if hit_miss else {a: (nexts or {}).get(a) for a in
                                          [self.actions[i]["name"] for i in aids]}
        t = {"name": name, "id": len(self.pipelines[pipe]["tables"]),
             "key": [{"match_type": mt, "name": kn, "target": tg, "mask": None}
                     for kn, mt, tg in keys],
             "match_type": "exact", "type": "simple", "max_size": 1024,
             "with_counters": with_counters, "support_timeout": False,
             "direct_meters": direct_meter, "action_ids": aids,
             "actions": [self.actions[i]["name"] for i in aids],
             "base_default_next": None, "next_tables": nt,
             "default_entry": {"action_id": self.aid(default), "action_const": False,
                               "action_data": default_data or [], "action_entry_const": False}}
        if entries:
            t["entries"] = entries
        self.pipelines[pipe]["tables"].append(t)
        if self.pipelines[pipe]["init"] is None:
            self.pipelines[pipe]["init"] = name

    def cond(self, pipe, name, expr, t, f):
        self.pipelines[pipe]["conditionals"].append(
            {"name": name, "id": len(self.pipelines[pipe]["conditionals"]),
             "expression": expr, "true_next": t, "false_next": f})

    def aid(self, name):
        for a in self.actions:
            if a["name"] == name:
                return a["id"]
        raise KeyError(name)

    def state(self, name, ops, key, transitions):
        self.states.append({"name": name, "id": len(self.states), "parser_ops": ops,
                            "transition_key": key, "transitions": transitions})

    def calc(self, name, algo, inputs):
        self.calcs.append({"name": name, "id": len(self.calcs), "algo": algo, "input": inputs})

    def dump(self):
        pipes = []
        profiles = getattr(self, "profiles", [])
        for pn in ("ingress", "egress"):
            p = self.pipelines[pn]
            pipes.append({"name": pn, "id": len(pipes), "init_table": p["init"],
                          "tables": p["tables"], "action_profiles": profiles if pn == "ingress" else [],
                          "conditionals": p["conditionals"]})
        j = {
            "header_types": self.header_types, "headers": self.headers,
            "header_stacks": self.stacks,
            "header_union_types": getattr(self, "union_types", []),
            "header_unions": getattr(self, "unions", []),
            "header_union_stacks": [], "field_lists": self.field_lists,
            "errors": [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2],
                       ["StackOutOfBounds", 3], ["HeaderTooShort", 4], ["ParserTimeout", 5]],
            "enums": [],
            "parsers": [{"name": "parser", "id": 0, "init_state": self.states[0]["name"],
                         "parse_states": self.states}],
            "parse_vsets": [],
            "deparsers": [{"name": "deparser", "id": 0, "order": self.deparser, "primitives": []}],
            "meter_arrays": self.meters, "counter_arrays": self.counters,
            "register_arrays": self.registers, "calculations": self.calcs,
            "learn_lists": self.learn_lists, "actions": self.actions, "pipelines": pipes,
            "checksums": self.checksums, "force_arith": [], "extern_instances": [],
            "field_aliases": [], "program": self.name + ".p4",
            "__meta__": {"version": [2, 23], "compiler": "hand-written (gen.py)"},
        }
        with open(self.name + ".json", "w") as f:
            json.dump(j, f, indent=1)


# ------------------------------------------------------------------ packet helpers

def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def ip(s):
    return bytes(int(x) for x in s.split("."))


def csum16(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def crc16(data):
    c = 0
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0xA001 if c & 1 else c >> 1
    return c


def ipv4(src, dst, ttl=64, proto=17, payload_len=8, ident=1, fix=True):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + payload_len, ident, 0, ttl, proto, 0, ip(src), ip(dst))
    if fix:
        c = csum16(h)
        h = h[:10] + struct.pack("!H", c) + h[12:]
    return h


def eth(dst, src, et):
    return mac(dst) + mac(src) + struct.pack("!H", et)


def hx(b):
    return b.hex().upper()


def ipv4_parser(p, with_ipv4=True):
    p.header("ethernet", ETH)
    if with_ipv4:
        p.header("ipv4", IPV4)
    p.state("start", [{"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}],
            [F("ethernet", "etherType")] if with_ipv4 else [],
            ([{"type": "hexstr", "value": "0x0800", "mask": None, "next_state": "parse_ipv4"}] if with_ipv4 else [])
            + [{"type": "default", "value": None, "mask": None, "next_state": None}])
    if with_ipv4:
        p.state("parse_ipv4", [{"op": "extract", "parameters": [{"type": "regular", "value": "ipv4"}]}],
                [], [{"type": "default", "value": None, "mask": None, "next_state": None}])
        p.deparser = ["ethernet", "ipv4"]
    else:
        p.deparser = ["ethernet"]


def ipv4_checksum(p):
    p.calc("ipv4_csum", "csum16", [F("ipv4", f) for f, _ in IPV4 if f != "hdrChecksum"])
    for verify in (True, False):
        p.checksums.append({"name": "cksum_%s" % ("v" if verify else "u"), "id": len(p.checksums),
                            "target": ["ipv4", "hdrChecksum"], "type": "generic",
                            "calculation": "ipv4_csum", "verify": verify, "update": not verify,
                            "if_cond": E("d2b", None, E("valid", None, HDR("ipv4")))})


# ------------------------------------------------------------------ programs

def basic_l3():
    """IPv4 LPM routing, ttl decrement, checksum verify/update, drop port 511, parser error."""
    p = Prog("basic_l3")
    ipv4_parser(p)
    ipv4_checksum(p)
    p.action("NoAction", [], [])
    p.action("MyIngress.drop", [], [prim("mark_to_drop", HDR("standard_metadata"))])
    p.action("MyIngress.ipv4_forward", [("dstAddr", 48), ("port", 9)], [
        assign(F("standard_metadata", "egress_spec"), P(1)),
        assign(F("ethernet", "srcAddr"), F("ethernet", "dstAddr")),
        assign(F("ethernet", "dstAddr"), P(0)),
        assign(F("ipv4", "ttl"), MASK(E("+", F("ipv4", "ttl"), H(0xff)), 8)),
    ])
    p.action("MyIngress.to_port", [("port", 9)], [assign(F("standard_metadata", "egress_spec"), P(0))])
    p.action("MyIngress.bad_csum", [], [
        assign(F("standard_metadata", "egress_spec"), H(9)),
    ])
    p.table("ingress", "MyIngress.ipv4_lpm", [("hdr.ipv4.dstAddr", "lpm", ["ipv4", "dstAddr"])],
            ["MyIngress.ipv4_forward", "MyIngress.drop", "NoAction"], "MyIngress.drop")
    p.table("ingress", "MyIngress.l2", [("hdr.ethernet.dstAddr", "exact", ["ethernet", "dstAddr"])],
            ["MyIngress.to_port", "MyIngress.drop"], "MyIngress.drop")
    p.table("ingress", "MyIngress.csum_err", [], ["MyIngress.bad_csum"], "MyIngress.bad_csum")
    # ingress: if checksum_error -> csum_err; elif ipv4 valid -> lpm else l2
    p.pipelines["ingress"]["init"] = "node_csum"
    p.cond("ingress", "node_csum", E("==", F("standard_metadata", "checksum_error"), H(1)),
           "MyIngress.csum_err", "node_valid")
    p.cond("ingress", "node_valid", E("d2b", None, E("valid", None, HDR("ipv4"))),
           "MyIngress.ipv4_lpm", "MyIngress.l2")
    pkt = eth("00:00:00:00:00:01", "00:00:00:00:00:02", 0x0800) + ipv4("10.0.0.1", "10.0.1.5") + b"\x11" * 8
    out = eth("00:00:00:00:01:05", "00:00:00:00:00:01", 0x0800) + ipv4("10.0.0.1", "10.0.1.5", ttl=63) + b"\x11" * 8
    out8 = eth("00:00:00:00:08:08", "00:00:00:00:00:01", 0x0800) + ipv4("10.0.0.1", "10.8.8.8", ttl=63) + b"\x11" * 8
    pkt8 = eth("00:00:00:00:00:01", "00:00:00:00:00:02", 0x0800) + ipv4("10.0.0.1", "10.8.8.8") + b"\x11" * 8
    bad = bytearray(pkt)
    bad[24] ^= 0xff  # break the IPv4 checksum
    short = eth("00:00:00:00:00:07", "00:00:00:00:00:02", 0x0800) + b"\x45\x00"
    stf = f"""# basic IPv4 routing
add MyIngress.ipv4_lpm hdr.ipv4.dstAddr:10.0.1.0/24 MyIngress.ipv4_forward(dstAddr:0x000000000105, port:2)
add ipv4_lpm hdr.ipv4.dstAddr:10.0.0.0/8 ipv4_forward(dstAddr:0x000000000808, port:3)
add ipv4_lpm hdr.ipv4.dstAddr:10.9.0.0/16 MyIngress.drop()
add l2 hdr.ethernet.dstAddr:0x000000000007 to_port(port:4)
packet 1 {hx(pkt)}
expect 2 {hx(out)}$
packet 1 {hx(pkt8)}
expect 3 {hx(out8)}$
# dropped by the /16 entry and by the default action (no match)
packet 1 {hx(eth("00:00:00:00:00:01", "00:00:00:00:00:02", 0x0800) + ipv4("10.0.0.1", "10.9.1.1") + b"x" * 8)}
packet 1 {hx(eth("00:00:00:00:00:01", "00:00:00:00:00:02", 0x0800) + ipv4("10.0.0.1", "11.9.1.1") + b"x" * 8)}
# wrong checksum -> port 9 (the deparser recomputes the checksum)
packet 1 {hx(bytes(bad))}
expect 9 {hx(pkt)}$
# truncated IPv4 header: parser error, ipv4 invalid -> l2 table
packet 5 {hx(short)}
expect 4 {hx(short)}$
"""
    p.dump()
    open("basic_l3.stf", "w").write(stf)


def l2_mcast():
    """Exact L2 table, multicast groups with rid, egress sees egress_rid and instance_type."""
    p = Prog("l2_mcast")
    ipv4_parser(p, with_ipv4=False)
    p.action("fwd", [("port", 9)], [assign(F("standard_metadata", "egress_spec"), P(0))])
    p.action("flood", [("grp", 16)], [assign(F("standard_metadata", "mcast_grp"), P(0))])
    p.action("tag_rid", [], [
        assign(F("ethernet", "srcAddr"),
               E("|", E("<<", F("standard_metadata", "egress_rid"), H(8)), F("standard_metadata", "instance_type"))),
    ])
    p.action("drop_self", [], [prim("mark_to_drop", HDR("standard_metadata"))])
    p.action("NoAction", [], [])
    p.table("ingress", "dmac", [("hdr.ethernet.dstAddr", "exact", ["ethernet", "dstAddr"])],
            ["fwd", "flood"], "flood", default_data=["0x1"])
    p.table("egress", "prune", [("standard_metadata.egress_port", "exact", ["standard_metadata", "egress_port"]),
                                ("standard_metadata.ingress_port", "exact", ["standard_metadata", "ingress_port"])],
            ["drop_self", "NoAction"], "NoAction", nexts={"NoAction": "mark", "drop_self": None})
    p.table("egress", "mark", [], ["tag_rid"], "tag_rid")
    pk = eth("ff:ff:ff:ff:ff:ff", "00:00:00:00:00:02", 0x0101) + b"hello"
    uni = eth("00:00:00:00:00:0a", "00:00:00:00:00:02", 0x0101) + b"uni"
    def o(src_rid, b):
        return b[:6] + (src_rid << 8 | 5).to_bytes(6, "big") + b[12:]
    stf = f"""mc_mgrp_create 1
mc_node_create 0 1 2
mc_node_create 7 3
mc_node_associate 1 0
mc_node_associate 1 1
add dmac hdr.ethernet.dstAddr:0x00000000000a fwd(port:4)
add prune standard_metadata.egress_port:1 standard_metadata.ingress_port:1 drop_self()
add prune standard_metadata.egress_port:2 standard_metadata.ingress_port:2 drop_self()
add prune standard_metadata.egress_port:3 standard_metadata.ingress_port:3 drop_self()
packet 1 {hx(pk)}
expect 2 {hx(o(0, pk))}$
expect 3 {hx(o(7, pk))}$
packet 3 {hx(pk)}
expect 1 {hx(o(0, pk))}$
expect 2 {hx(o(0, pk))}$
wait
packet 2 {hx(uni)}
expect 4 {hx(uni[:6] + (0).to_bytes(6, "big") + uni[12:])}$
"""
    p.dump()
    open("l2_mcast.stf", "w").write(stf)


def acl_ternary():
    """Ternary + range + optional keys with priorities; table hit/miss next; counters."""
    p = Prog("acl_ternary")
    ipv4_parser(p)
    p.counters.append({"name": "acl_hits", "id": 0, "is_direct": False, "size": 4})
    p.counters.append({"name": "acl_direct", "id": 1, "is_direct": True, "binding": "acl", "size": 0})
    p.action("permit", [("port", 9), ("idx", 2)], [
        assign(F("standard_metadata", "egress_spec"), P(0)),
        prim("count", {"type": "counter_array", "value": "acl_hits"}, P(1)),
    ])
    p.action("deny", [], [prim("mark_to_drop", HDR("standard_metadata"))])
    p.action("mark_miss", [], [assign(F("ipv4", "diffserv"), H(0xee)),
                               assign(F("standard_metadata", "egress_spec"), H(8))])
    p.table("ingress", "acl", [("hdr.ipv4.srcAddr", "ternary", ["ipv4", "srcAddr"]),
                               ("hdr.ipv4.protocol", "range", ["ipv4", "protocol"]),
                               ("hdr.ipv4.ttl", "optional", ["ipv4", "ttl"])],
            ["permit", "deny"], "deny", with_counters=True,
            hit_miss={"__HIT__": None, "__MISS__": "miss"})
    p.table("ingress", "miss", [], ["mark_miss"], "mark_miss")
    def pk(src, proto, ttl=64):
        return eth("00:00:00:00:00:01", "00:00:00:00:00:02", 0x0800) + ipv4(src, "1.1.1.1", ttl=ttl, proto=proto) + b"p" * 8
    miss = bytearray(pk("9.9.9.9", 6))
    miss[15] = 0xee
    stf = f"""add acl 11 hdr.ipv4.srcAddr:0x0a000000&&&0xff000000 hdr.ipv4.protocol:0->255 hdr.ipv4.ttl:* permit(port:1, idx:0)
add acl 16 hdr.ipv4.srcAddr:0x0a0000**  hdr.ipv4.protocol:6->6 hdr.ipv4.ttl:* permit(idx:1, port:2)
add acl 20 hdr.ipv4.srcAddr:0x0a000005&&&0xffffffff hdr.ipv4.protocol:0->255 hdr.ipv4.ttl:* deny()
add acl 1 hdr.ipv4.srcAddr:0x00000000&&&0x00000000 hdr.ipv4.protocol:17->17 hdr.ipv4.ttl:0x20&&&0xff permit(port:3, idx:2)
packet 0 {hx(pk("10.1.2.3", 17))}
expect 1 {hx(pk("10.1.2.3", 17))}$
packet 0 {hx(pk("10.0.0.7", 6))}
expect 2 {hx(pk("10.0.0.7", 6))}$
packet 0 {hx(pk("10.0.0.5", 6))}
packet 0 {hx(pk("9.9.9.9", 17, ttl=0x20))}
expect 3 {hx(pk("9.9.9.9", 17, ttl=0x20))}$
packet 0 {hx(pk("9.9.9.9", 6))}
expect 8 {hx(bytes(miss))}$
"""
    p.dump()
    open("acl_ternary.stf", "w").write(stf)


def recirc_clone():
    """Recirculation with a preserved field list, I2E and E2E clones, truncation, resubmit."""
    p = Prog("recirc_clone")
    ipv4_parser(p, with_ipv4=False)
    p.header("meta", [("passes", 8), ("resub", 8)], metadata=True)
    p.field_lists.append({"id": 1, "name": "keep", "elements": [{"type": "field", "value": ["meta", "passes"]},
                                                                 {"type": "field", "value": ["meta", "resub"]}]})
    # ingress: etherType 0x0001: recirculate until passes == srcAddr low byte, then out port 2
    #          etherType 0x0002: clone I2E to session 5 and forward to port 1
    #          etherType 0x0003: resubmit once, mark resub count into srcAddr
    p.action("fwd", [("port", 9)], [assign(F("standard_metadata", "egress_spec"), P(0))])
    p.action("do_clone", [], [assign(F("standard_metadata", "egress_spec"), H(1)),
                              prim("clone_ingress_pkt_to_egress", H(5), H(0)),
                              assign(F("ethernet", "dstAddr"), H(0xAAAA))])
    p.action("do_resubmit", [], [assign(F("meta", "resub"), MASK(E("+", F("meta", "resub"), H(1)), 8)),
                                 prim("resubmit", H(1))])
    p.action("resub_done", [], [assign(F("standard_metadata", "egress_spec"), H(3)),
                                assign(F("ethernet", "srcAddr"), E("|", E("<<", F("meta", "resub"), H(8)),
                                                                   F("standard_metadata", "instance_type")))])
    p.action("recirc", [], [assign(F("meta", "passes"), MASK(E("+", F("meta", "passes"), H(1)), 8)),
                            prim("recirculate", H(1))])
    p.action("finish", [], [assign(F("ethernet", "dstAddr"), F("meta", "passes"))])
    p.action("e2e", [], [prim("clone_egress_pkt_to_egress", H(6), H(0))])
    p.action("mark_clone", [], [assign(F("ethernet", "etherType"), F("standard_metadata", "instance_type"))])
    p.action("NoAction", [], [])
    p.table("ingress", "by_type", [("hdr.ethernet.etherType", "exact", ["ethernet", "etherType"])],
            ["fwd", "do_clone", "do_resubmit", "NoAction"], "NoAction", nexts={})
    p.pipelines["ingress"]["init"] = "c_res"
    p.cond("ingress", "c_res", E("and", E("==", F("ethernet", "etherType"), H(3)),
                                 E("==", F("meta", "resub"), H(1))), "t_resdone", "by_type")
    p.table("ingress", "t_resdone", [], ["resub_done"], "resub_done")
    # egress: if etherType==1 and passes < srcAddr&0xff -> recirc else finish
    p.pipelines["egress"]["init"] = "c_type"
    p.cond("egress", "c_type", E("==", F("ethernet", "etherType"), H(1)), "c_more", "c_clone")
    p.cond("egress", "c_more", E("<", F("meta", "passes"), E("&", F("ethernet", "srcAddr"), H(0xff))),
           "t_recirc", "t_finish")
    p.table("egress", "t_recirc", [], ["recirc"], "recirc")
    p.table("egress", "t_finish", [], ["finish"], "finish")
    p.cond("egress", "c_clone", E("or", E("==", F("standard_metadata", "instance_type"), H(1)),
                                   E("==", F("standard_metadata", "instance_type"), H(2))), "t_mark", "c_e2e")
    p.table("egress", "t_mark", [], ["mark_clone"], "mark_clone")
    p.cond("egress", "c_e2e", E("==", F("ethernet", "etherType"), H(2)), "t_e2e", None)
    p.table("egress", "t_e2e", [], ["e2e"], "e2e")
    r3 = eth("00:00:00:00:00:00", "00:00:00:00:00:03", 0x0001) + b"payload"
    r3o = eth("00:00:00:00:00:03", "00:00:00:00:00:03", 0x0001) + b"payload"
    c = eth("00:00:00:00:00:01", "00:00:00:00:00:02", 0x0002) + b"0123456789"
    c_orig = eth("00:00:00:00:aa:aa", "00:00:00:00:00:02", 0x0002) + b"0123456789"
    c_i2e = eth("00:00:00:00:00:01", "00:00:00:00:00:02", 0x0001) + b"0123456789"
    c_e2e = (eth("00:00:00:00:aa:aa", "00:00:00:00:00:02", 0x0002) + b"0123456789")[:20]
    c_e2e = c_e2e[:12] + b"\x00\x02" + c_e2e[14:]
    rs = eth("00:00:00:00:00:01", "00:00:00:00:00:02", 0x0003) + b"rs"
    rso = eth("00:00:00:00:00:01", "00:00:00:00:01:06", 0x0003) + b"rs"
    stf = f"""add by_type hdr.ethernet.etherType:0x0001 fwd(port:2)
add by_type hdr.ethernet.etherType:0x0002 do_clone()
add by_type hdr.ethernet.etherType:0x0003 do_resubmit()
mirroring_add 5 4
mirroring_add 6 6 20
# 3 recirculations: passes preserved through the field list
packet 1 {hx(r3)}
expect 2 {hx(r3o)}$
# I2E clone: the original packet (not the ingress-modified one) goes to port 4, instance_type 1
packet 1 {hx(c)}
expect 1 {hx(c_orig)}$
expect 4 {hx(c_i2e)}$
# E2E clone of the port-1 copy, truncated to 20 bytes, instance_type 2
expect 6 {hx(c_e2e)}$
# resubmit: instance_type 6, meta.resub preserved (=1)
packet 1 {hx(rs)}
expect 3 {hx(rso)}$
"""
    p.dump()
    open("recirc_clone.stf", "w").write(stf)


def externs_hash():
    """Registers, hashes (crc16, crc32, csum16, identity, xor16), meters, direct counter."""
    p = Prog("externs_hash")
    ipv4_parser(p)
    p.header("meta", [("h", 32), ("r", 32), ("color", 8)], metadata=True)
    p.registers.append({"name": "pkt_count", "id": 0, "bitwidth": 32, "size": 8})
    p.meters.append({"name": "m", "id": 0, "is_direct": False, "rate_count": 2, "type": "packets", "size": 4})
    for algo in ("crc16", "crc32", "csum16", "identity", "xor16"):
        p.calc("h_" + algo, algo, [F("ipv4", "srcAddr"), F("ipv4", "dstAddr")])
    prims = [
        prim("register_read", F("meta", "r"), {"type": "register_array", "value": "pkt_count"},
             F("standard_metadata", "ingress_port")),
        assign(F("meta", "r"), MASK(E("+", F("meta", "r"), H(1)), 32)),
        prim("register_write", {"type": "register_array", "value": "pkt_count"},
             F("standard_metadata", "ingress_port"), F("meta", "r")),
        assign(F("standard_metadata", "egress_spec"), H(2)),
        prim("execute_meter", {"type": "meter_array", "value": "m"}, H(0), F("meta", "color")),
    ]
    p.action("go", [("algo", 8)], prims)
    for i, algo in enumerate(("crc16", "crc32", "csum16", "identity", "xor16")):
        p.action("hash_" + algo, [], [
            prim("modify_field_with_hash_based_offset", F("meta", "h"), H(0),
                 {"type": "calculation", "value": "h_" + algo}, H(1 << 32 if algo != "crc16" else 65536)),
        ])
    p.action("emit", [], [
        assign(F("ethernet", "dstAddr"), F("meta", "h")),
        assign(F("ethernet", "srcAddr"), E("|", E("<<", F("meta", "r"), H(8)), F("meta", "color"))),
    ])
    p.table("ingress", "t_go", [], ["go"], "go", default_data=["0x0"])
    p.table("ingress", "t_hash", [("hdr.ipv4.diffserv", "exact", ["ipv4", "diffserv"])],
            ["hash_" + a for a in ("crc16", "crc32", "csum16", "identity", "xor16")], "hash_crc16",
            nexts={"hash_" + a: "t_emit" for a in ("crc16", "crc32", "csum16", "identity", "xor16")})
    p.tables_fix = None
    p.pipelines["ingress"]["tables"][0]["next_tables"] = {"go": "t_hash"}
    p.table("ingress", "t_emit", [], ["emit"], "emit")
    data = ip("10.0.0.1") + ip("192.168.1.2")
    hv = {
        "crc16": crc16(data), "crc32": zlib.crc32(data), "csum16": csum16(data),
        "identity": int.from_bytes(data, "big") & 0xFFFFFFFF,
        "xor16": (0x0a00 ^ 0x0001 ^ 0xc0a8 ^ 0x0102),
    }
    lines = ["add t_hash hdr.ipv4.diffserv:%d hash_%s()" % (i, a)
             for i, a in enumerate(("crc16", "crc32", "csum16", "identity", "xor16"))]
    lines.append("meter_set_rates m 0 0.000001:2 0.000001:3")
    n = 0
    colors = [0, 0, 1, 2, 2]
    for i, a in enumerate(("crc16", "crc32", "csum16", "identity", "xor16")):
        pk = bytearray(eth("00:00:00:00:00:01", "00:00:00:00:00:02", 0x0800) +
                       ipv4("10.0.0.1", "192.168.1.2") + b"h" * 8)
        pk[15] = i
        n += 1
        out = bytearray(pk)
        out[0:6] = (hv[a] & 0xFFFFFFFFFFFF).to_bytes(6, "big")
        out[6:12] = ((n << 8) | colors[i]).to_bytes(6, "big")
        lines.append("packet 3 " + hx(bytes(pk)))
        lines.append("expect 2 " + hx(bytes(out)) + "$")
    lines.append("register_write pkt_count 3 100")
    pk = bytearray(eth("00:00:00:00:00:01", "00:00:00:00:00:02", 0x0800) + ipv4("10.0.0.1", "192.168.1.2") + b"h" * 8)
    out = bytearray(pk)
    out[0:6] = (hv["crc16"]).to_bytes(6, "big")
    out[6:12] = ((101 << 8) | 2).to_bytes(6, "big")
    lines.append("packet 3 " + hx(bytes(pk)))
    lines.append("expect 2 " + hx(bytes(out)) + "$")
    p.dump()
    open("externs_hash.stf", "w").write("\n".join(lines) + "\n")


def stack_vlan():
    """Header stack (MPLS-like labels) with push/pop, setValid/setInvalid, select on lookahead."""
    p = Prog("stack_vlan")
    p.header("ethernet", ETH)
    p.stack("labels", "label_t", [("label", 20), ("tc", 3), ("bos", 1), ("ttl", 8)], 3)
    p.header("vlan", [("pcp", 3), ("dei", 1), ("vid", 12), ("etherType", 16)])
    p.state("start", [{"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}],
            [F("ethernet", "etherType")],
            [{"type": "hexstr", "value": "0x8847", "mask": None, "next_state": "parse_label"},
             {"type": "hexstr", "value": "0x8100", "mask": "0xffff", "next_state": "parse_vlan"},
             {"type": "default", "value": None, "mask": None, "next_state": None}])
    p.state("parse_label", [{"op": "extract", "parameters": [{"type": "stack", "value": "labels"}]}],
            [{"type": "lookahead", "value": [-9, 1]}] if False else [{"type": "stack_field", "value": ["labels", "bos"]}],
            [{"type": "hexstr", "value": "0x0", "mask": None, "next_state": "parse_label"},
             {"type": "default", "value": None, "mask": None, "next_state": None}])
    p.state("parse_vlan", [{"op": "extract", "parameters": [{"type": "regular", "value": "vlan"}]}],
            [], [{"type": "default", "value": None, "mask": None, "next_state": None}])
    p.deparser = ["ethernet", "vlan", "labels[0]", "labels[1]", "labels[2]"]
    # ingress: etherType 0x8847 -> pop one label (if two or more) else push a label 0x123;
    #          untagged 0x0800 -> add vlan 5;   vlan -> remove vlan
    p.action("pop1", [], [prim("pop", {"type": "header_stack", "value": "labels"}, H(1)),
                          assign(F("standard_metadata", "egress_spec"), H(1))])
    p.action("push1", [], [prim("push", {"type": "header_stack", "value": "labels"}, H(1)),
                           prim("add_header", HDR("labels[0]")),
                           assign(F("labels[0]", "label"), H(0x123)),
                           assign(F("labels[0]", "ttl"), H(9)),
                           assign(F("standard_metadata", "egress_spec"), H(2))])
    p.action("add_vlan", [], [prim("add_header", HDR("vlan")),
                              assign(F("vlan", "vid"), H(5)),
                              assign(F("vlan", "etherType"), F("ethernet", "etherType")),
                              assign(F("ethernet", "etherType"), H(0x8100)),
                              assign(F("standard_metadata", "egress_spec"), H(3))])
    p.action("del_vlan", [], [assign(F("ethernet", "etherType"), F("vlan", "etherType")),
                              prim("remove_header", HDR("vlan")),
                              assign(F("standard_metadata", "egress_spec"), H(4))])
    p.table("ingress", "t_pop", [], ["pop1"], "pop1")
    p.table("ingress", "t_push", [], ["push1"], "push1")
    p.table("ingress", "t_addv", [], ["add_vlan"], "add_vlan")
    p.table("ingress", "t_delv", [], ["del_vlan"], "del_vlan")
    p.pipelines["ingress"]["init"] = "c_lbl"
    p.cond("ingress", "c_lbl", E("d2b", None, E("valid", None, HDR("labels[1]"))), "t_pop", "c_one")
    p.cond("ingress", "c_one", E("d2b", None, E("valid", None, HDR("labels[0]"))), "t_push", "c_vlan")
    p.cond("ingress", "c_vlan", E("d2b", None, E("valid", None, HDR("vlan"))), "t_delv", "t_addv")

    def lbl(v, bos, ttl):
        return ((v << 12) | (bos << 8) | ttl).to_bytes(4, "big")
    e = eth("00:00:00:00:00:01", "00:00:00:00:00:02", 0x8847)
    two = e + lbl(0x10, 0, 5) + lbl(0x20, 1, 6) + b"data"
    two_o = e + lbl(0x20, 1, 6) + b"data"
    one = e + lbl(0x30, 1, 7) + b"data"
    one_o = e + lbl(0x123, 0, 9) + lbl(0x30, 1, 7) + b"data"
    plain = eth("00:00:00:00:00:01", "00:00:00:00:00:02", 0x0800) + b"ip..."
    tagged = eth("00:00:00:00:00:01", "00:00:00:00:00:02", 0x8100) + b"\x00\x05\x08\x00" + b"ip..."
    stf = f"""packet 0 {hx(two)}
expect 1 {hx(two_o)}$
packet 0 {hx(one)}
expect 2 {hx(one_o)}$
packet 0 {hx(plain)}
expect 3 {hx(tagged)}$
packet 0 {hx(tagged)}
expect 4 {hx(plain)}$
"""
    p.dump()
    open("stack_vlan.stf", "w").write(stf)


def recirc_n():
    """Benchmark helper: recirculate every packet N times (N from table param), then
    forward port 1 <-> 2. With no entry in t_n it forwards without recirculation."""
    p = Prog("recirc_n")
    ipv4_parser(p, with_ipv4=False)
    p.header("meta", [("passes", 8), ("n", 8)], metadata=True)
    p.field_lists.append({"id": 1, "name": "keep", "elements": [{"type": "field", "value": ["meta", "passes"]}]})
    p.action("set_n", [("n", 8)], [assign(F("meta", "n"), P(0))])
    p.action("NoAction", [], [])
    p.action("fwd", [], [assign(F("standard_metadata", "egress_spec"),
                                E("-", H(3), F("standard_metadata", "ingress_port")))])
    p.action("recirc", [], [assign(F("meta", "passes"), MASK(E("+", F("meta", "passes"), H(1)), 8)),
                            prim("recirculate", H(1))])
    p.table("ingress", "t_n", [], ["set_n", "NoAction"], "NoAction", nexts={"set_n": "t_fwd", "NoAction": "t_fwd"})
    p.table("ingress", "t_fwd", [], ["fwd"], "fwd")
    p.pipelines["egress"]["init"] = "c_more"
    p.cond("egress", "c_more", E("<", F("meta", "passes"), F("meta", "n")), "t_recirc", None)
    p.table("egress", "t_recirc", [], ["recirc"], "recirc")
    pk = eth("00:00:00:00:00:02", "00:00:00:00:00:01", 0x0800) + b"x" * 50
    stf = f"""packet 1 {hx(pk)}
expect 2 {hx(pk)}$
setdefault t_n set_n(n:7)
packet 2 {hx(pk)}
expect 1 {hx(pk)}$
stats
"""
    p.dump()
    open("recirc_n.stf", "w").write(stf)


def l1_fwd():
    """Benchmark helper: port 1 <-> port 2 with an LPM lookup on IPv4 dst (table size
    varies) that must hit for the packet to be forwarded; non-IPv4 frames go straight."""
    p = Prog("l1_fwd")
    ipv4_parser(p)
    p.action("NoAction", [], [])
    p.action("fwd", [], [assign(F("standard_metadata", "egress_spec"),
                                E("-", H(3), F("standard_metadata", "ingress_port")))])
    p.action("drop", [], [prim("mark_to_drop", HDR("standard_metadata"))])
    p.action("set_dmac", [("dmac", 48)], [assign(F("ethernet", "dstAddr"), P(0))])
    p.table("ingress", "t_fwd", [], ["fwd"], "fwd")
    p.table("ingress", "lpm", [("hdr.ipv4.dstAddr", "lpm", ["ipv4", "dstAddr"])],
            ["set_dmac", "drop", "NoAction"], "NoAction")
    p.pipelines["ingress"]["tables"][0]["next_tables"] = {"fwd": "c_ip"}
    p.cond("ingress", "c_ip", E("d2b", None, E("valid", None, HDR("ipv4"))), "lpm", None)
    pk = eth("00:00:00:00:00:02", "00:00:00:00:00:01", 0x0806) + b"x" * 28
    stf = f"""packet 1 {hx(pk)}
expect 2 {hx(pk)}$
packet 2 {hx(pk)}
expect 1 {hx(pk)}$
"""
    p.dump()
    open("l1_fwd.stf", "w").write(stf)


def l2_basic():
    """Plain L2 switch for Mininet tests: dmac exact -> port, else flood (group 1),
    never back to the ingress port."""
    p = Prog("l2_basic")
    ipv4_parser(p, with_ipv4=False)
    p.action("fwd", [("port", 9)], [assign(F("standard_metadata", "egress_spec"), P(0))])
    p.action("flood", [], [assign(F("standard_metadata", "mcast_grp"), H(1))])
    p.action("drop", [], [prim("mark_to_drop", HDR("standard_metadata"))])
    p.action("NoAction", [], [])
    p.table("ingress", "dmac", [("hdr.ethernet.dstAddr", "exact", ["ethernet", "dstAddr"])],
            ["fwd", "flood"], "flood")
    p.pipelines["egress"]["init"] = "c_prune"
    p.cond("egress", "c_prune", E("==", F("standard_metadata", "egress_port"),
                                  F("standard_metadata", "ingress_port")), "t_drop", None)
    p.table("egress", "t_drop", [], ["drop"], "drop")
    b = eth("ff:ff:ff:ff:ff:ff", "00:00:00:00:00:01", 0x0806) + b"arp?"
    u = eth("00:00:00:00:00:02", "00:00:00:00:00:01", 0x0800) + b"ip"
    stf = f"""mc_mgrp_create 1
mc_node_create 0 1 2 3
mc_node_associate 1 0
add dmac hdr.ethernet.dstAddr:0x000000000002 fwd(port:2)
packet 1 {hx(b)}
expect 2 {hx(b)}$
expect 3 {hx(b)}$
packet 1 {hx(u)}
expect 2 {hx(u)}$
"""
    p.dump()
    open("l2_basic.stf", "w").write(stf)


def selector():
    """Action profile + selector (indirect / indirect_ws tables): members, groups, crc16
    selection over the source MAC, member and group entries, indirect default."""
    p = Prog("selector")
    ipv4_parser(p, with_ipv4=False)
    p.profiles = [{"name": "ing.sel", "id": 0, "max_size": 16,
                   "selector": {"algo": "crc16", "input": [F("ethernet", "srcAddr")]}}]
    p.action("fwd", [("port", 9)], [assign(F("standard_metadata", "egress_spec"), P(0))])
    p.action("drop", [], [prim("mark_to_drop", HDR("standard_metadata"))])
    p.table("ingress", "ing.t", [("hdr.ethernet.etherType", "exact", ["ethernet", "etherType"])],
            ["fwd", "drop"], "drop")
    t = p.pipelines["ingress"]["tables"][0]
    t["type"] = "indirect_ws"
    t["action_profile"] = "ing.sel"
    del t["default_entry"]
    srcs = ["00:00:00:00:00:%02x" % i for i in range(1, 9)]
    lines = ["act_prof_create_member ing.sel fwd 2", "act_prof_create_member ing.sel fwd 3",
             "act_prof_create_member ing.sel fwd 4", "act_prof_create_group ing.sel",
             "act_prof_add_member_to_group ing.sel 0 0", "act_prof_add_member_to_group ing.sel 1 0",
             "table_indirect_add ing.t 0x0800 => 2", "table_indirect_add_with_group ing.t 0x0801 => 0"]
    for s in srcs:
        pk = eth("00:00:00:00:00:09", s, 0x0800) + b"m"
        lines += ["packet 1 " + hx(pk), "expect 4 " + hx(pk) + "$"]
    for s in srcs:
        pk = eth("00:00:00:00:00:09", s, 0x0801) + b"g"
        port = (2, 3)[crc16(mac(s)) % 2]
        lines += ["packet 1 " + hx(pk), "expect %d " % port + hx(pk) + "$"]
    # miss without default: no action; then an indirect default (member 1 -> port 3)
    lines += ["packet 1 " + hx(eth("00:00:00:00:00:09", srcs[0], 0x0802)),
              "table_indirect_set_default ing.t 1",
              "packet 1 " + hx(eth("00:00:00:00:00:09", srcs[0], 0x0803)),
              "expect 3 " + hx(eth("00:00:00:00:00:09", srcs[0], 0x0803)) + "$"]
    p.dump()
    open("selector.stf", "w").write("\n".join(lines) + "\n")


def unions():
    """Header union: extracting or validating one member invalidates the other;
    valid_union; deparser emits only the valid member."""
    p = Prog("unions")
    p.header("ethernet", ETH)
    p.header("u.h1", [("a", 16)], type_name="h1_t")
    p.header("u.h2", [("b", 32)], type_name="h2_t")
    p.union_types = [{"name": "u_t", "id": 0, "headers": [["h1", "h1_t"], ["h2", "h2_t"]]}]
    p.unions = [{"name": "u", "id": 0, "union_type": "u_t", "header_ids": [2, 3], "pi_omit": True}]
    p.state("start", [{"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}],
            [F("ethernet", "etherType")],
            [{"type": "hexstr", "value": "0x1111", "mask": None, "next_state": "p1"},
             {"type": "hexstr", "value": "0x2222", "mask": None, "next_state": "p2"},
             {"type": "default", "value": None, "mask": None, "next_state": None}])
    p.state("p1", [{"op": "extract", "parameters": [{"type": "regular", "value": "u.h1"}]}], [],
            [{"type": "default", "value": None, "mask": None, "next_state": None}])
    p.state("p2", [{"op": "extract", "parameters": [{"type": "regular", "value": "u.h2"}]}], [],
            [{"type": "default", "value": None, "mask": None, "next_state": None}])
    p.deparser = ["ethernet", "u.h1", "u.h2"]
    p.action("to_h2", [], [prim("add_header", HDR("u.h2")),
                           assign(F("u.h2", "b"), E("|", H(0xbeef0000), F("u.h1", "a"))),
                           assign(F("ethernet", "etherType"), H(0x2222))])
    p.action("port1", [], [assign(F("standard_metadata", "egress_spec"), H(1))])
    p.action("port2", [], [assign(F("standard_metadata", "egress_spec"), H(2))])
    p.table("ingress", "t_h2", [], ["to_h2"], "to_h2")
    p.table("ingress", "t_p1", [], ["port1"], "port1")
    p.table("ingress", "t_p2", [], ["port2"], "port2")
    p.pipelines["ingress"]["init"] = "c_h1"
    p.pipelines["ingress"]["tables"][0]["next_tables"] = {"to_h2": "c_any"}
    p.cond("ingress", "c_h1", E("d2b", None, E("valid", None, HDR("u.h1"))), "t_h2", "c_any")
    p.cond("ingress", "c_any", E("valid_union", None, {"type": "header_union", "value": "u"}), "t_p1", "t_p2")
    e1 = eth("00:00:00:00:00:02", "00:00:00:00:00:01", 0x1111) + b"\x12\x34" + b"pl"
    o1 = eth("00:00:00:00:00:02", "00:00:00:00:00:01", 0x2222) + b"\xbe\xef\x12\x34" + b"pl"
    e2 = eth("00:00:00:00:00:02", "00:00:00:00:00:01", 0x2222) + b"\x00\x00\x00\x07" + b"pl"
    e3 = eth("00:00:00:00:00:02", "00:00:00:00:00:01", 0x3333) + b"pl"
    stf = f"""# h1 becomes h2 (h1 invalidated by the union), union valid -> port 1
packet 0 {hx(e1)}
expect 1 {hx(o1)}$
packet 0 {hx(e2)}
expect 1 {hx(e2)}$
# no member valid -> port 2
packet 0 {hx(e3)}
expect 2 {hx(e3)}$
"""
    p.dump()
    open("unions.stf", "w").write(stf)


def queues():
    """Egress queue with a rate: enq_qdepth / deq_qdepth / deq_timedelta written into the
    packet; plus per-port impairment (delay) and queue depth drops."""
    p = Prog("queues")
    ipv4_parser(p, with_ipv4=False)
    p.action("fwd", [], [assign(F("standard_metadata", "egress_spec"), H(2))])
    p.action("stamp", [], [
        assign(F("ethernet", "dstAddr"), E("|", E("<<", F("standard_metadata", "enq_qdepth"), H(24)),
                                           F("standard_metadata", "deq_qdepth"))),
        assign(F("ethernet", "srcAddr"), F("standard_metadata", "deq_timedelta")),
    ])
    p.table("ingress", "t_fwd", [], ["fwd"], "fwd")
    p.table("egress", "t_stamp", [], ["stamp"], "stamp")
    pk = eth("00:00:00:00:00:00", "00:00:00:00:00:00", 0x0101) + b"q" * 10

    def o(enq, deq, delta_us):
        return ((enq << 24) | deq).to_bytes(6, "big") + delta_us.to_bytes(6, "big") + pk[12:]
    lines = ["# 1000 packets/s on port 2: a burst of 3 queues up (virtual clock, 1 us between packets)",
             "set_queue_rate 1000 2"]
    for _ in range(3):
        lines.append("packet 1 " + hx(pk))
    # first leaves at once; the second waited ~1 ms, the third ~2 ms (minus arrival gaps)
    # the runner serves queues as packets arrive: #1 leaves at once, #2 waits for the
    # next slot (with #3 behind it), #3 one slot later; delays are ~1 ms and ~2 ms
    lines.append("expect 2 " + hx(o(0, 0, 0)) + "$")
    lines.append("expect 2 " + hx(o(0, 1, 0))[:12] + "0000000003**" + hx(pk[12:]) + "$")
    lines.append("expect 2 " + hx(o(1, 0, 0))[:12] + "0000000007**" + hx(pk[12:]) + "$")
    lines.append("wait")
    lines.append("# depth 1: the next 1 ms slot is still ahead, so of a burst of 3 the first waits")
    lines.append("# in the queue and the other two find it full and are dropped")
    lines.append("set_queue_depth 1 2")
    for _ in range(3):
        lines.append("packet 1 " + hx(pk))
    lines.append("expect 2 " + "*" * 24 + hx(pk[12:]) + "$")
    lines.append("wait")
    lines.append("# impairment: 5 ms delay on port 2 (rate back to unlimited)")
    lines.append("set_queue_rate 0 2")
    lines.append("port_impair 2 delay=5ms")
    lines.append("packet 1 " + hx(pk))
    lines.append("expect 2 " + hx(o(0, 0, 0)) + "$")
    lines.append("wait")
    p.dump()
    open("queues.stf", "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    unions()
    l2_basic()
    selector()
    queues()
    basic_l3()
    l2_mcast()
    acl_ternary()
    recirc_clone()
    externs_hash()
    stack_vlan()
    recirc_n()
    l1_fwd()
