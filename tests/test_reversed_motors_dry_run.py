"""A -1 in ``[rig.direction]`` in a dry run, board by board, as docs/hardware.md says: solved where the simulated
board models a motor mounted the other way round, not solved where it assumes every motor the normal way round."""

import pytest

from robot import assemble
from robot_doubles import FAST_RIG

REVERSED_R = "[rig.direction]\nU = 1\nR = -1\nF = 1\nD = 1\nL = 1\nB = 1\n"
STEPPER = "[rig.stepper]\nsteps_per_quarter = 50\nmax_rate = 20000\naccel = 2000000\n"


@pytest.mark.parametrize(
    "controller, extra, solved",
    [
        (None, STEPPER, True),  # robotd sends the direction in MOTOR; the reference firmware applies it
        (None, "", False),  # robotd reverses R's commands; the reference firmware turns R as commanded
        ("marlin", "", False),
        ("grblhal", "", False),
    ],
    ids=["robotd-with-stepper", "robotd", "marlin", "grblhal"],
)
def test_a_reversed_motor_in_a_dry_run(tmp_path, controller, extra, solved):
    path = tmp_path / "robotd.toml"
    path.write_text(
        f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n[solver]\nfallback = "none"\n{FAST_RIG}{REVERSED_R}{extra}'
    )
    built = assemble.build(path, sim=True, web=False, controller=controller)
    try:
        summary = built.once(puzzle=2, seed=5)
    finally:
        built.close()
    assert {"R", "R'"} & set(summary["solution"].split())  # a quarter turn of the reversed face
    assert summary["solved"] is solved
    assert summary["outcome"] == ("done" if solved else "error")
    if not solved:
        assert "the cube is not solved after executing the solution" in summary["error"]
