"""robotd's TOML config: read and validated at start.

Each part of the daemon reads its own section through ``Section`` getters
that check type, range and choices; after every part has read its options,
``Config.check_unused`` turns any key nobody asked for into an error, so a
misspelt option is never silently ignored. Every message reads
``FILE:LINE: [section] key: problem``.

A config loaded with ``collect=True`` (``robot.assemble`` does) does not
stop at the first problem: a getter records it and returns the default so
reading goes on, and ``raise_problems`` raises one ``ConfigError`` listing
them all in file order.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Iterable

from .errors import ConfigError
from .toml_lines import key_lines

_MISSING = object()


class Config:
    """A parsed config file; hands out sections and remembers which keys were read."""

    def __init__(self, data: dict, source: str = "<defaults>", lines: dict[str, int] | None = None,
                 collect: bool = False):
        self.data = data
        self.source = source
        self.lines = lines or {}
        self.used: set[str] = set()
        self.collect = collect
        self.problems: list[tuple[int, str]] = []
        self.skipped: set[str] = set()

    @classmethod
    def load(cls, path: str | os.PathLike | None, collect: bool = False) -> "Config":
        """Read a TOML file; ``None`` gives an empty config (all defaults)."""
        if path is None:
            return cls({}, collect=collect)
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
        return cls(data, str(path), key_lines(text), collect)

    def line(self, key: str) -> int | None:
        """The line that sets ``key``, else that of its nearest enclosing table in the file."""
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key.rpartition(".")[0]
        return None

    def where(self, key: str) -> str:
        line = self.line(key)
        return f"{self.source}:{line}" if line else self.source

    def error(self, key: str, problem: str) -> ConfigError:
        table, _, name = key.rpartition(".")
        return ConfigError(f"{self.where(key)}: [{table or name}] {name if table else ''}".rstrip()
                           + f": {problem}")

    def report(self, key: str, problem: str) -> None:
        """A problem with ``key``: raised at once, or recorded when collecting."""
        self.add(self.error(key, problem), self.line(key))

    def add(self, error: ConfigError, line: int | None = None) -> None:
        """Record ``error`` when collecting (raise it otherwise); ``line`` orders the list."""
        if not self.collect:
            raise error
        head = _head(str(error))
        if all(_head(message) != head for _, message in self.problems):   # not a knock-on of the first
            self.problems.append((line or 0, str(error)))

    def attempt(self, sections: Iterable[str], read, *args):
        """``read(*args)``, a part's section reader; when collecting, a ``ConfigError`` it raises is recorded
        and None returned, and the keys of ``sections`` are no longer checked for being unknown (the reader
        stopped before asking for them all)."""
        try:
            return read(*args)
        except ConfigError as error:
            self.add(error, _line_in(str(error), self.source))
            self.skipped.update(sections)
            return None

    def raise_problems(self) -> None:
        """One ``ConfigError`` listing every recorded problem in file order."""
        if self.problems:
            messages = [message for _, message in sorted(self.problems, key=lambda p: p[0])]
            raise ConfigError("\n".join(dict.fromkeys(messages)), problems=list(dict.fromkeys(messages)))

    def section(self, name: str) -> "Section":
        """The table ``name`` (dotted for nested tables); empty when the file lacks it."""
        node: Any = self.data
        for part in name.split("."):
            node = node.get(part, {}) if isinstance(node, dict) else _MISSING
        self.used.add(name)
        if not isinstance(node, dict):
            self.report(name, f"must be a table ([{name}])")
            node = {}
        return Section(self, name, node)

    def has_section(self, name: str) -> bool:
        node: Any = self.data
        for part in name.split("."):
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return isinstance(node, dict)

    def check_unused(self) -> None:
        """Report every key (a whole table when nothing of it is known) that no part of robotd reads."""
        unknown = [key for key in _all_keys(self.data)
                   if key not in self.used and not any(_within(key, s) for s in self.skipped)]
        for table in _unknown_tables(unknown, self.used):
            known = sorted(k for k in self.used if "." not in k)
            self.report(table, f"unknown section (known: {', '.join(known)})" if "." not in table
                        else "unknown table")
            unknown = [key for key in unknown if not _within(key, table)]
        for key in unknown:
            table = key.rpartition(".")[0]
            known = sorted(k.rpartition(".")[2] for k in self.used if k.rpartition(".")[0] == table)
            self.report(key, "unknown option" + (f" (known here: {', '.join(known)})" if known else ""))


def _within(key: str, table: str) -> bool:
    return key == table or key.startswith(table + ".")


def _unknown_tables(keys: list[str], used: set[str]) -> list[str]:
    """The outermost tables of ``keys`` that nothing read: reported once instead of key by key."""
    tables = []
    for key in keys:
        parts = key.split(".")
        for depth in range(1, len(parts)):
            table = ".".join(parts[:depth])
            if not any(_within(u, table) for u in used):
                if table not in tables:
                    tables.append(table)
                break
    return tables


def _head(message: str) -> str:
    """``[section] key`` of a ``FILE:LINE: [section] key: problem`` message."""
    parts = message.split(": ")
    return parts[1] if len(parts) > 2 else message


def _line_in(message: str, source: str) -> int | None:
    """The line number in a ``FILE:LINE: ...`` message."""
    head = message[len(source) + 1:].partition(":")[0] if message.startswith(source + ":") else ""
    return int(head) if head.isdigit() else None


def _all_keys(data: dict, prefix: str = "") -> Iterable[str]:
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            yield from _all_keys(value, path)
        else:
            yield path


class Section:
    """One table of the config with typed, range-checked getters (Klipper style).

    A value that fails its check is reported to the config; when the config
    collects problems, the getter then returns the default so reading goes on.
    """

    def __init__(self, config: Config, name: str, data: dict):
        self.config, self.name, self.data = config, name, data

    def _raw(self, key: str, default: Any) -> tuple[Any, str]:
        path = f"{self.name}.{key}"
        self.config.used.add(path)
        if key in self.data:
            return self.data[key], path
        if default is _MISSING:
            self.config.report(path, "required option is missing")
            return None, path
        return default, path

    def _bad(self, path: str, problem: str, default: Any) -> Any:
        self.config.report(path, problem)
        return None if default is _MISSING else default

    def get_float(self, key: str, default: Any = _MISSING, *, minval: float | None = None,
                  maxval: float | None = None, above: float | None = None) -> float:
        value, path = self._raw(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return self._bad(path, f"must be a number, not {value!r}", default)
        problem = _range_problem(value, minval, maxval, above)
        return self._bad(path, problem, default) if problem else float(value)

    def get_int(self, key: str, default: Any = _MISSING, *, minval: int | None = None,
                maxval: int | None = None) -> int:
        value, path = self._raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            return self._bad(path, f"must be a whole number, not {value!r}", default)
        problem = _range_problem(value, minval, maxval, None)
        return self._bad(path, problem, default) if problem else value

    def get_bool(self, key: str, default: Any = _MISSING) -> bool:
        value, path = self._raw(key, default)
        if not isinstance(value, bool):
            return self._bad(path, f"must be true or false, not {value!r}", default)
        return value

    def get_str(self, key: str, default: Any = _MISSING, *,
                choices: Iterable[str] | None = None) -> str | None:
        """A string option; a default of ``None`` makes it optional."""
        value, path = self._raw(key, default)
        if value is None and key not in self.data:
            return None
        if not isinstance(value, str):
            return self._bad(path, f"must be a string, not {value!r}", default)
        if choices is not None and value not in tuple(choices):
            return self._bad(path, f"must be one of {', '.join(choices)}; got {value!r}", default)
        return value

    def get_list(self, key: str, default: Any = _MISSING) -> list:
        value, path = self._raw(key, default)
        if not isinstance(value, list):
            return self._bad(path, f"must be a list, not {value!r}", default)
        return value

    def get_table(self, key: str) -> dict:
        """A nested table read as a whole (its keys are checked by the caller)."""
        value, path = self._raw(key, {})
        if not isinstance(value, dict):
            return self._bad(path, "must be a table", {})
        for sub in _all_keys(value, path):
            self.config.used.add(sub)
        return value

    def error(self, key: str, problem: str) -> ConfigError:
        return self.config.error(f"{self.name}.{key}", problem)


def _range_problem(value: float, minval, maxval, above) -> str | None:
    if minval is not None and value < minval:
        return f"must be at least {minval}; got {value}"
    if maxval is not None and value > maxval:
        return f"must be at most {maxval}; got {value}"
    if above is not None and value <= above:
        return f"must be more than {above}; got {value}"
    return None
