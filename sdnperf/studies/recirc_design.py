"""The study files of the recirculation design, written from a built-in scale file: a short
pilot (cost per pass of each switch), the bracketing study (N values that reach past the
target delays, recirc_plan.bracket_passes) and the verifying study (the planned N, the
hold-by-time program and N = 0, with the scale's TCP/UDP workloads: the delay achieved and
its cost). Each is a plain study file (`sdnperf run` runs it), kept beside its results.

    doc = load_template("quick")                       # the built-in recirculation/quick.toml
    write(pilot_study(doc), path)                      # then run_file(path, out, parser)

Recirculated packets are those to the second host (recirc_dst = HELD_DST: ping's echo
requests, iperf's data), so the RTT grows by one packet's hold and the replies come back at
once. Pings are spaced wider than the longest hold, so one held packet never waits for
another's passes (two at once share the recirculation path and each pass takes longer).
"""

from __future__ import annotations

import copy
import math
import tomllib
from pathlib import Path

from sdnperf.studies import builtin
from sdnperf.studies.study_cli import machine_rule, narrow

PASSES = "recirc_passes"
HOLD = "recirc_hold_us"
HELD_DST = "10.0.0.2"  # h2 in every built-in topology (Mininet numbers hosts in order)
PILOT_PASSES = {"sdnperf": [0, 500, 2000], "bmv2": [0, 16, 64]}
PILOT_PINGS = 40
SPACING = 3.0  # pings at least this many times the longest hold apart


class DesignError(ValueError):
    pass


def load_template(scale: str) -> dict:

    files = builtin.find("recirculation").files(scale)
    if not files:
        raise DesignError(f"the recirculation study has no {scale} scale")
    return tomllib.loads(files[0].read_text())


def load_template_file(path: Path) -> dict:
    """A user's study file as a template (checked as a study file first)."""
    # lazy: pulls in networkx, psutil, pydantic, wanted only here
    from sdnperf.study.loader import load_study

    load_study(path)  # StudyError (a ValueError) naming file:line
    doc = tomllib.loads(path.read_text())
    if not recirc_architectures(doc):
        raise DesignError(f'{path}: no p4 architecture with program = "recirc"')
    if not isinstance(doc.get("topology"), list):
        doc["topology"] = [doc["topology"]]
    return doc


def recirc_architectures(doc: dict) -> list[dict]:
    return [
        a
        for a in doc.get("architecture", [])
        if a.get("kind") == "p4" and a.get("program") == "recirc"
    ]


def with_cpu_priority(doc: dict, setting: str | None) -> dict:
    """The study file with every recirc architecture's switch processes scheduled at
    `setting` (arch/cpu_priority.py; `recirc study --cpu-priority`, over the file's own);
    None: the file as it is. The runs record the setting they ran with in their facts."""
    if setting is None:
        return doc
    out = copy.deepcopy(doc)
    for arch in recirc_architectures(out):
        arch["cpu_priority"] = setting
    return out


def target_of(arch: dict) -> str:
    return arch.get("target", "sdnperf")


def _held(arch: dict, program: str = "recirc", /, **params: int) -> dict:
    a = copy.deepcopy(arch)
    a["program"] = program
    a["params"] = {"recirc_dst": HELD_DST, **params}
    return a


def _ping(doc: dict) -> dict:
    for w in doc.get("workload", []):
        if w.get("kind") == "ping":
            return copy.deepcopy(w)
    raise DesignError("the recirculation study file has no ping workload")


def _interval(doc: dict, hold_ms: float) -> float:
    """The ping interval (s): the file's, or wider than SPACING longest holds."""
    base = float(_ping(doc).get("interval", 1.0))
    return round(max(base, SPACING * hold_ms / 1000.0), 3)


def _study(doc: dict, name: str) -> dict:
    study = dict(doc["study"])
    study["name"] = name
    study.pop("baseline", None)
    return study


def _zip_sweeps(
    doc: dict, values: dict[str, list[int]], intervals: list[float] | None
) -> list[dict]:
    """zip sweeps of each recirc architecture's passes and (given) of the ping interval."""
    sweeps = [
        {
            "param": f"architecture.{name}.params.{PASSES}",
            "values": v,
            "fit": "linear",
            "mode": "zip",
        }
        for name, v in values.items()
    ]
    if intervals:
        sweeps.append({"param": "workload.ping.interval", "values": intervals, "mode": "zip"})
    return sweeps


def distinct_intervals(intervals: list[float], step: float = 0.001) -> list[float]:
    """Each interval at least `step` (s) over the one before: a zip sweep's values must
    differ, and the floor (the file's interval) would repeat at the small N."""
    out: list[float] = []
    for v in intervals:
        out.append(round(max(v, out[-1] + step) if out else v, 3))
    return out


def pilot_study(
    doc: dict,
    pings: int = PILOT_PINGS,
    values: dict[str, list[int]] | None = None,
    topology: str | None = None,
    hold_ms: float = 0.0,
    name: str | None = None,
) -> dict:
    """A few pings at a few N on every topology (or `topology` only): the cost per pass.
    `values`: N by architecture name (zipped, equal lengths; default PILOT_PASSES[target]
    for every recirc architecture); only the architectures named run. `hold_ms`: the
    longest hold expected, so pings are spaced SPACING holds apart (the pilot's later rounds
    reach past the largest target)."""
    archs = [_held(a) for a in recirc_architectures(doc)]
    if not archs:
        raise DesignError("the study file has no p4 architecture with program = 'recirc'")
    if values is None:
        values = {a["name"]: PILOT_PASSES[target_of(a)] for a in archs}
    archs = [a for a in archs if a["name"] in values]
    topologies = [
        copy.deepcopy(t)
        for t in doc["topology"]
        if topology is None or t.get("name", t.get("kind")) == topology
    ]
    if not archs or not topologies:
        raise DesignError(f"the pilot has nothing to run ({list(values)}, {topology!r})")
    ping = _ping(doc)
    ping["count"] = pings
    ping["interval"] = max(_interval(doc, hold_ms), 0.05)  # BMv2's N = 64: ms
    out = {
        "study": {**_study(doc, name or doc["study"]["name"] + "-pilot"), "repetitions": 1},
        "topology": topologies,
        "architecture": archs,
        "workload": [ping],
    }
    out["sweep"] = _zip_sweeps(out, values, None)
    return out


