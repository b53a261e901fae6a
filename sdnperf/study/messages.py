"""pydantic's validation errors in a user's words: the field path without pydantic's union
tags, an unknown field or kind answered with the valid names, no pydantic jargon or links.

`explain(exc, model)` -> [(path, message)], the path as a tuple of keys and indexes into the
user's file; loader.py and ctlbench/config.py add file and line."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union

import pydantic
from pydantic import BaseModel
from pydantic_core import ErrorDetails

REFERENCE = "docs/study-reference.md"


def _unwrap(tp):
    """Annotated[X, ...] -> X; X | None -> X."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _unwrap(args[0])
    return tp


def _members(tp) -> list:
    tp = _unwrap(tp)
    if typing.get_origin(tp) in (Union, types.UnionType):
        return [_unwrap(a) for a in typing.get_args(tp)]
    return [tp]


def _kinds(model) -> list[str]:
    is_model = isinstance(model, type) and issubclass(model, BaseModel)
    field = model.model_fields.get("kind") if is_model else None
    if field is None:
        return []
    ann = _unwrap(field.annotation)
    return [str(v) for v in typing.get_args(ann)] if typing.get_origin(ann) is Literal else []


def type_at(model: Any, loc: tuple) -> Any:
    """The type found by following pydantic's error location `loc` from `model` (lists by
    index, unions by their tag), or None where the path leaves the schema."""
    tp: Any = model
    for part in loc:
        tp = _unwrap(tp)
        origin = typing.get_origin(tp)
        if isinstance(part, int) and origin in (list, tuple):
            tp = typing.get_args(tp)[0]
            continue
        members = _members(tp)
        if len(members) > 1:  # a union: pydantic's location names the member by its tag
            chosen = [m for m in members if part in _kinds(m)]
            if not chosen and part in ("table", "list"):  # the study schema's shape tags
                chosen = [m for m in members if (typing.get_origin(m) is list) == (part == "list")]
            if not chosen:
                return None
            tp = chosen[0]
            continue
        if isinstance(tp, type) and issubclass(tp, BaseModel) and isinstance(part, str):
            field = tp.model_fields.get(part)
            if field is None:
                return None
            tp = field.annotation
            continue
        return None
    return _unwrap(tp)


def valid_fields(model: Any) -> list[str]:
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [f.alias or name for name, f in model.model_fields.items()]
    return []


def valid_kinds(tp: Any) -> list[str]:
    return [k for m in _members(tp) for k in _kinds(m)]


def _message(err: ErrorDetails, model: Any) -> str:
    kind, loc, ctx = err["type"], tuple(err["loc"]), err.get("ctx") or {}
    if kind == "extra_forbidden":
        fields = valid_fields(type_at(model, loc[:-1]))
        known = f"; valid fields: {', '.join(fields)}" if fields else ""
        return f"unknown field {loc[-1]!r}{known} (see {REFERENCE})"
    if kind == "union_tag_invalid":
        kinds = valid_kinds(type_at(model, loc)) or [
            t.strip(" '") for t in str(ctx.get("expected_tags", "")).split(",")
        ]
        return f"unknown kind {ctx.get('tag')!r}; valid kinds: {', '.join(kinds)}"
    if kind == "union_tag_not_found":
        kinds = valid_kinds(type_at(model, loc))
        return "`kind` is missing" + (f"; valid kinds: {', '.join(kinds)}" if kinds else "")
    if kind == "missing":
        return "missing (this field is required)"
    if kind == "literal_error":
        return f"{err['input']!r} is not valid; valid values: {ctx.get('expected', '')}".replace(
            " or ", ", "
        )
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"expected a table (TOML [section] or {{ key = value }}), got {_value(err)}"
    if kind == "too_short":
        return (
            f"needs at least {ctx.get('min_length', 1)} item(s), got {ctx.get('actual_length', 0)}"
        )
    if kind == "list_type":
        return f"expected a list ([...]), got {_value(err)}"
    message = str(err["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    if "Input should be" in message or "String should" in message:
        message = message.replace("Input should be", "should be").replace(
            "String should", "text should"
        )
        message += f", got {_value(err)}"
    return message


def _value(err: ErrorDetails) -> str:
    value = err.get("input")
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _human_path(loc: tuple, model: Any) -> tuple:
    """Drop pydantic's union tags (workload.0.ping.count -> workload.0.count)."""
    out: list = []
    tp: Any = model
    for i, part in enumerate(loc):
        if tp is None:  # left the schema: the rest as written
            out.extend(loc[i:])
            break
        here = _unwrap(tp)
        if len(_members(here)) > 1 and isinstance(part, str):
            member = type_at(here, (part,))
            if member is not None:  # a union's tag, not a key of the user's file
                tp = member
                continue
        out.append(part)
        tp = type_at(here, (part,))
    return tuple(out)


def explain(exc: pydantic.ValidationError, model: Any) -> list[tuple[tuple, str]]:
    """Every error of `exc` (raised validating `model`) as (path in the file, message)."""
    out = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        path = _human_path(loc, model)
        if err["type"] in ("union_tag_invalid", "union_tag_not_found") and path[-1:] != ("kind",):
            path = (*path, "kind")
        out.append((path, _message(err, model)))
    return out
