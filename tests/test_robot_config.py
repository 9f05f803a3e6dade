"""Config loading: typed getters, ranges, unknown keys and line numbers in every message."""

import logging
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import platformdirs
import pytest

from robot import paths
from robot.assemble import load_parts
from robot.cli import main
from robot.config import Config
from robot.errors import ConfigError
from robot.log_file import LogFileSettings, attach, detach
from robot.paths import find_config
from robot.rig import rig_from_config
from robot.schema import SECTIONS, RobotdConfig
from robot.toml_lines import key_lines
from robot_doubles import NO_TWO_PHASE


def write(tmp_path, text):
    path = tmp_path / "robotd.toml"
    path.write_text(text)
    return path


def test_defaults_without_a_file():
    config = Config.load(None)
    rig = rig_from_config(config.section("rig"))
    assert rig.kind == "six-axis" and rig.motors == {f: f for f in "URFDLB"}
    config.check_unused()


def test_values_are_read_and_checked(tmp_path):
    config = Config.load(write(tmp_path, "[rig]\nquarter_turn_s = 0.1\nsettle_s = 0\n"))
    rig = rig_from_config(config.section("rig"))
    assert rig.quarter_turn_s == 0.1 and rig.settle_s == 0.0


def test_unknown_key_names_file_line_and_key(tmp_path):
    path = write(tmp_path, "[rig]\nquarter_turn_s = 0.1\n\nquater_turn_s = 0.2\n")
    config = Config.load(path)
    with pytest.raises(
        ConfigError, match=r"robotd.toml:4: \[rig\] quater_turn_s: unknown option \(known here: .*quarter_turn_s"
    ):
        rig_from_config(config.section("rig"))


def test_unknown_section(tmp_path):
    config = Config.load(write(tmp_path, "[rgi]\nkind = 'six-axis'\n"))
    with pytest.raises(ConfigError, match=r"robotd.toml:1: \[rgi\]: unknown section"):
        config.check_unused()


@pytest.mark.parametrize(
    "text, message",
    [
        ("[rig]\nquarter_turn_s = 'fast'\n", r":2: \[rig\] quarter_turn_s: must be a number, not 'fast'"),
        ("[rig]\nquarter_turn_s = -1\n", r":2: \[rig\] quarter_turn_s: must be more than 0"),
        ("[rig]\nsimultaneous_opposite = 1\n", r"simultaneous_opposite: must be true or false"),
        ("[rig]\nkind = 'delta'\n", r"kind: must be one of six-axis, flip-spin; got 'delta'"),
        ("[rig.motors]\nU = 'U'\nR = 'R'\nF = 'F'\nD = 'D'\nL = 'L'\nB = 'L'\n", r"motors: two faces share a motor"),
        ("[rig.motors]\nU = 'U'\nR = 'R'\n", r"motors: needs all six faces; missing F, D, L, B"),
        (
            "[rig.motors]\nU = 1\nR = 'R'\nF = 'F'\nD = 'D'\nL = 'L'\nB = 'B'\n",
            r":2: \[rig.motors\] U: must be a motor name",
        ),
        ("[rig.direction]\nU = 1\nR = 1\nF = 1\nD = 1\nL = 1\nX = 1\n", r":7: \[rig.direction\] X: is not a face"),
        ("[rig.direction]\nU = 2\nR = 1\nF = 1\nD = 1\nL = 1\nB = 1\n", r":2: \[rig.direction\] U: must be 1 or -1"),
    ],
)
def test_bad_values_name_key_and_line(tmp_path, text, message):
    config = Config.load(write(tmp_path, text))
    with pytest.raises(ConfigError, match=message):
        rig_from_config(config.section("rig"))


def test_bad_toml_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="not valid TOML"):
        Config.load(write(tmp_path, "[rig\n"))
    with pytest.raises(ConfigError, match="does not exist"):
        find_config(tmp_path / "nope.toml")


