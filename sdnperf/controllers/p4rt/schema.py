"""P4Info in use: names to ids, and P4Runtime messages built by name.

    schema = Schema.from_file("l2l3.p4info.txtpb")
    entry = schema.table_entry("flow_pair", {"eth_src": "00:00:00:00:00:01", ...},
                               "forward", {"port": 2})

Names may be given in full ("L2L3Ingress.flow_pair") or by a unique suffix ("flow_pair"),
like p4runtime-shell. Values may be ints, MAC or IPv4 strings, or bytes; they are encoded
in P4Runtime's canonical form (big-endian, no leading zero bytes, at least one byte) and
checked against the field's width.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from finsy.proto import p4i, p4r
from google.protobuf import text_format


class SchemaError(ValueError):
    pass


_MAC = re.compile(r"^[0-9a-fA-F]{2}([:-][0-9a-fA-F]{2}){5}$")


def to_int(value, bitwidth: int | None = None, what: str = "value") -> int:
    """An int from an int, 'aa:bb:..' MAC, dotted IPv4 / IPv6 text, '0x..' / decimal text, bytes."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        n = value
    elif isinstance(value, (bytes, bytearray)):
        n = int.from_bytes(value, "big")
    elif isinstance(value, str):
        text = value.strip()
        if _MAC.match(text):
            n = int(text.replace(":", "").replace("-", ""), 16)
        elif re.match(r"^\d+\.\d+\.\d+\.\d+$", text) or ":" in text:
            try:
                n = int(ipaddress.ip_address(text))
            except ValueError:
                raise SchemaError(f"{what}: {value!r} is not an IP address") from None
        else:
            try:
                n = int(text, 0)
            except ValueError:
                raise SchemaError(
                    f"{what}: cannot read {value!r} as a number, MAC or IP address"
                ) from None
    else:
        raise SchemaError(f"{what}: unsupported value {value!r} ({type(value).__name__})")
    if n < 0:
        raise SchemaError(f"{what}: {value!r} is negative")
    if bitwidth is not None and n >> bitwidth:
        raise SchemaError(f"{what}: {value!r} does not fit in {bitwidth} bits")
    return n


def encode(value, bitwidth: int, what: str = "value") -> bytes:
    """P4Runtime canonical bytestring of `value` for a `bitwidth`-bit field."""
    n = to_int(value, bitwidth, what)
    return n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")


def _canonical(value, bitwidth: int, what: str) -> bytes:
    """encode() for ints and bytes only, without its parsing of text (hot path)."""
    n = value if type(value) is int else int.from_bytes(value, "big")
    if n >> bitwidth or n < 0:
        raise SchemaError(f"{what}: {value!r} does not fit in {bitwidth} bits")
    return n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")


def decode(data: bytes) -> int:
    return int.from_bytes(data, "big")


@dataclass(frozen=True)
class MatchField:
    id: int
    name: str
    bitwidth: int
    match_type: int


@dataclass(frozen=True)
class TableInfo:
    id: int
    name: str
    fields: dict[str, MatchField]
    action_ids: tuple[int, ...]

    @property
    def needs_priority(self) -> bool:
        return any(
            f.match_type in (p4i.MatchField.TERNARY, p4i.MatchField.RANGE, p4i.MatchField.OPTIONAL)
            for f in self.fields.values()
        )


@dataclass(frozen=True)
class ActionInfo:
    id: int
    name: str
    params: dict[str, tuple[int, int]]  # name -> (id, bitwidth)


@dataclass(frozen=True)
class MeterInfo:
    id: int
    name: str
    size: int


# a MeterConfig's fields: rates per second and bursts, in the meter's unit (packets, bytes)
METER_CONFIG_FIELDS = ("cir", "cburst", "pir", "pburst", "eburst")


def _lookup(kind: str, mapping: dict, name: str):
    if name in mapping:
        return mapping[name]
    hits = [v for k, v in mapping.items() if k.endswith("." + name)]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise SchemaError(f"{kind} name {name!r} is ambiguous: {sorted(h.name for h in hits)}")
    raise SchemaError(f"no {kind} named {name!r} in the P4Info (has: {sorted(mapping)})")


