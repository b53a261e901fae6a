"""Writes the malformed-input corpus (files + cases.json) that
tests/unit/test_malformed_inputs.py feeds to every command; `--record` stores each case's
actual exit code and stderr as its expectation (review the diff before committing).

    .venv/bin/python tests/unit/data/malformed/make_corpus.py [--record]

Each case: argv (relative to this folder), the exit code and the exact stderr lines."""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

GOOD = """\
[study]
name = "good"
repetitions = 1

[topology]
kind = "single"
hosts = 2

[[architecture]]
name = "br"
kind = "bridge"

[[workload]]
name = "ping"
kind = "ping"
pairs = [["h1", "h2"]]
count = 2
"""

CHAIN3 = GOOD.replace('kind = "single"\nhosts = 2', 'kind = "linear"\nswitches = 3')
LOOPS = GOOD.replace('kind = "single"\nhosts = 2', 'kind = "grid"\nrows = 2\ncols = 2')


def arch(text: str, table: str) -> str:
    return text.replace('[[architecture]]\nname = "br"\nkind = "bridge"\n', table)


# study files: name -> text (bytes for non-UTF-8); `sdnperf check NAME` is their case
STUDIES: dict[str, str | bytes] = {
    "latin1-comment.toml": ("# caf\xe9 au lait\n" + GOOD).encode("latin-1"),
    "latin1-value.toml": GOOD.replace('"good"', '"caf\xe9"').encode("latin-1"),
    "utf16.toml": GOOD.encode("utf-16"),
    "binary.toml": bytes(range(256)),
    "empty.toml": "",
    "only-comment.toml": "# nothing here\n",
    "not-toml.toml": "this is not = = toml\n",
    "unclosed-table.toml": "[study\nname = 'x'\n",
    "duplicate-key.toml": GOOD.replace('name = "good"', 'name = "good"\nname = "again"'),
    "no-study.toml": GOOD.split("[topology]", 1)[1].join(["[topology]", ""]),
    "no-topology.toml": GOOD.replace('[topology]\nkind = "single"\nhosts = 2\n', ""),
    "no-architecture.toml": GOOD.replace('[[architecture]]\nname = "br"\nkind = "bridge"\n', ""),
    "no-workload.toml": GOOD.split("[[workload]]", 1)[0],
    "name-dot.toml": GOOD.replace('"good"', '"."'),
    "name-dotdot.toml": GOOD.replace('"good"', '".."'),
    "name-slash.toml": GOOD.replace('"good"', '"../../x"'),
    "name-hidden.toml": GOOD.replace('"good"', '".hidden"'),
    "name-empty.toml": GOOD.replace('"good"', '""'),
    "name-space.toml": GOOD.replace('"good"', '"my study"'),
    "name-5000.toml": GOOD.replace('"good"', '"' + "a" * 5000 + '"'),
    "name-65.toml": GOOD.replace('"good"', '"' + "b" * 65 + '"'),
    "name-number.toml": GOOD.replace('"good"', "42"),
    "study-unknown-field.toml": GOOD.replace("repetitions = 1", "repetitions = 1\ncolour = 1"),
    "study-typo-repetitions.toml": GOOD.replace("repetitions = 1", "repetition = 1"),
    "repetitions-zero.toml": GOOD.replace("repetitions = 1", "repetitions = 0"),
    "repetitions-huge.toml": GOOD.replace("repetitions = 1", "repetitions = 100000"),
    "repetitions-text.toml": GOOD.replace("repetitions = 1", 'repetitions = "three"'),
    "order-bad.toml": GOOD.replace("repetitions = 1", 'repetitions = 1\norder = "sorted"'),
    "offloads-bad.toml": GOOD.replace("repetitions = 1", "repetitions = 1\nhost_offloads = 1"),
    "baseline-unknown.toml": GOOD.replace("repetitions = 1", 'repetitions = 1\nbaseline = "ovs"'),
    "study-is-array.toml": GOOD.replace("[study]", "[[study]]"),
    "topology-kind-unknown.toml": GOOD.replace('kind = "single"', 'kind = "ring"'),
    "topology-kind-missing.toml": GOOD.replace('kind = "single"\n', ""),
    "topology-param-unknown.toml": GOOD.replace("hosts = 2", "hosts = 2\nswitches = 3"),
    "topology-param-type.toml": GOOD.replace("hosts = 2", 'hosts = "two"'),
    "topology-param-range.toml": GOOD.replace("hosts = 2", "hosts = 0"),
    "topology-too-big.toml": GOOD.replace(
        'kind = "single"\nhosts = 2', 'kind = "tree"\ndepth = 10\nfanout = 32'
    ),
    "topology-link-bw.toml": GOOD.replace("hosts = 2", "hosts = 2\n\n[topology.link]\nbw = 0"),
    "topology-link-unknown.toml": GOOD.replace(
        "hosts = 2", "hosts = 2\n\n[topology.link]\nlatency = 5"
    ),
    "topology-graphml-missing.toml": GOOD.replace(
        'kind = "single"\nhosts = 2', 'kind = "graphml"\nfile = "no-such.graphml"'
    ),
    "topology-name-bad.toml": GOOD.replace("hosts = 2", 'hosts = 2\nname = "a/b"'),
    "topologies-unnamed.toml": GOOD.replace("[topology]", "[[topology]]"),
    "arch-kind-unknown.toml": GOOD.replace('kind = "bridge"', 'kind = "hub"'),
    "arch-kind-missing.toml": GOOD.replace('kind = "bridge"\n', ""),
    "arch-field-unknown.toml": GOOD.replace('kind = "bridge"', 'kind = "bridge"\nstpp = "on"'),
    "arch-stp-bad.toml": GOOD.replace('kind = "bridge"', 'kind = "bridge"\nstp = "yes"'),
    "arch-vlan-range.toml": GOOD.replace('kind = "bridge"', 'kind = "bridge"\nvlan = 5000'),
    "arch-name-duplicate.toml": GOOD.replace(
        "[[workload]]", '[[architecture]]\nname = "br"\nkind = "router"\n\n[[workload]]'
    ),
    "arch-openflow-controller.toml": arch(
        GOOD, '[[architecture]]\nname = "of"\nkind = "openflow"\ncontroller = "onos"\n'
    ),
    "arch-p4-app.toml": arch(GOOD, '[[architecture]]\nname = "p4"\nkind = "p4"\napp = "magic"\n'),
    "arch-p4-target.toml": arch(
        GOOD, '[[architecture]]\nname = "p4"\nkind = "p4"\ntarget = "tofino"\n'
    ),
    "arch-p4-program.toml": arch(
        GOOD, '[[architecture]]\nname = "p4"\nkind = "p4"\nprogram = "nope"\n'
    ),
    "arch-ovs-flows-chain.toml": arch(
        CHAIN3, '[[architecture]]\nname = "fl"\nkind = "ovs-flows"\n'
    ),
    "arch-p4-l2-chain.toml": arch(
        CHAIN3, '[[architecture]]\nname = "p4"\nkind = "p4"\nprogram = "l2"\napp = "proactive"\n'
    ),
    "arch-flooding-loops.toml": arch(
        LOOPS,
        '[[architecture]]\nname = "of"\nkind = "openflow"\ncontroller = "ovs-testcontroller"\n',
    ),
    "arch-osken-loops.toml": arch(
        LOOPS,
        '[[architecture]]\nname = "of"\nkind = "openflow"\ncontroller = "osken"\napp = "l2-learning"\n',
    ),
    "arch-p4-loops.toml": arch(
        LOOPS, '[[architecture]]\nname = "p4"\nkind = "p4"\napp = "l2-learning"\n'
    ),
    "arch-two-refusals.toml": arch(
        CHAIN3,
        '[[architecture]]\nname = "fl"\nkind = "ovs-flows"\n\n[[architecture]]\nname = "p4"\n'
        'kind = "p4"\nprogram = "l2"\napp = "proactive"\n',
    ),
    "workload-kind-unknown.toml": GOOD.replace('kind = "ping"', 'kind = "pong"'),
    "workload-kind-missing.toml": GOOD.replace('kind = "ping"\n', ""),
    "workload-field-unknown.toml": GOOD.replace("count = 2", "count = 2\nbogus = 1"),
    "workload-count-text.toml": GOOD.replace("count = 2", 'count = "many"'),
    "workload-count-zero.toml": GOOD.replace("count = 2", "count = 0"),
    "workload-pairs-missing.toml": GOOD.replace('pairs = [["h1", "h2"]]\n', ""),
    "workload-pairs-host.toml": GOOD.replace('"h2"]]', '"h9"]]'),
    "workload-pairs-shape.toml": GOOD.replace('[["h1", "h2"]]', '"h1-h2"'),
    "workload-udp-rate.toml": GOOD.replace(
        'kind = "ping"\npairs = [["h1", "h2"]]\ncount = 2',
        'kind = "iperf-udp"\npairs = [["h1", "h2"]]\nrate = "fast"',
    ),
    "workload-tcp-duration.toml": GOOD.replace(
        'kind = "ping"\npairs = [["h1", "h2"]]\ncount = 2',
        'kind = "iperf-tcp"\npairs = [["h1", "h2"]]\nduration = -1',
    ),
    "workload-name-duplicate.toml": GOOD
    + '\n[[workload]]\nname = "ping"\nkind = "ping"\npairs = [["h2", "h1"]]\n',
    "workload-interval-small.toml": GOOD.replace("count = 2", "count = 2\ninterval = 0"),
    "sweep-unknown-path.toml": GOOD
    + '\n[[sweep]]\nparam = "workload.ping.colour"\nvalues = [1, 2]\n',
    "sweep-empty-values.toml": GOOD + '\n[[sweep]]\nparam = "workload.ping.count"\nvalues = []\n',
    "sweep-bad-value.toml": GOOD + '\n[[sweep]]\nparam = "workload.ping.count"\nvalues = [1, -5]\n',
    "sweep-duplicate-value.toml": GOOD
    + '\n[[sweep]]\nparam = "workload.ping.count"\nvalues = [1, 1]\n',
    "sweep-mode-bad.toml": GOOD
    + '\n[[sweep]]\nparam = "workload.ping.count"\nvalues = [1, 2]\nmode = "cross"\n',
    "five-mistakes.toml": GOOD.replace("repetitions = 1", "repetitions = 0\ncolour = 1")
    .replace('kind = "bridge"', 'kind = "bridge"\nstpp = 1')
    .replace('kind = "ping"', 'kind = "pong"')
    .replace("hosts = 2", "hosts = -1"),
}

