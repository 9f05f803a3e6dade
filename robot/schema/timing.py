"""Tables of a link's or simulator's timing, their keys taken from its own timing class (``firmware_interface``),
so that a key the class gains is a key of the config at once."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from pydantic import Field, create_model

from .base import Table


def timing_table(
    name: str, timing: type, skip: tuple[str, ...] = ("baudrate",), base: type[Table] = Table, zero: bool = False
) -> Any:
    """A table of ``timing``'s fields but ``skip``: times above 0 (``zero``: at least 0), counts (ints) at
    least 1; each optional, as the link's defaults fill in what is not given."""

    def key(field: Any) -> tuple[Any, Any]:
        if field.type in (int, "int"):
            return int | None, Field(default=None, ge=1)
        return float | None, Field(default=None, ge=0) if zero else Field(default=None, gt=0)

    return create_model(
        name,
        __base__=base,  # type: ignore[call-overload]
        __doc__=f"``{timing.__name__}``: seconds unless named otherwise",
        **{f.name: key(f) for f in fields(timing) if f.name not in skip},
    )
