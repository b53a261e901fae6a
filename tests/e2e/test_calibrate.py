"""`sdnperf calibrate` through real networks: our P4 switch is calibrated for rate, delay
and loss from its port counters and pings; an architecture that needs the missing sch_netem
(the bridge, on a kernel without it) for its rate only, saying why; the record reaches the
provenance of a later study."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from sdnperf.emulation import capabilities
from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET


def test_calibrate_records_configured_and_achieved(tmp_path):
    out = tmp_path / "cal.json"
    proc = subprocess.run(
        [sys.executable, "-m", "sdnperf.cli", "calibrate", "--arch", "p4", "--arch", "bridge"]
        + ["--rate", "10", "--delay", "5", "--loss", "2", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "SDNPERF_CALIBRATION": str(out)},
    )
    print(proc.stdout[-3000:], proc.stderr[-3000:])
    assert proc.returncode == 0
    record = json.loads(out.read_text())
    p4, bridge = record["architectures"]
    assert p4["configured"] == {"rate_mbit": 10.0, "delay_ms": 5.0, "loss_pct": 2.0}
    got = p4["achieved"]
    assert 8.0 <= got["port_rate_mbit"] <= 11.0, got
    assert got["delay_ms"] >= 5.0, got  # min RTT / 4 links: never below the configured delay
    assert 0.8 <= got["port_loss_pct"] <= 3.5, got  # thousands of packets at 2 %
    assert "p4: rate 10 Mbit/s; port sent " in proc.stdout
    if capabilities.netem().ok:
        assert "delay_ms" in bridge["configured"]
    else:
        assert bridge["configured"] == {"rate_mbit": 10.0}
        assert "lacks sch_netem" in bridge["notes"][0]
        assert 0 < bridge["achieved"]["rate_mbit"] <= 11.0
    # what a later study's provenance copies (tests/unit/test_calibration.py)
    from sdnperf.fidelity.calibration import load_calibration

    assert load_calibration(out)["architectures"][0]["architecture"] == "p4"
