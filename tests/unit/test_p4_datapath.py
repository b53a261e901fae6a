"""The `p4` architecture's `datapath` setting: validation, the choice before the switches
start and after, and reading the switches' counters (no network)."""

from __future__ import annotations

import pydantic
import pytest

from sdnperf.arch import ArchitectureError, check_architecture
from sdnperf.arch import p4_datapath as dp
from sdnperf.arch.config import P4Config
from sdnperf.arch.p4 import P4Architecture, engine_links
from sdnperf.runner import host_offloads
from sdnperf.study.loader import StudyError, load_study_text
from sdnperf.topo.registry import build_topology

STUDY = """[study]
name = "x"
{study}
[topology]
kind = "linear"
switches = 2
{link}
[[architecture]]
name = "p4"
kind = "p4"
app = "proactive"
{arch}
[[workload]]
name = "ping"
kind = "ping"
pairs = [["h1", "h2"]]
"""


def study(arch="", link="", study_extra=""):
    return load_study_text(
        STUDY.format(arch=arch, link=link, study=study_extra), "<t>", base_dir="."
    )


def test_default_is_user_and_values_are_checked():
    assert P4Config(kind="p4", name="p4").datapath == "user"
    with pytest.raises(pydantic.ValidationError, match="datapath"):
        P4Config(kind="p4", name="p4", datapath="kernel")


def test_bmv2_has_no_fast_path():
    with pytest.raises(pydantic.ValidationError, match='datapath = "xdp" needs target'):
        P4Config(kind="p4", name="p4", target="bmv2", datapath="xdp")
    assert P4Config(kind="p4", name="p4", target="bmv2").datapath == "user"


def test_study_file_error_names_the_field_and_line():
    with pytest.raises(StudyError) as err:
        study(arch='datapath = "fast"')
    assert "datapath" in str(err.value) and "<t>:" in str(err.value)


def test_xdp_with_host_offloads_on_is_refused():
    with pytest.raises(StudyError, match="host_offloads"):
        study(arch='datapath = "xdp"', study_extra='host_offloads = "on"')
    # auto may fall back instead
    assert study(arch='datapath = "auto"', study_extra='host_offloads = "on"')


def test_fast_path_turns_host_offloads_off():
    # proactive entries: no first packet goes to a controller, offloads stay on for user...
    assert host_offloads(study()) is True
    # ...and go off when the switches may read MTU-sized frames only
    assert host_offloads(study(arch='datapath = "auto"')) is False
    assert host_offloads(study(arch='datapath = "xdp"')) is False


def test_xdp_refused_on_delayed_links_naming_field_and_links():
    spec = study(link="[topology.link]\ndelay_ms = 2").topology
    assert engine_links(spec)
    cfg = P4Config(kind="p4", name="p4", app="topo-forwarding", datapath="xdp")
    with pytest.raises(ArchitectureError, match=r'datapath = "xdp".*s1-s2.*delay/loss'):
        check_architecture(cfg, spec)


def test_a_rate_alone_runs_on_the_fast_path():
    # the kernel and the engine share each shaped port's link clock (xdpfast/shaper.rs)
    spec = study(link="[topology.link]\nbw = 100").topology
    assert engine_links(spec) == []
    cfg = P4Config(kind="p4", name="p4", app="topo-forwarding", datapath="xdp")
    check_architecture(cfg, spec)
    lossy = study(link="[topology.link]\nbw = 100\nloss_pct = 1").topology
    assert engine_links(lossy)


def test_choose():
    assert dp.choose("user", "p4", ["anything"]).datapath == "user"
    assert dp.choose("xdp", "p4", []).datapath == "xdp"
    assert dp.choose("auto", "p4", []).datapath == "xdp"
    fell = dp.choose("auto", "p4", ["the program is outside the fast path's subset: registers"])
    assert fell.datapath == "user" and "registers" in fell.reason
    with pytest.raises(dp.DatapathError, match=r"architecture 'p4': datapath = \"xdp\".*registers"):
        dp.choose("xdp", "p4", ["the program is outside the fast path's subset: registers"])


def test_blockers():
    assert (
        dp.blockers(target="sdnperf", program_fit=None, engine_links=[], host_offloads=False) == []
    )
    found = dp.blockers(
        target="sdnperf",
        program_fit="table t: ternary match",
        engine_links=[f"s{i}-s{i + 1}" for i in range(6)],
        host_offloads=True,
    )
    assert len(found) == 3
    assert "ternary" in found[0] and "s1-s2" in found[1] and " ..." in found[1]
    assert "super-packets" in found[2]


def test_parse_status_and_stats():
    st = dp.parse_status("on forwarded=120 dropped=3 to_engine=7\n")
    assert (st.running, st.on, st.forwarded, st.dropped, st.to_engine) == (True, True, 120, 3, 7)
    assert dp.parse_status("off forwarded=0 dropped=0 to_engine=5").on is False
    down = dp.parse_status("not running: port s1-eth1 is af_packet (needs af_xdp)")
    assert not down.running and down.why_not.startswith("port s1-eth1")
    unasked = dp.parse_status("not running (start with --xdp-fastpath; AF_XDP ports)")
    assert not unasked.running and unasked.why_not.startswith("(start with")
    assert dp.parse_stats("rx=10 tx=9 dropped=1 parser_errors=0") == {
        "rx": 10,
        "tx": 9,
        "dropped": 1,
        "parser_errors": 0,
    }


