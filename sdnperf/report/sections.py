"""Extension point of the HTML report, like plots.register_plot_provider: a subsystem that
adds a section of its own (a built-in study's question and answer, a cluster's per-node
table) registers it when its module is imported, and the CLI imports those modules, so
report/ names none of them. Kept apart from html.py so registering pulls in no plotting.

A section is fn(store, study_id) -> HTML ("" when the study has nothing for it), placed
at the opening (right after the header, before everything else: a built-in study's figure
map, which is also handed the stems of the figures drawn, `figure_stems`), at the top
(after the opening) or at the end (before "how to read")."""

from __future__ import annotations

from typing import Callable, Literal

Place = Literal["opening", "top", "end"]
Section = Callable[..., str]
SECTIONS: dict[str, list[Section]] = {"opening": [], "top": [], "end": []}


def register_section(place: Place) -> Callable[[Section], Section]:
    """Decorator: add the function to every report at `place` (idempotent)."""

    def register(section: Section) -> Section:
        if section not in SECTIONS[place]:
            SECTIONS[place].append(section)
        return section

    return register


def render(place: Place, store, study_id: int, **context) -> list[str]:
    """Every section of `place`; `context` (e.g. figure_stems) is passed to each."""
    return [section(store, study_id, **context) for section in SECTIONS[place]]
