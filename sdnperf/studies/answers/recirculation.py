"""The answer of the `recirculation` study: per topology, switch (target) and link rate, the
RTT each pass adds (linear fit with 95 % CIs), the passes a 5 ms hold needs, the p99 RTT at
the ends of the sweep, where TCP throughput halves, UDP's loss and the switch's CPU. The
last three follow the rule of common.py: every figure with its n and CI, a change over N
stated only where the significance test tells it from the noise, else the repetitions
that would. A verifying study of `recirc plan --verify` (verify_answer) answers with the
delay its N and its hold by time added (median, mean and p99 with CIs, the pings they
come from) and their cost against N = 0 by the same rule (cost_sentences)."""

from __future__ import annotations

import re
import statistics
from collections import defaultdict

from sdnperf.report.stats import mean_ci
from sdnperf.samples import Better
from sdnperf.studies.answers.common import MIN_REPETITIONS, compare, mean_text, values
from sdnperf.studies.recirc_plan import (
    PlanError,
    achieved,
    fit_linear,
    interpolate_passes,
    passes_for,
    speeds_of,
)

TARGET_MS = 5.0
PASSES = "recirc_passes"
# `sdnperf recirc plan --verify` names its studies STUDY-verify-<target>ms-...
# ("0-5ms" for 0.5 ms): the target they verify
VERIFY_NAME = re.compile(r"-verify-(\d+(?:-\d+)?)ms-")


def _passes(run) -> int | None:
    arch = run.params.get("architecture", {})
    if arch.get("program") != "recirc":
        return None
    return int(arch.get("params", {}).get(PASSES, 0))


def _curve(run) -> str:
    """Topology, switch and the other swept conditions (link rate, UDP rate): one line each."""
    target = run.params.get("architecture", {}).get("target", "sdnperf")
    others = [
        f"{p.rsplit('.', 1)[-1]}={v}"
        for p, v in sorted(run.point.items())
        if not p.endswith(PASSES) and not p.startswith("workload.")
    ]
    return ", ".join([run.topology, "our switch" if target == "sdnperf" else target, *others])


def _points(store, study_id, metric, workload):
    out = defaultdict(list)
    for run, v in values(store, study_id, metric, workload):
        n = _passes(run)
        if n is not None:
            out[_curve(run)].append((n, v, run))
    return out


def _steady(store, study_id) -> dict[int, list[float]]:
    """Steady ping RTTs (ms) of every ok recirc.p4 run, by run id."""
    runs = {r.id for r in store.runs(study_id) if r.status == "ok" and _passes(r) is not None}
    out = defaultdict(list)
    for s in store.samples(study_id=study_id, metric="rtt_ms", phase="steady"):
        if s.run_id in runs and s.value == s.value:
            out[s.run_id].append(s.value)
    return out


def _median_points(store, study_id):
    """(N, median steady RTT of the run, run) per curve: the median shrugs off the
    scheduling outliers of a busy machine that move a run's mean."""
    import statistics

    runs = {r.id: r for r in store.runs(study_id)}
    out = defaultdict(list)
    for rid, rtts in _steady(store, study_id).items():
        run = runs[rid]
        out[_curve(run)].append((_passes(run), statistics.median(rtts), run))
    return out


def _p99(store, study_id) -> dict[str, dict[int, float]]:
    """p99 of every steady ping RTT, per curve and N (all repetitions pooled)."""
    import numpy as np

    runs = {r.id: r for r in store.runs(study_id)}
    pooled = defaultdict(list)
    for rid, rtts in _steady(store, study_id).items():
        pooled[_curve(runs[rid]), _passes(runs[rid])].extend(rtts)
    out: dict = defaultdict(dict)
    for (curve, n), vals in pooled.items():
        out[curve][n] = float(np.percentile(vals, 99))
    return out


