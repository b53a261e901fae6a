"""What the answer functions share: per-run values from the store, grouped, summarised and
compared so that no sentence ranks noise.

The rule every answer follows (one place, here):
- every figure carries its n and, from n = 2, its 95 % confidence interval (`mean_text`);
- two architectures are ranked only when the study's significance test (report/stats.py
  `compare_groups`) says they differ at p < 0.05; otherwise, and always at n = 1, they are
  "indistinguishable", with the difference and its CI for the reader (`compare`);
- where the data cannot answer, the sentence says how many repetitions would
  (`MIN_REPETITIONS` where there is no spread yet, else `stats.repetitions_needed` for the
  difference seen).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from sdnperf.report.stats import (
    ALPHA,
    MeanCI,
    TestResult,
    compare_groups,
    difference_ci,
    finite,
    mean_ci,
    pct_difference,
    repetitions_needed,
)
from sdnperf.samples import Better

# Below this many repetitions per architecture a comparison has no spread to test or a test
# too weak to be worth a sentence (with 2 per group Welch's t has ~1 degree of freedom).
MIN_REPETITIONS = 3
RANK_NOTE = (
    "'≈' joins architectures this data cannot tell apart (p ≥ 0.05 or n < 2; a new rank "
    "starts only where one differs significantly from the first of the rank before)"
)


def values(store, study_id: int, metric: str, workload: str | None = None):
    """(run, value) of every ok run's summary `metric` (NaN left out)."""
    runs = {r.id: r for r in store.runs(study_id) if r.status == "ok"}
    out = []
    for s in store.summaries(study_id):
        if (
            s.metric == metric
            and s.run_id in runs
            and (workload is None or s.workload == workload)
            and s.value == s.value
        ):
            out.append((runs[s.run_id], s.value))
    return out


def by(pairs, key) -> dict:
    """Group (run, value) pairs by key(run) -> list of values."""
    groups: dict = defaultdict(list)
    for run, v in pairs:
        groups[key(run)].append(v)
    return dict(groups)


def _g(x: float, digits: int) -> str:
    return f"{x:.{digits}g}"


# what a figure of one run says when asked to (mean_text's `ask`)
NO_CI = f"at least {MIN_REPETITIONS} repetitions needed for a CI"


def mean_text(vals, unit: str, digits: int = 3, ask: bool = False) -> str:
    """'1.23 ms (95 % CI 1.1 .. 1.4, n = 3)', or '1.23 ms (n = 1)' for one run ('1.23 ms
    (n = 1: at least 3 repetitions needed for a CI)' with `ask`)."""
    m = mean_ci(vals)
    unit = f" {unit}" if unit else ""
    if m.half_width is None or not math.isfinite(m.half_width):
        return f"{_g(m.mean, digits)}{unit} (n = {m.n}{': ' + NO_CI if ask else ''})"
    low, high = m.mean - m.half_width, m.mean + m.half_width  # m.low, m.high, not None here
    return (
        f"{_g(m.mean, digits)}{unit} (95 % CI {_g(low, digits)} .. {_g(high, digits)}, n = {m.n})"
    )


def mean(vals) -> float:
    return sum(vals) / len(vals)


def point_value(run, path: str):
    return run.point.get(path)


@dataclass(frozen=True)
class Comparison:
    """`a` against `b` (the reference) on one metric."""

    a: MeanCI
    b: MeanCI
    better: Better
    test: TestResult
    pct: float | None  # (mean a - mean b) / |mean b| in %
    pct_ci: tuple[float, float] | None  # the CI of that difference, in % of mean b
    verdict: str  # "better" | "worse" (significant) | "indistinguishable"
    needed: int | None  # repetitions per group to tell this difference apart

    @property
    def ranked(self) -> bool:
        return self.verdict in ("better", "worse")

    def words(self) -> str:
        """'-57.0 % (better; 95 % CI -70 .. -44 %, p = 0.002)' or 'indistinguishable
        (Δ -57.0 %, 95 % CI -120 .. +6 %, p = 0.31; ~12 repetitions each would tell)'."""
        delta = "" if self.pct is None else "±0 %" if self.pct == 0 else f"{self.pct:+.1f} %"
        ci = (
            f"95 % CI {self.pct_ci[0]:+.3g} .. {self.pct_ci[1]:+.3g} %"
            if self.pct_ci is not None
            else ""
        )
        p = f"p = {self.test.p:.2g}" if self.test.p is not None else self.test.note
        if self.ranked:
            detail = "; ".join(x for x in (ci, p) if x)
            return f"{delta} ({self.verdict}{'; ' + detail if detail else ''})".strip()
        if self.a.n < 2 or self.b.n < 2:
            return (
                f"indistinguishable at n = {min(self.a.n, self.b.n)} (Δ {delta or '?'}, no "
                f"spread to test; needs at least {MIN_REPETITIONS} repetitions each)"
            )
        why = ", ".join(x for x in (f"Δ {delta}" if delta else "", ci, p or "no test") if x)
        more = ""
        if self.needed is not None and self.needed > max(self.a.n, self.b.n):
            more = f"; about {self.needed} repetitions each would tell a difference this size"
        elif self.needed is None:
            more = "; no difference to detect"
        return f"indistinguishable ({why}{more})"


