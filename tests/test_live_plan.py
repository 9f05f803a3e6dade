"""A 3x3x3 plan executed while the solvers still improve it: commands taken as the board needs them,
quicker completions spliced into what is not taken, and the run record saying who found which move."""

from firmware_interface import RigLink, SimulatedFirmware
from robot.config import Config
from robot.events import EventBus
from robot.history import History
from robot.motion import FEED_AHEAD, FEED_AHEAD_S, LinkMotion
from robot.rig import rig_from_config
from robot.run import Runner, RunSettings, is_solved
from robot.summary import format_summary
from robot_doubles import VirtualRig
from solver.api import Solution, apply
from solver.puzzles.cube.cubie import solved_facelets
from solver.puzzles.cube.notation import format_moves, parse_moves
from solver.search.heuristic import load_heuristic
from solver.search.splice import Found, SplicedPlan

RIG = rig_from_config(Config({}).section("rig"))
SOLVED = solved_facelets(3)


def rig_plan(moves):
    return [(command.moves, command.seconds) for command in RIG.plan(moves)]


def test_what_the_robot_has_taken_is_out_of_reach_of_a_splice():
    plan = SplicedPlan(parse_moves("R U R' U' F2 F2 D"), "two-phase", rig_plan)
    assert [format_moves(command.moves) for command in (plan.take(), plan.take())] == ["R", "U"]
    quicker = Found("neural-astar", 2, parse_moves("R U"), parse_moves("R' U' D"), 0.01)
    earlier = Found("neural-astar", 1, parse_moves("R"), parse_moves("U R' U' D"), 0.01)
    assert not plan.splice(earlier)  # U is taken
    told = []
    plan.on_splice = lambda: told.append(plan.moves)
    assert plan.splice(quicker) and told == [parse_moves("R U R' U' D")]
    rest = [plan.take() for _ in range(3)]
    assert [format_moves(c.moves) for c in rest[:2]] == ["R'", "U' D"] and rest[2] is None and plan.taken == 4


class FeedingRig(VirtualRig):
    """A ``VirtualRig`` that takes its plan command by command, as ``LinkMotion.run_feed`` does."""

    feed_lead_s = 0.2

    def run_feed(self, take, on_done):
        self.run_plan(iter(take, None), on_done)


def test_run_feed_keeps_only_a_little_queued_on_the_board():
    sim = SimulatedFirmware(timing={"quarter_ms": 40, "half_ms": 60, "home_ms": 5})
    sim.start()
    link = RigLink(sim.path)
    moves = parse_moves("R U F L B D R' U' F' L'")
    commands, done, queued_at_take = iter(RIG.plan(moves)), [], []

    def take():
        command = next(commands, None)
        if command is not None:
            queued_at_take.append(len(taken) - len(done))
            taken.append(command)
        return command

    taken: list = []
    try:
        motion = LinkMotion(link, RIG.motors, rig=RIG)
        motion.connect()
        motion.run_feed(take, done.append)
    finally:
        link.close()
        sim.stop()
    assert done == list(range(len(moves))) and sim.cube == apply(SOLVED, format_moves(moves))
    most = max(FEED_AHEAD, -(-FEED_AHEAD_S // RIG.plan(moves[:1])[0].seconds))
    assert max(queued_at_take) <= most and queued_at_take.count(0) == 1  # the board never ran dry after the first


def test_a_run_splices_a_quicker_end_and_records_who_found_which_moves(tmp_path):
    state = apply(SOLVED, "R U F L B D")
    slow = parse_moves("D' B' L' F' F2 F2 U' R'")  # solves it, with two wasted turns after the fourth command
    virtual = FeedingRig(state, turn_s=0.25)  # time for the search on a loaded machine
    bus, events = EventBus(), []
    bus.subscribe(events.append)
    runner = Runner(virtual, virtual, RIG, History(tmp_path / "h.sqlite"), bus, RunSettings(solve_fallback=None))
    runner.solving.rig_depth = 2
    runner.solving.prepare_refiner()
    load_heuristic().warm_up(8)  # as the daemon does at start-up
    runner.solving.solve = lambda _: Solution(slow, "htm", 0.0, 3, True, {"solver": "two-phase"})
    summary = runner.run()
    assert summary["outcome"] == "done", summary["error"]
    assert is_solved(virtual.state)
    executed = parse_moves(summary["solution"])
    assert len(executed) < len(slow) and apply(state, summary["solution"]) == SOLVED
    segments = summary["solver_params"]["segments"]
    assert [s["solver"] for s in segments] == ["two-phase", "neural-astar"]
    assert parse_moves(" ".join(s["moves"] for s in segments)) == executed
    updates = [e["data"] for e in events if e["kind"] == "solution_update"]
    assert updates and updates[-1]["moves"] == summary["solution"]
    moves_done = [e["data"] for e in events if e["kind"] == "move"]
    assert moves_done[-1]["done_moves"] == moves_done[-1]["total_moves"] == len(executed)
    assert summary["solver_params"]["splices"][-1]["saved_s"] >= 0.54  # F2 F2 gone, whatever the cut
    line = next(line for line in format_summary(summary).splitlines() if line.startswith("moves by"))
    assert line.startswith("moves by  : two-phase 1-") and "neural-astar" in line and "s saved)" in line


def test_a_2x2x2_run_is_not_refined(tmp_path):
    state = apply(solved_facelets(2), "R U")
    virtual = FeedingRig(state)
    virtual.run_feed = None  # a 2x2x2 goes to run_plan whole
    runner = Runner(virtual, virtual, RIG, History(tmp_path / "h.sqlite"), EventBus(), RunSettings())
    summary = runner.run()
    assert summary["outcome"] == "done" and is_solved(virtual.state)
    assert "segments" not in (summary["solver_params"] or {})