def _fit_sentence(curve: str, what: str, pts, plan_target: bool, samples=None) -> str:
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    try:
        fit = fit_linear(xs, ys)
    except PlanError as exc:
        if len(set(xs)) == 2:  # two runs: a slope, but no interval to give with it
            (x0, y0), (x1, y1) = sorted(zip(xs, ys))
            return (
                f"{curve}: {what} {y0:.3g} ms at N = {x0}, {y1:.3g} ms at N = {x1}: "
                f"{(y1 - y0) / (x1 - x0) * 1000:.3g} µs per pass (two runs: no confidence "
                "interval)"
            )
        return f"{curve}: no fit of {what} vs N ({exc})"
    us = 1000.0
    text = (
        f"{curve}: each recirculation pass adds {fit.b * us:.3g} µs of {what} "
        f"(95 % CI {fit.b_ci[0] * us:.3g} .. {fit.b_ci[1] * us:.3g} µs; base "
        f"{fit.a:.3g} ms, R² = {fit.r2:.2f}, {fit.n} runs, N = {min(xs)}..{max(xs)})"
    )
    if plan_target and samples:
        # the answer by measurement: read between the measured N that enclose the target
        try:
            got = interpolate_passes(samples, TARGET_MS)
            text += (
                f"; a {TARGET_MS:g} ms hold (median added RTT) needs N = {got.passes}, read "
                f"between N = {got.between[0]} and {got.between[1]} (95 % bootstrap CI "
                f"{got.interval[0]} .. {got.interval[1]})"
            )
            return text
        except PlanError:
            pass  # not enclosed: the line below says it and marks an extrapolation
    if plan_target:
        try:
            plan = passes_for(fit, TARGET_MS)
            hi = "unbounded" if plan.interval[1] is None else str(plan.interval[1])
            beyond = " — beyond the N measured, an extrapolation" if plan.passes > max(xs) else ""
            text += (
                f"; a {TARGET_MS:g} ms hold needs N ≥ {plan.passes} (from the CIs "
                f"{plan.interval[0]} .. {hi}){beyond}"
            )
        except PlanError as exc:
            text += f"; no N for a {TARGET_MS:g} ms hold: {exc}"
    return text


def answer(store, study_id: int) -> list[str]:
    m = VERIFY_NAME.search(store.study(study_id).name)
    if m:
        return verify_answer(store, study_id, float(m.group(1).replace("-", ".")))
    sentences = []
    medians = _median_points(store, study_id)
    by_n: dict = defaultdict(lambda: defaultdict(list))  # curve -> N -> steady RTTs
    runs = {r.id: r for r in store.runs(study_id)}
    for rid, rtts in _steady(store, study_id).items():
        by_n[_curve(runs[rid])][_passes(runs[rid])].extend(rtts)
    minimum = _points(store, study_id, "rtt_min_ms", "ping")
    p99 = _p99(store, study_id)
    for curve in sorted(set(medians) | set(minimum)):
        parts = []
        if curve in medians:
            parts.append(_fit_sentence(curve, "median RTT", medians[curve], True, by_n.get(curve)))
        if curve in minimum:
            parts.append(
                _fit_sentence(curve, "minimum RTT", minimum[curve], False).split(": ", 1)[1]
            )
        ends = p99.get(curve, {})
        if len(ends) >= 2:
            lo, hi_n = min(ends), max(ends)
            parts.append(
                f"p99 RTT {ends[lo]:.3g} ms at N = {lo}, {ends[hi_n]:.3g} ms at N = {hi_n}"
            )
        sentences.append("; ".join(parts) + ".")
    for workload, metric, what in (
        ("tcp", "throughput_mbps", "TCP throughput"),
        ("udp", "throughput_mbps", "UDP throughput"),
    ):
        for curve, pts in sorted(_points(store, study_id, metric, workload).items()):
            groups = _by_passes(pts)
            if len(groups) >= 2:
                sentences.append(f"{curve}: {what} {_halving(groups)}.")
    for curve, pts in sorted(_points(store, study_id, "loss_pct", "udp").items()):
        sentences.append(f"{curve}: UDP loss {_against_first(_by_passes(pts), '%', 'lower')}.")
    cpu: dict = defaultdict(lambda: defaultdict(list))  # (curve, workload) -> N -> CPU %
    for run in store.runs(study_id):
        n = _passes(run)
        if run.status == "ok" and n is not None and "switch" in run.cpu.per_role:
            cpu[_curve(run), run.workload][n].append(run.cpu.per_role["switch"])
    for (curve, workload), groups in sorted(cpu.items()):
        sentences.append(
            f"{curve}: switch CPU during {workload} (% of one core) "
            f"{_against_first(groups, '%', 'lower')}."
        )
    return sentences


