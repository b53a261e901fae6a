"""The application workloads (tcp-connect, voip, live-video, video, mixed) and packet
capture through a real Mininet network of Linux bridges, with the real tools."""

import os
import shutil
import sqlite3
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from sdnperf.workloads import WorkloadError, run_workload
from sdnperf.workloads.traffic_config import TcpConnectConfig
from tests.e2e.support import (
    NEEDS_MININET,
    WrongAddressContext,
    assert_all_reaped,
    bridge_network,
)
from tests.e2e.support import summary_metrics as metrics

pytestmark = NEEDS_MININET


@pytest.fixture(scope="module")
def ctx():
    from mininet.topo import SingleSwitchTopo

    # Right after start the first ARP exchange is sometimes lost and retried 1 s later
    # (seen as ~0.8 s of lost stream on a cold network); these tests check the
    # workloads, not that start-up transient, so the network settles first.
    with bridge_network(SingleSwitchTopo(4), settle_s=1.5) as context:
        yield context


def test_tcp_connect(ctx):
    cfg = TcpConnectConfig(
        kind="tcp-connect",
        name="syn",
        pairs=[["h1", "h2"], ["h3", "h2"]],
        connections=10,
        interval=0.01,
    )
    out = run_workload(cfg, ctx)
    m = metrics(out)
    assert m["connect_fail_pct"] == 0
    assert 0 < m["connect_p50_ms"] <= m["connect_max_ms"] and m["connect_first_ms"] > 0
    phases = [s.phase for s in out.samples if s.metric == "connect_ms"]
    assert phases.count("cold") == 2 and phases.count("steady") == 18
    assert_all_reaped(ctx)


def test_tcp_connect_refused_is_failure_not_crash(ctx):
    bad = WrongAddressContext(ctx.net)
    with pytest.raises(WorkloadError, match="h2"):
        run_workload(
            TcpConnectConfig(kind="tcp-connect", name="syn", pairs=[["h1", "h2"]], connections=2),
            bad,
        )
    assert_all_reaped(bad)


def test_voip_calls(ctx, tmp_path):
    from sdnperf.workloads.traffic_config import VoipConfig

    cfg = VoipConfig(
        kind="voip",
        name="voip",
        pairs=[["h1", "h2"], ["h3", "h2"]],
        codec="G.711",
        duration=2,
        capture=["h2"],
        capture_dir=str(tmp_path),
    )
    out = run_workload(cfg, ctx)
    m = metrics(out)
    assert m["loss_pct"] == 0
    assert 0 < m["owd_ms"] < 50 and m["jitter_rfc3550_ms"] >= 0
    assert m["mos"] == pytest.approx(4.41, abs=0.01)  # G.711, no loss, tiny delay
    owd = [s for s in out.samples if s.metric == "owd_ms"]
    assert {s.flow for s in owd} == {"h1->h2", "h3->h2"} and len(owd) >= 180
    pcaps = list(tmp_path.glob("voip-h2-*.pcap"))
    assert len(pcaps) == 1
    from sdnperf.workloads.capture import pcap_throughput

    series = pcap_throughput(pcaps[0])
    assert series and max(v for _, v in series) > 0.1  # two 87-kbit/s calls, with headers
    assert_all_reaped(ctx)


def test_live_video_stream(ctx):
    from sdnperf.workloads.traffic_config import LiveVideoConfig

    cfg = LiveVideoConfig(
        kind="live-video", name="live", pairs=[["h1", "h4"]], bitrate="4M", fps=25, duration=3
    )
    out = run_workload(cfg, ctx)
    m = metrics(out)
    assert m["loss_pct"] == 0 and m["frames_lost_pct"] == 0
    assert m["throughput_mbps"] == pytest.approx(4.0, rel=0.1)  # video bytes + 40-B headers
    assert m["frames_late_pct"] < 5 and m["owd_ms"] > 0
    assert m["jitter_rfc3550_ms"] >= 0 and m["jitter_flowmean_ms"] >= 0
    series = [s for s in out.samples if s.metric == "throughput_mbps"]
    assert len(series) >= 3
    assert_all_reaped(ctx)


def test_mixed_members_keep_their_metrics(ctx):
    from pydantic import TypeAdapter

    from sdnperf.workloads.config import WorkloadConfig

    cfg = TypeAdapter(WorkloadConfig).validate_python(
        {
            "kind": "mixed",
            "name": "mix",
            "members": [
                {
                    "kind": "ping",
                    "name": "ping",
                    "pairs": [["h1", "h4"]],
                    "count": 5,
                    "interval": 0.1,
                },
                {"kind": "iperf-tcp", "name": "tcp", "pairs": [["h2", "h3"]], "duration": 2},
                {"kind": "voip", "name": "voip", "pairs": [["h3", "h1"]], "duration": 2},
                {
                    "kind": "live-video",
                    "name": "live",
                    "pairs": [["h4", "h2"]],
                    "duration": 2,
                    "bitrate": "2M",
                },
                {"kind": "tcp-connect", "name": "syn", "pairs": [["h1", "h2"]], "connections": 5},
            ],
        }
    )
    out = run_workload(cfg, ctx)
    workloads = {s.workload for s in out.summaries}
    assert workloads == {"mix", "mix/ping", "mix/tcp", "mix/voip", "mix/live", "mix/syn"}
    assert metrics(out, "mix/voip")["mos"] > 4
    assert metrics(out, "mix/ping")["loss_pct"] == 0
    agg = metrics(out, "mix")["aggregate_mbps"]
    assert agg == pytest.approx(
        metrics(out, "mix/tcp")["throughput_mbps"] + metrics(out, "mix/live")["throughput_mbps"]
    )
    assert any(s.metric == "aggregate_mbps" and s.workload == "mix" for s in out.samples)
    assert_all_reaped(ctx)


