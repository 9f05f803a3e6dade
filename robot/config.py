"""robotd's TOML config: found, read and validated at start.

Each part of the daemon reads its own section through ``Section`` getters
that check type and range; after every part has read its options,
``Config.check_unused`` turns any key nobody asked for into an error, so a
misspelt option is never silently ignored. Every message names the file,
the line and the key.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Iterable

from .errors import ConfigError

SYSTEM_CONFIG = Path("/etc/robotd/robotd.toml")
_MISSING = object()
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-.\"']+)\s*=")


def user_config_path() -> Path:
    """``$XDG_CONFIG_HOME/robotd/robotd.toml`` (``~/.config`` when unset)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "robotd" / "robotd.toml"


def find_config(explicit: str | os.PathLike | None = None) -> Path | None:
    """The config to use: the explicit path (which must exist), else the system one, else the user one."""
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        return path
    for path in (SYSTEM_CONFIG, user_config_path()):
        if path.is_file():
            return path
    return None


def _key_lines(text: str) -> dict[str, int]:
    """Map dotted key paths ("rig.timing.quarter_turn_s") to the line that sets them."""
    lines: dict[str, int] = {}
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = header.group(1).replace('"', "").replace("'", "").replace(" ", "")
            lines.setdefault(table, number)
            continue
        key = _KEY.match(line)
        if key:
            name = key.group(1).replace('"', "").replace("'", "")
            lines.setdefault(f"{table}.{name}" if table else name, number)
    return lines


class Config:
    """A parsed config file; hands out sections and remembers which keys were read."""

    def __init__(self, data: dict, source: str = "<defaults>", lines: dict[str, int] | None = None):
        self.data = data
        self.source = source
        self.lines = lines or {}
        self.used: set[str] = set()

    @classmethod
    def load(cls, path: str | os.PathLike | None) -> "Config":
        """Read a TOML file; ``None`` gives an empty config (all defaults)."""
        if path is None:
            return cls({})
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"cannot read config file {path}: {error.strerror}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"config file {path} is not UTF-8 text") from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: not valid TOML: {error}") from None
        return cls(data, str(path), _key_lines(text))

    def where(self, key: str) -> str:
        line = self.lines.get(key)
        return f"{self.source}, line {line}" if line else self.source

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.where(key)}: [{key.rpartition('.')[0] or key}] "
                           f"{key.rpartition('.')[2]}: {problem}")

    def section(self, name: str) -> "Section":
        """The table ``name`` (dotted for nested tables); empty when the file lacks it."""
        node: Any = self.data
        for part in name.split("."):
            node = node.get(part, {}) if isinstance(node, dict) else _MISSING
        if not isinstance(node, dict):
            raise self.error(name, "must be a table ([" + name + "])")
        self.used.add(name)
        return Section(self, name, node)

    def has_section(self, name: str) -> bool:
        node: Any = self.data
        for part in name.split("."):
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return isinstance(node, dict)

    def check_unused(self) -> None:
        """Raise for the first key (in file order) that no part of robotd reads."""
        unknown = [key for key in _all_keys(self.data) if key not in self.used]
        if unknown:
            unknown.sort(key=lambda k: self.lines.get(k, 1 << 30))
            key = unknown[0]
            known = sorted(k.rpartition(".")[2] for k in self.used if k.rpartition(".")[0] == key.rpartition(".")[0])
            hint = f" (known here: {', '.join(known)})" if known else ""
            raise ConfigError(f"{self.where(key)}: unknown option '{key}'{hint}")


def _all_keys(data: dict, prefix: str = "") -> Iterable[str]:
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            yield from _all_keys(value, path)
        else:
            yield path


class Section:
    """One table of the config with typed, range-checked getters (Klipper style)."""

    def __init__(self, config: Config, name: str, data: dict):
        self.config, self.name, self.data = config, name, data

    def _raw(self, key: str, default: Any) -> tuple[Any, str]:
        path = f"{self.name}.{key}"
        self.config.used.add(path)
        if key in self.data:
            return self.data[key], path
        if default is _MISSING:
            raise ConfigError(f"{self.config.where(self.name)}: [{self.name}] {key}: required option is missing")
        return default, path

    def get_float(self, key: str, default: Any = _MISSING, *, minval: float | None = None,
                  maxval: float | None = None, above: float | None = None) -> float:
        value, path = self._raw(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.config.error(path, f"must be a number, not {value!r}")
        _check_range(self.config, path, value, minval, maxval, above)
        return float(value)

    def get_int(self, key: str, default: Any = _MISSING, *, minval: int | None = None,
                maxval: int | None = None) -> int:
        value, path = self._raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.config.error(path, f"must be a whole number, not {value!r}")
        _check_range(self.config, path, value, minval, maxval, None)
        return value

    def get_bool(self, key: str, default: Any = _MISSING) -> bool:
        value, path = self._raw(key, default)
        if not isinstance(value, bool):
            raise self.config.error(path, f"must be true or false, not {value!r}")
        return value

    def get_str(self, key: str, default: Any = _MISSING, *,
                choices: Iterable[str] | None = None) -> str | None:
        """A string option; a default of ``None`` makes it optional."""
        value, path = self._raw(key, default)
        if value is None and key not in self.data:
            return None
        if not isinstance(value, str):
            raise self.config.error(path, f"must be a string, not {value!r}")
        if choices is not None and value not in tuple(choices):
            raise self.config.error(path, f"must be one of {', '.join(choices)}; got {value!r}")
        return value

    def get_list(self, key: str, default: Any = _MISSING) -> list:
        value, path = self._raw(key, default)
        if not isinstance(value, list):
            raise self.config.error(path, f"must be a list, not {value!r}")
        return value

    def get_table(self, key: str) -> dict:
        """A nested table read as a whole (its keys are checked by the caller)."""
        value, path = self._raw(key, {})
        if not isinstance(value, dict):
            raise self.config.error(path, "must be a table")
        for sub in _all_keys(value, path):
            self.config.used.add(sub)
        return value

    def error(self, key: str, problem: str) -> ConfigError:
        return self.config.error(f"{self.name}.{key}", problem)


def _check_range(config: Config, path: str, value: float, minval, maxval, above) -> None:
    if minval is not None and value < minval:
        raise config.error(path, f"must be at least {minval}; got {value}")
    if maxval is not None and value > maxval:
        raise config.error(path, f"must be at most {maxval}; got {value}")
    if above is not None and value <= above:
        raise config.error(path, f"must be more than {above}; got {value}")
