"""``[controller]`` with its ``[controller.KIND]`` tables, one module per kind as in ``robot.controllers``;
``[serial]`` (the port; robotd's own link) is ``robotd``'s.

The timing tables take their keys from the link's own timing class (``firmware_interface``), so a
key the link gains is a key of the config at once; only the keys given reach the link, whose defaults
(for a serial port or the simulator's pty) fill in the rest.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..base import Table
from .gpio import GpioTable
from .grbl import GrblTable
from .maestro import MaestroTable
from .marlin import MarlinTable
from .pca9685 import Pca9685Table


class ControllerTable(Table):
    """Which motor controller the rig is wired to; the table of that kind (only that one) configures it."""

    kind: Literal["robotd", "marlin", "grblhal", "maestro", "gpio", "pca9685"] = "robotd"
    marlin: MarlinTable = Field(default_factory=MarlinTable)
    grblhal: GrblTable = Field(default_factory=GrblTable)
    maestro: MaestroTable = Field(default_factory=MaestroTable)
    gpio: GpioTable = Field(default_factory=GpioTable)
    pca9685: Pca9685Table = Field(default_factory=Pca9685Table)
