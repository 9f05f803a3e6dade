"""Command line: read traffic logs and make frames by hand.

    python -m firmware_interface decode LOGFILE... [--summary]   explain traffic logs (``-`` reads stdin)
    python -m firmware_interface frame "STATUS 1"             add the checksum, to type into a terminal

A traffic log is what ``RigLink(trace=...)`` writes, what a fault dumps
(``fault_log_dir``) and what ``LinkError.log`` holds; a plain capture of
the serial line (one frame a line) decodes too. A rotated trace is read
oldest first: ``decode trace.log.2 trace.log.1 trace.log``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from .robotd.framelog import DIRECTIONS, describe, parse_entry
from .robotd.protocol import encode_frame


def _decode(paths: list[str], summary: bool) -> int:
    kinds: Counter = Counter()
    for path in paths:
        try:
            stream = sys.stdin if path == "-" else open(path, encoding="latin-1")
        except OSError as err:
            print(f"error: cannot read {path}: {err.strerror}", file=sys.stderr)
            return 2
        if len(paths) > 1 and not summary:
            print(f"== {path}")
        with stream:
            _decode_lines(stream, kinds, summary)
    if summary or kinds:
        print(
            "\n".join(
                ["", "frames by direction and kind:"]
                + [f"  {way:<8} {kind:<10} {n}" for (way, kind), n in sorted(kinds.items())]
            )
        )
    return 0


def _decode_lines(stream, kinds: Counter, summary: bool) -> None:
    for line in stream:
        entry = parse_entry(line)
        if entry is None:
            continue
        seconds, direction, raw = entry
        when = "" if seconds is None else f"{seconds:10.4f}"
        way = DIRECTIONS.get(direction or "", "?")
        text = raw.decode("latin-1") if direction == "!" else describe(direction, raw)
        kinds[(way, text.split(" ", 1)[0])] += 1
        if not summary:
            print(f"{when:>10} {way:<8} {text}")


def _frame(body: str) -> int:
    try:
        sys.stdout.write(encode_frame(body).decode("ascii"))
    except (ValueError, UnicodeEncodeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m firmware_interface", description="robotd firmware link tools (protocol v1 and v2)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    decode = sub.add_parser("decode", help="pretty-print captured traffic logs")
    decode.add_argument("logfile", nargs="+", help="log files in order (a rotated trace: oldest first), or - for stdin")
    decode.add_argument("--summary", action="store_true", help="only count frames by kind")
    frame = sub.add_parser("frame", help="print a frame body with its checksum")
    frame.add_argument("body", help='e.g. "STATUS 1" or "5 TURN 1 U -1"')
    args = parser.parse_args(argv)
    if args.command == "decode":
        return _decode(args.logfile, args.summary)
    return _frame(args.body)


if __name__ == "__main__":
    sys.exit(main())
