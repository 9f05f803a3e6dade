"""The one exception type of the robot package, and its config flavour."""

from __future__ import annotations


class RobotError(Exception):
    """A run, a rig part or the daemon cannot go on; the message says what and where."""


class ConfigError(RobotError):
    """A config file is missing, unreadable, or has an unknown key or a bad value."""