MISTAKES = """\
[robotd]
log_level = "loud"
keep_refused_scans = -1

[solver]
budget_s = "fast"

[rig]
quarter_turn_s = 0

[serial.timing]
ack_timeout = "a"
bogus = 1

[web]
port = 70000

[rgi]
kind = "x"
"""


def test_every_mistake_is_reported_at_once_with_its_line(tmp_path):
    path = write(tmp_path, MISTAKES)
    with pytest.raises(ConfigError) as caught:
        load_parts(path, sim=True)
    assert caught.value.problems == [
        f"{path}:2: [robotd] log_level: must be one of debug, info, warning, error; got 'loud'",
        f"{path}:3: [robotd] keep_refused_scans: must be at least 0; got -1",
        f"{path}:6: [solver] budget_s: must be a number, not 'fast'",
        f"{path}:9: [rig] quarter_turn_s: must be more than 0; got 0",
        f"{path}:12: [serial.timing] ack_timeout: must be a number, not 'a'",
        f"{path}:13: [serial.timing] bogus: unknown option (known here: ack_timeout, baudrate, boot_timeout, "
        "estop_retry, estop_timeout, heartbeat, hello_interval, max_retransmits, poll, probe_after, "
        "query_timeout, silence, window, write_timeout)",
        f"{path}:16: [web] port: must be at most 65535; got 70000",
        f"{path}:18: [rgi]: unknown section (known: camera, controller, rig, robotd, run, serial, sim, solver, "
        "vision, web)",
    ]
    assert str(caught.value) == "\n".join(caught.value.problems)


def test_a_part_that_stops_early_does_not_hide_the_others(tmp_path):
    path = write(tmp_path, "[robotd]\nlog_level = 1\n[rig.motors]\nU = 'U'\n[web]\nport = 0\n")
    with pytest.raises(ConfigError) as caught:
        load_parts(path, sim=True)
    assert [p.split(": ", 2)[1] for p in caught.value.problems] == ["[robotd] log_level", "[rig] motors", "[web] port"]


