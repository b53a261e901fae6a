"""The flood memory of the topology-aware controllers (sdnperf/controllers/flooding.py)."""

from __future__ import annotations

from sdnperf.controllers import flooding
from sdnperf.controllers.flooding import FLOOD_MEMORY_S, FloodMemory


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_frame_is_flooded_once_per_window():
    clock = Clock()
    memory = FloodMemory(clock)
    assert memory.first_time(b"arp who-has 10.0.0.2")
    clock.now += FLOOD_MEMORY_S - 0.01  # the copy that came back at another edge
    assert not memory.first_time(b"arp who-has 10.0.0.2")
    assert memory.first_time(b"arp who-has 10.0.0.3")  # another frame
    clock.now += 0.02  # the window since the first flood has passed
    assert memory.first_time(b"arp who-has 10.0.0.2")


def test_expired_frames_are_forgotten_past_the_limit(monkeypatch):
    monkeypatch.setattr(flooding, "REMEMBERED_MAX", 3)
    clock = Clock()
    memory = FloodMemory(clock)
    for i in range(3):
        assert memory.first_time(b"old %d" % i)
    clock.now += FLOOD_MEMORY_S
    assert memory.first_time(b"new 1") and memory.first_time(b"new 2")  # 5 > 3: old ones go
    assert len(memory.recent) == 2
