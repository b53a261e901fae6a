"""Writes the example link traces of this folder (Mahimahi format: one line per delivery
opportunity of one 1500-byte packet, the millisecond it may leave). Ours, synthetic, made
by this script with a fixed seed, so anyone can regenerate them byte for byte:

    python3 examples/traces/make_traces.py

constant-12mbit.trace   one opportunity every millisecond: 12 Mbit/s, 1 s long (looped)
step-24-6mbit.trace     24 Mbit/s for 5 s, then 6 Mbit/s for 5 s
cellular-down.trace     a cellular-like downlink, 30 s: the rate wanders (a mean-reverting
cellular-up.trace       random walk of its logarithm, mean about 8 / 2 Mbit/s) with short
                        outages, and opportunities arrive in bursts (a random count per ms),
                        as a scheduler handing out transmission slots would
"""

from __future__ import annotations

import math
import random
from pathlib import Path

HERE = Path(__file__).parent


def write(name: str, stamps: list[int]) -> None:
    (HERE / name).write_text("".join(f"{ms}\n" for ms in stamps))


def constant(rate_mbit: float, length_ms: int) -> list[int]:
    per_ms = rate_mbit / 12.0
    out, owed = [], 0.0
    for ms in range(1, length_ms + 1):
        owed += per_ms
        while owed >= 1:
            out.append(ms)
            owed -= 1
    return out


def cellular(seed: int, mean_mbit: float, length_ms: int) -> list[int]:
    rng = random.Random(seed)
    log_mean, log_rate = math.log(mean_mbit), math.log(mean_mbit)
    out, outage_left = [], 0
    for ms in range(1, length_ms + 1):
        if ms % 10 == 0:  # the rate moves every 10 ms, pulled back towards its mean
            log_rate += 0.02 * (log_mean - log_rate) + rng.gauss(0, 0.08)
            log_rate = min(max(log_rate, math.log(0.3)), math.log(60))
            if outage_left == 0 and rng.random() < 0.0015:  # about one outage per 7 s
                outage_left = rng.randint(50, 300)
        if outage_left:
            outage_left -= 1
            continue
        # opportunities this millisecond: Poisson with the current mean (Knuth's method)
        k, p, limit = 0, 1.0, math.exp(-math.exp(log_rate) / 12.0)
        while True:
            p *= rng.random()
            if p <= limit:
                break
            k += 1
        out.extend([ms] * k)
    return out


if __name__ == "__main__":
    write("constant-12mbit.trace", constant(12, 1000))
    write("step-24-6mbit.trace", constant(24, 5000) + [5000 + ms for ms in constant(6, 5000)])
    write("cellular-down.trace", cellular(1, 8.0, 30_000))
    write("cellular-up.trace", cellular(2, 2.0, 30_000))