def _by_passes(pts) -> dict[int, list[float]]:
    """(N, value, run) points -> N -> the values of its runs."""
    out: dict = defaultdict(list)
    for n, v, _ in pts:
        out[n].append(v)
    return dict(out)


def _trend(groups: dict[int, list[float]], unit: str, better: Better, only=None) -> str:
    """'N = 0: 900 Mbit/s (95 % CI …, n = 3); N = 15: 400 Mbit/s (…): -55.6 % (worse; …)':
    each N's mean with its n and CI, and each beyond the first compared with the first N by
    the study's significance rule (common.compare), so a change inside the noise is called
    indistinguishable, not a trend."""
    ns = sorted(groups)
    first = groups[ns[0]]
    parts = []
    for n in ns if only is None else [ns[0], *only]:
        # 4 digits for throughput: 1004 Mbit/s, not 1e+03
        text = f"N = {n}: {mean_text(groups[n], unit, 4 if unit == 'Mbit/s' else 3)}"
        if n != ns[0]:
            text += ": " + compare(groups[n], first, better).words()
        parts.append(text)
    return "; ".join(parts)


def _against_first(groups: dict[int, list[float]], unit: str, better: Better) -> str:
    """The largest N against the smallest (UDP loss, switch CPU), or the one N measured."""
    ns = sorted(groups)
    if len(ns) == 1:
        return f"at N = {ns[0]}: {mean_text(groups[ns[0]], unit)}"
    return _trend(groups, unit, better, only=[ns[-1]])


def _halving(groups: dict[int, list[float]]) -> str:
    """Whether throughput halves over the sweep, said only where the data can tell: each
    N's runs against half of the first N's runs (common.compare, 'higher' is better). The
    first N significantly below that half is where it halves; if every N is significantly
    above it, it does not halve; otherwise the sentence names the N the noise leaves open
    and the repetitions per N that would tell."""
    ns = sorted(groups)
    half = [v / 2 for v in groups[ns[0]]]
    tests = {n: compare(groups[n], half, "higher") for n in ns[1:]}
    halved = next((n for n, c in tests.items() if c.verdict == "worse"), None)
    unsure = [n for n, c in tests.items() if not c.ranked]
    trend = f" (Mbit/s: {_trend(groups, 'Mbit/s', 'higher')})"
    if halved is not None:
        c = tests[halved]
        p = f", p = {c.test.p:.2g}" if c.test.p is not None else " in every run"
        return f"halves by N = {halved} (below half of N = {ns[0]}'s{p}){trend}"
    if not unsure:
        return f"does not halve up to N = {ns[-1]} (every N above half of N = {ns[0]}'s){trend}"
    open_ns = ", ".join(str(n) for n in unsure)
    smallest = min(len(groups[n]) for n in [ns[0], *unsure])
    if smallest < 2:
        more = f"at n = {smallest}; needs at least {MIN_REPETITIONS} repetitions per N"
    else:
        needed = max((c.needed for n in unsure if (c := tests[n]).needed is not None), default=0)
        more = (
            f"about {needed} repetitions per N would tell it from half of N = {ns[0]}'s"
            if needed > smallest
            else f"n = {smallest}"  # at half exactly, or a test weaker than its power says
        )
    return (
        f"is not seen to halve: whether it has halved at N = {open_ns} is inside the noise "
        f"({more}){trend}"
    )


