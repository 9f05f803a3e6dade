"""pydantic's errors as robotd words them: each one becomes ``(key path, problem)``.

The key path is found by walking the table's data along the error's location (a location also holds
union tags and list positions, which are no keys); the problem names what is wrong, the value found and
what is allowed (``must be at least 0; got -1``, ``unknown option (known here: ...)``).
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, Tag, ValidationError
from pydantic_core import ErrorDetails

from .base import KeyProblems

KIND = "kind"  # the key every tagged union of the schema ([rig], ...) is told apart by

_TYPES = {
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
    "union_tag_not_found": "a table",
}  # a tagged union ([rig]) given no table
_BOUNDS = {
    "greater_than_equal": ("ge", "at least"),
    "greater_than": ("gt", "more than"),
    "less_than_equal": ("le", "at most"),
    "less_than": ("lt", "less than"),
}


@dataclass(frozen=True)
class Problem:
    path: tuple[str, ...]  # keys below the table validated
    text: str
    final: bool = False  # no use validating again without the key (e.g. an unknown kind)


def problems(error: ValidationError, data: Any, annotation: Any) -> list[Problem]:
    """Every error of ``error``, raised validating ``data`` as ``annotation``."""
    found = []
    for detail in error.errors():
        path = key_path(data, detail["loc"], missing=detail["type"] == "missing")
        failure = detail.get("ctx", {}).get("error")
        if isinstance(failure, KeyProblems):
            found += [Problem(path + tuple(k for k in key.split(".") if k), text) for key, text in failure.problems]
        elif detail["type"] == "union_tag_invalid":
            found.append(Problem(path + (KIND,), _one_of(_tags(annotation, detail["loc"]), _kind(detail)), True))
        else:
            found.append(
                Problem(path, describe(detail, _at(annotation, detail["loc"][:-1]), _at(annotation, detail["loc"])))
            )
    return found


def key_path(data: Any, loc: tuple, missing: bool = False) -> tuple[str, ...]:
    """The keys of ``loc`` that name a key of ``data`` (and its last key when that is ``missing``); union
    tags and list positions dropped."""
    path: list[str] = []
    node = data
    for depth, part in enumerate(loc):
        if isinstance(part, int):
            node = node[part] if isinstance(node, list) and -len(node) <= part < len(node) else None
        elif isinstance(node, dict) and (part in node or missing and depth == len(loc) - 1):
            path.append(part)
            node = node.get(part)
    return tuple(path)


def describe(detail: ErrorDetails, parent: Any, field: Any) -> str:
    """One error in words; ``parent`` and ``field`` are the types around it (for the choices allowed)."""
    kind, value, ctx = detail["type"], detail.get("input"), detail.get("ctx", {})
    if kind in ("value_error", "assertion_error"):
        return str(ctx["error"])
    if kind in _TYPES:
        return f"must be {_TYPES[kind]}, not {value!r}"
    if kind in _BOUNDS:
        name, words = _BOUNDS[kind]
        return f"must be {words} {_plain(ctx[name])}; got {value!r}"
    if kind == "literal_error":
        return _one_of(get_args(_bare(field)) or (ctx.get("expected"),), value)
    if kind == "missing":
        return "required option is missing"
    if kind == "extra_forbidden":
        known = list(_bare(parent).model_fields) if _is_model(_bare(parent)) else []
        return "unknown option" + (f" (known here: {', '.join(sorted(known))})" if known else "")
    return _length(kind, ctx, value) or f"{detail['msg'][:1].lower()}{detail['msg'][1:]}; got {value!r}"


def _length(kind: str, ctx: dict, value: Any) -> str | None:
    if kind == "string_too_short":
        return "must not be empty" if ctx["min_length"] == 1 else f"must be at least {ctx['min_length']} characters"
    if kind == "string_too_long":
        return f"must be at most {ctx['max_length']} characters"
    if kind in ("too_short", "too_long"):
        bound = "min_length" if kind == "too_short" else "max_length"
        return f"must have {'at least' if kind == 'too_short' else 'at most'} {ctx[bound]} items; got {value!r}"
    return None


def _plain(bound: Any) -> Any:
    """A bound as the schema writes it: 0, not the 0.0 a float field makes of it."""
    return int(bound) if isinstance(bound, float) and bound.is_integer() and abs(bound) < 1e15 else bound


def _one_of(choices: tuple, value: Any) -> str:
    return f"must be one of {', '.join(str(c) for c in choices)}; got {value!r}"


def _kind(detail: ErrorDetails) -> Any:
    value = detail.get("input")
    return value.get(KIND) if isinstance(value, dict) else value


def _tags(annotation: Any, loc: tuple) -> tuple:
    union = _bare(_at(annotation, loc))
    return tuple(tag for tag in (_tag(member) for member in get_args(union)) if tag is not None)


def _at(annotation: Any, loc: tuple) -> Any:
    """The type found at ``loc`` inside ``annotation``; None where the walk loses it."""
    for part in loc:
        annotation = _step(_bare(annotation), part)
        if annotation is None:
            return None
    return annotation


def _step(annotation: Any, part: Any) -> Any:
    if _is_union(annotation):
        return next((m for m in get_args(annotation) if _tag(m) == part), None)
    if _is_model(annotation):
        field = annotation.model_fields.get(part)
        return None if field is None else field.annotation
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is dict:
        return args[1]
    if origin in (list, tuple) and args:
        return args[0]
    return None


def _bare(annotation: Any) -> Any:
    """``annotation`` without ``Annotated`` and without the ``None`` of an optional."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation = get_args(annotation)[0]
        elif _is_union(annotation) and type(None) in get_args(annotation):
            rest = [a for a in get_args(annotation) if a is not type(None)]
            annotation = rest[0] if len(rest) == 1 else Union[tuple(rest)]  # noqa: UP007
        else:
            return annotation


def _tag(member: Any) -> str | None:
    if get_origin(member) is Annotated:
        return next((m.tag for m in member.__metadata__ if isinstance(m, Tag)), None)
    return None


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


__all__ = ["KIND", "Problem", "describe", "key_path", "problems"]
