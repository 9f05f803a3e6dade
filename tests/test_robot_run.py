"""The run state machine with in-process test doubles for the camera and the rig's motion."""

import time

import pytest

import solver
from robot.config import Config
from robot.errors import RobotError
from robot.events import EventBus
from robot.history import History
from robot.rig import rig_from_config
from robot.run import Runner, RunSettings, is_solved
from robot_doubles import VirtualRig
from solver.puzzles.cube.notation import parse_moves


def make_runner(tmp_path, virtual, **settings):
    bus = EventBus()
    events = []
    bus.subscribe(events.append)
    rig = rig_from_config(Config({}).section("rig"))
    runner = Runner(virtual, virtual, rig, History(tmp_path / "h.sqlite"), bus, RunSettings(**settings))
    return runner, events


@pytest.mark.parametrize("size", [2, 3])
def test_a_run_solves_the_cube(tmp_path, size):
    moves = "R U F' R2 U'" if size == 2 else "R U F' L D2 B"
    virtual = VirtualRig(solver.apply(solver.scramble(size, seed=0, length=0)["state"], moves))
    runner, events = make_runner(tmp_path, virtual, solve_budget_s=20)
    summary = runner.run()
    assert summary["outcome"] == "done", summary["error"]
    assert is_solved(virtual.state)
    phases = [e["data"]["phase"] for e in events if e["kind"] == "phase"]
    assert phases == ["scanning", "solving", "executing", "verifying", "done"]
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
    moves_done = [e for e in events if e["kind"] == "move"]
    assert moves_done[-1]["data"]["done_moves"] == summary["length_htm"]
    stored = runner.history.get_run(summary["id"])
    assert [e["kind"] for e in stored["events"]] == [e["kind"] for e in events]
    assert set(summary["step_durations"]) == {"scanning", "solving", "executing", "verifying"}


def test_solved_cube_is_a_run_with_zero_moves(tmp_path):
    virtual = VirtualRig(solver.scramble(3, seed=0, length=0)["state"])
    summary = make_runner(tmp_path, virtual)[0].run()
    assert summary["outcome"] == "done" and summary["solution"] == "" and summary["length_htm"] == 0


def test_scan_is_retried_then_the_run_errors_with_the_vision_message(tmp_path):
    state = solver.apply(solver.scramble(2, seed=0, length=0)["state"], "R U")
    runner, events = make_runner(tmp_path, VirtualRig(state, scan_failures=2), scan_retries=2)
    assert runner.run()["outcome"] == "done"
    assert sum(e["kind"] == "scan_failed" for e in events) == 2
    runner, _ = make_runner(tmp_path / "b", VirtualRig(state, scan_failures=5), scan_retries=1)
    summary = runner.run()
    assert summary["outcome"] == "error"
    assert "scan failed after 2 attempts: stickers F3, R1 in doubt" in summary["error"]


def test_a_refused_re_scan_is_retried_then_the_run_errors_with_the_vision_message(tmp_path):
    state = solver.apply(solver.scramble(2, seed=0, length=0)["state"], "R U")
    runner, events = make_runner(tmp_path, VirtualRig(state, rescan_failures=1), scan_retries=1)
    assert runner.run()["outcome"] == "done"
    assert [e["data"]["phase"] for e in events if e["kind"] == "scan_failed"] == ["verifying"]
    runner, _ = make_runner(tmp_path / "b", VirtualRig(state, rescan_failures=5), scan_retries=1)
    summary = runner.run()
    assert summary["outcome"] == "error"
    assert summary["error"] == (
        "the re-scan after the solution failed after 2 attempts: the colours read form no real cube"
    )


def test_stop_mid_execution_halts_at_once(tmp_path):
    state = solver.apply(solver.scramble(2, seed=0, length=0)["state"], "R U F R' U2 F'")
    virtual = VirtualRig(state, turn_s=0.2)
    runner, events = make_runner(tmp_path, virtual)
    run_id = runner.start()
    while runner.phase != "executing":
        time.sleep(0.005)
    asked = time.perf_counter()
    runner.stop()
    assert virtual.estop_at - asked < 0.1
    assert runner.wait(5)
    summary = runner.summary(run_id)
    assert summary["outcome"] == "stopped" and runner.phase == "stopped"
    assert not is_solved(virtual.state)


def test_a_stop_as_execution_begins_is_not_undone_by_the_motion_starting(tmp_path):
    """The motion's start clears a latched e-stop (the last run's); a stop that lands before it must end the
    run without a single turn, not be cleared while the run is recorded as stopped."""
    state = solver.apply(solver.scramble(2, seed=0, length=0)["state"], "R U F R' U2 F'")
    virtual = VirtualRig(state, turn_s=0.05)
    runner, _ = make_runner(tmp_path, virtual)
    runner.bus.subscribe(lambda e: e["kind"] == "phase" and e["data"]["phase"] == "executing" and runner.stop())
    run_id = runner.start()
    assert runner.wait(5)
    time.sleep(0.5)  # time for every turn of the plan, had the motion started
    assert runner.summary(run_id)["outcome"] == "stopped"
    assert virtual.state == state  # not one turn


def test_a_second_start_while_busy_is_refused(tmp_path):
    state = solver.apply(solver.scramble(2, seed=0, length=0)["state"], "R U F")
    runner, _ = make_runner(tmp_path, VirtualRig(state, turn_s=0.1))
    runner.start()
    with pytest.raises(Exception, match="already in progress"):
        runner.start()
    runner.stop()
    runner.wait(5)


def test_verification_failure_is_an_error(tmp_path):
    state = solver.apply(solver.scramble(2, seed=0, length=0)["state"], "R U")

    class SlippingRig(VirtualRig):
        def run_plan(self, plan, on_done):
            super().run_plan(plan[:-1], on_done)  # the last turn never happens

    summary = make_runner(tmp_path, SlippingRig(state))[0].run()
    assert summary["outcome"] == "error" and "not solved after executing" in summary["error"]


def test_a_failed_execution_says_how_many_moves_were_done(tmp_path):
    class SilentAfterTwo(VirtualRig):
        def run_plan(self, plan, on_done):
            super().run_plan(plan[:2], on_done)
            raise RobotError("the motor board went silent (unplugged or crashed): motion 10 (TURN R1) not done")

    virtual = SilentAfterTwo(solver.apply(solver.scramble(2, seed=0, length=0)["state"], "R U F' R2 U'"))
    summary = make_runner(tmp_path, virtual)[0].run()
    assert summary["outcome"] == "error"
    rig = rig_from_config(Config({}).section("rig"))
    done = sum(len(command.moves) for command in rig.plan(parse_moves(summary["solution"]))[:2])
    assert summary["error"].startswith("the motor board went silent (unplugged or crashed): motion 10")
    assert f"; {done} of {summary['length_htm']} moves were done" in summary["error"]
