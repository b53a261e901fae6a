"""A program's run-time parameters as P4Runtime updates (the writes come from the lab,
sdnperf/p4/catalog.py, resolved to tables and actions by name):

    {"table": T, "action": A, "params": {...}, "default": true}    MODIFY T's default action
    {"table": T, "action": A, "params": {...}, "match": {...}, "priority": P}   INSERT an entry

Written on every switch right after its pipeline and before the app, so the app's own
entries never see the program in its compiled-in state.
"""

from __future__ import annotations

from sdnperf.controllers.p4rt.client import update
from sdnperf.controllers.p4rt.schema import Schema, SchemaError


def param_updates(schema: Schema, writes: list[dict]) -> list:
    out = []
    for i, w in enumerate(writes):
        try:
            default = bool(w.get("default", False))
            entry = schema.table_entry(
                w["table"],
                None if default else w.get("match", {}),
                w["action"],
                w.get("params", {}),
                priority=None if default else w.get("priority"),
                default=default,
            )
        except (KeyError, SchemaError) as exc:
            raise SchemaError(f"params write #{i + 1} ({w.get('table')!r}): {exc}") from None
        out.append(update("MODIFY" if default else "INSERT", entry))
    return out
