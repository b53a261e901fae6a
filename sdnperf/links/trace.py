"""Mahimahi-format link traces: one line per delivery opportunity, the millisecond at which
one MTU-sized packet (1500 bytes) may leave; a millisecond written n times gives n
opportunities. The trace repeats from its start after its last line when looped.

schedule.py turns a trace into a rate per bin (TraceCurve): the bytes its opportunities
deliver in each bin of `bin_ms`, as Mbit/s. That is how the lab applies a trace (a rate
changed in place every bin, apply.py); the order of opportunities inside a bin is not
reproduced.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path

MTU_BYTES = 1500


class TraceError(ValueError):
    """A trace file that cannot be used; the message names the file and the line."""


@dataclass(frozen=True)
class Trace:
    path: str
    opportunities_ms: tuple[int, ...]  # non-decreasing

    @property
    def period_ms(self) -> int:
        """Length of one pass: up to and including the last opportunity's millisecond
        (Mahimahi loops at the last timestamp)."""
        return max(self.opportunities_ms[-1], 1)

    def mean_mbps(self) -> float:
        return len(self.opportunities_ms) * MTU_BYTES * 8 / (self.period_ms * 1000.0)

    def count_before(self, ms: int, loop: bool) -> int:
        """Opportunities at times < ms (looped: pass n adds n * period_ms to each)."""
        ops = self.opportunities_ms
        if not loop:
            return bisect.bisect_left(ops, ms)
        period = self.period_ms
        passes, rest = divmod(ms, period)
        # a timestamp equal to the period is the next pass's 0 (it has no pass-0 copy at 0)
        at_end = len(ops) - bisect.bisect_left(ops, period)
        wrapped = self._wrapped()
        count = passes * len(ops) + bisect.bisect_left(wrapped, rest)
        return count - (at_end if ms > 0 else 0)

    def _wrapped(self) -> tuple[int, ...]:
        period = self.period_ms
        return tuple(sorted(o % period for o in self.opportunities_ms))


def parse_trace(text: str, source: str) -> Trace:
    """A trace from its text; TraceError naming `source` and the line of the first fault."""
    values: list[int] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        word = line.strip()
        if not word:
            continue
        if not word.isdigit():
            raise TraceError(
                f"{source}:{lineno}: expected a whole number of milliseconds, got {word!r}"
            )
        ms = int(word)
        if values and ms < values[-1]:
            raise TraceError(
                f"{source}:{lineno}: {ms} ms comes after {values[-1]} ms "
                "(timestamps must not decrease)"
            )
        values.append(ms)
    if not values:
        raise TraceError(f"{source}: no delivery opportunities (an empty trace)")
    if values[-1] == 0:
        raise TraceError(f"{source}:{len(values)}: the trace must end after 0 ms")
    return Trace(source, tuple(values))


def load_trace(path: str | Path) -> Trace:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_trace(text, str(path))