def test_after_start():
    up = dp.FastPathStatus(True, True)
    assert dp.after_start("auto", "p4", {"s1": up, "s2": up}) is None
    down = {"s1": up, "s2": dp.FastPathStatus(False, why_not="XDP attach refused")}
    fell = dp.after_start("auto", "p4", down)
    assert fell.datapath == "user" and "s2" in fell.reason and "XDP attach refused" in fell.reason
    with pytest.raises(dp.DatapathError, match=r"datapath = \"xdp\": switch s2"):
        dp.after_start("xdp", "p4", down)


class FakeSwitch:
    def __init__(self, name, answer):
        self.name, self.answer = name, answer

    def ctl(self, *commands):
        assert commands == ("fastpath", "stats")
        return self.answer


class FakeNet:
    def __init__(self, switches):
        self.switches = switches


def test_datapath_stats_sum_the_switches(tmp_path):
    spec = build_topology("linear", {"switches": 2}, seed=1)
    arch = P4Architecture(P4Config(kind="p4", name="p4"), spec, tmp_path, {})
    assert arch.datapath_stats() == {}  # no network yet
    arch._net = FakeNet(
        [
            FakeSwitch("s1", "on forwarded=100 dropped=0 to_engine=4\nrx=4 tx=3 dropped=1\n"),
            FakeSwitch("s2", "not running: no program loaded\nrx=50 tx=50 dropped=0\n"),
        ]
    )
    assert arch.datapath_stats() == {"xdp_forwarded": 100, "xdp_to_engine": 4, "engine_tx": 53}
    assert arch.run_facts() == {}  # no data path chosen (prepare() did not run)


def test_forwarded_by_the_counters():
    xdp = dp.Choice("xdp", 'datapath = "auto": the program fits the XDP fast path')
    # the kernel forwarded nothing: the user path at work, whatever the start said
    f = dp.forwarded_by(xdp, 0, 2400)
    assert (f.datapath, f.xdp_share) == ("user", 0.0)
    assert "started for xdp" in f.reason and "every packet" in f.reason
    # 900 of 1000 in the kernel is the bound for "xdp"; one packet less is "mixed"
    assert dp.forwarded_by(xdp, 900, 100).datapath == "xdp"
    assert dp.forwarded_by(xdp, 899, 101).datapath == "mixed"
    assert dp.forwarded_by(xdp, 101, 899).datapath == "mixed"
    low = dp.forwarded_by(xdp, 100, 900)
    assert (low.datapath, low.xdp_share) == ("user", 0.1) and "most packets" in low.reason
    kept = dp.forwarded_by(xdp, 2000, 3)
    assert (kept.datapath, kept.xdp_share, kept.reason) == ("xdp", 0.9985, xdp.reason)
    # nothing forwarded: the started path, said so
    idle = dp.forwarded_by(xdp, 0, 0)
    assert (idle.datapath, idle.xdp_share) == ("xdp", None) and "nothing forwarded" in idle.reason
    user = dp.Choice("user", 'datapath = "user"')
    assert dp.forwarded_by(user, 0, 50) == dp.Forwarded("user", 0.0, 'datapath = "user"')


def test_run_facts_replace_the_started_path(tmp_path):
    spec = build_topology("linear", {"switches": 2}, seed=1)
    arch = P4Architecture(P4Config(kind="p4", name="p4", datapath="auto"), spec, tmp_path, {})
    arch.datapath = dp.Choice("xdp", 'datapath = "auto": the program fits the XDP fast path')
    assert arch.facts()["datapath"] == "xdp" and arch.facts()["xdp_share"] is None
    # every packet punted to the engine (to_engine), which forwarded them all
    arch._net = FakeNet(
        [
            FakeSwitch("s1", "on forwarded=0 dropped=0 to_engine=1200\nrx=1200 tx=1200\n"),
        ]
    )
    arch.datapath_stats()
    facts = arch.facts()
    assert facts["datapath"] == "user" and facts["datapath_started"] == "xdp"
    assert facts["xdp_share"] == 0.0 and "every packet" in facts["datapath_reason"]
    assert arch.run_facts()["datapath"] == "user"


def _run(key, facts):
    from sdnperf.store.rows import RunRow

    return RunRow(
        id=1,
        study_id=1,
        key=key,
        topology="t",
        architecture="p4",
        workload="udp",
        repetition=0,
        params={"facts": facts},
        status="ok",
        error="",
        started=0.0,
        finished=1.0,
        cpu_bound=False,
    )


def test_report_section_lists_paths_and_reasons():
    from sdnperf.report.html import _datapaths

    assert _datapaths([_run("a", {"architecture": "bridge"})]) == ""
    html = _datapaths(
        [
            _run("a", {"datapath_setting": "auto", "datapath": "xdp", "datapath_reason": "fits"}),
            _run("b", {"datapath_setting": "auto", "datapath": "xdp", "datapath_reason": "fits"}),
            _run(
                "c",
                {"datapath_setting": "auto", "datapath": "user", "datapath_reason": "auto: s1 <x>"},
            ),
        ]
    )
    assert "P4 data paths" in html and "xdp_forwarded" in html
    assert '<td class="num">2</td>' in html and "auto: s1 &lt;x&gt;" in html
    assert "not counted" in html  # runs stored before the counters decided the path


def test_report_section_says_what_forwarded_not_what_started():
    from sdnperf.report.html import _datapaths

    punted = {
        "datapath_setting": "auto",
        "datapath_started": "xdp",
        "datapath": "user",
        "datapath_reason": "started for xdp (fits), but ...",
    }
    html = _datapaths(
        [_run("a", {**punted, "xdp_share": 0.0}), _run("b", {**punted, "xdp_share": 0.02})]
    )
    row = html[html.index("<tr><td>p4") :]
    assert row.startswith("<tr><td>p4</td><td>auto</td><td>xdp</td><td>user</td>"), row
    assert '<td class="num">2</td><td class="num">0.0–2.0 %</td>' in row