class Schema:
    def __init__(self, p4info):
        self.p4info = p4info
        self.tables: dict[str, TableInfo] = {}
        self.actions: dict[str, ActionInfo] = {}
        self.packet_metadata: dict[str, dict[str, tuple[int, int]]] = {}
        self.meters = {
            m.preamble.name: MeterInfo(m.preamble.id, m.preamble.name, m.size)
            for m in p4info.meters
        }
        for a in p4info.actions:
            self.actions[a.preamble.name] = ActionInfo(
                a.preamble.id, a.preamble.name, {p.name: (p.id, p.bitwidth) for p in a.params}
            )
        for t in p4info.tables:
            fields = {
                f.name: MatchField(f.id, f.name, f.bitwidth, f.match_type) for f in t.match_fields
            }
            self.tables[t.preamble.name] = TableInfo(
                t.preamble.id, t.preamble.name, fields, tuple(r.id for r in t.action_refs)
            )
        for c in p4info.controller_packet_metadata:
            self.packet_metadata[c.preamble.name] = {m.name: (m.id, m.bitwidth) for m in c.metadata}
        self._action_by_id = {a.id: a for a in self.actions.values()}

    @classmethod
    def from_text(cls, text: str, origin: str = "P4Info") -> "Schema":
        msg = p4i.P4Info()
        try:
            text_format.Parse(text, msg)
        except text_format.ParseError as exc:
            raise SchemaError(f"{origin}: {exc}") from None
        return cls(msg)

    @classmethod
    def from_file(cls, path) -> "Schema":
        path = Path(path)
        data = path.read_bytes()
        if path.suffix in (".bin", ".pb"):
            msg = p4i.P4Info()
            msg.ParseFromString(data)
            return cls(msg)
        return cls.from_text(data.decode(), str(path))

    # -- lookups ---------------------------------------------------------------------------
    def table(self, name: str) -> TableInfo:
        return _lookup("table", self.tables, name)

    def action(self, name: str) -> ActionInfo:
        return _lookup("action", self.actions, name)

    def action_name(self, action_id: int) -> str:
        return self._action_by_id[action_id].name

    def meter(self, name: str) -> MeterInfo:
        return _lookup("meter", self.meters, name)

    # -- messages --------------------------------------------------------------------------
    def action_msg(self, action: str, params: dict | None = None) -> "p4r.Action":
        info = self.action(action)
        params = dict(params or {})
        unknown = set(params) - set(info.params)
        if unknown:
            raise SchemaError(
                f"action {info.name}: unknown parameter(s) {sorted(unknown)} "
                f"(has {sorted(info.params)})"
            )
        missing = set(info.params) - set(params)
        if missing:
            raise SchemaError(f"action {info.name}: missing parameter(s) {sorted(missing)}")
        msg = p4r.Action(action_id=info.id)
        for name, (pid, width) in info.params.items():
            msg.params.add(param_id=pid, value=encode(params[name], width, f"{info.name}({name})"))
        return msg

    def field_match(self, table: TableInfo, name: str, value) -> "p4r.FieldMatch | None":
        """One key field; `value` by match kind: exact V; lpm [V, LEN] or "V/LEN"; ternary
        [V, MASK] or "V&&&MASK"; range [LO, HI]; optional V. None = wildcard (omitted)."""
        field = table.fields.get(name) or _lookup(f"key of {table.name}", table.fields, name)
        what = f"{table.name} key {field.name}"
        fm = p4r.FieldMatch(field_id=field.id)
        kind, width = field.match_type, field.bitwidth
        if kind == p4i.MatchField.EXACT:
            fm.exact.value = encode(value, width, what)
        elif kind == p4i.MatchField.LPM:
            if isinstance(value, str) and "/" in value:
                value = value.split("/", 1)
            if not isinstance(value, (list, tuple)) or len(value) != 2:
                value = [value, width]
            prefix = int(value[1])
            if not 0 <= prefix <= width:
                raise SchemaError(f"{what}: prefix length {prefix} outside 0..{width}")
            if prefix == 0:
                return None  # a /0 is a wildcard: P4Runtime wants the field left out
            n = to_int(value[0], width, what)
            n &= ((1 << prefix) - 1) << (width - prefix)  # canonical: host bits zero
            fm.lpm.value, fm.lpm.prefix_len = encode(n, width, what), prefix
        elif kind == p4i.MatchField.TERNARY:
            if isinstance(value, str) and "&&&" in value:
                value = value.split("&&&", 1)
            if not isinstance(value, (list, tuple)) or len(value) != 2:
                value = [value, (1 << width) - 1]
            v, m = to_int(value[0], width, what), to_int(value[1], width, what)
            if m == 0:
                return None
            fm.ternary.value, fm.ternary.mask = encode(v & m, width, what), encode(m, width, what)
        elif kind == p4i.MatchField.RANGE:
            if not isinstance(value, (list, tuple)) or len(value) != 2:
                raise SchemaError(f"{what}: a range needs [low, high], got {value!r}")
            lo, hi = to_int(value[0], width, what), to_int(value[1], width, what)
            if lo == 0 and hi == (1 << width) - 1:
                return None
            fm.range.low, fm.range.high = encode(lo, width, what), encode(hi, width, what)
        elif kind == p4i.MatchField.OPTIONAL:
            if value in ("*", None):
                return None
            fm.optional.value = encode(value, width, what)
        else:
            raise SchemaError(f"{what}: match kind {kind} is not supported")
        return fm

    def table_entry(
        self,
        table: str,
        match: dict | None,
        action: str | None,
        params: dict | None = None,
        priority: int | None = None,
        default: bool = False,
    ) -> "p4r.TableEntry":
        info = self.table(table)
        entry = p4r.TableEntry(table_id=info.id)
        if default:
            entry.is_default_action = True
        for name, value in (match or {}).items():
            fm = self.field_match(info, name, value)
            if fm is not None:
                entry.match.append(fm)
        if action is not None:
            act = self.action_msg(action, params)
            if act.action_id not in info.action_ids:
                raise SchemaError(
                    f"action {self.action_name(act.action_id)} is not an action of "
                    f"table {info.name}"
                )
            entry.action.action.CopyFrom(act)
        if priority is not None:
            entry.priority = int(priority)
        elif info.needs_priority and not default:
            entry.priority = 1
        return entry

    def exact_entry_builder(self, table: str, fields, action: str, params):
        """A fast maker of Updates for one exact-match table and action, for per-packet use:
        build(kind, values, args) -> p4r.Update, values/args (ints or big-endian bytes) in
        the order of `fields`/`params`. Names are checked here, once; each call copies a
        template and sets the values (several times cheaper than table_entry())."""
        info = self.table(table)
        fields = [
            info.fields.get(f) or _lookup(f"key of {info.name}", info.fields, f) for f in fields
        ]
        for f in fields:
            if f.match_type != p4i.MatchField.EXACT:
                raise SchemaError(f"{info.name} key {f.name}: not an exact match field")
        if set(f.name for f in fields) != set(info.fields):
            raise SchemaError(
                f"{info.name}: the builder must set every key field {sorted(info.fields)}"
            )
        act = self.action(action)
        if act.id not in info.action_ids:
            raise SchemaError(f"action {act.name} is not an action of table {info.name}")
        if sorted(params) != sorted(act.params):
            raise SchemaError(
                f"action {act.name}: parameters are {sorted(act.params)}, got {list(params)}"
            )
        widths = [f.bitwidth for f in fields] + [act.params[p][1] for p in params]
        template = p4r.Update(
            entity=p4r.Entity(
                table_entry=self.table_entry(
                    info.name,
                    {f.name: 0 for f in fields},
                    act.name,
                    {p: 0 for p in params},
                    priority=None,
                )
            )
        )
        n_fields = len(fields)
        what = [f"{info.name} key {f.name}" for f in fields] + [f"{act.name}({p})" for p in params]

        def build(kind: "p4r.Update.Type.ValueType", values, args) -> "p4r.Update":
            u = p4r.Update()
            u.CopyFrom(template)
            u.type = kind
            entry = u.entity.table_entry
            match, out = entry.match, entry.action.action.params
            for i, v in enumerate(values):
                match[i].exact.value = _canonical(v, widths[i], what[i])
            for i, v in enumerate(args):
                out[i].value = _canonical(v, widths[n_fields + i], what[n_fields + i])
            return u

        return build

    def meter_entry(
        self, meter: str, index: int | None, config: dict | None = None
    ) -> "p4r.Entity":
        """Cell `index` of an indirect meter (None: every cell): with `config`
        (METER_CONFIG_FIELDS, ints) the MODIFY that sets it; without, the MODIFY that resets
        it (unconfigured: every packet green) or the Read of it."""
        info = self.meter(meter)
        entry = p4r.MeterEntry(meter_id=info.id)
        if index is not None:
            if not 0 <= int(index) < info.size:
                raise SchemaError(f"meter {info.name}: index {index} outside 0..{info.size - 1}")
            entry.index.index = int(index)
        if config is not None:
            unknown = set(config) - set(METER_CONFIG_FIELDS)
            if unknown:
                raise SchemaError(
                    f"meter {info.name}: unknown config field(s) {sorted(unknown)} "
                    f"(has {list(METER_CONFIG_FIELDS)})"
                )
            entry.config.CopyFrom(p4r.MeterConfig(**{k: int(v) for k, v in config.items()}))
        return p4r.Entity(meter_entry=entry)

    def packet_out(self, payload: bytes, **metadata) -> "p4r.PacketOut":
        fields = self.packet_metadata.get("packet_out")
        if fields is None:
            raise SchemaError('the program has no @controller_header("packet_out")')
        msg = p4r.PacketOut(payload=payload)
        for name, value in metadata.items():
            if name not in fields:
                raise SchemaError(f"packet_out has no field {name!r} (has {sorted(fields)})")
            mid, width = fields[name]
            msg.metadata.add(metadata_id=mid, value=encode(value, width, f"packet_out.{name}"))
        return msg

    def packet_in_decoder(self):
        """A function PacketIn -> {name: int} for the program's packet_in header."""
        fields = {
            mid: name for name, (mid, _w) in self.packet_metadata.get("packet_in", {}).items()
        }

        def decode_metadata(packet_in) -> dict[str, int]:
            return {
                fields.get(m.metadata_id, str(m.metadata_id)): int.from_bytes(m.value, "big")
                for m in packet_in.metadata
            }

        return decode_metadata


def multicast_group(group_id: int, ports, instance: int = 0) -> "p4r.Entity":
    """A PRE multicast group entity (ports as (port, instance) pairs or plain ports)."""
    entry = p4r.MulticastGroupEntry(multicast_group_id=int(group_id))
    for p in ports:
        port, inst = p if isinstance(p, (tuple, list)) else (p, instance)
        entry.replicas.add(egress_port=int(port), instance=int(inst))
    return p4r.Entity(
        packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
            multicast_group_entry=entry
        )
    )


def clone_session(
    session_id: int, ports, class_of_service: int = 0, packet_length_bytes: int = 0
) -> "p4r.Entity":
    """A PRE clone session entity (ports as for multicast_group); with no ports also the
    DELETE of a session, or the Read of one (session 0: of every one)."""
    entry = p4r.CloneSessionEntry(
        session_id=int(session_id),
        class_of_service=int(class_of_service),
        packet_length_bytes=int(packet_length_bytes),
    )
    for p in ports:
        port, inst = p if isinstance(p, (tuple, list)) else (p, 0)
        entry.replicas.add(egress_port=int(port), instance=int(inst))
    return p4r.Entity(
        packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(clone_session_entry=entry)
    )
