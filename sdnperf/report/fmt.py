"""Number formatting shared by the terminal table, the HTML page and the plots."""

from __future__ import annotations

import math


def decimals_for(x: float, digits: int = 4) -> int:
    """Decimals that show `digits` significant digits of x (0 for large numbers)."""
    if not math.isfinite(x) or x == 0:
        return 2
    return max(0, min(6, digits - 1 - math.floor(math.log10(abs(x)))))


def num(x: float | None, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.{decimals_for(x, digits)}f}"


SI = [(1e12, "T"), (1e9, "G"), (1e6, "M")]


def mean_pm(mean: float, half_width: float | None) -> str:
    """'12.34 ± 0.56': the CI gets two significant digits and the mean as many decimals.

    Values of a million or more get an SI suffix ('561.9M ± 2.8M') so columns stay narrow.
    """
    if mean is None or math.isnan(mean):
        return "—"
    scale, suffix = next(((f, s) for f, s in SI if abs(mean) >= f), (1.0, ""))
    mean /= scale
    if half_width is None or not math.isfinite(half_width):
        return num(mean) + suffix
    half_width /= scale
    if half_width == 0:
        return f"{num(mean)}{suffix} ± 0"
    d = decimals_for(half_width, 2)
    return f"{mean:.{d}f}{suffix} ± {half_width:.{d}f}{suffix}"


def p_value(p: float | None) -> str:
    if p is None or math.isnan(p):
        return "—"
    if p < 0.001:
        return "<0.001"
    return f"{p:.3f}"
