"""Executing a 3x3x3 solution while the solvers still make it quicker.

The robot starts on the first answer at once. While it turns, the
refiner (``RigSolver.refine``: two-phase in the worker and the rig-time
neural A* in a thread) searches from commands ahead of the robot and
splices quicker completions into the part not yet handed to the board
(``solver.search.splice``). The motion takes the commands one at a time
(``LinkMotion.run_feed``), so what it has taken is out of reach of any
splice. Each splice is published as a ``solution_update`` event; the run
record keeps which solver found which moves (``segments``) and each
splice.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from solver.api import Solution
from solver.puzzles.cube.notation import format_moves, move_length

from .six_axis import MotorCommand, SixAxisRig
from .solving import RigSolver

REFINER_JOIN_S = 0.2  # a search still running when the robot is done ends on its own: its answer is dropped


class LivePlan:
    """One run's solution as the robot executes it, refined meanwhile."""

    def __init__(self, solving: RigSolver, rig: SixAxisRig, state: str, solution: Solution, lead_s: float):
        self.solving, self.rig, self.state = solving, rig, state
        self.plan = solving.spliced_plan(solution)
        self.plan.lead_s = lead_s
        self.taken: list[MotorCommand] = []  # the motor commands handed to the motion, in order

    def take(self) -> MotorCommand | None:
        """The next motor command for the motion (None: the plan is done)."""
        command = self.plan.take()
        if command is None:
            return None
        (motor_command,) = self.rig.plan(command.moves)  # a command's moves make exactly one motor command
        self.taken.append(motor_command)
        return motor_command

    def execute(self, run_feed: Callable[[Callable[[], MotorCommand | None]], None]) -> None:
        """``run_feed(take)`` with the refiner running beside it until the robot is done or stopped."""
        stop = threading.Event()
        refiner = threading.Thread(
            target=self.solving.refine,
            args=(self.state, self.plan, time.perf_counter(), stop),
            name="robotd-refine",
            daemon=True,
        )
        refiner.start()
        try:
            run_feed(self.take)
        finally:
            stop.set()
            refiner.join(REFINER_JOIN_S)

    def update(self) -> dict:
        """What a splice changed: the whole solution as it now stands, by solver, and the splices so far."""
        moves = self.plan.moves
        return {
            "moves": format_moves(moves),
            "htm": move_length(moves, "htm"),
            "qtm": move_length(moves, "qtm"),
            "total_moves": len(moves),
            "estimated_s": round(self.plan.motor_s, 3),
            "segments": self.plan.segments(),
            "splices": list(self.plan.splices),
        }