CTLBENCH_GOOD = """\
[study]
name = "cb"

[[controller]]
kind = "echo"

[load]
mode = "throughput"
switches = [1]
duration = 1.0
"""

CTLBENCH: dict[str, str | bytes] = {
    "cb-latin1.toml": ("# caf\xe9\n" + CTLBENCH_GOOD).encode("latin-1"),
    "cb-name-dotdot.toml": CTLBENCH_GOOD.replace('"cb"', '".."'),
    "cb-name-long.toml": CTLBENCH_GOOD.replace('"cb"', '"' + "c" * 300 + '"'),
    "cb-kind-unknown.toml": CTLBENCH_GOOD.replace('kind = "echo"', 'kind = "onos"'),
    "cb-field-unknown.toml": CTLBENCH_GOOD.replace("duration = 1.0", "duration = 1.0\nspeed = 3"),
    "cb-mode-bad.toml": CTLBENCH_GOOD.replace('"throughput"', '"fastest"'),
    "cb-switches-zero.toml": CTLBENCH_GOOD.replace("[1]", "[0]"),
    "cb-duration-negative.toml": CTLBENCH_GOOD.replace("1.0", "-1.0"),
    "cb-protocol-kind.toml": CTLBENCH_GOOD.replace('kind = "echo"', 'kind = "faucet"').replace(
        'mode = "throughput"', 'protocol = "p4runtime"\nmode = "throughput"'
    ),
    "cb-external-remote.toml": CTLBENCH_GOOD.replace(
        'kind = "echo"', 'kind = "external"\naddress = "10.0.0.1:6653"'
    ),
    "cb-app-on-echo.toml": CTLBENCH_GOOD.replace('kind = "echo"', 'kind = "echo"\napp = "x"'),
    "cb-two-mistakes.toml": CTLBENCH_GOOD.replace('"throughput"', '"fastest"').replace(
        "[1]", "[0]"
    ),
}