def bracket_study(
    doc: dict, values: dict[str, list[int]], costs: dict[str, float], name: str | None = None
) -> dict:
    """The delay study proper: each recirc architecture at its own N values (`values`, by
    architecture name, zipped: equal lengths), pings spaced by the longest hold expected at
    each point from `costs` (ms per pass, by architecture name: the largest over topologies)."""
    lengths = {len(v) for v in values.values()}
    if len(lengths) != 1:
        raise DesignError(f"the N lists must have one length to zip (got {values})")
    archs = [_held(a) for a in recirc_architectures(doc) if a["name"] in values]
    intervals = distinct_intervals(
        [_interval(doc, max(values[n][i] * costs[n] for n in values)) for i in range(lengths.pop())]
    )
    out = {
        "study": _study(doc, name or doc["study"]["name"]),
        "topology": copy.deepcopy(doc["topology"]),
        "architecture": archs,
        "workload": [_ping(doc)],
    }
    out["sweep"] = _zip_sweeps(out, values, intervals)
    out["sweep"] += [
        copy.deepcopy(s) for s in doc.get("sweep", []) if s["param"] == "topology.link.bw"
    ]
    return out


def verify_study(
    doc: dict,
    name: str,
    topology: str,
    target: str,
    passes: int,
    target_ms: float,
    link_bw=None,
    hold: bool = True,
    workloads: str = "all",
    cpu_priority: str | None = None,
) -> dict:
    """One topology and switch: N = 0, the planned N and (`hold`) the hold-by-time program
    (its hold split over the switches a packet crosses), each with the workloads: "all"
    (ping and the scale's TCP and UDP), "ping" (the delay only: a round of the closed loop)
    or "cost" (TCP and UDP only). The hold per switch: target / switches on the path.
    `cpu_priority` (None: the study file's) sets the switch processes' scheduling."""
    if workloads not in ("all", "ping", "cost"):
        raise DesignError(f"workloads {workloads!r}: all, ping or cost")
    topo = next((t for t in doc["topology"] if t.get("name", t.get("kind")) == topology), None)
    if topo is None:
        raise DesignError(f"the study file has no topology {topology!r}")
    arch = next((a for a in recirc_architectures(doc) if target_of(a) == target), None)
    if arch is None:
        raise DesignError(f"the study file has no recirc architecture with target {target!r}")
    switches = int(topo.get("switches", 1)) if topo.get("kind") == "linear" else 1
    hold_us = max(1, round(target_ms * 1000 / switches))
    base = arch["name"]
    if cpu_priority is not None:  # the switch processes' scheduling (arch/cpu_priority.py)
        arch = {**arch, "cpu_priority": cpu_priority}
    archs = [
        {**_held(arch, **{PASSES: 0}), "name": f"{base}-n0"},
        {**_held(arch, **{PASSES: passes}), "name": f"{base}-n{passes}"},
    ]
    if hold:
        archs.append({**_held(arch, "recirc_hold", **{HOLD: hold_us}), "name": f"{base}-hold"})
    ping = _ping(doc)
    ping["interval"] = _interval(doc, 2 * target_ms)
    others = [copy.deepcopy(w) for w in doc.get("workload", []) if w.get("kind") != "ping"]
    chosen = {"all": [ping, *others], "ping": [ping], "cost": others}[workloads]
    if not chosen:
        raise DesignError("the study file has no TCP or UDP workload to measure the cost with")
    out = {
        "study": {**_study(doc, name), "order": "interleaved"},
        "topology": [copy.deepcopy(topo)],
        "architecture": archs,
        "workload": chosen,
    }
    if link_bw not in (None, "unlimited"):
        out["sweep"] = [{"param": "topology.link.bw", "values": [link_bw]}]
    return out


# -- a small TOML writer for the documents above (tables, arrays of tables, inline tables) --


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):
            raise DesignError(f"cannot write {v!r} in a study file")
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + "}"
    raise DesignError(f"cannot write {type(v).__name__} in a study file")


def dumps(doc: dict, header: str = "") -> str:
    lines = [f"# {line}" for line in header.splitlines()]
    for key, section in doc.items():
        tables = section if isinstance(section, list) else [section]
        for table in tables:
            lines += ["", f"[[{key}]]" if isinstance(section, list) else f"[{key}]"]
            lines += [f"{k} = {_value(v)}" for k, v in table.items()]
    return "\n".join(lines).lstrip("\n") + "\n"


def write(doc: dict, path: Path, header: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(doc, header))
    return path


def run_file(path: Path, out: Path, command_parser) -> int:
    """`sdnperf run PATH --out OUT --no-report`, leaving out the runs this machine cannot do
    (BMv2 where it is not installed), as `sdnperf study run` does. `command_parser`: the
    top-level parser (a command's `args.command_parser`)."""
    keep, why = machine_rule()
    ns = command_parser().parse_args(["run", str(path), "--out", str(out), "--no-report"])
    ns.narrow = lambda plan, selection: narrow(plan, selection, keep, why)
    return ns.func(ns)
