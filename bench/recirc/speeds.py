"""The two speeds of the closed loop's rounds: for every verifying study under a results
folder (`recirc plan --verify`'s STUDY-verify-* stores), each design's pings as
recirc_plan.speeds_of reads them (added delay = RTT minus the median RTT at N = 0 of the
same study): the median, the fast level (10th percentile) and per pass, the share of pings
that ran slow (over 1.3 x the fast level), how much slower, and how many in a row.

    python bench/recirc/speeds.py RESULTS_DIR
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from sdnperf.store.sqlite import Store
from sdnperf.studies.recirc_plan import speeds_of


def main(folder: str) -> int:
    print("study\tdesign\tmedian_ms\tfast_ms\tfast_us_per_N\tslow_pct\tslow_over_fast\tmean_run")
    for db in sorted(Path(folder).glob("*-verify-*/study.sqlite")):
        if db.parent.name.endswith("-cost"):
            continue
        with Store(db) as store:
            study = store.studies()[-1]
            ping: dict[str, list[float]] = {}
            for s in store.samples(study_id=study.id, metric="rtt_ms", phase="steady"):
                if s.value == s.value:
                    ping.setdefault(s.architecture, []).append(s.value)
        base = next((v for a, v in ping.items() if a.endswith("-n0")), None)
        if not base:
            continue
        zero = statistics.median(base)
        for arch, rtts in sorted(ping.items()):
            if arch.endswith("-n0") or len(rtts) < 2:
                continue
            added = [v - zero for v in rtts]
            sp = speeds_of(added)
            n = arch.rsplit("-n", 1)[1] if not arch.endswith("-hold") else None
            per = f"{1000 * sp.fast_ms / int(n):.3f}" if n else "-"
            ratio = f"{sp.slow_over_fast:.2f}" if sp.slow_over_fast else "-"
            print(
                f"{db.parent.name.split('-verify-')[1]}\t{'N = ' + n if n else 'hold'}\t"
                f"{statistics.median(added):.3f}\t{sp.fast_ms:.3f}\t{per}\t"
                f"{100 * sp.slow_share:.1f}\t{ratio}\t{sp.mean_run:.1f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
