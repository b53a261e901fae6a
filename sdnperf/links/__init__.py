"""Links that change during a run: schedules and traces declared in a study file
(`config.py`), their expansion into settings over time (`schedule.py`, `trace.py`), how a
setting reaches a running network (`apply.py`: tc changed in place, our switch's port
impairment, or the link element of `element.py`), and the thread that follows the clock
and records what it applied (`scheduler.py`)."""