def verified(
    store,
    study_id: int,
    target_ms: float,
    added: bool = True,
    confidence: float = 0.95,
    statistic: str = "median",
) -> dict:
    """What a verifying study achieved: per design (the N passes, the hold by time), the
    delay added over N = 0 (mean, min, p99 with bootstrap CIs), its spread and error, and
    the cost (TCP/UDP throughput, UDP loss, switch CPU): as means (`cost`, `cost_vs_base`),
    with n and CI per figure (`cost_figures`) and tested against N = 0's (`cost_compared`)."""
    runs = [r for r in store.runs(study_id) if r.status == "ok"]
    ping = defaultdict(list)
    ping_runs = defaultdict(set)  # the runs each design's pings came from
    by_run = {r.id: r for r in runs}
    for s in store.samples(study_id=study_id, metric="rtt_ms", phase="steady"):
        r = by_run.get(s.run_id)
        if r is not None and s.value == s.value:
            ping[r.architecture].append(s.value)
            ping_runs[r.architecture].add(r.id)
    summary = {(s.run_id, s.metric): s.value for s in store.summaries(study_id)}
    variant = {}
    for r in runs:
        variant[r.architecture] = (
            "hold"
            if r.architecture.endswith("-hold")
            else "base"
            if r.architecture.endswith("-n0")
            else "passes"
        )
    names = {v: a for a, v in variant.items()}
    if "base" not in names or "passes" not in names:
        raise PlanError("the verifying study finished no run at N = 0 or at the planned N")
    base = ping[names["base"]] if added else []
    out: dict = {
        "verify_study": store.study(study_id).name,
        "error_statistic": statistic,
        **scheduling_of(runs),
    }

    def delays(arch: str, prefix: str) -> None:
        rtts = ping.get(arch, [])
        if len(rtts) < 2:
            out[f"{prefix}achieved_ms"] = None
            return
        for stat, suffix in (("mean", ""), ("median", "_median"), ("min", "_min"), ("p99", "_p99")):
            point, ci = achieved(rtts, base, stat, confidence)
            out[f"{prefix}achieved{suffix}_ms"] = point
            out[f"{prefix}achieved{suffix}_ci_ms"] = list(ci)
        out[f"{prefix}spread_ms"] = statistics.stdev(rtts)
        got = out[f"{prefix}achieved{'' if statistic == 'mean' else '_' + statistic}_ms"]
        out[f"{prefix}error_pct"] = (got - target_ms) / target_ms * 100
        out[f"{prefix}pings"] = len(rtts)
        out[f"{prefix}ping_runs"] = len(ping_runs[arch])
        # each ping's added delay in the order sent: did some run at a slower speed?
        zero = statistics.median(base) if base else 0.0
        out[f"{prefix}speeds"] = speeds_of([v - zero for v in rtts]).as_dict()

    delays(names["passes"], "")
    if "hold" in names:
        delays(names["hold"], "hold_")
    out["base_spread_ms"] = statistics.stdev(base) if len(base) >= 2 else None
    # every run's figure, by design and figure ("tcp_mbps", "udp_loss_pct", the switch's
    # CPU per workload: runs of different workloads are no repetitions of each other)
    per_run: dict = defaultdict(lambda: defaultdict(list))
    cpu: dict = defaultdict(list)  # design -> every run's switch CPU (`cost`'s one figure)
    for r in runs:
        v = variant[r.architecture]
        for metric, label in (("throughput_mbps", "mbps"), ("loss_pct", "loss_pct")):
            x = summary.get((r.id, metric))
            if x is not None and x == x and r.workload != "ping":
                per_run[v][f"{r.workload}_{label}"].append(x)
        if "switch" in r.cpu.per_role:
            per_run[v][f"{r.workload}_switch_cpu_pct"].append(r.cpu.per_role["switch"])
            cpu[v].append(r.cpu.per_role["switch"])
    cost: dict = {
        v: {
            **{k: statistics.mean(x) for k, x in figures.items() if not k.endswith(CPU_KEY)},
            "switch_cpu_pct": statistics.mean(cpu[v]) if cpu[v] else None,
        }
        for v, figures in per_run.items()
    }
    out["cost"] = cost
    out["cost_figures"] = {
        v: {k: cost_figure(x, k) for k, x in figures.items()} for v, figures in per_run.items()
    }
    if "base" in cost:
        out["cost_vs_base"] = {
            v: cost_vs_base(c, cost["base"]) for v, c in cost.items() if v != "base"
        }
        out["cost_compared"] = {
            v: {
                k: cost_comparison(x, per_run["base"][k], k)
                for k, x in figures.items()
                if per_run["base"].get(k)
            }
            for v, figures in per_run.items()
            if v != "base"
        }
    return out


