"""Per-switch runtime files in the format the P4 tutorials use (`sN-runtime.json`):

    {"target": "bmv2",
     "p4info": "build/prog.p4.p4info.txt",          # P4Info text
     "bmv2_json": "build/prog.json",                # device config (a .p4 is compiled)
     "table_entries": [
        {"table": "MyIngress.ipv4_lpm", "default_action": true,
         "action_name": "MyIngress.drop", "action_params": {}},
        {"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.1.1", 32]},
         "action_name": "MyIngress.ipv4_forward",
         "action_params": {"dstAddr": "08:00:00:00:01:11", "port": 1}, "priority": 10}],
     "multicast_group_entries": [{"multicast_group_id": 1,
                                  "replicas": [{"egress_port": 1, "instance": 1}]}],
     "clone_session_entries": [{"clone_session_id": 100,
                                "replicas": [{"egress_port": 3, "instance": 1}]}]}

Match values: exact V; lpm [V, prefix length]; ternary [V, mask]; range [low, high];
optional V. Paths are looked up relative to the file's folder, then its parents, then the
working directory. Errors name the file and the entry (`s1-runtime.json: table_entries[2]`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path


class RuntimeFileError(ValueError):
    pass


@dataclass
class TableEntrySpec:
    table: str
    match: dict
    action: str | None
    params: dict
    priority: int | None
    default: bool
    where: str


@dataclass
class RuntimeFile:
    path: Path
    target: str | None
    p4info: Path | None
    bmv2_json: Path | None
    table_entries: list[TableEntrySpec] = field(default_factory=list)
    multicast_groups: list[tuple[int, list[tuple[int, int]]]] = field(default_factory=list)
    clone_sessions: list[tuple[int, list[tuple[int, int]], int, int]] = field(default_factory=list)

    def build_updates(self, schema) -> list:
        """P4Runtime updates for everything in the file (default actions as MODIFY)."""
        # lazy: pulls in finsy, google.protobuf, grpc, wanted only here
        from sdnperf.controllers.p4rt.client import update

        # lazy: pulls in finsy, google.protobuf, grpc, wanted only here
        from sdnperf.controllers.p4rt.schema import SchemaError, clone_session, multicast_group

        out = []
        for gid, replicas in self.multicast_groups:
            out.append(update("INSERT", multicast_group(gid, replicas)))
        for sid, replicas, cos, length in self.clone_sessions:
            out.append(update("INSERT", clone_session(sid, replicas, cos, length)))
        for e in self.table_entries:
            try:
                entry = schema.table_entry(
                    e.table,
                    None if e.default else e.match,
                    e.action,
                    e.params,
                    e.priority,
                    default=e.default,
                )
            except SchemaError as exc:
                raise RuntimeFileError(f"{e.where}: {exc}") from None
            out.append(update("MODIFY" if e.default else "INSERT", entry))
        return out


def _resolve(base: Path, value, where: str) -> Path | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise RuntimeFileError(f"{where}: expected a path string, got {value!r}")
    p = Path(value)
    if p.is_absolute():
        return p
    for folder in [base, *list(base.parents)[:2], Path.cwd()]:
        if (folder / p).exists():
            return folder / p
    raise RuntimeFileError(
        f"{where}: {value!r} not found next to the file, in its parent "
        "folders or in the working directory"
    )


def _replicas(items, where: str) -> list[tuple[int, int]]:
    if not isinstance(items, list):
        raise RuntimeFileError(f"{where}.replicas: expected a list")
    out = []
    for j, r in enumerate(items):
        if not isinstance(r, dict):
            raise RuntimeFileError(f"{where}.replicas[{j}]: expected an object")
        port = r.get("egress_port", r.get("port"))
        if port is None:
            raise RuntimeFileError(f"{where}.replicas[{j}]: no egress_port")
        try:
            out.append((int(port), int(r.get("instance", 0))))
        except (TypeError, ValueError):
            raise RuntimeFileError(
                f"{where}.replicas[{j}]: port/instance must be integers"
            ) from None
    return out


def load(path) -> RuntimeFile:
    path = Path(path)
    name = path.name
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise RuntimeFileError(f"{path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise RuntimeFileError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise RuntimeFileError(
            f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}"
        ) from None
    if not isinstance(doc, dict):
        raise RuntimeFileError(f"{name}: expected a JSON object at the top")
    known = {
        "target",
        "p4info",
        "bmv2_json",
        "table_entries",
        "multicast_group_entries",
        "clone_session_entries",
    }
    unknown = set(doc) - known
    if unknown:
        raise RuntimeFileError(f"{name}: unknown key(s) {sorted(unknown)} (known: {sorted(known)})")
    rf = RuntimeFile(
        path,
        doc.get("target"),
        _resolve(path.parent, doc.get("p4info"), f"{name}: p4info"),
        _resolve(path.parent, doc.get("bmv2_json"), f"{name}: bmv2_json"),
    )
    for i, e in enumerate(doc.get("table_entries") or []):
        where = f"{name}: table_entries[{i}]"
        if not isinstance(e, dict) or "table" not in e:
            raise RuntimeFileError(f'{where}: expected an object with "table"')
        extra = set(e) - {
            "table",
            "match",
            "action_name",
            "action_params",
            "priority",
            "default_action",
        }
        if extra:
            raise RuntimeFileError(f"{where}: unknown key(s) {sorted(extra)}")
        default = bool(e.get("default_action", False))
        if default and e.get("match"):
            raise RuntimeFileError(f"{where}: a default action has no match")
        if not default and "action_name" not in e:
            raise RuntimeFileError(f"{where}: no action_name")
        match = e.get("match") or {}
        params = e.get("action_params") or {}
        if not isinstance(match, dict) or not isinstance(params, dict):
            raise RuntimeFileError(f"{where}: match and action_params must be objects")
        prio = e.get("priority")
        if prio is not None and (not isinstance(prio, int) or prio < 0):
            raise RuntimeFileError(f"{where}: priority must be a non-negative integer")
        rf.table_entries.append(
            TableEntrySpec(e["table"], match, e.get("action_name"), params, prio, default, where)
        )
    for i, g in enumerate(doc.get("multicast_group_entries") or []):
        where = f"{name}: multicast_group_entries[{i}]"
        if not isinstance(g, dict) or "multicast_group_id" not in g:
            raise RuntimeFileError(f"{where}: expected an object with multicast_group_id")
        rf.multicast_groups.append(
            (int(g["multicast_group_id"]), _replicas(g.get("replicas", []), where))
        )
    for i, c in enumerate(doc.get("clone_session_entries") or []):
        where = f"{name}: clone_session_entries[{i}]"
        if not isinstance(c, dict) or "clone_session_id" not in c:
            raise RuntimeFileError(f"{where}: expected an object with clone_session_id")
        rf.clone_sessions.append(
            (
                int(c["clone_session_id"]),
                _replicas(c.get("replicas", []), where),
                int(c.get("class_of_service", 0)),
                int(c.get("packet_length_bytes", 0)),
            )
        )
    return rf


def files_for(runtime_dir, switch_names) -> dict[str, Path]:
    """{switch name: its sN-runtime.json} for every switch; RuntimeFileError names the missing."""
    runtime_dir = Path(runtime_dir)
    found = {}
    for p in runtime_dir.glob("*-runtime.json"):
        if m := re.match(r"^(.+)-runtime\.json$", p.name):  # always: the glob's pattern
            found[m.group(1)] = p
    missing = [s for s in switch_names if s not in found]
    if missing:
        raise RuntimeFileError(
            f"{runtime_dir}: no runtime file for switch(es) "
            f"{', '.join(missing)} (expected {missing[0]}-runtime.json)"
        )
    return {s: found[s] for s in switch_names}
