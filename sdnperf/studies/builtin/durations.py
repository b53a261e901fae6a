"""Wall times of the built-in studies measured on this machine (durations.json beside this
file), written by `sdnperf study run NAME --record` after a complete run (every planned run
attempted; a failed run is noted), and
read by `sdnperf study list`. Never estimated: a study without a measurement says so."""

from __future__ import annotations

import json
import platform
import time
from dataclasses import dataclass
from pathlib import Path

FILE = Path(__file__).resolve().parent / "durations.json"


@dataclass(frozen=True)
class Measured:
    seconds: float
    measured_at: str  # UTC, ISO 8601
    host: str
    cores: int
    command: str
    all_ok: bool = True  # every run of the study finished (else some failed, still timed)

    def text(self) -> str:
        m, s = divmod(round(self.seconds), 60)
        took = f"{m} min {s:02d} s" if m else f"{s} s"
        failed = "" if self.all_ok else "; some runs failed"
        return (
            f"{took} (measured {self.measured_at[:16].replace('T', ' ')} UTC on "
            f"{self.host}, {self.cores} cores{failed})"
        )


def load(path: Path | None = None) -> dict[str, dict[str, Measured]]:
    """study name -> scale -> measurement; {} when nothing was measured yet."""
    path = path or FILE
    if not path.exists():
        return {}
    raw = json.loads(path.read_text())
    return {
        name: {scale: Measured(**m) for scale, m in scales.items()} for name, scales in raw.items()
    }


def lookup(name: str, scale: str, path: Path | None = None) -> Measured | None:
    return load(path).get(name, {}).get(scale)


def record(
    name: str,
    scale: str,
    seconds: float,
    command: str,
    all_ok: bool = True,
    path: Path | None = None,
) -> Measured:
    path = path or FILE
    import os

    measured = Measured(
        seconds=round(seconds, 1),
        measured_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        host=platform.node(),
        cores=os.cpu_count() or 0,
        command=command,
        all_ok=all_ok,
    )
    raw = json.loads(path.read_text()) if path.exists() else {}
    raw.setdefault(name, {})[scale] = measured.__dict__
    path.write_text(json.dumps(raw, indent=2, sort_keys=True) + "\n")
    return measured
