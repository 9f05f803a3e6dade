"""Config loading: typed getters, ranges, unknown keys and line numbers in every message."""

import pytest

from robot.config import Config, find_config
from robot.errors import ConfigError
from robot.rig import rig_from_config


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
    with pytest.raises(ConfigError, match=r"robotd.toml, line 4: unknown option 'rig.quater_turn_s'"):
        config.check_unused()


def test_unknown_section(tmp_path):
    config = Config.load(write(tmp_path, "[rgi]\nkind = 'six-axis'\n"))
    with pytest.raises(ConfigError, match=r"line 2: unknown option 'rgi.kind'"):
        config.check_unused()


@pytest.mark.parametrize("text, message", [
    ("[rig]\nquarter_turn_s = 'fast'\n", r"line 2: \[rig\] quarter_turn_s: must be a number, not 'fast'"),
    ("[rig]\nquarter_turn_s = -1\n", r"line 2: \[rig\] quarter_turn_s: must be more than 0"),
    ("[rig]\nsimultaneous_opposite = 1\n", r"simultaneous_opposite: must be true or false"),
    ("[rig]\nkind = 'delta'\n", r"kind: must be one of six-axis, flip-spin; got 'delta'"),
    ("[rig.motors]\nU = 'U'\nR = 'R'\nF = 'F'\nD = 'D'\nL = 'L'\nB = 'L'\n", r"motors: two faces share a motor"),
    ("[rig.motors]\nU = 'U'\nR = 'R'\n", r"motors: needs all six faces; missing F, D, L, B"),
    ("[rig.motors]\nU = 1\nR = 'R'\nF = 'F'\nD = 'D'\nL = 'L'\nB = 'B'\n", r"line 2: \[rig.motors\] U: must be a motor name"),
    ("[rig.direction]\nU = 1\nR = 1\nF = 1\nD = 1\nL = 1\nX = 1\n", r"line 7: \[rig.direction\] X: is not a face"),
    ("[rig.direction]\nU = 2\nR = 1\nF = 1\nD = 1\nL = 1\nB = 1\n", r"line 2: \[rig.direction\] U: must be 1 or -1"),
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


def test_search_path_uses_user_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "robotd").mkdir()
    path = tmp_path / "robotd" / "robotd.toml"
    path.write_text("")
    found = find_config()
    assert found in (path, __import__("robot.config").config.SYSTEM_CONFIG)
