"""robotd's firmware interface: the host side of every motor controller, and a simulator for each.

``RigLink`` speaks robotd's own protocol (docs/protocol.md), ``MarlinLink``
and ``GrblLink`` stock Marlin 2.1 and grblHAL, ``MaestroLink`` a Pololu
Maestro's compact protocol; ``SimulatedFirmware``, ``marlin_sim``,
``grbl_sim`` and ``maestro_sim`` are the boards on a pseudo-terminal.

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
from .firmware import MotorTiming
from .framelog import LogLimits
from .grbl_link import GrblLink
from .link import RigLink
from .maestro_link import MaestroLink
from .marlin_link import MarlinLink
from .protocol import PROTOCOL_VERSION
from .timing import LinkTiming
from .transport import Motion

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
    # Imported on first use, so that ``python -m firmware_interface.simulator`` runs it only once.
    if name == "SimulatedFirmware":
        from .simulator import SimulatedFirmware

        return SimulatedFirmware
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
