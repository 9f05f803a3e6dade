"""robotd's one schema: every table of the TOML config as a pydantic model, and the fields the dashboard
API shares with it.

``RobotdConfig`` is the whole file (``RobotdConfig.model_json_schema()`` documents it); ``robot.config``
validates it one top-level table at a time (``adapter``), so that a part whose table is right is built
even when another's is not, and turns each error into ``FILE:LINE: [table] key: problem``
(``robot.schema.errors``). Checks that span tables (a controller that drives another kind of rig, a
flip/spin rig given six-axis simulator cameras) stay with the part that reads them.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import Field, TypeAdapter, create_model

from .base import KeyProblems, Light, Puzzle, ScrambleMoves, Table
from .camera import CameraTable
from .controllers import ControllerTable
from .controllers.robotd import SerialTable
from .daemon import RobotdTable, RunTable, SolverTable, VisionTable, WebTable
from .errors import Problem, problems
from .rig import RigTable
from .sim import SimTable

TABLES: dict[str, Any] = {
    "robotd": RobotdTable,
    "solver": SolverTable,
    "run": RunTable,
    "rig": RigTable,
    "controller": ControllerTable,
    "serial": SerialTable,
    "camera": dict[str, CameraTable],
    "vision": VisionTable,
    "web": WebTable,
    "sim": SimTable,
}
SECTIONS = tuple(TABLES)

RobotdConfig = create_model(  # type: ignore[call-overload]
    "RobotdConfig",
    __base__=Table,
    __doc__="A robotd config file: every table optional (all defaults); unknown tables and keys are refused.",
    **{name: (kind, Field(default={}, validate_default=True)) for name, kind in TABLES.items()},
)


@cache
def adapter(section: str) -> TypeAdapter:
    """The validator of one top-level table."""
    return TypeAdapter(TABLES[section])


__all__ = [
    "SECTIONS",
    "TABLES",
    "KeyProblems",
    "Light",
    "Problem",
    "Puzzle",
    "RobotdConfig",
    "ScrambleMoves",
    "Table",
    "adapter",
    "problems",
]
