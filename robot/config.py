"""robotd's TOML config: read at start and validated through one schema (``robot.schema``).

Each top-level table is validated by its pydantic model when a part first asks for it
(``Config.table``); every problem becomes ``FILE:LINE: [section] key: problem``, the line found by
``robot.toml_lines``. A key with a problem is then left out and the table validated again, so the part
is still built (that key at its default) and the problems of other keys, and of checks that span keys,
are found too. ``Config.check_unused`` validates the tables no part asked for and refuses unknown
tables (unknown keys inside a table are the models' own errors).

A config loaded with ``collect=True`` (``robot.assemble`` does) records the problems and goes on;
``raise_problems`` then raises one ``ConfigError`` listing them all in file order. Without it, a table's
problems are raised at once (all of that table's together).
"""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from . import schema
from .errors import ConfigError
from .toml_lines import key_lines

_ROUNDS = 4  # validations of one table, each without the keys the one before found wrong


class Config:
    """A parsed config file; validates its tables and words every problem with its line."""

    def __init__(
        self, data: dict, source: str = "<defaults>", lines: dict[str, int] | None = None, collect: bool = False
    ):
        self.data = data
        self.source = source
        self.lines = lines or {}
        self.collect = collect
        self.problems: list[tuple[int, str]] = []
        self._tables: dict[str, Any] = {}

    @classmethod
    def load(cls, path: str | os.PathLike | None, collect: bool = False) -> Config:
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
        return ConfigError(f"{self.where(key)}: [{table or name}] {name if table else ''}".rstrip() + f": {problem}")

    def report(self, key: str, problem: str) -> None:
        """A problem with ``key``: raised at once, or recorded when collecting."""
        self.add(self.error(key, problem), self.line(key))

    def add(self, error: ConfigError, line: int | None = None) -> None:
        """Record each problem of ``error`` when collecting (raise it otherwise); ``line`` orders the list."""
        if not self.collect:
            raise error
        for message in error.problems:
            head = _head(message)
            if all(_head(known) != head for _, known in self.problems):  # not a knock-on of the first
                self.problems.append((line or _line_in(message, self.source) or 0, message))

    def attempt(self, read: Callable[..., Any], *args: Any) -> Any:
        """``read(*args)``, a part's reader; when collecting, the ``ConfigError`` it raises is recorded and
        None returned, so the other parts are read as usual."""
        try:
            return read(*args)
        except ConfigError as error:
            self.add(error)
            return None

    def raise_problems(self) -> None:
        """One ``ConfigError`` listing every recorded problem in file order."""
        if self.problems:
            messages = list(dict.fromkeys(message for _, message in sorted(self.problems, key=lambda p: p[0])))
            raise ConfigError("\n".join(messages), problems=messages)

    def override(self, key: str, value: Any) -> None:
        """Set ``section.key`` as if the file said so (the command line's choices); before it is read."""
        section, _, name = key.partition(".")
        table = self.data.get(section)
        self.data = {**self.data, section: {**(table if isinstance(table, dict) else {}), name: value}}
        self._tables.pop(section, None)

    def table(self, section: str) -> Any:
        """The top-level table ``section`` as its schema model, validated once; its problems are reported
        (raised at once unless collecting). Raises ``ConfigError`` when no model can be made of it."""
        if section not in self._tables:
            self._tables[section] = self._validate(section)
        found = self._tables[section]
        if isinstance(found, ConfigError):
            raise found
        return found

    def _validate(self, section: str) -> Any:
        """The model of ``section``, its problems reported; else the ``ConfigError`` listing them."""
        model, found = _validated(section, self.data.get(section, {}))
        messages = [str(self.error(".".join((section, *path)), text)) for path, text in found]
        if messages:
            self.add(ConfigError("\n".join(messages), problems=messages))
        return (
            model
            if model is not None
            else ConfigError(f"{self.where(section)}: [{section}] cannot be read", problems=messages)
        )

    def section(self, name: str) -> Section:
        """A handle on the table ``name`` (dotted for one below a top-level table)."""
        return Section(self, name)

    def check_unused(self) -> None:
        """Validate every table no part asked for (each problem reported), and refuse unknown tables."""
        known = schema.SECTIONS
        for section in self.data:
            if section not in known:
                self.report(section, f"unknown section (known: {', '.join(sorted(known))})")
            elif section not in self._tables:
                try:
                    self.table(section)
                except ConfigError:
                    if not self.collect:
                        raise


class Section:
    """A handle on one table of the config: its validated model and errors that point at its keys."""

    def __init__(self, config: Config, name: str):
        self.config, self.name = config, name

    @property
    def model(self) -> Any:
        """The table's schema model (validated with its top-level table); raises ``ConfigError`` when the
        table cannot be read."""
        top, *below = self.name.split(".")
        node = self.config.table(top)
        for part in below:
            node = node[part] if isinstance(node, dict) else getattr(node, part)
        return node

    def given(self, key: str) -> bool:
        """Whether the file (or the command line) sets ``key`` of this table, with a value that is right."""
        return key in self.model.model_fields_set

    def error(self, key: str, problem: str) -> ConfigError:
        return self.config.error(f"{self.name}.{key}", problem)

    def report(self, key: str, problem: str) -> None:
        self.config.report(f"{self.name}.{key}", problem)


def _validated(section: str, data: Any) -> tuple[Any, list[tuple[tuple[str, ...], str]]]:
    """The model of the top-level table ``section`` holding ``data`` (None when none can be made) and every
    problem found, as (key path below the table, problem). After each validation the keys found wrong are
    left out and the table validated again, which finds the problems of checks over several keys (pydantic
    runs them only when each key is right); what only follows from a key left out is not a problem."""
    found: list[tuple[tuple[str, ...], str]] = []
    left_out: list[tuple[str, ...]] = []
    for _ in range(_ROUNDS):
        try:
            return schema.adapter(section).validate_python(data), found
        except ValidationError as error:
            problems = schema.problems(error, data, schema.TABLES[section])
        found += [(p.path, p.text) for p in problems if not any(gone[: len(p.path)] == p.path for gone in left_out)]
        left_out += [p.path for p in problems]
        data, before = _without(data, [p.path for p in problems]), data
        if data == before or any(p.final for p in problems):
            break
    return None, found


def _without(data: Any, paths: list[tuple[str, ...]]) -> Any:
    """``data`` less the deepest key it has of each of ``paths``."""
    data = copy.deepcopy(data)
    for path in paths:
        node = data
        for depth, part in enumerate(path):
            if not isinstance(node, dict) or part not in node:
                break
            if depth == len(path) - 1 or not isinstance(node[part], dict) or path[depth + 1] not in node[part]:
                del node[part]
                break
            node = node[part]
    return data


def _head(message: str) -> str:
    """``[section] key`` of a ``FILE:LINE: [section] key: problem`` message."""
    parts = message.split(": ")
    return parts[1] if len(parts) > 2 else message


def _line_in(message: str, source: str) -> int | None:
    """The line number in a ``FILE:LINE: ...`` message."""
    head = message[len(source) + 1 :].partition(":")[0] if message.startswith(source + ":") else ""
    return int(head) if head.isdigit() else None
