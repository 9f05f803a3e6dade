"""robotd's firmware interface: the host side of every motor controller, and a simulator for each.

One package per controller, each with its host link, its dialect (pure
parsing and formatting) and its simulator on a pseudo-terminal: ``robotd``
(robotd's own protocol, docs/protocol.md: ``RigLink``, ``SimulatedFirmware``
and the real AVR binary under simavr), ``marlin`` (stock Marlin 2.1,
``MarlinLink``), ``grbl`` (grblHAL, ``GrblLink``) and ``maestro`` (a Pololu
Maestro's compact protocol, ``MaestroLink``). The pieces they share sit at
this level: steps and motions, serial and pty ports, fault injection, traces
and errors. The controller packages never import each other.

    from firmware_interface import RigLink, SimulatedFirmware

    with SimulatedFirmware(timing={"quarter_ms": 0}) as sim, RigLink(sim.path) as link:
        link.connect()
        link.enable()
        link.moves("R U R' U'")
        link.wait()

docs/protocol.md specifies the wire protocol (versions 1 and 2). Every error is a
``LinkError`` (subclasses tell the causes apart) whose message names the
port and the frame, motion or motor involved.
"""

from .errors import (
    AckTimeout,
    ConfigError,
    DeviceFault,
    DeviceReset,
    DeviceSilent,
    HandshakeError,
    LinkError,
    PortError,
    ProtocolVersionError,
)
from .faults import FaultConfig, FrameFaults
from .grbl.link import GrblLink
from .maestro.link import MaestroLink
from .marlin.link import MarlinLink
from .motion import Motion
from .robotd.device import MotorTiming
from .robotd.framelog import LogLimits
from .robotd.link import RigLink
from .robotd.protocol import PROTOCOL_VERSION
from .robotd.timing import LinkTiming

__all__ = [
    "AckTimeout",
    "ConfigError",
    "DeviceFault",
    "DeviceReset",
    "DeviceSilent",
    "FaultConfig",
    "FrameFaults",
    "GrblLink",
    "HandshakeError",
    "LinkError",
    "LinkTiming",
    "LogLimits",
    "MaestroLink",
    "MarlinLink",
    "Motion",
    "MotorTiming",
    "PROTOCOL_VERSION",
    "PortError",
    "ProtocolVersionError",
    "RigLink",
    "SimulatedFirmware",
]


def __getattr__(name: str):
    # Imported on first use, so that ``python -m firmware_interface.robotd.simulator`` runs it only once.
    if name == "SimulatedFirmware":
        from .robotd.simulator import SimulatedFirmware

        return SimulatedFirmware
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
