"""Config loading: typed getters, ranges, unknown keys and line numbers in every message."""

import logging

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
from robot.toml_lines import key_lines


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
    rig_from_config(config.section("rig"))
    with pytest.raises(ConfigError, match=r"robotd.toml:4: \[rig\] quater_turn_s: unknown option \(known here: .*quarter_turn_s"):
        config.check_unused()


def test_unknown_section(tmp_path):
    config = Config.load(write(tmp_path, "[rgi]\nkind = 'six-axis'\n"))
    with pytest.raises(ConfigError, match=r"robotd.toml:1: \[rgi\]: unknown section"):
        config.check_unused()


@pytest.mark.parametrize("text, message", [
    ("[rig]\nquarter_turn_s = 'fast'\n", r":2: \[rig\] quarter_turn_s: must be a number, not 'fast'"),
    ("[rig]\nquarter_turn_s = -1\n", r":2: \[rig\] quarter_turn_s: must be more than 0"),
    ("[rig]\nsimultaneous_opposite = 1\n", r"simultaneous_opposite: must be true or false"),
    ("[rig]\nkind = 'delta'\n", r"kind: must be one of six-axis, flip-spin; got 'delta'"),
    ("[rig.motors]\nU = 'U'\nR = 'R'\nF = 'F'\nD = 'D'\nL = 'L'\nB = 'L'\n", r"motors: two faces share a motor"),
    ("[rig.motors]\nU = 'U'\nR = 'R'\n", r"motors: needs all six faces; missing F, D, L, B"),
    ("[rig.motors]\nU = 1\nR = 'R'\nF = 'F'\nD = 'D'\nL = 'L'\nB = 'B'\n", r":2: \[rig.motors\] U: must be a motor name"),
    ("[rig.direction]\nU = 1\nR = 1\nF = 1\nD = 1\nL = 1\nX = 1\n", r":7: \[rig.direction\] X: is not a face"),
    ("[rig.direction]\nU = 2\nR = 1\nF = 1\nD = 1\nL = 1\nB = 1\n", r":2: \[rig.direction\] U: must be 1 or -1"),
])
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
    assert [p.split(": ", 2)[1] for p in caught.value.problems] == [
        "[robotd] log_level", "[rig] motors", "[web] port"]


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


@pytest.mark.parametrize("text, key, line", [
    ("a = 1\n[t]\nb = 2\n", "t.b", 3),
    ("[a.b]\n\nc = 1\n", "a.b.c", 3),
    ("[ a . 'b c' ]\nd.e = 1\n", "a.b c.d.e", 2),
    ('[t]\nm = { U = "U", R = { x = 1 } }\n', "t.m.R.x", 2),
    ('[t]\nx = [\n  "[fake]",\n  1,\n]\ny = 2\n', "t.y", 6),
    ('[t]\ns = """\n[fake]\nk = 1 """\nz = 3\n', "t.z", 5),
    ("[[runs]]\nn = 1\n[[runs]]\nn = 2\nm = 3\n", "runs.m", 5),
    ('[t]\n"q.k" = 1  # c = 2\nw = \'a#b\'\n', "t.w", 3),
])
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
        ["[robotd] log_backups", "applies only with log_file set"]]
    path = write(tmp_path, f"[robotd]\nlog_file = '{tmp_path}/robotd.log'\nlog_max_mb = 0\nlog_backups = 0\n")
    with pytest.raises(ConfigError, match=r":3: \[robotd\] log_max_mb: must be at least 0.01(.|\n)*"
                                          r":4: \[robotd\] log_backups: must be at least 1"):
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
