"""What every table of the schema shares: strict models, checked values, face tables, key problems.

A ``Table`` refuses unknown keys (``extra="forbid"``, as Klipper does: a misspelt option is an error,
never ignored) and converts nothing (strict: no ``"5"`` for 5, no ``true`` for 1; a whole number is
still a number). A check spanning several keys raises ``KeyProblems`` naming each key it is about, so
every message points at the right line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from solver.puzzles.cube.geometry import FACES
from vision import PRESETS


class Table(BaseModel):
    """One TOML table (or inline table) of the config."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    def given(self) -> dict[str, Any]:
        """The keys the file sets, with their values (what a link or simulator takes as overrides)."""
        return self.model_dump(exclude_unset=True)


class KeyProblems(ValueError):
    """Problems found by a check over several keys: ``(key, problem)`` pairs, ``key`` relative to where the
    check runs (``""``: that table or value itself, ``"cover.channel"``: a key below it)."""

    def __init__(self, problems: list[tuple[str, str]]):
        super().__init__("; ".join(f"{key}: {problem}" if key else problem for key, problem in problems))
        self.problems = problems


def raise_problems(problems: list[tuple[str, str]]) -> None:
    if problems:
        raise KeyProblems(problems)


def choice(names: tuple[Any, ...]) -> Any:
    """``Literal`` of names known at run time (the solver's metrics, the light presets, ...)."""
    return Literal[names]


def must(valid: Callable[[Any], bool], wanted: str) -> BeforeValidator:
    """``Annotated`` metadata: a value must pass ``valid`` (and be no bool); else it reads "must be WANTED; got
    VALUE", where a type error would only say "must be a string"."""

    def check(value: Any) -> Any:
        if isinstance(value, bool) or not valid(value):
            raise ValueError(f"must be {wanted}; got {value!r}")
        return value

    return BeforeValidator(check)


def number(low: float, high: float) -> Callable[[Any], bool]:
    """``valid`` for ``must``: an int or float within ``low..high``."""
    return lambda value: isinstance(value, (int, float)) and low <= value <= high


def _six_faces(table: dict[str, Any]) -> dict[str, Any]:
    problems = [(face, f"is not a face; faces are {', '.join(FACES)}") for face in table if face not in FACES]
    missing = [face for face in FACES if face not in table]
    if missing:
        problems.append(("", f"needs all six faces; missing {', '.join(missing)}"))
    raise_problems(problems)
    return {face: table[face] for face in FACES}


def distinct(what: str) -> AfterValidator:
    """``Annotated`` metadata of a face table: no two faces share ``what`` (e.g. "a motor")."""

    def check(table: dict) -> dict:
        if len(set(table.values())) != len(table):
            raise ValueError(f"two faces share {what}")
        return table

    return AfterValidator(check)


SIX_FACES = AfterValidator(_six_faces)  # ``Annotated[dict[str, X], SIX_FACES]``: one X for each face U ... B
# ``Annotated[dict[str, X], SIX_FACES, PER_FACE]``: one X for every face, or a table of one per face
PER_FACE = BeforeValidator(lambda value: value if isinstance(value, dict) else {face: value for face in FACES})


# Shared by the config ([sim]) and the dashboard API (POST /api/runs): one definition each.
Puzzle = Literal[2, 3]
ScrambleMoves = Annotated[int, Field(ge=0, le=1000, description="scramble with this many random moves")]

Light = choice(tuple(PRESETS))
