"""The study file's link schedules: `[topology.schedule.NAME]` tables (pydantic).

    [topology.schedule.access]
    links = "hosts"                 # "all" | "hosts" | "core" | ["h1-s1", "s1-s2", ...]
    direction = "both"              # "both" | "up" | "down"
    rate_mbps = { "0" = 100, "5" = 10, "10" = 100 }    # seconds from traffic start -> value
    loss_pct = { "0" = 0, "30" = 5 }
    ramp = ["loss_pct"]             # these change linearly between their points
    trace_down = "traces/cell.down" # Mahimahi trace (relative to the study file)

Times are keys (strings of seconds), so one point of a schedule is a sweep path like any
parameter: `topology.schedule.access.rate_mbps.5`. Expansion is in schedule.py.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

QUANTITIES = ("rate_mbps", "delay_ms", "jitter_ms", "loss_pct")
Quantity = Literal["rate_mbps", "delay_ms", "jitter_ms", "loss_pct"]
# (lowest, highest, lowest allowed?) per quantity, as for static links (study/schema.py)
LIMITS = {
    "rate_mbps": (0.0, 1000.0, False),
    "delay_ms": (0.0, 10_000.0, True),
    "jitter_ms": (0.0, 10_000.0, True),
    "loss_pct": (0.0, 100.0, True),
}
MAX_TIME_S = 86_400.0


def point_time(key: str) -> float:
    """A schedule key ("5", "2.5") as seconds; ValueError in words otherwise."""
    try:
        t = float(key)
    except ValueError:
        raise ValueError(f"time {key!r} is not a number of seconds") from None
    if not 0 <= t <= MAX_TIME_S:
        raise ValueError(f"time {key!r} must be between 0 and {MAX_TIME_S:g} s")
    return t


class LinkSchedule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    links: str | list[str] = "all"
    direction: Literal["both", "up", "down"] = "both"
    rate_mbps: dict[str, float] | None = None
    delay_ms: dict[str, float] | None = None
    jitter_ms: dict[str, float] | None = None
    loss_pct: dict[str, float] | None = None
    ramp: list[Quantity] = Field(default_factory=list)
    ramp_step_s: float = Field(0.5, ge=0.05, le=60, description="how often a ramp is re-applied")
    trace_up: str | None = None
    trace_down: str | None = None
    trace_loop: bool = True
    trace_bin_ms: int = Field(100, ge=20, le=10_000)

    @field_validator("links")
    @classmethod
    def _links(cls, value):
        if isinstance(value, str) and value not in ("all", "hosts", "core"):
            raise ValueError(
                f'{value!r}: expected "all", "hosts", "core" or a list of links like ["h1-s1"]'
            )
        if isinstance(value, list) and not value:
            raise ValueError("an empty list of links")
        return value

    @field_validator("rate_mbps", "delay_ms", "jitter_ms", "loss_pct")
    @classmethod
    def _points(cls, value, info):
        if value is None:
            return value
        low, high, low_ok = LIMITS[info.field_name]
        if not value:
            raise ValueError('no points; give at least { "0" = value }')
        times: dict[float, str] = {}
        for key, v in value.items():
            t = point_time(key)
            if t in times:
                raise ValueError(f"times {times[t]!r} and {key!r} are the same")
            times[t] = key
            if v < low or (v == low and not low_ok) or v > high:
                bound = f">= {low:g}" if low_ok else f"> {low:g}"
                raise ValueError(f"at {key} s: {v:g} must be {bound} and <= {high:g}")
        if 0.0 not in times:
            raise ValueError(
                'the first point must be at "0" (the link\'s setting when traffic starts)'
            )
        return value

    @model_validator(mode="after")
    def _consistent(self):
        for q in self.ramp:
            if getattr(self, q) is None:
                raise ValueError(f"ramp names {q}, which has no points")
        traced = self.trace_up is not None or self.trace_down is not None
        if traced and self.rate_mbps is not None:
            raise ValueError("a traced link takes its rate from the trace: drop rate_mbps")
        if not traced and all(getattr(self, q) is None for q in QUANTITIES):
            raise ValueError(f"nothing changes: give one of {', '.join(QUANTITIES)} or a trace")
        if traced and self.direction != "both":
            raise ValueError("traces name their direction (trace_up, trace_down): drop direction")
        return self