# The cost figures of a verifying study, by the end of their key (the workload's name
# before it): what they are, their unit, and which way is better
CPU_KEY = "_switch_cpu_pct"
COST_FIGURES: tuple[tuple[str, str, str, Better], ...] = (
    ("_mbps", "throughput", "Mbit/s", "higher"),
    ("_loss_pct", "loss", "%", "lower"),
    (CPU_KEY, "switch CPU", "% of one core", "lower"),
)


def _split(key: str) -> tuple[str, int]:
    """(workload, index in COST_FIGURES) of a cost figure's key; sorting by it orders the
    figures by workload, then throughput, loss, CPU."""
    for i, (end, *_) in enumerate(COST_FIGURES):
        if key.endswith(end):
            return key.removesuffix(end), i
    raise KeyError(key)


def _figure(key: str) -> tuple[str, str, str, Better]:
    """(label, what, unit, better) of a cost figure's key, e.g. 'udp_loss_pct' ->
    ('udp loss', 'loss', '%', 'lower')."""
    workload, i = _split(key)
    end, what, unit, better = COST_FIGURES[i]
    label = f"{what} during {workload}" if end == CPU_KEY else f"{workload} {what}"
    return label, what, unit, better


def _text(vals, key: str) -> str:
    """A cost figure's mean with n and 95 % CI, or at n = 1 the repetitions a CI needs."""
    unit = _figure(key)[2]
    return mean_text(vals, unit, 4 if unit == "Mbit/s" else 3, ask=True)


def cost_figure(vals: list[float], key: str) -> dict:
    """One design's cost figure over its runs: mean, 95 % CI (report.stats.mean_ci's t
    interval; None at n = 1), n, and the words."""
    m = mean_ci(vals)
    return {
        "mean": m.mean,
        "ci": None if m.half_width is None else [m.low, m.high],
        "n": m.n,
        "text": _text(vals, key),
    }


def cost_comparison(vals: list[float], base: list[float], key: str) -> dict:
    """A design's cost figure against N = 0's (common.compare, the study's significance
    rule): the verdict ("better", "worse" or "indistinguishable"), the difference in % of
    N = 0's with its 95 % CI, p, n of each, the repetitions per design that would tell
    the difference seen from the noise (MIN_REPETITIONS below 2 runs; None when told
    apart or when there is no difference), and the words."""
    c = compare(vals, base, _figure(key)[3])
    needed = None
    if min(c.a.n, c.b.n) < 2:
        needed = MIN_REPETITIONS
    elif not c.ranked and c.needed is not None and c.needed > max(c.a.n, c.b.n):
        needed = c.needed
    return {
        "verdict": c.verdict,
        "delta_pct": c.pct,
        "delta_ci_pct": None if c.pct_ci is None else list(c.pct_ci),
        "p": c.test.p,
        "test": c.test.test,
        "n": [c.a.n, c.b.n],
        "repetitions_needed": needed,
        "base_text": _text(base, key),
        "words": c.words(),
    }


def cost_sentences(row: dict, passes) -> list[str]:
    """The cost of each design (the N passes, the hold by time) against N = 0 of the same
    study, from `verified`'s figures: each figure with its n and CI, N = 0's beside it and
    the comparison (common.Comparison.words: "indistinguishable" inside the noise and at
    n = 1, a direction only where the test tells it)."""
    figures, compared = row.get("cost_figures") or {}, row.get("cost_compared") or {}
    out = []
    for design, what in (("passes", f"cost at N = {passes}"), ("hold", "cost of the hold by time")):
        if design not in figures:
            continue
        parts = []
        for key in sorted(figures[design], key=_split):
            text = f"{_figure(key)[0]} {figures[design][key]['text']}"
            c = compared.get(design, {}).get(key)
            text += (
                f" against N = 0's {c['base_text']}: {c['words']}"
                if c is not None
                else " (N = 0 measured none)"
            )
            parts.append(text)
        if parts:
            out.append(f"{what} (each against N = 0 of the same study): " + "; ".join(parts) + ".")
    return out