@pytest.mark.parametrize("content,rule", [("synthetic", "buffer"), ("ffmpeg", "throughput")])
def test_video_streaming(ctx, tmp_path, monkeypatch, content, rule):
    from sdnperf.workloads.traffic_config import VideoConfig

    if content == "ffmpeg" and not shutil.which("ffmpeg"):
        pytest.skip("needs ffmpeg")
    monkeypatch.setenv("SDNPERF_CACHE", str(tmp_path / "cache"))
    cfg = VideoConfig(
        kind="video",
        name="video",
        pairs=[["h1", "h2"], ["h1", "h3"]],
        duration=8,
        segment_s=2,
        ladder=["240p:400K", "720p:2.5M", "1080p:5M"],
        adaptation=rule,
        max_buffer_s=6,
        content=content,
    )
    out = run_workload(cfg, ctx)
    m = metrics(out)
    assert 0 < m["startup_delay_s"] < 2
    assert m["stalls"] == 0 and m["stall_time_s"] == 0  # an idle 1-Gbit/s-class bridge
    assert 0.4 <= m["bitrate_mbps"] <= 5 and m["segment_time_s"] > 0
    assert m["throughput_mbps"] > 0
    segs = [s for s in out.samples if s.metric == "bitrate_mbps"]
    assert len(segs) == 8 and {s.flow for s in segs} == {"h1->h2", "h1->h3"}
    assert_all_reaped(ctx)


# --- the example studies, through the CLI on bridge, openflow and p4 ---------------------

# (the campus mix takes minutes: run by hand, see its header)
EXAMPLES = sorted(
    p
    for p in (Path(__file__).resolve().parents[2] / "examples").glob("workload-*.toml")
    if "campus" not in p.stem
)


@pytest.mark.skipif(not shutil.which("ovs-vsctl"), reason="needs Open vSwitch")
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_study_runs(path, tmp_path):
    if "video" in path.stem and not shutil.which("ffmpeg"):
        pytest.skip("needs ffmpeg")
    env = {**os.environ, "SDNPERF_RUN_ROOT": str(tmp_path / "run")}
    env.pop("SDNPERF_TAG", None)
    # A network namespace of its own: this module's Mininet network (s1, s1-eth1, ...)
    # is still up, and Mininet interface names would collide.
    cli = [
        sys.executable,
        "-m",
        "sdnperf.cli",
        "run",
        str(path),
        "--out",
        str(tmp_path / "out"),
        "--no-report",
    ]
    argv = [
        "unshare",
        "--net",
        "--mount",
        "sh",
        "-c",
        'mount -t sysfs sysfs /sys && ip link set lo up && exec "$@"',
        "sh",
        *cli,
    ]
    proc = subprocess.run(
        argv,
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    name = tomllib.loads(path.read_text())["study"]["name"]
    with sqlite3.connect(tmp_path / "out" / name / "study.sqlite") as conn:
        runs = conn.execute("select architecture, status, error from run").fetchall()
        summaries = conn.execute("select count(*) from summary").fetchone()[0]
    assert runs and all(status == "ok" for _, status, _ in runs), runs
    assert {arch for arch, _, _ in runs} == {"bridge", "openflow", "p4"}
    assert summaries > 0


def test_capture_on_switch_interface(ctx, tmp_path):
    from sdnperf.workloads.capture import pcap_throughput
    from sdnperf.workloads.traffic_config import LiveVideoConfig

    port = ctx.net.get("h4").defaultIntf().link.intf2.name  # e.g. s1-eth4
    cfg = LiveVideoConfig(
        kind="live-video",
        name="live",
        pairs=[["h1", "h4"]],
        bitrate="2M",
        duration=2,
        capture=[port, "h1"],
        capture_dir=str(tmp_path),
    )
    out = run_workload(cfg, ctx)
    sw = list(tmp_path.glob(f"live-{port}-*.pcap"))
    host = list(tmp_path.glob("live-h1-*.pcap"))
    assert len(sw) == 1 and len(host) == 1
    series = pcap_throughput(sw[0])
    # the switch port towards h4 carries the stream: ~2 Mbit/s plus headers
    assert max(v for _, v in series) == pytest.approx(2.1, rel=0.25)
    assert metrics(out)["loss_pct"] == 0
    assert_all_reaped(ctx)


def test_ctrl_c_during_a_mix_leaves_nothing(ctx):
    import signal
    import threading

    from pydantic import TypeAdapter

    from sdnperf.workloads.config import WorkloadConfig

    cfg = TypeAdapter(WorkloadConfig).validate_python(
        {
            "kind": "mixed",
            "name": "mix",
            "members": [
                {"kind": "voip", "name": "voip", "pairs": [["h3", "h1"]], "duration": 20},
                {"kind": "live-video", "name": "live", "pairs": [["h4", "h2"]], "duration": 20},
                {
                    "kind": "tcp-connect",
                    "name": "syn",
                    "pairs": [["h1", "h2"]],
                    "connections": 2000,
                    "interval": 0.01,
                },
                {"kind": "iperf-tcp", "name": "tcp", "pairs": [["h2", "h3"]], "duration": 20},
            ],
        }
    )
    # A background job of a non-interactive shell inherits SIGINT ignored: make Ctrl-C real.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(2.5, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_workload(cfg, ctx)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - started < 15
    assert_all_reaped(ctx)
