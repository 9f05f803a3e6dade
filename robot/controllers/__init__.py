"""The motor controller a rig is wired to, chosen by ``[controller] kind``.

- ``robotd``: a board running robotd's own firmware (docs/protocol.md);
- ``marlin``: stock Marlin 2.1 on a 3D-printer board, one axis per face;
- ``grblhal``: stock grblHAL, one axis per face;
- ``maestro``: a Pololu Maestro (or a clone) driving the servos of a flip/spin rig;
- ``gpio``, ``pca9685``: those servos pulsed by the host itself, on the Pi's GPIO pins or a PCA9685
  board on I²C (what they share in ``pwm_servo``).

Each kind is one module, as in ``firmware_interface`` (``robotd``, ``marlin``,
``grbl``, ``maestro``; the two stock G-code ones share ``gcode``), with the
same four functions: ``settings`` (makes its settings of ``[controller.KIND]``,
which ``robot.schema.controllers`` checked), ``open_link`` (the host side of
the serial link), ``simulator`` (the same controller simulated on a
pseudo-terminal, for dry runs) and ``motion`` (what the run drives). The run
never knows which kind it drives.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..config import Config
from ..errors import ConfigError
from . import gpio, grbl, maestro, marlin, pca9685, robotd

KINDS: dict[str, ModuleType] = {
    "robotd": robotd,
    "marlin": marlin,
    "grblhal": grbl,
    "maestro": maestro,
    "gpio": gpio,
    "pca9685": pca9685,
}
RIGS = {
    "robotd": ("six-axis",),
    "marlin": ("six-axis",),
    "grblhal": ("six-axis",),
    **{servos: ("flip-spin",) for servos in ("maestro", "gpio", "pca9685")},
}


@dataclass(frozen=True)
class Controller:
    """The chosen controller kind and its validated ``[controller.KIND]`` settings."""

    kind: str
    settings: Any

    @property
    def module(self) -> ModuleType:
        return KINDS[self.kind]

    def port(self, serial_port: str | None) -> str | None:
        """Where the link goes: ``[serial] port``, or the hardware a controller with no serial port names
        (``own_port``: the GPIO pins, the I²C bus)."""
        own = getattr(self.module, "own_port", None)
        return own(self) if own is not None else serial_port

    def open_link(self, port: str, config: Config, data_dir):
        return self.module.open_link(self, port, config, data_dir)

    def simulator(self, sim, rig):
        return self.module.simulator(self, sim, rig)

    def motion(self, link, rig):
        return self.module.motion(self, link, rig)


def controller_from_config(config: Config, rig, kind: str | None = None) -> Controller:
    """``[controller]``: the kind (``kind`` overrides it, e.g. from ``--controller``) and its own table."""
    if kind is not None:
        config.override("controller.kind", kind)
    section = config.section("controller")
    kind = section.model.kind
    for other in (name for name in KINDS if name != kind and section.given(name)):
        key = f"controller.{other}"
        config.add(
            ConfigError(
                f"{config.where(key)}: [{key}] is set, but [controller] kind is {kind!r}: remove the "
                f"table or set kind = {other!r}"
            ),
            config.line(key),
        )
    if rig.kind not in RIGS[kind]:
        wanted = " or ".join(RIGS[kind])
        raise config.error(
            "controller.kind", f"a {kind} controller drives a {wanted} rig, but [rig] kind is {rig.kind!r}"
        )
    if kind != "robotd":
        _no_robotd_link_keys(config, kind)
    return Controller(kind, KINDS[kind].settings(config, kind, rig))


def _no_robotd_link_keys(config: Config, kind: str) -> None:
    serial = config.section("serial")
    for key in ("timing", *robotd.LOG_KEYS):
        if serial.given(key):
            instead = (
                f"takes its timing in [controller.{kind}.timing]" if key == "timing" else "keeps no trace or fault logs"
            )
            serial.report(key, f"applies to robotd's own firmware; a {kind} controller {instead}")


__all__ = ["Controller", "KINDS", "RIGS", "controller_from_config", "ConfigError"]
