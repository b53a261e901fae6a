"""Playout buffer, adaptation rules and session metrics of an HTTP adaptive streaming player.

Pure and standard-library only: the player inside the client host (agents/has_client.py)
imports this file by path, and the workload recomputes the metrics from the client's log
with the same code, so the two can never disagree.

Playout model (times in seconds since the player started, before its first request):
- playback starts when `startup_segments` segments are downloaded: that instant is the
  start-up delay;
- while playing, the buffered content runs out at `buffer_end`; a segment that completes
  after `buffer_end` means the picture froze (a stall) from `buffer_end` to its
  completion, and playback resumes at once with that segment;
- buffer level at time t = content downloaded but not yet played.

Adaptation rules (named so a study can say which one it used):
- "throughput": rate-based. Estimate = harmonic mean of the last 3 segments' download
  throughputs; choose the highest bitrate <= 0.8 x estimate (the first segment: lowest).
- "buffer": BBA-0 (Huang et al., SIGCOMM 2014). Reservoir r = 25 % of the maximum
  buffer, upper bound u = 90 %: lowest bitrate while the buffer is below r, highest above
  u, in between the highest bitrate <= a linear map of the buffer level onto
  [lowest, highest].
"""

from __future__ import annotations

import math

SAFETY = 0.8  # throughput rule: share of the estimate a bitrate may use
HISTORY = 3  # throughput rule: segments in the harmonic mean
RESERVOIR = 0.25  # buffer rule, as shares of the maximum buffer
UPPER = 0.9


class Player:
    """Tracks playback against segment completion times."""

    def __init__(self, segment_s: float, startup_segments: int = 1):
        self.segment_s = segment_s
        self.startup_segments = startup_segments
        self.downloaded = 0
        self.startup_delay: float | None = None  # None until playback starts
        self.buffer_end = 0.0
        self.stalls: list[tuple[float, float]] = []  # (start, duration)

    def on_segment(self, t_done: float) -> None:
        """A segment finished downloading at t_done."""
        self.downloaded += 1
        if self.startup_delay is None:
            if self.downloaded >= self.startup_segments:
                self.startup_delay = t_done
                self.buffer_end = t_done + self.downloaded * self.segment_s
            return
        if t_done > self.buffer_end:
            self.stalls.append((self.buffer_end, t_done - self.buffer_end))
            self.buffer_end = t_done
        self.buffer_end += self.segment_s

    def buffer_level(self, t: float) -> float:
        if self.startup_delay is None:
            return self.downloaded * self.segment_s
        return max(0.0, self.buffer_end - t)

    @property
    def stall_time(self) -> float:
        return sum(d for _, d in self.stalls)


def choose_throughput(history_bps: list[float], ladder_bps: list[float]) -> int:
    """Index into the ladder (lowest first) by the throughput rule."""
    recent = [x for x in history_bps[-HISTORY:] if x > 0]
    if not recent:
        return 0
    estimate = len(recent) / sum(1.0 / x for x in recent)
    best = 0
    for i, rate in enumerate(ladder_bps):
        if rate <= SAFETY * estimate:
            best = i
    return best


def choose_buffer(buffer_s: float, max_buffer_s: float, ladder_bps: list[float]) -> int:
    """Index into the ladder (lowest first) by the BBA-0 buffer rule."""
    r, u = RESERVOIR * max_buffer_s, UPPER * max_buffer_s
    if buffer_s <= r:
        return 0
    if buffer_s >= u:
        return len(ladder_bps) - 1
    target = ladder_bps[0] + (ladder_bps[-1] - ladder_bps[0]) * (buffer_s - r) / (u - r)
    best = 0
    for i, rate in enumerate(ladder_bps):
        if rate <= target:
            best = i
    return best


def session_metrics(
    downloads: list[tuple[float, float, int, float]], segment_s: float, startup_segments: int
) -> dict:
    """Metrics of one session from its downloads [(t_request, t_done, bytes, bitrate_bps)]
    in request order, times in seconds since the player started.

    startup_delay_s (None if playback never started), stalls, stall_time_s,
    bitrate_mbps (mean of the chosen bitrates), bitrate_switches, segment_time_s /
    segment_time_max_s (download durations), throughput_mbps (bytes over the time from
    the first request to the last completion).
    """
    player = Player(segment_s, startup_segments)
    for _, done, _, _ in downloads:
        player.on_segment(done)
    rates = [d[3] for d in downloads]
    times = [d[1] - d[0] for d in downloads]
    span = downloads[-1][1] - downloads[0][0] if downloads else 0.0
    return {
        "startup_delay_s": player.startup_delay,
        "stalls": len(player.stalls),
        "stall_time_s": player.stall_time,
        "stall_list": list(player.stalls),
        "bitrate_mbps": sum(rates) / len(rates) / 1e6 if rates else None,
        "bitrate_switches": sum(1 for a, b in zip(rates, rates[1:]) if a != b),
        "segment_time_s": sum(times) / len(times) if times else None,
        "segment_time_max_s": max(times) if times else None,
        "throughput_mbps": sum(d[2] for d in downloads) * 8 / span / 1e6 if span > 0 else None,
    }


def throughput_bins(
    downloads: list[tuple[float, float, int, float]], interval: float = 1.0
) -> list[tuple[float, float]]:
    """[(end of interval, Mbit/s)]: each segment's bytes spread evenly over its download."""
    bins: dict[int, float] = {}
    for start, done, size, _ in downloads:
        length = max(done - start, 1e-9)
        k = int(math.floor(start / interval))
        while k * interval < done:
            lo, hi = max(start, k * interval), min(done, (k + 1) * interval)
            if hi > lo or length <= 1e-9:
                bins[k] = bins.get(k, 0.0) + size * (hi - lo) / length
            k += 1
    if not bins:
        return []
    return [
        (round((k + 1) * interval, 6), bins.get(k, 0.0) * 8 / interval / 1e6)
        for k in range(min(bins), max(bins) + 1)
    ]
