"""The line each key of a TOML document is set on (``tomllib`` keeps no positions).

A small scanner of TOML's structure, run only on text ``tomllib`` already
accepted: tables (``[a.b]``), arrays of tables, dotted and quoted keys,
inline tables and values spanning lines (arrays, multi-line strings) are
followed, so a ``[`` or ``=`` inside a string or a multi-line array never
looks like a header or a key. Keys are joined with dots as
``Config`` names them (``rig.timing.quarter_turn_s``); the first line that
sets a key wins, so an array of tables maps to its first entry.
"""

from __future__ import annotations

import tomllib

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_SCALAR_END = frozenset(",]}\n#")


def key_lines(text: str) -> dict[str, int]:
    """Map every dotted key path (tables too) to the first line that sets it."""
    scanner = _Scanner(text)
    scanner.document()
    return scanner.lines


class _Scanner:
    def __init__(self, text: str):
        self.text, self.pos, self.line = text, 0, 1
        self.lines: dict[str, int] = {}

    def _peek(self, n: int = 1) -> str:
        return self.text[self.pos : self.pos + n]

    def _advance(self, n: int = 1) -> None:
        self.line += self.text.count("\n", self.pos, self.pos + n)
        self.pos += n

    def _skip(self, newlines: bool) -> None:
        """Skip blanks and comments (and line ends when ``newlines``)."""
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in " \t" or (newlines and char in "\r\n"):
                self._advance()
            elif char == "#":
                end = self.text.find("\n", self.pos)
                self._advance((len(self.text) if end < 0 else end) - self.pos)
            else:
                return

    def _record(self, path: list[str], line: int) -> None:
        for depth in range(1, len(path) + 1):
            self.lines.setdefault(".".join(path[:depth]), line)

    def document(self) -> None:
        table: list[str] = []
        while True:
            self._skip(newlines=True)
            if self.pos >= len(self.text):
                return
            if self._peek() == "[":
                table = self._header()
            else:
                self._key_value(table)

    def _header(self) -> list[str]:
        brackets = 2 if self._peek(2) == "[[" else 1
        line = self.line
        self._advance(brackets)
        self._skip(newlines=False)
        path = self._key()
        self._skip(newlines=False)
        self._advance(brackets)
        self._record(path, line)
        return path

    def _key_value(self, table: list[str]) -> None:
        line = self.line
        path = table + self._key()
        self._record(path, line)
        self._skip(newlines=False)
        self._advance()  # "="
        self._skip(newlines=False)
        self._value(path)

    def _key(self) -> list[str]:
        parts = [self._simple_key()]
        self._skip(newlines=False)
        while self._peek() == ".":
            self._advance()
            self._skip(newlines=False)
            parts.append(self._simple_key())
            self._skip(newlines=False)
        return parts

    def _simple_key(self) -> str:
        start = self.pos
        if self._peek() in "\"'":
            self._string()
            return tomllib.loads(f"k = {self.text[start : self.pos]}")["k"]
        while self.pos < len(self.text) and self.text[self.pos] in _BARE:
            self.pos += 1
        return self.text[start : self.pos]

    def _value(self, path: list[str]) -> None:
        char = self._peek()
        if char in "\"'":
            self._string()
        elif char == "[":
            self._array(path)
        elif char == "{":
            self._inline_table(path)
        else:
            while self.pos < len(self.text) and self.text[self.pos] not in _SCALAR_END:
                self.pos += 1

    def _string(self) -> None:
        quote = self._peek()
        if self._peek(3) == quote * 3:
            self._advance(3)
            self._until(quote * 3, escapes=quote == '"')
            while self._peek() == quote:  # up to two quotes may end the content
                self._advance()
        else:
            self._advance()
            self._until(quote, escapes=quote == '"')

    def _until(self, closing: str, escapes: bool) -> None:
        """Advance past the next unescaped ``closing``."""
        while self.pos < len(self.text) and not self.text.startswith(closing, self.pos):
            self._advance(2 if escapes and self._peek() == "\\" else 1)
        self._advance(len(closing))

    def _array(self, path: list[str]) -> None:
        self._items("]", lambda: self._value(path))

    def _inline_table(self, path: list[str]) -> None:
        self._items("}", lambda: self._key_value(path))

    def _items(self, closing: str, item) -> None:
        """The comma-separated items of an array or inline table, through ``closing``."""
        self._advance()
        while True:
            self._skip(newlines=True)
            if self._peek() == closing:
                self._advance()
                return
            item()
            self._skip(newlines=True)
            if self._peek() == ",":
                self._advance()
