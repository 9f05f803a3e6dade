"""Dry runs through the real stock firmware: ``robotd --sim --controller marlin|grblhal --firmware avr``.

The board of the dry run is the stock Marlin (without or with
EMERGENCY_PARSER, ``[sim] emergency_parser``) or grbl build of
shared/stock-firmware under the simavr harness, its cube turned by its STEP
pins; the run must end solved. Skips where the harness's tools or the
binaries are missing (fails instead under ROBOTD_REQUIRE_AVR, as
tests/devices.py says).
"""

import pytest

from line_rigs import require_stock
from robot.cli import main
from robot_doubles import FAST_RIG, solver_keys


def config(tmp_path, extra=""):
    """A 2x2 dry run's config: the pocket table solves it, no two-phase worker is started."""
    path = tmp_path / "robotd.toml"
    path.write_text(
        f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n[solver]\n{solver_keys(two_phase=False)}{FAST_RIG}\n{extra}'
    )
    return path


@pytest.mark.parametrize(
    "controller, build, variant, extra",
    [
        ("marlin", "marlin", "", ""),
        ("marlin", "marlin", "ep", "[sim]\nemergency_parser = true\n"),
        ("grblhal", "grbl", "", ""),
    ],
    ids=["marlin", "marlin-ep", "grblhal"],
)
def test_a_dry_run_through_the_stock_binary_ends_solved(tmp_path, capsys, controller, build, variant, extra):
    require_stock(build, variant)
    argv = ["--config", str(config(tmp_path, extra)), "--sim", "--once", "--controller", controller]
    assert main([*argv, "--firmware", "avr", "--puzzle", "2", "--seed", "3"]) == 0, capsys.readouterr().err
    assert "done, cube solved" in capsys.readouterr().out