P4 = {
    "p4-syntax.p4": "control C( { }\n",
    "p4-empty.p4": "",
    "p4-latin1.p4": "// caf\xe9\n".encode("latin-1"),
    "p4-no-main.p4": "#include <core.p4>\n#include <v1model.p4>\nheader h_t { bit<8> f; }\n",
    "p4-unknown-type.p4": "#include <core.p4>\nheader h_t { blob<8> f; }\n",
    "p4-include-missing.p4": '#include "nope.p4"\n',
    "p4-unterminated-if.p4": "#ifdef X\nconst bit<8> A = 1;\n",
    "p4-error-directive.p4": "#error stop here\n",
    "p4-bad-width.p4": "#include <core.p4>\nheader h_t { bit<0x> f; }\n",
}

JSON = {
    "sw-empty-object.json": "{}",
    "sw-runtime.json": json.dumps(
        {"target": "bmv2", "p4info": "x.p4info.txtpb", "bmv2_json": "x.json", "table_entries": []}
    ),
    "sw-array.json": "[]",
    "sw-not-json.json": "{ not json",
    "sw-latin1.json": '{"a": "caf\xe9"}'.encode("latin-1"),
    "sw-no-parser.json": json.dumps(
        {k: [] for k in ("header_types", "headers", "parsers", "deparsers", "actions", "pipelines")}
    ),
    "sw-wrong-type.json": json.dumps(
        {
            "header_types": 5,
            "headers": [],
            "parsers": [{"name": "parser"}],
            "deparsers": [],
            "actions": [],
            "pipelines": [{"name": "ingress"}],
        }
    ),
}

