"""VoIP: the ITGDec parser on recorded D-ITG logs, call metrics and the G.107 E-model.

Recorded with D-ITG 2.8.1 in a Mininet network of 3 hosts on a Linux bridge (see
tests/unit/data/README.md): two 3-s calls to h2, G.711 (2 frames/packet) from h1 and
G.729 (2 frames/packet, VAD) from h3, whose link was set down for 0.3 s mid-call.
"""

import math
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from sdnperf.workloads import emodel
from sdnperf.workloads.config import WorkloadConfig
from sdnperf.workloads.voip import (
    ItgLog,
    Packet,
    call_stats,
    itgsend_argv,
    parse_itgdec,
    voip_output,
)

DATA = Path(__file__).parent / "data"


def log(name):
    return parse_itgdec((DATA / name).read_text())


def summary_value(name, key):
    for line in (DATA / name).read_text().splitlines():
        if line.startswith(key):
            return float(line.split("=")[1].split()[0])
    raise KeyError(key)


def test_parse_itgdec():
    recv = log("itgdec_g711_recv.txt")
    assert len(recv.packets) == 148 and recv.max_seq == 148
    p = recv.packets[0]
    assert p.seq == 1 and p.size == 172  # 2 x 80-B G.711 frames + 12-B RTP header
    assert 0 < p.delay_ms < 1
    sent = log("itgdec_g729_send.txt")
    assert sent.max_seq == 149 and len(sent.packets) == 134  # the sender's stack refused 15


def test_call_metrics_agree_with_itgdec_summary():
    for codec, name in (("G.711", "g711"), ("G.729", "g729")):
        recv, sent = log(f"itgdec_{name}_recv.txt"), log(f"itgdec_{name}_send.txt")
        st = call_stats(recv, sent.max_seq, codec, 2)
        summary = f"itgdec_{name}_summary.txt"
        assert st.owd_ms == pytest.approx(summary_value(summary, "Average delay") * 1e3, abs=1e-3)
        assert st.owd_max_ms == pytest.approx(
            summary_value(summary, "Maximum delay") * 1e3, abs=1e-3
        )
        # D-ITG's "average jitter" is the mean |Δdelay| form
        assert st.jitter_flowmean_ms == pytest.approx(
            summary_value(summary, "Average jitter") * 1e3, abs=1e-3
        )
        dropped = summary_value(summary, "Packets dropped")
        assert st.expected - st.received == dropped
    assert st.loss_pct == pytest.approx(100 * 15 / 149)


def test_emodel_known_values():
    assert emodel.mos_from_r(93.2) == pytest.approx(4.409, abs=1e-3)
    assert emodel.mos_from_r(-5) == 1.0 and emodel.mos_from_r(120) == 4.5
    assert emodel.mos_from_r(50) == pytest.approx(1 + 1.75 + 50 * -10 * 50 * 7e-6)
    assert emodel.delay_impairment(100) == 0
    x = 1.0  # Ta = 200 ms
    assert emodel.delay_impairment(200) == pytest.approx(
        25 * ((1 + x**6) ** (1 / 6) - 3 * (1 + (x / 3) ** 6) ** (1 / 6) + 2)
    )
    assert emodel.delay_impairment(200) == pytest.approx(3.04, abs=0.01)
    assert emodel.delay_impairment(400) == pytest.approx(24.07, abs=0.01)
    g711, g729 = emodel.CODECS["G.711"], emodel.CODECS["G.729"]
    assert emodel.effective_equipment_impairment(g711, 1.0) == pytest.approx(95 / 26.1)
    assert emodel.effective_equipment_impairment(g729, 0.0) == 11
    r, mos = emodel.call_mos("G.729", 2, owd_ms=1, jitter_ms=0.1, loss_pct=0)
    assert r == pytest.approx(82.2) and mos == pytest.approx(4.104, abs=1e-3)
    # 150 ms one way + 20 ms packets + 2 x 10 ms jitter buffer = 190 ms mouth to ear
    r, _ = emodel.call_mos("G.711", 2, owd_ms=150, jitter_ms=10, loss_pct=2)
    x = math.log2(1.9)
    idd = 25 * ((1 + x**6) ** (1 / 6) - 3 * (1 + (x / 3) ** 6) ** (1 / 6) + 2)
    assert r == pytest.approx(93.2 - idd - 95 * 2 / (2 + 25.1))


