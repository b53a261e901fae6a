"""Short answers computed from a built-in study's store: the question and a few sentences
that open its report (report.html) and follow its table in the terminal.

One module per study; each has `answer(store, study_id) -> list[str]`, reads only the store,
and says what the data say, including "not enough runs to tell". Nothing is hard-coded.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from importlib import import_module

from sdnperf.report.sections import register_section
from sdnperf.studies.builtin import STUDIES

# study name (as in its files' [study] name, or its prefix for a study of several files)
MODULES = {
    "recirculation": "recirculation",
    "architectures-campus": "campus",
    "topologies-traffic": "topologies",
    "controller-capacity": "capacity",
    "workload-complexity": "complexity",
}


@dataclass
class Answer:
    study: str  # the built-in study
    question: str
    sentences: list[str]


def builtin_of(stored_name: str) -> str | None:
    """The built-in study a stored study belongs to: its name, or NAME-part."""
    for name in MODULES:
        if stored_name == name or stored_name.startswith(name + "-"):
            return name
    return None


def answer_for(store, study_id: int) -> Answer | None:
    """The answer of a built-in study's store; None for any other study."""
    name = builtin_of(store.study(study_id).name)
    if name is None:
        return None
    module = import_module(f"sdnperf.studies.answers.{MODULES[name]}")
    try:
        sentences = module.answer(store, study_id)
    except Exception as exc:  # an answer must never cost the report
        sentences = [f"(no answer computed: {type(exc).__name__}: {exc})"]
    return Answer(name, STUDIES[name].question, sentences or ["No finished run to answer from."])


@register_section("top")
def answer_html(store, study_id: int) -> str:
    """The report's opening: a built-in study's question and its computed answer."""
    answer = answer_for(store, study_id)
    if answer is None:
        return ""
    items = "".join(f"<li>{escape(s)}</li>" for s in answer.sentences)
    return (
        f'<h2>Question</h2><p class="question">{escape(answer.question)}</p>'
        f"<h2>Answer (computed from the runs below)</h2><ul>{items}</ul>"
    )