def cost_vs_base(cost: dict, base: dict) -> dict:
    """A design's cost beside N = 0's of the same study (the same load): throughputs as a
    percentage of N = 0's, UDP loss and switch CPU as the difference in points. A figure
    either side lacks (a run that measured nothing) stays out."""
    out: dict = {}
    for key, x in cost.items():
        b = base.get(key)
        if x is None or b is None:
            continue
        if key.endswith("_mbps"):
            if b > 0:
                out[key.removesuffix("_mbps") + "_pct_of_base"] = x / b * 100
        elif key.endswith("_pct"):
            out[key.removesuffix("_pct") + "_points_over_base"] = x - b
    return out


def scheduling_of(runs) -> dict:
    """The switch processes' `cpu_priority` setting of a verifying study's runs and what
    the kernel said they ran with (the run facts' `switch_scheduling`, per thread kind)."""
    settings = sorted(
        {r.params.get("architecture", {}).get("cpu_priority", "normal") for r in runs}
    )
    seen: dict[str, int] = {}
    for r in runs:
        threads = (r.params.get("facts", {}).get("switch_scheduling") or {}).get("threads", {})
        for kind, n in threads.items():
            seen[kind] = max(seen.get(kind, 0), n)
    return {"cpu_priority": "/".join(settings) or "normal", "switch_scheduling": seen}


def priority_note(setting: str) -> str:
    """What an answer says about the switch's scheduling when it was not the default."""
    return "" if setting == "normal" else f" (switch cpu_priority {setting})"


def verify_answer(store, study_id: int, target_ms: float) -> list[str]:
    """The sentences of a verifying study: N = …, measured … ms (target … ms), the hold by
    time beside it, and the cost next to N = 0."""
    runs = [r for r in store.runs(study_id) if r.status == "ok"]
    if not runs:
        return []
    row = verified(store, study_id, target_ms)
    r0 = runs[0]
    target = r0.params.get("architecture", {}).get("target", "sdnperf")
    where = f"{r0.topology}, {'our switch' if target == 'sdnperf' else target}" + priority_note(
        row["cpu_priority"]
    )
    passes = next(
        (
            r.params["architecture"]["params"][PASSES]
            for r in runs
            if _passes(r) and not r.architecture.endswith("-n0")
        ),
        None,
    )
    out = []
    for prefix, what in (("", f"N = {passes}"), ("hold_", "held by time")):
        if row.get(f"{prefix}achieved_ms") is None:
            continue

        def ci(stat: str, prefix=prefix) -> str:
            lo, hi = row[f"{prefix}achieved{stat}_ci_ms"]
            return f"95 % CI {lo:.3g} .. {hi:.3g}"

        k = row[f"{prefix}ping_runs"]
        out.append(
            f"{where}: {what}, measured {row[f'{prefix}achieved_median_ms']:.3g} ms (median "
            f"added RTT, {ci('_median')}; target {target_ms:g} ms, error "
            f"{row[f'{prefix}error_pct']:+.1f} %); mean {row[f'{prefix}achieved_ms']:.3g} ms "
            f"({ci('')}), p99 {row[f'{prefix}achieved_p99_ms']:.3g} ms ({ci('_p99')}), "
            f"SD {row[f'{prefix}spread_ms']:.3g} ms; n = {row[f'{prefix}pings']} pings in {k} "
            f"run{'s' if k != 1 else ''} (bootstrap CIs over the pings; each statistic minus "
            "the same one at N = 0, so a heavy tail at N = 0 can put the p99 below the median)."
        )
    out += [f"{where}: {s}" for s in cost_sentences(row, passes)]
    return out
