"""The built-in studies: the literature's methods as study files shipped with sdnperf.

Each study is a folder here named after it, holding one study file per scale
(`smoke.toml`, `quick.toml`, `paper.toml`; a ctlbench study has one file per southbound
protocol and scale, `quick.openflow.toml`, ...) and a page, `README.md` (question, method,
metrics, how to read the plots). Every file runs as is with `sdnperf run` (or
`sdnperf ctlbench run`), so `sdnperf study show NAME > my.toml` is a starting point to edit.

The answer sentences at the top of each report come from sdnperf/studies/answers/ (one
module per study, computed from the store); wall times measured on this machine are kept in
durations.json (durations.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCALES = ("smoke", "quick", "paper")


@dataclass(frozen=True)
class BuiltinStudy:
    name: str
    question: str
    seed: str  # the paper of /work/shared/seeds whose method it follows (README)
    tool: str = "run"  # "run": sdnperf run; "ctlbench": sdnperf ctlbench run
    # printed after `sdnperf study run NAME`: what the study's runs do not answer, and the
    # command that does ({scale} and {out} filled in)
    then: str = ""

    @property
    def folder(self) -> Path:
        return HERE / self.name

    def files(self, scale: str) -> list[Path]:
        """The study files of one scale, in the order they run."""
        return sorted(self.folder.glob(f"{scale}.toml")) + sorted(
            self.folder.glob(f"{scale}.*.toml")
        )

    def parts(self, scale: str) -> list[str]:
        """Names of the files of a scale: "" for `quick.toml`, "openflow" for `quick.openflow.toml`."""
        return [p.name[len(scale) + 1 : -len(".toml")] for p in self.files(scale)]

    @property
    def page(self) -> Path:
        return self.folder / "README.md"


STUDIES: dict[str, BuiltinStudy] = {
    s.name: s
    for s in (
        BuiltinStudy(
            "recirculation",
            "How much delay does each recirculation pass add in the P4 switch, how many "
            "passes hold a packet back by a target delay, and what does it cost in "
            "throughput?",
            seed="003",
            then="recirculation: these runs are the thesis's sweep of small N (RTT = a + "
            "b·N, the cost per pass); an N for a delay of milliseconds lies far beyond "
            "them, so the answer above extrapolates. Measured instead (a pilot, N values "
            "past the target, then the planned N run and corrected until it holds the "
            "target; docs/recirculation.md):\n"
            "  sdnperf recirc study --target-delay 5ms --scale {scale} --out {out}\n"
            "  sdnperf recirc plan --target-delay 5ms --from {out}/recirculation --verify",
        ),
        BuiltinStudy(
            "architectures-campus",
            "On the campus network, how do a Linux bridge, Open vSwitch with a reactive "
            "L2-learning controller and a P4 switch compare in first-packet and steady "
            "RTT, TCP throughput, UDP jitter and loss?",
            seed="004",
        ),
        BuiltinStudy(
            "topologies-traffic",
            "On multi-path, grid and transit-stub topologies, does topology-aware reactive "
            "forwarding over P4Runtime serve ICMP, TCP, UDP, video and a mixed workload "
            "better or worse than the same app over OpenFlow?",
            seed="000",
        ),
        BuiltinStudy(
            "controller-capacity",
            "How many packet-ins per second do our controllers, os-ken, Faucet and "
            "ovs-testcontroller answer over OpenFlow and P4Runtime as switches are added, "
            "and how long do they take?",
            seed="002",
            tool="ctlbench",
        ),
        BuiltinStudy(
            "workload-complexity",
            "How do delay, jitter and TCP throughput change as the forwarding work grows "
            "from L2 bridging to IPv4 routing, VLAN tagging and an 8-table pipeline?",
            seed="001",
        ),
    )
}


class UnknownStudy(KeyError):
    def __str__(self) -> str:
        return (
            f"no built-in study {self.args[0]!r}; built-in studies: "
            f"{', '.join(STUDIES)} (sdnperf study list)"
        )


def find(name: str) -> BuiltinStudy:
    try:
        return STUDIES[name]
    except KeyError:
        raise UnknownStudy(name) from None


def available() -> list[BuiltinStudy]:
    """The built-in studies that ship files (a study still being written has none)."""
    return [s for s in STUDIES.values() if s.files("quick")]
