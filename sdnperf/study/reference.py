"""The study-file reference, generated from the schema itself (every field of every section,
architecture kind, workload kind and topology generator: type, default, limits, meaning), so
it cannot go stale: docs/study-reference.md is this module's output, and a unit test
regenerates it and compares. `sdnperf topo show KIND --help` prints one generator's table.

    python -m sdnperf.study.reference > docs/study-reference.md
"""

from __future__ import annotations

import enum
import types
import typing
from typing import Any, Literal, Union

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from sdnperf.userinput import NAME_RULE

HEADER = """\
# Study-file reference

Generated from the schema by `python -m sdnperf.study.reference > docs/study-reference.md`
(`tests/unit/test_study_reference.py` fails when this file and the schema differ). A guide with
examples is [study-format.md](study-format.md); the errors of `sdnperf check` point here.

"Limits" are checked when the file is loaded: a value outside them is an error naming its
file, line and field. A field without a default must be given.
"""


def type_text(tp: Any) -> str:
    """A field's type in TOML words: integer, number, text, "a" | "b", list of ..."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return type_text(typing.get_args(tp)[0])
    if origin is Literal:
        return " | ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in typing.get_args(tp))
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        kinds = [
            _kind_of(a)
            for a in args
            if isinstance(a, type) and issubclass(a, BaseModel) and "kind" in a.model_fields
        ]
        if len(kinds) == len(args):
            return f"table with kind = {' | '.join(kinds)}"
        shown = [type_text(a) for a in args if a is not type(None)]
        return " or ".join(shown) + (" (or unset)" if type(None) in args else "")
    if origin in (list, tuple, set):
        inner = typing.get_args(tp)
        return f"list of {type_text(inner[0]) if inner else 'values'}"
    if origin is dict:
        return "table"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return "table" + (f" ({tp.__name__})" if not tp.__name__.startswith("_") else "")
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return " | ".join(f'"{m.value}"' for m in tp)
    names = {bool: "boolean", int: "integer", float: "number", str: "text"}
    if tp in names:
        return names[tp]
    return "any" if tp is Any else getattr(tp, "__name__", str(tp))


def limits_text(info: FieldInfo) -> str:
    words = {
        "ge": "≥ {}",
        "gt": "> {}",
        "le": "≤ {}",
        "lt": "< {}",
        "min_length": "length ≥ {}",
        "max_length": "length ≤ {}",
        "pattern": "matches `{}`",
    }
    out = []
    for meta in info.metadata:
        for attr, template in words.items():
            value = getattr(meta, attr, None)
            if value is not None:
                out.append(template.format(value))
        if hasattr(meta, "func") and getattr(meta.func, "__name__", "") == "_valid_name":
            out.append(NAME_RULE)
    return ", ".join(out)


def default_text(info: FieldInfo) -> str:
    if info.default is PydanticUndefined:
        if info.default_factory is not None:
            if info.default_factory_takes_validated_data:  # computed from the other fields
                return "(computed)"
            try:
                value = info.get_default(call_default_factory=True)
            except TypeError:
                return "(computed)"
            return _toml(value)
        return "required"
    return _toml(info.default)


def _toml(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, BaseModel):
        return "(defaults)"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, enum.Enum):
        return _toml(value.value)
    return str(value)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def field_rows(model: type[BaseModel]) -> list[tuple[str, str, str, str, str]]:
    """(field, type, default, limits, meaning) of every field of `model`."""
    rows = []
    for name, info in model.model_fields.items():
        meaning = info.description or ""
        rows.append(
            (
                info.alias or name,
                type_text(info.annotation),
                default_text(info),
                limits_text(info),
                meaning,
            )
        )
    return rows


def table(model: type[BaseModel]) -> str:
    lines = ["| field | type | default | limits | meaning |", "| --- | --- | --- | --- | --- |"]
    for row in field_rows(model):
        lines.append("| " + " | ".join(_cell(c) or " " for c in row) + " |")
    return "\n".join(lines) + "\n"


def _doc(model: type) -> str:
    doc = (model.__doc__ or "").strip()
    if not doc or doc.startswith(("Usage docs", "A base class")):
        return ""
    return " ".join(doc.split()) + "\n\n"


def _kinds(union: Any) -> list[type[BaseModel]]:
    while typing.get_origin(union) is typing.Annotated:
        union = typing.get_args(union)[0]
    return list(typing.get_args(union))


def _kind_of(model: type[BaseModel]) -> str:
    return str(typing.get_args(model.model_fields["kind"].annotation)[0])


def generator_text(kind: str) -> str:
    """One topology generator's parameters (also `sdnperf topo show KIND --help`)."""
    from sdnperf.topo.registry import generator  # lazy: pulls in networkx, wanted only here

    gen = generator(kind)
    return f'### kind = "{kind}"\n\n{gen.summary}\n\n' + table(gen.params_model)


def render() -> str:
    from sdnperf.arch.config import ArchitectureConfig  # lazy: pulls in networkx, wanted only here

    # lazy: pulls in networkx, psutil, wanted only here
    from sdnperf.study.schema import LinkDefaults, StudySection, SweepSection, TopologySection
    from sdnperf.topo.registry import TOPOLOGIES  # lazy: pulls in networkx, wanted only here
    from sdnperf.workloads.config import WorkloadConfig  # lazy: pulls in psutil, wanted only here

    parts = [HEADER]
    parts.append("## [study]\n\n" + table(StudySection))
    parts.append(
        "## [topology] (or several [[topology]])\n\n"
        "`kind` picks a generator; its parameters sit beside `kind` in the same table.\n\n"
        + table(TopologySection)
    )
    parts.append("### [topology.link]: every link's defaults\n\n" + table(LinkDefaults))
    for kind in TOPOLOGIES:
        parts.append(generator_text(kind))
    parts.append("## [[architecture]]\n\n`kind` picks one of the tables below.\n")
    for model in _kinds(ArchitectureConfig):
        parts.append(f'### kind = "{_kind_of(model)}"\n\n{_doc(model)}' + table(model))
    parts.append("## [[workload]]\n\n`kind` picks one of the tables below.\n")
    members: dict[str, type[BaseModel]] = {}
    kinds = _kinds(WorkloadConfig)
    for model in kinds:
        parts.append(f'### kind = "{_kind_of(model)}"\n\n{_doc(model)}' + table(model))
        for info in model.model_fields.values():
            for tp in _nested_models(info.annotation):
                if tp not in kinds:  # a mixed workload's members are the kinds above
                    members.setdefault(tp.__name__, tp)
    for name, model in members.items():
        parts.append(f"### {name} (inside a workload)\n\n{_doc(model)}" + table(model))
    parts.append("## [[sweep]]\n\n" + _doc(SweepSection) + table(SweepSection))
    return "\n".join(parts)


def _nested_models(tp: Any) -> list[type[BaseModel]]:
    """Table types reachable from a field's type (pairs rules, mixed members ...)."""
    out: list[type[BaseModel]] = []
    origin = typing.get_origin(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    for arg in typing.get_args(tp) if origin is not None else []:
        if arg is not type(None):
            out += _nested_models(arg)
    return out


if __name__ == "__main__":
    print(render(), end="")
