"""Curves of a sweep study: for each swept parameter and metric, the metric at every value
of the parameter, per topology and architecture, with fits and corrected p-values.

Reads the store only. A curve is one architecture on one topology (and one setting of the
other swept parameters, when the study sweeps several): its points hold the per-run summary
values, their mean and 95 % CI. An architecture that does not have the parameter (it is
another architecture's, say) is drawn flat: the same configuration at every value.
At every point each architecture is compared with the baseline (the study's significance
rule, stats.compare_groups); the p-values of one parameter × metric are Holm-adjusted
together, since that many comparisons would otherwise find something by chance.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from dataclasses import dataclass, field

from sdnperf.report import fmt, metrics
from sdnperf.report.stats import (
    Difference,
    LinearFit,
    MeanCI,
    compare_groups,
    holm,
    linear_fit,
    log_fit,
    mean_ci,
    pct_difference,
)
from sdnperf.samples import Better, format_value
from sdnperf.store import Store

Rest = tuple[tuple[str, object], ...]  # the other swept parameters of a point


@dataclass
class CurvePoint:
    x: object
    values: list[float]
    stats: MeanCI
    diff: Difference | None = None  # vs the baseline at the same point
    p: float | None = None
    p_holm: float | None = None
    test: str = ""


@dataclass
class Curve:
    topology: str
    architecture: str
    rest: Rest
    points: list[CurvePoint] = field(default_factory=list)
    fit: LinearFit | None = None
    fit_note: str = ""  # why there is no fit

    @property
    def label(self) -> str:
        if not self.rest:
            return self.architecture
        others = ", ".join(f"{short_name(p)}={format_value(v)}" for p, v in self.rest)
        return f"{self.architecture} ({others})"


@dataclass
class Flat:
    """An architecture without the parameter: one value set for the whole axis."""

    topology: str
    architecture: str
    values: list[float]
    stats: MeanCI


@dataclass
class SweepMetric:
    param: str
    workload: str
    metric: str
    unit: str
    better: Better
    fit_kind: str  # "linear" | "log" | "none"
    numeric: bool  # x values are all numbers (else categories in the study's order)
    order: list[object]  # the parameter's values in the study's order
    topologies: list[str]
    curves: list[Curve]
    flats: list[Flat]
    # an earlier item of a zipped sweep (mode = "zip") with these very runs: drawn there
    same_runs_as: str | None = None

    @property
    def label(self) -> str:
        return metrics.label(self.metric)

    def xs(self) -> list[object]:
        seen = {format_value(p.x) for c in self.curves for p in c.points}
        ordered = [v for v in self.order if format_value(v) in seen]
        extra = sorted(
            {
                p.x
                for c in self.curves
                for p in c.points
                if format_value(p.x) not in {format_value(v) for v in ordered}
            },
            key=format_value,
        )
        return ordered + extra


def short_name(path: str) -> str:
    """The last part of a parameter path, for legends: topology.link.bw -> bw."""
    return path.rsplit(".", 1)[-1]


def _numeric(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def number(value: object) -> float:
    """A sweep value of a numeric sweep (SweepMetric.numeric) as a float."""
    if not isinstance(value, (int, float)):
        raise TypeError(f"sweep value {value!r} is not a number")
    return float(value)


def sweep_metrics(store: Store, study_id: int, baseline: str | None = None) -> list[SweepMetric]:
    """Every (swept parameter, workload, metric) with data, in parameter then metric order."""
    params = store.swept_params(study_id)
    if not params:
        return []
    spec = store.study(study_id).spec
    sweeps = {s.get("param"): s for s in spec.get("sweep", []) if isinstance(s, dict)}
    # zipped sweeps advance together: a partner's value is the same point, not another curve
    zipped = {p for p, s in sweeps.items() if s.get("mode") == "zip"}
    runs = {r.id: r for r in store.runs(study_id)}
    archs = list(dict.fromkeys(r.architecture for r in runs.values()))
    base = baseline or (spec.get("study") or {}).get("baseline") or (archs[0] if archs else "")
    topologies = list(dict.fromkeys(r.topology for r in runs.values()))
    summaries = [s for s in store.summaries(study_id) if s.status == "ok"]

    out: list[SweepMetric] = []
    for param in params:
        partners = zipped - {param} if param in zipped else set()  # not in a curve's rest
        swept_workloads = {
            (s.workload, s.metric) for s in summaries if param in runs[s.run_id].point
        }
        by_metric: dict[tuple[str, str], dict] = defaultdict(
            lambda: {"curves": defaultdict(lambda: defaultdict(list)), "flats": defaultdict(list)}
        )
        units: dict[tuple[str, str], tuple[str, Better]] = {}
        for s in summaries:
            if (s.workload, s.metric) not in swept_workloads or not math.isfinite(s.value):
                continue
            run = runs[s.run_id]
            entry = by_metric[(s.workload, s.metric)]
            units.setdefault((s.workload, s.metric), (s.unit, s.better))
            if param in run.point:
                rest = tuple(
                    sorted((k, v) for k, v in run.point.items() if k != param and k not in partners)
                )
                entry["curves"][(run.topology, run.architecture, rest)][
                    _hashable(run.point[param])
                ].append(s.value)
            else:
                entry["flats"][(run.topology, run.architecture)].append(s.value)
        sweep = sweeps.get(param, {})
        for (workload, metric), entry in by_metric.items():
            unit, better = units[(workload, metric)]
            rank = {a: i for i, a in enumerate([base] + [a for a in archs if a != base])}
            curves = sorted(
                (
                    Curve(t, a, rest, [CurvePoint(x, v, mean_ci(v)) for x, v in xs.items()])
                    for (t, a, rest), xs in entry["curves"].items()
                ),
                key=lambda c: (
                    topologies.index(c.topology),
                    rank.get(c.architecture, 0),
                    format_value(c.rest),
                ),
            )
            xs_all = [p.x for c in curves for p in c.points]
            item = SweepMetric(
                param,
                workload,
                metric,
                unit,
                better,
                sweep.get("fit", "none"),
                all(_numeric(x) for x in xs_all),
                list(sweep.get("values", [])),
                [t for t in topologies if any(c.topology == t for c in curves)],
                curves,
                [Flat(t, a, v, mean_ci(v)) for (t, a), v in entry["flats"].items()],
            )
            for c in item.curves:
                order = {format_value(x): i for i, x in enumerate(item.xs())}
                c.points.sort(key=lambda p: order.get(format_value(p.x), len(order)))
                _fit(item, c)
            _compare(item, base)
            out.append(item)
    sweep_order = list(sweeps)  # of zip partners with the same runs, the study's first is drawn
    for item in out:
        if item.param in zipped:
            first = min(
                (
                    o
                    for o in out
                    if o.param in zipped
                    and (o.workload, o.metric) == (item.workload, item.metric)
                    and _runs_of(o) == _runs_of(item)
                ),
                key=lambda o: sweep_order.index(o.param),
            )
            item.same_runs_as = None if first is item else first.param
    return out


def _runs_of(item: SweepMetric) -> list:
    """An item's values per curve and point, in point order: two partners of a zip with
    the same runs give the same list."""
    return [(c.topology, c.architecture, c.rest, [p.values for p in c.points]) for c in item.curves]


def _hashable(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def _fit(item: SweepMetric, curve: Curve) -> None:
    if item.fit_kind == "none":
        return
    if not item.numeric:
        curve.fit_note = "no fit: the parameter's values are not all numbers"
        return
    xs = [number(p.x) for p in curve.points for _ in p.values]
    ys = [v for p in curve.points for v in p.values]
    try:
        curve.fit = (log_fit if item.fit_kind == "log" else linear_fit)(xs, ys)
    except ValueError as exc:
        curve.fit_note = f"no fit: {exc}"


def _compare(item: SweepMetric, base: str) -> None:
    """Each architecture vs the baseline at the same point; Holm over all of them."""
    with warnings.catch_warnings():
        # near-identical groups (a count that is the same in every run) make scipy warn
        # about precision; the test result says what it can, the report is no place for it
        warnings.simplefilter("ignore", RuntimeWarning)
        _compare_points(item, base)


def _compare_points(item: SweepMetric, base: str) -> None:
    baseline = {
        (c.topology, c.rest, format_value(p.x)): p.values
        for c in item.curves
        if c.architecture == base
        for p in c.points
    }
    tested: list[CurvePoint] = []
    for c in item.curves:
        if c.architecture == base:
            continue
        for p in c.points:
            base_values = baseline.get((c.topology, c.rest, format_value(p.x)))
            if base_values is None:
                continue
            p.diff = pct_difference(p.stats.mean, mean_ci(base_values).mean, item.better)
            test = compare_groups(p.values, base_values)
            p.p, p.test = test.p, test.test
            tested.append(p)
    for p, adjusted in zip(tested, holm([p.p for p in tested])):
        p.p_holm = adjusted


def fit_number(value: float, half_width: float | None = None) -> str:
    """A fitted coefficient (± its CI half-width): fixed decimals in the usual range,
    3 significant digits in scientific notation for very small or large slopes."""
    if value == 0 or 1e-3 <= abs(value) < 1e6:
        return fmt.mean_pm(value, half_width)
    return f"{value:.3g}" + ("" if half_width is None else f" ± {half_width:.2g}")


def fit_lines(items: list[SweepMetric]) -> list[str]:
    """One line per fitted curve, for the terminal: a and b with their 95 % CIs, and R².
    Curves whose runs all gave the same value (a flat line, nothing to fit) are left out."""
    lines = []
    for item in items:
        for c in item.curves:
            if c.fit is None or (c.fit.b == 0 and c.fit.stderr_b == 0):
                continue
            half_a, half_b = c.fit.ci()
            where = f" on {c.topology}" if len(item.topologies) > 1 else ""
            lines.append(
                f"fit {item.workload} {item.metric} vs {item.param}, {c.label}{where}: "
                f"{c.fit.formula()}, a = {fit_number(c.fit.a, half_a)}, "
                f"b = {fit_number(c.fit.b, half_b)}, R² = {c.fit.r2:.4f} (n={c.fit.n})"
            )
    return lines
