"""The one exception type of the robot package, its config flavour, and a run stopped on request."""

from __future__ import annotations


class RobotError(Exception):
    """A run, a rig part or the daemon cannot go on; the message says what and where."""


class ConfigError(RobotError):
    """A config file is missing, unreadable, or has unknown keys or bad values.

    ``problems`` lists each one (``FILE:LINE: [section] key: problem``); the
    message is those lines joined.
    """

    def __init__(self, message: str, problems: list[str] | None = None):
        super().__init__(message)
        self.problems = problems if problems is not None else [message]


class Stopped(RobotError):
    """The run was stopped on request."""