STF = {
    "stf-empty.stf": "",
    "stf-comments-only.stf": "# nothing\n\n",
    "stf-packet-no-bytes.stf": "packet 1\nexpect 2 00\n",
    "stf-packet-no-port.stf": "packet\n",
    "stf-odd-nibbles.stf": "packet 1 abc\n",
    "stf-bad-hex.stf": "packet 1 zz\n",
    "stf-unknown-command.stf": "frobnicate 1 2\npacket 1 00\n",
    "stf-star-in-packet.stf": "packet 1 0*\n",
    "stf-add-unknown-table.stf": "add nosuch k:1 a(1)\npacket 1 00\n",
    "stf-wide-action-data.stf": "add dmac hdr.ethernet.dstAddr:0x000000000002 fwd(port:0x1ff0)\n"
    "packet 1 00000000000200000000000108006970\n",
    "stf-wide-positional.stf": "add dmac hdr.ethernet.dstAddr:0x000000000002 fwd(1024)\n"
    "packet 1 00000000000200000000000108006970\n",
}
PROGRAM = (
    "json/l2_basic.json"  # a copy of the switch's own test program (rust/switch/tests/programs)
)

# argv per case, relative to HERE; EXPECT filled by --record
CASES: dict[str, list[str]] = {}
for name in STUDIES:
    CASES[f"check/{name}"] = ["sdnperf", "check", f"study/{name}"]
for name in (
    "latin1-comment.toml",
    "name-5000.toml",
    "topology-kind-unknown.toml",
    "not-toml.toml",
):
    CASES[f"topo-show/{name}"] = ["sdnperf", "topo", "show", f"study/{name}"]
for name in CTLBENCH:
    CASES[f"check/{name}"] = ["sdnperf", "check", f"ctlbench/{name}"]
for name in ("cb-latin1.toml", "cb-name-dotdot.toml", "cb-kind-unknown.toml"):
    CASES[f"ctlbench-run/{name}"] = ["sdnperf", "ctlbench", "run", f"ctlbench/{name}"]
