"""recirc plan, the pure part: the fit delay = a + b·N on synthetic data with known a and b,
its confidence intervals against the textbook formulas, and N for a target delay."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from sdnperf.studies.recirc_plan import PlanError, fit_linear, parse_delay_ms, passes_for

PASSES = [0, 1, 3, 7, 15, 31, 63]


def synthetic(a: float, b: float, noise: float, reps: int = 5, seed: int = 1):
    rng = np.random.default_rng(seed)
    x = [n for n in PASSES for _ in range(reps)]
    y = [a + b * n + rng.normal(0, noise) for n in x]
    return x, y


def test_exact_line_is_recovered_with_zero_width_intervals():
    x = PASSES
    fit = fit_linear(x, [0.98 + 0.68 * n for n in x])
    assert fit.a == pytest.approx(0.98) and fit.b == pytest.approx(0.68)
    assert fit.r2 == pytest.approx(1.0)
    assert fit.a_ci == pytest.approx((0.98, 0.98)) and fit.b_ci == pytest.approx((0.68, 0.68))


def test_intervals_match_the_textbook_formulas():
    x, y = synthetic(a=2.0, b=0.05, noise=0.2)
    fit = fit_linear(x, y, confidence=0.95)
    X, Y = np.array(x, float), np.array(y, float)
    n = len(X)
    b = ((X - X.mean()) * (Y - Y.mean())).sum() / ((X - X.mean()) ** 2).sum()
    a = Y.mean() - b * X.mean()
    s = math.sqrt(((Y - a - b * X) ** 2).sum() / (n - 2))
    se_b = s / math.sqrt(((X - X.mean()) ** 2).sum())
    se_a = s * math.sqrt(1 / n + X.mean() ** 2 / ((X - X.mean()) ** 2).sum())
    t = stats.t.ppf(0.975, n - 2)
    assert fit.b == pytest.approx(b) and fit.a == pytest.approx(a)
    assert fit.b_ci == pytest.approx((b - t * se_b, b + t * se_b))
    assert fit.a_ci == pytest.approx((a - t * se_a, a + t * se_a))
    r = np.corrcoef(X, Y)[0, 1]
    assert fit.r2 == pytest.approx(r * r)
    assert fit.n == n


def test_known_a_and_b_fall_in_their_intervals_about_95_percent_of_the_time():
    hits_a = hits_b = 0
    for seed in range(200):
        fit = fit_linear(*synthetic(a=1.0, b=0.5, noise=1.0, reps=2, seed=seed))
        hits_a += fit.a_ci[0] <= 1.0 <= fit.a_ci[1]
        hits_b += fit.b_ci[0] <= 0.5 <= fit.b_ci[1]
    assert 0.90 <= hits_a / 200 <= 0.99 and 0.90 <= hits_b / 200 <= 0.99


def test_passes_for_an_added_delay():
    fit = fit_linear(*synthetic(a=0.1, b=0.02, noise=0.005))
    plan = passes_for(fit, target=5.0)  # 5 / 0.02 = 250 passes
    assert plan.estimate == pytest.approx(250, rel=0.05)
    assert plan.passes == math.ceil(plan.estimate)
    low, high = plan.interval
    assert low <= plan.passes <= high
    assert low == math.ceil(5.0 / fit.b_ci[1]) and high == math.ceil(5.0 / fit.b_ci[0])
    assert "each pass adds" in plan.sentence() and f"N = {plan.passes}" in plan.sentence()


def test_passes_for_a_total_delay_uses_the_intercept_too():
    fit = fit_linear([0, 0, 10, 10], [1.0, 1.0, 2.0, 2.0])  # a = 1, b = 0.1, no noise
    plan = passes_for(fit, target=3.0, added=False)
    assert plan.estimate == pytest.approx(20) and plan.passes == 20
    assert plan.interval == (20, 20)
    assert passes_for(fit, target=0.5, added=False).passes == 0  # reached without passes


def test_a_slope_whose_interval_reaches_zero_has_no_upper_bound():
    fit = fit_linear([0, 1, 2, 3, 4, 5], [1.0, 1.3, 0.9, 1.4, 1.0, 1.35])
    assert fit.b > 0 and fit.b_ci[0] < 0
    plan = passes_for(fit, target=1.0)
    assert plan.interval[1] is None and "unbounded" in plan.sentence()


@pytest.mark.parametrize(
    "x, y, message",
    [
        ([1, 1, 1], [1.0, 2.0, 3.0], "at least 2 different pass counts"),
        ([0, 1], [1.0, 2.0], "at least 3 points"),
        ([0, 1, 2], [1.0, 2.0], "3 pass counts but 2 delays"),
        ([0, 1, 2], [1.0, float("nan"), 2.0], "finite"),
    ],
)
def test_fit_refuses_what_it_cannot_fit(x, y, message):
    with pytest.raises(PlanError, match=message):
        fit_linear(x, y)


def test_a_falling_line_cannot_reach_a_target():
    with pytest.raises(PlanError, match="does not grow"):
        passes_for(fit_linear([0, 1, 2], [3.0, 2.0, 1.0]), target=5.0)


@pytest.mark.parametrize(
    "text, ms", [("5ms", 5.0), ("250us", 0.25), ("0.5s", 500.0), ("2", 2.0), (" 5 ms ", 5.0)]
)
def test_parse_delay(text, ms):
    assert parse_delay_ms(text) == pytest.approx(ms)


@pytest.mark.parametrize("text", ["five ms", "-1ms", "0", "inf"])
def test_parse_delay_refuses(text):
    with pytest.raises(PlanError):
        parse_delay_ms(text)


# -- the design that brackets the target (pilot -> geometric N), and the achieved delay --


def test_bracket_is_zero_then_geometric_and_reaches_past_every_target():
    from sdnperf.studies.recirc_plan import bracket_passes

    # 1 µs per pass on one switch, 2 µs on the chain (ms per pass): 5 ms needs 2500..5000
    values = bracket_passes({"one": 0.001, "chain": 0.002}, [5.0])
    assert values == [0, 625, 1250, 2500, 5000, 10000, 20000]  # 4x over the largest N
    ratios = {b / a for a, b in zip(values[1:], values[2:])}
    assert ratios == {2.0}
    for cost in (0.001, 0.002):  # each curve's N lies strictly inside the measured N
        assert values[1] < 5.0 / cost < values[-1]
    # several targets: from under the smallest to over the largest
    many = bracket_passes({"one": 0.001}, [1.0, 20.0])
    assert many[1] <= 1.0 / 0.001 / 4 and many[-1] >= 20.0 / 0.001 * 4
    # zipping two switches: the shorter list goes on upward to the same length
    assert len(bracket_passes({"one": 0.05}, [5.0], length=9)) == 9


def test_bracket_refuses_what_a_packet_cannot_do_and_bad_input():
    from sdnperf.studies.recirc_plan import bracket_passes

    with pytest.raises(PlanError, match="more than the 1000 a packet may make"):
        bracket_passes({"one": 0.001}, [5.0], maximum=1000)
    with pytest.raises(PlanError, match="costs per pass must be positive"):
        bracket_passes({"one": 0.0}, [5.0])
    with pytest.raises(PlanError, match="target delays must be positive"):
        bracket_passes({"one": 0.001}, [])


def test_pilot_doubles_n_until_the_added_delay_passes_the_largest_target():
    from sdnperf.studies.recirc_plan import pilot_next_passes

    # 1 µs per pass measured at N = 2000 (2 ms): 20 ms needs 20000, more than 2 x 2000
    assert pilot_next_passes([(500, 0.5), (2000, 2.0)], 20.0) == 20000
    # the target needs less than twice the last N (the cost grew): doubled
    assert pilot_next_passes([(2000, 2.0), (20000, 15.0)], 20.0) == 40000
    # no delay measured yet (noise at small N): doubled, never stuck
    assert pilot_next_passes([(500, -0.01)], 20.0) == 1000
    # passed: the curve is done; exactly at the target is not past it
    assert pilot_next_passes([(2000, 2.0), (40000, 20.5)], 20.0) is None
    assert pilot_next_passes([(40000, 20.0)], 20.0) == 80000
    # only the last round counts: an earlier pass (a scheduling outlier) does not end it
    assert pilot_next_passes([(2000, 25.0), (4000, 3.0)], 20.0) == 26667


def test_pilot_is_bounded_and_refuses_at_its_maximum_naming_it():
    from sdnperf.studies.recirc_plan import PILOT_MAX_PASSES, pilot_next_passes

    assert PILOT_MAX_PASSES == 2**20
    # capped at the maximum first: one more round at the bound itself
    assert pilot_next_passes([(2000, 0.01)], 20.0, maximum=100_000) == 100_000
    assert pilot_next_passes([(60_000, 10.0)], 20.0, maximum=100_000) == 100_000
    # at the maximum and still short of the target: refused, with the bound and the delay
    with pytest.raises(PlanError, match=r"maximum of N = 100000 passes \(added delay 15 ms\)"):
        pilot_next_passes([(60_000, 10.0), (100_000, 15.0)], 20.0, maximum=100_000)
    with pytest.raises(PlanError, match="--pilot-max-passes"):
        pilot_next_passes([(100_000, 15.0)], 20.0, maximum=100_000)
    # ... but a curve that passed at the maximum is done
    assert pilot_next_passes([(100_000, 21.0)], 20.0, maximum=100_000) is None
    with pytest.raises(PlanError, match="no round"):
        pilot_next_passes([], 20.0)
    with pytest.raises(PlanError, match="must be positive"):
        pilot_next_passes([(500, 1.0)], 0.0)


def test_bracket_reaches_the_pilots_n_past_the_target():
    from sdnperf.studies.recirc_plan import bracket_passes

    # without a margin above, the series stops at the first N past target / cost ...
    assert bracket_passes({"one": 0.001}, [5.0], above=1.0) == [0, 1250, 2500, 5000]
    # ... and goes on to the N the pilot measured past the target, whatever the cost said
    values = bracket_passes({"one": 0.001}, [5.0], above=1.0, reach=12000)
    assert values == [0, 1250, 2500, 5000, 10000, 20000] and values[-1] >= 12000


def test_cost_per_pass_is_the_pilot_slope_and_must_grow():
    from sdnperf.studies.recirc_plan import cost_per_pass

    assert cost_per_pass([0, 500, 2000], [0.1, 0.6, 2.1]) == pytest.approx(0.001)
    with pytest.raises(PlanError, match="does not grow"):
        cost_per_pass([0, 500, 2000], [0.3, 0.2, 0.1])
    with pytest.raises(PlanError, match="at least 2 different pass counts"):
        cost_per_pass([7, 7], [0.1, 0.2])


def test_a_bracketed_plan_is_an_interpolation_and_an_unbracketed_one_is_refused():
    from sdnperf.studies.recirc_plan import check_reachable

    xs = [0, 625, 1250, 2500, 5000, 10000]
    fit = fit_linear(xs, [0.1 + 0.001 * n for n in xs])
    plan = passes_for(fit, 5.0)
    assert plan.bracketed and plan.measured == (0, 10000) and plan.passes == 5000
    check_reachable(plan, maximum=2**24 - 1)  # no error
    short = fit_linear(xs[:3], [0.1 + 0.001 * n for n in xs[:3]])
    far = passes_for(short, 5.0)
    assert not far.bracketed
    with pytest.raises(PlanError, match=r"outside the N measured \(0 .. 1250\)"):
        check_reachable(far, maximum=2**24 - 1)
    check_reachable(far, maximum=2**24 - 1, extrapolate=True)
    with pytest.raises(PlanError, match="unreachable: 5 ms needs N = 5000 passes, more than"):
        check_reachable(plan, maximum=4999)


def test_achieved_delay_is_the_difference_with_a_bootstrap_ci():
    import numpy as np

    from sdnperf.studies.recirc_plan import achieved

    rng = np.random.default_rng(3)
    base = 0.1 + rng.exponential(0.02, 400)
    held = 5.1 + rng.exponential(0.02, 400)
    mean, (lo, hi) = achieved(held, base, "mean")
    assert mean == pytest.approx(float(held.mean() - base.mean()))
    assert lo < mean < hi and hi - lo < 0.01  # 400 pings, 20 µs spread: a tight CI
    low, (mlo, mhi) = achieved(held, base, "min")
    assert low == pytest.approx(float(held.min() - base.min())) and mlo <= low <= mhi
    p99, (plo, phi) = achieved(held, base, "p99")
    assert plo <= p99 <= phi and p99 > mean
    # no baseline: the statistic itself (a total delay); same data, same interval
    total, ci = achieved(held, [], "mean")
    assert total == pytest.approx(float(held.mean())) and ci == achieved(held, [], "mean")[1]
    # a wider spread gives a wider interval
    _, (wlo, whi) = achieved(5.1 + rng.exponential(0.5, 400), base, "mean")
    assert whi - wlo > hi - lo
    with pytest.raises(PlanError, match="at least 2 delays"):
        achieved([5.0], base)
    with pytest.raises(PlanError, match="statistic 'mode'"):
        achieved(held, base, "mode")


def test_interpolation_reads_n_between_the_measured_n_that_enclose_the_target():
    import numpy as np

    from sdnperf.studies.recirc_plan import interpolate_passes

    rng = np.random.default_rng(5)

    def pings(level):
        return list(level + rng.normal(0, 0.01, 60))

    # a bending curve (a loaded machine): 0.5 ms at 800, 10 ms at 1600, 800 ms at 6400
    samples = {0: pings(0.1), 800: pings(0.6), 1600: pings(10.1), 6400: pings(800.1)}
    got = interpolate_passes(samples, 2.0)
    assert got.between == (800, 1600)
    assert got.estimate == pytest.approx(800 + 1.5 / 9.5 * 800, rel=0.01)
    lo, hi = got.interval
    assert lo <= got.passes <= hi + 1 and hi - lo < 20  # 60 pings a point: a tight interval
    # one line over every N would answer far off (the 6400 point pulls its slope up)
    line = passes_for(fit_linear(list(samples), [np.median(v) for v in samples.values()]), 2.0)
    assert line.passes < 100
    # total delay; mean instead of median
    assert interpolate_passes(samples, 5.1, added=False).between == (800, 1600)
    assert interpolate_passes(samples, 2.0, statistic="mean").between == (800, 1600)
    # a target below the first N: between 0 and it
    assert interpolate_passes(samples, 0.25).between == (0, 800)


def test_interpolation_refuses_a_target_beyond_the_delays_measured():
    from sdnperf.studies.recirc_plan import interpolate_passes

    samples = {0: [0.1, 0.11, 0.09], 100: [1.0, 1.1, 0.9]}
    with pytest.raises(
        PlanError, match=r"not measured: 5 ms lies outside .*up to 0.9 ms at N = 100"
    ):
        interpolate_passes(samples, 5.0)
    with pytest.raises(PlanError, match="needs the delays at N = 0"):
        interpolate_passes({100: [1.0, 1.1]}, 0.5)
    with pytest.raises(PlanError, match="statistic 'p99'"):
        interpolate_passes(samples, 0.5, statistic="p99")


# -- the closed loop of `recirc plan --verify` --


def test_next_passes_first_step_is_proportional_through_n0():
    from sdnperf.studies.recirc_plan import next_passes

    # N = 1000 held 6 ms for a 5 ms target: the line through (0, 0) says 833
    assert next_passes([(1000, 6.0)], 5.0) == 833
    assert next_passes([(1000, 4.0)], 5.0) == 1250


def test_next_passes_interpolates_between_the_n_that_enclose_the_target():
    from sdnperf.studies.recirc_plan import next_passes

    # 833 held 4.5 ms, 1000 held 6 ms: the secant between them
    assert next_passes([(1000, 6.0), (833, 4.5)], 5.0) == round(833 + 0.5 / 1.5 * 167)


def test_next_passes_converges_on_a_delay_that_bends_upward():
    """A loaded machine: delay = 1 µs·N + (N / 2000)² ms (preemption grows with the hold).
    Secant steps from a plan read off a lighter load reach 5 % within a few rounds."""
    from sdnperf.studies.recirc_plan import next_passes

    def delay(n):
        return n / 1000 + (n / 2000) ** 2

    tried = [(5000, delay(5000))]  # the plan's N overshoots: 11.25 ms for 5 ms
    for _ in range(5):
        n = next_passes(tried, 5.0)
        tried.append((n, delay(n)))
        if abs(delay(n) - 5.0) / 5.0 < 0.05:
            break
    assert abs(tried[-1][1] - 5.0) / 5.0 < 0.05, tried
    assert len(tried) <= 5


def test_next_passes_bounds_its_step_and_never_repeats_an_n():
    from sdnperf.studies.recirc_plan import next_passes

    # a delay far below the target: at most 4 x the N run
    assert next_passes([(100, 0.01)], 5.0) == 400
    # no growth measured (noise): the proportional step, still bounded
    assert next_passes([(100, 2.0), (200, 1.9)], 5.0) == round(200 * 5 / 1.9)
    # the estimate rounds to an N already run: one more
    assert next_passes([(10, 4.99), (11, 5.2)], 5.0) == 12
    # a total RTT (origin: the RTT at N = 0): the line from (0, 1 ms)
    assert next_passes([(1000, 3.0)], 5.0, origin=1.0) == 2000
    assert next_passes([(2**24 - 1, 1.0)], 5.0) == 2**24 - 1  # never past the maximum


def test_next_passes_refuses_nothing_to_correct_from():
    from sdnperf.studies.recirc_plan import next_passes

    with pytest.raises(PlanError, match="one measured"):
        next_passes([], 5.0)
    with pytest.raises(PlanError, match="positive"):
        next_passes([(10, 1.0)], 0)


def test_a_target_on_a_step_of_the_curve_is_named_with_its_bracketing_pair():
    """Our switch at 5 ms under realtime (bench/recirc/README.md): N = 6357 held 3.8 ms
    (-24 %), N = 6748 7.35 ms (+47 %): a rise of 3.55 ms over 391 passes where their cost
    per pass (0.6-1.1 µs) predicts 0.33 ms. No secant step between them lands within 10 %."""
    from sdnperf.studies.recirc_plan import step_between

    tried = [(5448, 3.35), (6748, 7.35), (6357, 3.80)]
    step = step_between(tried, 5.0, 10.0)
    assert step is not None
    assert step.between == (6357, 6748) and step.delays == (3.80, 7.35)
    assert step.expected_rise == pytest.approx((3.80 / 6357 + 7.35 / 6748) / 2 * 391)
    assert step.errors_pct() == pytest.approx((-24.0, 47.0))
    assert not step.adjacent
    text = step.sentence()
    assert "lies on a step" in text and "N = 6357 held 3.8 ms (-24 %)" in text
    assert "N = 6748 held 7.35 ms (+47 %)" in text and "391 passes" in text
    # neighbouring N (BMv2 at 1 ms: N = 14 -21 %, N = 15 +12 %): no N can land within 10 %
    bmv2 = step_between([(16, 1.18), (14, 0.79), (15, 1.12)], 1.0, 10.0)
    assert bmv2 is not None and bmv2.adjacent and bmv2.between == (14, 15)
    assert "no N lands within 10 %" in bmv2.sentence()


def test_a_smooth_curve_or_a_round_within_tolerance_is_no_step():
    from sdnperf.studies.recirc_plan import step_between

    # proportional to N: the rise between the pair is what the cost per pass predicts
    assert step_between([(4000, 4.0), (6000, 6.0)], 5.0, 10.0) is None
    # a convex curve (a pass dearer as N grows) is still a curve
    curve = [(n, n / 1000 + (n / 3000) ** 2) for n in (3214, 5000)]
    assert step_between(curve, 5.0, 10.0) is None
    # one of the pair within the tolerance: the loop has its answer
    assert step_between([(4000, 4.6), (4100, 8.0)], 5.0, 10.0) is None
    # nothing on one side of the target yet: nothing brackets it
    assert step_between([(4000, 3.0), (4100, 3.2)], 5.0, 10.0) is None
    assert step_between([(4000, 6.0), (4100, 8.0)], 5.0, 10.0) is None
    with pytest.raises(PlanError):
        step_between([(1, 1.0)], 0.0, 10.0)


def test_speeds_tell_the_pings_that_ran_slow_and_whether_they_came_in_periods():
    """A round of our switch on the chain at N = 3698 on the quiet machine (2026-11-28
    02:43): most pings held ~4.6 ms, a run of consecutive ones ~7.5 ms (1.63x)."""
    from sdnperf.studies.recirc_plan import speeds_of

    added = [4.6] * 10 + [7.5] * 6 + [4.6] * 10 + [7.6] + [4.5] * 3
    s = speeds_of(added)
    assert s.fast_ms == pytest.approx(4.6, abs=0.1)
    assert s.slow_share == pytest.approx(7 / 30)
    assert s.slow_over_fast == pytest.approx(7.5 / 4.6, rel=0.01)
    assert s.mean_run == pytest.approx((6 + 1) / 2)
    assert s.as_dict()["slow_share_pct"] == pytest.approx(700 / 30)
    # one speed: nothing slow; nothing held (N = 0): no speed to tell
    steady = speeds_of([5.0, 5.1, 4.9, 5.0])
    assert steady.slow_share == 0 and steady.slow_over_fast is None and steady.mean_run == 0
    assert speeds_of([0.01, -0.02, 0.0]).slow_share == 0
    with pytest.raises(PlanError):
        speeds_of([1.0])


def test_a_step_between_rounds_that_ran_at_two_speeds_is_no_step_in_n():
    """The quiet machine's "step" (our switch, chain, 5 ms): N = 3698 held 4.43 ms (median,
    -11 %), N = 4327 7.26 ms (+45 %), but the fast pings of both lie on one line (4.35 and
    4.94 ms: 1.18 and 1.14 µs a pass); 12 % and 64 % of their pings ran 1.6-1.7x slower in
    runs of consecutive pings. The step is in time, not in N, and the sentence says so."""
    from sdnperf.studies.recirc_plan import Speeds, step_between

    tried = [(2708, 3.129), (4327, 7.261), (3441, 4.0785), (3698, 4.433)]
    speeds = {
        3698: Speeds(fast_ms=4.35, slow_share=0.12, slow_over_fast=1.63, mean_run=4, pings=200),
        4327: Speeds(fast_ms=4.94, slow_share=0.64, slow_over_fast=1.66, mean_run=18, pings=200),
    }
    step = step_between(tried, 5.0, 10.0, speeds=speeds)
    assert step is not None and step.between == (3698, 4327)
    assert step.in_time
    text = step.sentence()
    assert "no step in N" in text and "lies on a step" not in text
    assert "12 % and 64 % of their pings ran 1.6-1.7x slower" in text
    assert "1.18 and 1.14 µs a pass" in text
    # without the speeds (as before): named a step of the curve
    plain = step_between(tried, 5.0, 10.0)
    assert plain is not None and not plain.in_time and "lies on a step" in plain.sentence()


def test_a_step_whose_fast_pings_jump_too_is_a_step_in_n():
    """The fast level itself jumps between the pair (3 ms at N = 4000, 8 ms at 4500: 0.75 vs
    1.78 µs a pass), or the upper N ran slow no more often: a step in N, said as before."""
    from sdnperf.studies.recirc_plan import Speeds, step_between

    def sp(fast, share):
        return Speeds(fast_ms=fast, slow_share=share, slow_over_fast=None, mean_run=0, pings=99)

    tried = [(4000, 3.0), (4500, 8.0)]
    jump = step_between(tried, 5.0, 10.0, speeds={4000: sp(3.0, 0.0), 4500: sp(8.0, 0.0)})
    assert jump is not None and not jump.in_time and "lies on a step" in jump.sentence()
    # one line, but the upper N's pings ran slow less often: not what explains the rise
    odd = step_between(tried, 5.0, 10.0, speeds={4000: sp(3.0, 0.5), 4500: sp(3.4, 0.1)})
    assert odd is not None and not odd.in_time