def compare(a_vals, b_vals, better: Better) -> Comparison:
    """Compare two groups of per-run values by the study's significance rule."""
    a, b = mean_ci(a_vals), mean_ci(b_vals)
    test = compare_groups(a_vals, b_vals)
    diff = pct_difference(a.mean, b.mean, better)
    ci = difference_ci(a_vals, b_vals)
    pct_ci = (
        (100 * ci[0] / abs(b.mean), 100 * ci[1] / abs(b.mean))
        if ci is not None and b.mean and math.isfinite(b.mean)
        else None
    )
    # Repeated runs that all measured the same value in each group (a discrete metric: 0 %
    # loss, a hop count) leave no test to run, but a difference between them is no noise.
    constant = a.n >= 2 and b.n >= 2 and all(np.ptp(finite(v)) == 0 for v in (a_vals, b_vals))
    significant = diff.verdict in ("better", "worse") and (
        (test.p is not None and test.p < ALPHA) or (test.p is None and constant)
    )
    return Comparison(
        a,
        b,
        better,
        test,
        diff.pct,
        pct_ci,
        diff.verdict if significant else "indistinguishable",
        repetitions_needed(a_vals, b_vals),
    )


def ranked(groups: dict, unit: str, better: Better) -> str:
    """Architectures best first by mean, each with mean, CI and n; neighbours the test
    cannot tell apart are joined by '≈' instead of ranked: "a 1 ms (…) ≈ b 1.1 ms (…);
    then c 3 ms (…)". See RANK_NOTE."""
    order = sorted(groups, key=lambda k: mean(groups[k]), reverse=better == "higher")
    ranks: list[list] = []
    for key in order:
        if ranks and not compare(groups[key], groups[ranks[-1][0]], better).ranked:
            ranks[-1].append(key)
        else:
            ranks.append([key])
    return "; then ".join(
        " ≈ ".join(f"{k} {mean_text(groups[k], unit)}" for k in rank) for rank in ranks
    )


def more_repetitions(groups: dict, better: Better) -> str:
    """'' when every neighbour pair in `groups` is told apart or has enough runs; else a
    sentence saying how many repetitions per architecture would answer."""
    smallest = min((len(v) for v in groups.values()), default=0)
    if len(groups) < 2:
        return ""
    if smallest < 2:
        return (
            f"With n = {smallest} per architecture nothing here can be ranked: run at least "
            f"{MIN_REPETITIONS} repetitions (study.repetitions)."
        )
    order = sorted(groups, key=lambda k: mean(groups[k]), reverse=better == "higher")
    needed = [
        c.needed
        for x, y in zip(order, order[1:])
        if not (c := compare(groups[y], groups[x], better)).ranked and c.needed is not None
    ]
    wanted = max((n for n in needed if n > smallest), default=None)
    if wanted is None:
        return ""
    return (
        f"To tell the indistinguishable ones apart at the differences seen, about {wanted} "
        f"repetitions per architecture are needed (this study has {smallest})."
    )


def versus(store, study_id: int, baseline: str, items, per=lambda run: run.topology) -> list[str]:
    """One sentence per group (topology by default): for each (workload, metric, label,
    unit, better) in `items`, the baseline's mean and every other architecture's mean and
    its comparison with the baseline (`Comparison.words`), e.g. "grid: ping RTT [ms]
    openflow 0.21 (95 % CI …, n = 3), p4 0.18 (…): -14.3 % (better; …)"."""
    sentences: dict = defaultdict(list)
    for workload, metric, label, unit, better in items:
        groups = by(values(store, study_id, metric, workload), lambda r: (per(r), r.architecture))
        for where in sorted({w for w, _ in groups}):
            archs = {a: v for (w, a), v in groups.items() if w == where}
            parts = []
            for arch in ([baseline] if baseline in archs else []) + sorted(
                a for a in archs if a != baseline
            ):
                text = f"{arch} {mean_text(archs[arch], '')}"
                if arch != baseline and baseline in archs:
                    text += ": " + compare(archs[arch], archs[baseline], better).words()
                parts.append(text)
            sentences[where].append(f"{label} [{unit}] " + ", ".join(parts))
    return [f"{where}: " + "; ".join(parts) + "." for where, parts in sorted(sentences.items())]