CASES.update(
    {
        "cli/check-missing-file": ["sdnperf", "check", "study/no-such-file.toml"],
        "cli/check-folder": ["sdnperf", "check", "study"],
        "cli/check-only-selects-nothing": [
            "sdnperf",
            "check",
            "study/good.toml",
            "--only",
            "arch=p4",
        ],
        "cli/check-only-bad-syntax": ["sdnperf", "check", "study/good.toml", "--only", "arch"],
        "cli/check-only-unknown-name": [
            "sdnperf",
            "check",
            "study/good.toml",
            "--only",
            "colour=red",
        ],
        "cli/check-out-corrupt-store": [
            "sdnperf",
            "check",
            "study/good.toml",
            "--out",
            "stores/corrupt",
        ],
        "cli/report-corrupt-store": ["sdnperf", "report", "stores/corrupt/good"],
        "cli/report-empty-store-file": ["sdnperf", "report", "stores/empty/good"],
        "cli/report-missing": ["sdnperf", "report", "stores/none"],
        "cli/report-baseline-typo": [
            "sdnperf",
            "report",
            "stores/ok/good",
            "--baseline",
            "bridgee",
        ],
        "cli/ctlbench-name-dotdot": [
            "sdnperf",
            "ctlbench",
            "run",
            "--name",
            "../../x",
            "-c",
            "echo",
        ],
        "cli/ctlbench-name-long": [
            "sdnperf",
            "ctlbench",
            "run",
            "--name",
            "n" * 5000,
            "-c",
            "echo",
        ],
        "cli/ctlbench-controller-bad": ["sdnperf", "ctlbench", "run", "-c", "onos"],
        "cli/ctlbench-switches-bad": [
            "sdnperf",
            "ctlbench",
            "run",
            "--switches",
            "0",
            "-c",
            "echo",
        ],
        "cli/topo-show-unknown-kind": ["sdnperf", "topo", "show", "ring"],
        "cli/topo-show-bad-param": ["sdnperf", "topo", "show", "tree", "depth=zero"],
        "cli/topo-show-unknown-param": ["sdnperf", "topo", "show", "tree", "colour=red"],
        "cli/topo-show-not-name-value": ["sdnperf", "topo", "show", "tree", "depth"],
        "cli/topo-show-too-big": ["sdnperf", "topo", "show", "tree", "depth=10", "fanout=32"],
        "cli/study-show-unknown": ["sdnperf", "study", "show", "nope"],
        "cli/recirc-plan-bad-delay": [
            "sdnperf",
            "recirc",
            "plan",
            "--target-delay",
            "soon",
            "--from",
            "stores/ok/good",
        ],
        "cli/recirc-plan-not-recirc": [
            "sdnperf",
            "recirc",
            "plan",
            "--target-delay",
            "5ms",
            "--from",
            "stores/ok/good",
        ],
        "cli/recirc-plan-corrupt": [
            "sdnperf",
            "recirc",
            "plan",
            "--target-delay",
            "5ms",
            "--from",
            "stores/corrupt/good",
        ],
        "cli/run-only-selects-nothing": ["sdnperf", "run", "study/good.toml", "--only", "rep=9"],
        "cli/run-bad-study": ["sdnperf", "run", "study/five-mistakes.toml"],
        "cli/run-refused-study": ["sdnperf", "run", "study/arch-ovs-flows-chain.toml"],
        "cli/report-json-baseline-typo": [
            "sdnperf",
            "report",
            "stores/ok/good",
            "--json",
            "--baseline",
            "x",
        ],
    }
)
for name in P4:
    CASES[f"p4c/{name}"] = ["sdnperf-p4c", f"p4/{name}", "-o", "out"]
CASES.update(
    {
        "p4c/missing-file": ["sdnperf-p4c", "p4/no-such.p4", "-o", "out"],
        "p4c/no-output": ["sdnperf-p4c", "p4/p4-empty.p4"],
        "p4c/unknown-flag": ["sdnperf-p4c", "p4/p4-empty.p4", "-o", "out", "--frobnicate"],
        "p4c/std-p4-14": ["sdnperf-p4c", "--std", "p4-14", "p4/p4-empty.p4", "-o", "out"],
        "p4c/arch-psa": ["sdnperf-p4c", "--arch", "psa", "p4/p4-empty.p4", "-o", "out"],
        "p4c/p4runtime-json": [
            "sdnperf-p4c",
            "p4/p4-empty.p4",
            "-o",
            "out/x.json",
            "--p4runtime-files",
            "x.json",
        ],
        "p4c/two-inputs": ["sdnperf-p4c", "p4/p4-empty.p4", "p4/p4-syntax.p4", "-o", "out"],
    }
)
for name in JSON:
    CASES[f"switch-check/{name}"] = ["sdnperf-switch", "check", f"json/{name}"]
for name in STF:
    CASES[f"stf/{name}"] = ["sdnperf-switch", "stf", PROGRAM, f"stf/{name}"]


def write_files() -> None:
    for folder, files in (
        ("study", STUDIES),
        ("ctlbench", CTLBENCH),
        ("p4", P4),
        ("json", JSON),
        ("stf", STF),
    ):
        (HERE / folder).mkdir(exist_ok=True)
        for name, content in files.items():
            path = HERE / folder / name
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
    (HERE / "study" / "good.toml").write_text(GOOD)
    source = HERE.parents[3] / "rust" / "switch" / "tests" / "programs" / "l2_basic.json"
    (HERE / PROGRAM).write_text(source.read_text())


def main() -> None:
    write_files()
    cases_path = HERE / "cases.json"
    old = json.loads(cases_path.read_text()) if cases_path.exists() else {}
    cases = {
        k: {"argv": v, **{x: old[k][x] for x in ("exit", "stderr") if k in old and x in old[k]}}
        for k, v in CASES.items()
    }
    if "--record" in sys.argv:
        sys.path.insert(0, str(HERE.parents[3]))
        from tests.unit.test_malformed_inputs import run_case

        for case in cases.values():
            code, err = run_case(case["argv"])
            case["exit"], case["stderr"] = code, err
    cases_path.write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases")


if __name__ == "__main__":
    main()