def test_robotd_check_prints_every_problem_without_a_traceback(tmp_path, capsys):
    path = write(tmp_path, MISTAKES)
    assert main(["check", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"error: {path}:2: [robotd] log_level" in err and f"error: {path}:18: [rgi]" in err
    assert f"error: {path}: [serial] port: required for a real rig" in err
    assert err.count("error: ") == 9


def test_the_daemon_refuses_a_bad_config_listing_every_problem(tmp_path, capsys):
    path = write(tmp_path, MISTAKES)
    assert main(["--sim", "--once", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("error: ") == 8 and "Traceback" not in err


@pytest.mark.parametrize(
    "text, key, line",
    [
        ("a = 1\n[t]\nb = 2\n", "t.b", 3),
        ("[a.b]\n\nc = 1\n", "a.b.c", 3),
        ("[ a . 'b c' ]\nd.e = 1\n", "a.b c.d.e", 2),
        ('[t]\nm = { U = "U", R = { x = 1 } }\n', "t.m.R.x", 2),
        ('[t]\nx = [\n  "[fake]",\n  1,\n]\ny = 2\n', "t.y", 6),
        ('[t]\ns = """\n[fake]\nk = 1 """\nz = 3\n', "t.z", 5),
        ("[[runs]]\nn = 1\n[[runs]]\nn = 2\nm = 3\n", "runs.m", 5),
        ("[t]\n\"q.k\" = 1  # c = 2\nw = 'a#b'\n", "t.w", 3),
    ],
)
def test_key_lines_follow_toml_structure(text, key, line):
    assert key_lines(text)[key] == line


def test_a_missing_fake_key_is_not_found_in_strings():
    assert "t.fake" not in key_lines('[t]\ns = """\nfake = 1\n"""\n')


def test_log_file_options_are_checked(tmp_path):
    path = write(tmp_path, "[robotd]\nlog_max_mb = 5\nlog_backups = 0\n")
    with pytest.raises(ConfigError) as caught:
        load_parts(path, sim=True)
    assert [p.split(": ", 2)[1:] for p in caught.value.problems] == [
        ["[robotd] log_max_mb", "applies only with log_file set"],
        ["[robotd] log_backups", "applies only with log_file set"],
    ]
    path = write(tmp_path, f"[robotd]\nlog_file = '{tmp_path}/robotd.log'\nlog_max_mb = 0\nlog_backups = 0\n")
    with pytest.raises(
        ConfigError,
        match=r":3: \[robotd\] log_max_mb: must be at least 0.01(.|\n)*"
        r":4: \[robotd\] log_backups: must be at least 1",
    ):
        load_parts(path, sim=True)


def test_log_file_rotates(tmp_path):
    settings = LogFileSettings(tmp_path / "logs" / "robotd.log", max_mb=0.001, backups=2)
    handler = attach(settings, "info")
    logger = logging.getLogger("robotd.test")
    logger.setLevel(logging.INFO)
    try:
        for n in range(100):
            logger.info("line %03d %s", n, "x" * 40)
    finally:
        detach(handler)
        logger.setLevel(logging.NOTSET)
    files = sorted(p.name for p in settings.path.parent.iterdir())
    assert files == ["robotd.log", "robotd.log.1", "robotd.log.2"]
    assert all(p.stat().st_size <= 1100 for p in settings.path.parent.iterdir())
    assert "line 099" in settings.path.read_text()


def test_paths_follow_platformdirs_and_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "conf"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert paths.user_config_path() == platformdirs.user_config_path("robotd") / "robotd.toml"
    assert paths.user_config_path() == tmp_path / "conf" / "robotd" / "robotd.toml"
    assert paths.default_data_dir() == tmp_path / "data" / "robotd"
    assert paths.config_search_path() == [paths.SYSTEM_CONFIG, paths.user_config_path()]


def test_cache_dir_override(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBOTD_CACHE_DIR", str(tmp_path / "cache"))
    assert paths.cache_dir() == tmp_path / "cache"
    monkeypatch.delenv("ROBOTD_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.cache_dir() == tmp_path / "xdg" / "robotd"


def test_config_from_environment(tmp_path, monkeypatch):
    path = write(tmp_path, "")
    monkeypatch.setenv("ROBOTD_CONFIG", str(path))
    assert find_config() == path
    assert find_config(tmp_path / "robotd.toml") == path
    monkeypatch.setenv("ROBOTD_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(ConfigError, match="ROBOTD_CONFIG .*nope.toml does not exist"):
        find_config()


def test_search_path_uses_user_config(tmp_path, monkeypatch):
    monkeypatch.delenv("ROBOTD_CONFIG", raising=False)
    monkeypatch.setattr(paths, "SYSTEM_CONFIG", tmp_path / "etc" / "robotd.toml")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert find_config() is None
    (tmp_path / "robotd").mkdir()
    path = tmp_path / "robotd" / "robotd.toml"
    path.write_text("")
    assert find_config() == path
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "robotd.toml").write_text("")
    assert find_config() == tmp_path / "etc" / "robotd.toml"


# ---------------------------------------------------------------- one schema (robot.schema), every error at once

SEVERAL_SECTIONS = """\
[robotd]
log_level = "loud"

[rig]
quarter_turn_s = 0
half_turn_s = "slow"

[controller]
kind = "marlin"

[controller.marlin]
buffer = 0

[controller.marlin.timing]
silence = -1
silense = 2
poll = "fast"

[sim]
puzzle = 4

[sim.motors]
quarter_ms = -5
turbo = true

[sim.faults]
drop = 1.5
reset_after = -1
stall = "R"

[sim.faults.to_host]
corupt = 0.1

[web]
port = 0
"""


def test_mistakes_in_many_tables_are_all_reported_with_their_lines(tmp_path):
    path = write(tmp_path, SEVERAL_SECTIONS)
    with pytest.raises(ConfigError) as caught:
        load_parts(path, sim=True)
    marlin_timing = (
        "boot_timeout, busy_silence, estop_hold, estop_retry, estop_timeout, poll, probe_after, query_timeout, "
        "reopen_pause, reply_share, settle, silence, stop_recovery, sync_interval, write_timeout"
    )
    assert caught.value.problems == [
        f"{path}:2: [robotd] log_level: must be one of debug, info, warning, error; got 'loud'",
        f"{path}:5: [rig] quarter_turn_s: must be more than 0; got 0",
        f"{path}:6: [rig] half_turn_s: must be a number, not 'slow'",
        f"{path}:12: [controller.marlin] buffer: must be at least 1; got 0",
        f"{path}:15: [controller.marlin.timing] silence: must be more than 0; got -1",
        f"{path}:16: [controller.marlin.timing] silense: unknown option (known here: {marlin_timing})",
        f"{path}:17: [controller.marlin.timing] poll: must be a number, not 'fast'",
        f"{path}:20: [sim] puzzle: must be one of 2, 3; got 4",
        f"{path}:23: [sim.motors] quarter_ms: must be at least 0; got -5",
        f"{path}:24: [sim.motors] turbo: unknown option (known here: half_ms, home_ms, quarter_ms, settle_ms)",
        f"{path}:27: [sim.faults] drop: must be at most 1; got 1.5",
        f"{path}:28: [sim.faults] reset_after: must be at least 0; got -1",
        f"{path}:29: [sim.faults] stall: must be a list, not 'R'",
        f"{path}:32: [sim.faults.to_host] corupt: unknown option (known here: corrupt, delay, delay_ms, drop, "
        "duplicate, noise)",
        f"{path}:35: [web] port: must be at least 1; got 0",
    ]


def test_checks_across_keys_and_tables_are_reported_with_the_field_errors(tmp_path):
    path = write(
        tmp_path,
        """\
[rig]
kind = "flip-spin"
spin_half_s = 0.1
flip_s = 0
[controller]
kind = "maestro"
[controller.maestro.spin]
channel = 7
ccw_us = 1490
[controller.maestro.timing]
silence = 0
[sim]
cameras = "flip"
[sim.faults]
stall = ["U"]
""",
    )
    with pytest.raises(ConfigError) as caught:
        load_parts(path, sim=True)
    assert [p.removeprefix(f"{path}:") for p in caught.value.problems] == [
        "3: [rig] spin_half_s: must be at least spin_quarter_s (0.3); got 0.1",
        "4: [rig] flip_s: must be more than 0; got 0",
        "8: [controller.maestro.spin] channel: must be at most 5; got 7",
        "9: [controller.maestro.spin] ccw_us: the spin end-points must be at least 20 µs apart; got 1490, 1500, 2000",
        "11: [controller.maestro.timing] silence: must be more than 0; got 0",
        "13: [sim] cameras: a flip/spin rig has one camera above the cube: leave this out",
        "15: [sim.faults] stall: a Maestro has no stall or limit switches",
    ]


@pytest.mark.parametrize(
    "table, key",
    [
        ("robotd", "log_levle"),
        ("solver", "budget"),
        ("run", "retries"),
        ("rig", "quater_turn_s"),
        ("rig.stepper", "speed"),
        ("controller", "kinds"),
        ("controller.marlin", "speed"),
        ("controller.marlin.timing", "silense"),
        ("controller.maestro.spin", "angle"),
        ("controller.maestro.timing", "silense"),
        ("serial", "prot"),
        ("serial.timing", "ack"),
        ("sim", "seed"),
        ("sim.faults", "dorp"),
        ("sim.faults.to_device", "dorp"),
        ("sim.motors", "turn_ms"),
        ("web", "hots"),
        ("vision", "view"),
        ("camera.top", "exposre"),
    ],
)
def test_an_unknown_key_in_any_table_is_refused_with_its_line(tmp_path, table, key):
    needs = {"rig.stepper": "steps_per_quarter = 400\nmax_rate = 100\naccel = 5\n", "camera.top": "index = 0\n"}
    path = write(tmp_path, f"[{table}]\n{needs.get(table, '')}{key} = 1\n")
    with pytest.raises(ConfigError) as caught:
        load_parts(path, sim=True)
    line = 2 + needs.get(table, "").count("\n")
    assert any(
        p.startswith(f"{path}:{line}: [{table}] {key}: unknown option (known here: ") for p in caught.value.problems
    ), caught.value.problems


def test_without_collect_mode_a_table_raises_all_its_problems_together(tmp_path):
    config = Config.load(write(tmp_path, "[rig]\nquarter_turn_s = 0\nsettle_s = -1\nbogus = 1\n"))
    with pytest.raises(ConfigError) as caught:
        rig_from_config(config.section("rig"))
    assert [p.split(": ", 2)[1] for p in caught.value.problems] == [
        "[rig] quarter_turn_s",
        "[rig] settle_s",
        "[rig] bogus",
    ]


def test_the_command_line_overrides_are_checked_as_the_file_would_be(tmp_path):
    with pytest.raises(ConfigError, match=r"\[web\] port: must be at most 65535; got 70000"):
        load_parts(write(tmp_path, ""), sim=True, port=70000)


def _toml_blocks(path: Path) -> list[str]:
    """The robotd configs among a document's ```toml blocks (a view config in docs/vision.md is not one)."""
    blocks = re.findall(r"```toml\n(.*?)```", path.read_text(), re.S)
    return [block for block in blocks if set(tomllib.loads(block)) <= set(SECTIONS)]


EXAMPLES = [
    (path.name, n, block)
    for path in sorted(Path("docs").glob("*.md")) + [Path("README.md")]
    for n, block in enumerate(_toml_blocks(path))
]


def test_the_documents_show_example_configs():
    assert len(EXAMPLES) >= 4 and {name for name, _, _ in EXAMPLES} >= {"hardware.md", "firmware.md"}


@pytest.mark.parametrize("name, n, block", EXAMPLES, ids=[f"{name}-{n}" for name, n, _ in EXAMPLES])
def test_example_configs_in_the_documents_are_valid(tmp_path, name, n, block):
    parts = load_parts(write(tmp_path, block), sim=True)
    assert parts.sections["rig"] is not None and parts.sections["controller"] is not None


def test_the_sample_config_is_valid_through_the_whole_schema():
    data = tomllib.loads(Path("deploy/robotd.toml").read_text())
    model = RobotdConfig.model_validate(data)
    assert model.rig.kind == "six-axis" and set(model.camera) == {"ufr", "dlb"}
    assert set(RobotdConfig.model_json_schema()["properties"]) == set(SECTIONS)


def test_the_api_and_the_config_share_their_fields():
    from robot.schema.sim import SimTable
    from robot.web_models import RunRequest

    for api, config in (("puzzle", "puzzle"), ("light", "light"), ("moves", "scramble_moves")):
        api_schema = RunRequest.model_json_schema()["properties"][api]["anyOf"][0]
        config_schema = SimTable.model_json_schema()["properties"][config]
        words = ("default", "description", "title")
        assert {k: v for k, v in api_schema.items() if k not in words} == {
            k: v for k, v in config_schema.items() if k not in words
        }


def test_the_log_file_gets_the_runs_of_robotd_once(tmp_path):
    log = tmp_path / "logs" / "robotd.log"
    path = write(
        tmp_path,
        f'[robotd]\ndata_dir = "{tmp_path / "data"}"\nlog_file = "{log}"\n[solver]\n{NO_TWO_PHASE}'
        "[rig]\nquarter_turn_s = 0.01\nhalf_turn_s = 0.015\nsettle_s = 0.0\n",
    )
    done = subprocess.run(
        [sys.executable, "-m", "robot", "--config", str(path), "--sim", "--once", "--puzzle", "2", "--seed", "3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text = log.read_text()
    assert "INFO: robotd.run: run 1: scanning" in text and "INFO: robotd.run: run 1: done" in text
    assert "solution" in text and "INFO" not in done.stderr  # stderr keeps to warnings with --once
