"""robotd's daemon: rig kinematics, the run state machine, camera sources, config, history, CLI."""

from .errors import ConfigError, RobotError

__all__ = ["ConfigError", "RobotError"]
