"""robotd's solver: cube models, notation, validation, the optimal 2x2x2 solver and 3x3x3 neural A*.

Facelet strings follow DESIGN.md: faces U R F D L B, each in reading order
as drawn in the unfolded net; any six letters may stand for the colours.
"""

from .api import Solution, apply, scramble, solve
from .errors import InvalidState

__all__ = ["InvalidState", "Solution", "apply", "scramble", "solve"]