def test_lost_call_and_output():
    lost = call_stats(ItgLog(), 100, "G.711", 2)
    assert lost.loss_pct == 100 and lost.mos == 1.0
    good = ItgLog(
        [Packet(i, 10 + i * 0.02, 10 + i * 0.02 + 0.001 * (i % 2), 172) for i in range(1, 11)]
    )
    st = call_stats(good, 10, "G.711", 2)
    assert st.owd_ms == pytest.approx(0.5) and st.jitter_flowmean_ms == pytest.approx(1.0)
    out = voip_output("voip", {"h1->h2": (good, st), "h3->h2": (ItgLog(), lost)}, {"h1->h2": 0.0})
    m = {s.metric: s.value for s in out.summaries}
    assert m["loss_pct"] == pytest.approx(100 * 100 / 110)
    assert m["mos_min"] == 1.0 and m["owd_ms"] == pytest.approx(0.5)
    assert m["mos"] == pytest.approx((st.mos + 1.0) / 2)
    owd = [s for s in out.samples if s.metric == "owd_ms"]
    assert len(owd) == 10 and owd[1].t == pytest.approx(0.02)


def test_midnight_wrap():
    text = (
        "Flow>0001 Seq> 1 Src> a/1 Dest> b/2 txTime>23:59:59.990000 rxTime>23:59:59.995000 Size> 10\n"
        "Flow>0001 Seq> 2 Src> a/1 Dest> b/2 txTime>23:59:59.999000 rxTime>0:00:00.004000 Size> 10\n"
        "Flow>0001 Seq> 3 Src> a/1 Dest> b/2 txTime>0:00:00.010000 rxTime>0:00:00.015000 Size> 10\n"
    )
    pkts = parse_itgdec(text).packets
    assert [round(p.delay_ms, 6) for p in pkts] == [5.0, 5.0, 5.0]
    assert pkts[2].tx > pkts[1].tx


def test_config_and_argv(tmp_path):
    ta = TypeAdapter(WorkloadConfig)
    cfg = ta.validate_python(
        {
            "kind": "voip",
            "name": "voip",
            "pairs": [["h1", "h2"]],
            "codec": "G.729",
            "frames_per_packet": 3,
            "vad": True,
        }
    )
    argv = itgsend_argv("10.0.0.2", 10001, cfg, tmp_path / "s", tmp_path / "r")
    assert argv[argv.index("VoIP") :] == ["VoIP", "-x", "G.729.3", "-h", "RTP", "-VAD"]
    assert argv[argv.index("-t") + 1] == "10000"
    with pytest.raises(ValidationError, match="frames_per_packet for G.729"):
        ta.validate_python(
            {
                "kind": "voip",
                "name": "v",
                "pairs": [["h1", "h2"]],
                "codec": "G.729",
                "frames_per_packet": 1,
            }
        )


def test_shared_receiver_log_splits_by_sender():
    # ITGRecv can write two concurrent calls into one log: both number their packets from
    # 1, so the calls are told apart by the sender's address/port, never by sequence alone.
    text = (
        "Flow>0001 Seq> 1 Src> 10.0.0.1/4000 Dest> 10.0.0.2/10000 txTime>1:00:00.000000 rxTime>1:00:00.001000 Size> 172\n"
        "Flow>0002 Seq> 1 Src> 10.0.0.3/5000 Dest> 10.0.0.2/10001 txTime>1:00:00.000500 rxTime>1:00:00.002500 Size> 172\n"
        "Flow>0001 Seq> 2 Src> 10.0.0.1/4000 Dest> 10.0.0.2/10000 txTime>1:00:00.020000 rxTime>1:00:00.021000 Size> 172\n"
    )
    shared = parse_itgdec(text)
    assert len(shared.packets) == 3 and shared.sources() == {"10.0.0.1/4000", "10.0.0.3/5000"}
    first, second = shared.from_source("10.0.0.1/4000"), shared.from_source("10.0.0.3/5000")
    assert [p.seq for p in first.packets] == [1, 2] and [p.seq for p in second.packets] == [1]
    assert second.packets[0].delay_ms == pytest.approx(2.0)
