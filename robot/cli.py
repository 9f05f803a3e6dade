"""``robotd``: run the daemon, do a dry run, check the config, list past runs.

    robotd [--config PATH] [--sim | --rig-only] [--host H] [--port P]
    robotd --sim --once [--puzzle 2|3] [--seed N] [--light PRESET] [--moves K] [--json]
                        [--controller KIND] [--rig KIND] [--firmware python|avr]
    robotd --rig-only --once [--puzzle 2|3] [--seed N] [--light PRESET] [--moves K] [--json]
    robotd check [--config PATH] [--json]
    robotd history [--limit N] [--json]

``--rig-only`` is a motors-only dry run: the controller on ``[serial] port``
turns the faces while a virtual cube, seen by the simulated camera,
follows what the controller reports (``robot.rig_only``).

User mistakes (a bad config, a missing camera or port) exit with code 2 and
one ``error:`` line per problem; a run that does not end solved exits 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable

from .errors import ConfigError, RobotError

# The rest of robotd is imported where a command needs it, not here: the two-phase worker is a spawned
# process, and a spawned process imports the main module again, which for the robotd command is a script
# that imports this module. Importing the daemon here would load the camera, vision and web stacks into
# the worker (a second longer to start, 80 MB more memory) for nothing.

VIRTUAL = "the virtual cube (--sim, --rig-only): "
CONFIG_HELP = (
    "config file (default: $ROBOTD_CONFIG, else /etc/robotd/robotd.toml, then the user's ~/.config/robotd/robotd.toml)"
)


def _parser() -> argparse.ArgumentParser:
    from .controllers import KINDS as CONTROLLERS
    from .rig import RIG_KINDS
    from .schema.sim import FIRMWARES

    parser = argparse.ArgumentParser(prog="robotd", description="Controller for Rubik's-cube solving robots.")
    parser.add_argument("--config", metavar="PATH", help=CONFIG_HELP)
    virtual = parser.add_mutually_exclusive_group()
    virtual.add_argument("--sim", action="store_true", help="simulated camera, firmware and cube (a dry run)")
    virtual.add_argument(
        "--rig-only",
        action="store_true",
        help="motors only: the controller on [serial] port turns the faces of a virtual cube that follows "
        "what it reports, seen by the simulated camera (no camera needed)",
    )
    parser.add_argument("--once", action="store_true", help="do one run, print a summary and exit")
    parser.add_argument(
        "--firmware",
        choices=FIRMWARES,
        help="simulation: the board's firmware: python (the reference, default) or avr (the "
        "firmware binary on a simulated ATmega2560; needs gcc-avr and simavr, "
        "see docs/firmware.md)",
    )
    parser.add_argument(
        "--controller",
        choices=tuple(CONTROLLERS),
        help="simulation: the motor controller, simulated as its firmware speaks (default from "
        "[controller] kind, robotd)",
    )
    parser.add_argument(
        "--rig",
        choices=tuple(RIG_KINDS),
        help="simulation: the mechanism: six-axis (a motor per face) or flip-spin (two servos)",
    )
    parser.add_argument("--puzzle", type=int, choices=(2, 3), help=VIRTUAL + "2x2x2 or 3x3x3")
    parser.add_argument("--seed", type=int, help=VIRTUAL + "seed of the scramble")
    parser.add_argument("--moves", type=int, metavar="K", help=VIRTUAL + "scramble with K random moves")
    parser.add_argument("--light", metavar="PRESET", help=VIRTUAL + "lighting preset of the virtual camera")
    parser.add_argument("--json", action="store_true", help="--once: print the summary as JSON")
    parser.add_argument("--host", help="dashboard address (default from config, 127.0.0.1)")
    parser.add_argument("--port", type=int, help="dashboard port (default from config, 8080)")
    # --config also after the command, without its default hiding one given before it
    after = argparse.ArgumentParser(add_help=False)
    after.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS, help=CONFIG_HELP)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    checking = commands.add_parser(
        "check",
        parents=[after],
        help="list the cameras found, validate the config, probe the cameras and serial port, name the board",
    )
    checking.add_argument("--json", action="store_true", help="print the cameras, problems and board as JSON")
    history = commands.add_parser("history", parents=[after], help="list past runs")
    history.add_argument("--limit", type=int, default=20)
    history.add_argument("--json", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="robotd: %(levelname)s: %(name)s: %(message)s")
    try:
        if args.command == "check":
            return _check(args)
        if args.command == "history":
            return _history(args)
        if args.once:
            return _once(args)
        return _serve(args)
    except ConfigError as error:
        for problem in error.problems:
            print(f"error: {problem}", file=sys.stderr)
        return 2
    except RobotError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _check(args) -> int:
    from .board import board_lines
    from .camera_probe import camera_lines
    from .check import check

    result = check(args.config)
    cameras = camera_lines()
    if args.json:
        report = {"cameras": cameras, "problems": result.problems, "port": result.port, "board": result.board}
        print(json.dumps({**report, "missing": result.missing_json()}))
        return 2 if result.problems else 0
    print("cameras found:")
    for line in cameras:
        print(f"  {line}")
    for problem in result.problems:
        print(f"error: {problem}", file=sys.stderr)
    if result.board is not None:
        print(f"board on {result.port}:")
        for line in board_lines(result.board):
            print(f"  {line}")
    if not result.problems:
        print("config, camera and serial port: ok")
    return 2 if result.problems else 0


def _history(args) -> int:
    from . import assemble

    history = assemble.open_history(args.config)
    runs = history.list_runs(limit=max(1, args.limit))
    if args.json:
        print(json.dumps(runs, indent=2))
        return 0
    if not runs:
        print("no runs yet")
    for run in runs:
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run["started_at"]))
        moves = "" if run["length_htm"] is None else f"{run['length_htm']} moves"
        detail = run["error"] or run["solution"] or ""
        print(
            f"{run['id']:>5}  {started}  {run['mode'] or '':<3}  {run['puzzle'] or '-'}x  "
            f"{run['outcome']:<11} {moves:>9}  {detail}"
        )
    return 0


def _sim_options(args) -> dict:
    options = {"puzzle": args.puzzle, "seed": args.seed, "light": args.light, "moves": args.moves}
    hardware = (args.firmware, args.controller, args.rig)
    if args.rig_only and any(v is not None for v in hardware):
        raise RobotError(
            "--firmware, --controller and --rig only apply with --sim: --rig-only drives the controller "
            "and rig of the config ([controller], [rig], [serial] port)"
        )
    if not (args.sim or args.rig_only) and any(v is not None for v in (*options.values(), *hardware)):
        raise RobotError(
            "--puzzle, --seed, --moves, --light, --firmware, --controller and --rig only apply with "
            "--sim (and the first four with --rig-only); a real rig takes them from its config"
        )
    return options


def _hardware(args) -> dict:
    return {"firmware": args.firmware, "controller": args.controller, "rig": args.rig}


def _once(args) -> int:
    from . import assemble, log_file
    from .summary import format_summary

    options = _sim_options(args)
    log_file.quiet_stderr()  # the summary is the output; [robotd] log_file still gets log_level
    built = assemble.build(args.config, sim=args.sim, rig_only=args.rig_only, web=False, **_hardware(args))
    try:
        with signals_stop_the_run(built.daemon) as (received, _):
            summary = built.once(**options)
    finally:
        built.close()
    print(json.dumps(summary, indent=2) if args.json else format_summary(summary))
    if received:
        return 128 + received[0]
    return 0 if summary.get("solved") else 1


def _serve(args) -> int:
    from . import assemble

    options = _sim_options(args)
    if options.pop("seed") is not None:
        raise RobotError("--seed applies to one run (--once); runs started from the dashboard can take a seed")
    built = assemble.build(
        args.config, sim=args.sim, rig_only=args.rig_only, web=True, host=args.host, port=args.port, **_hardware(args)
    )
    stop = threading.Event()
    try:
        with signals_stop_the_run(built.daemon, then=stop.set) as (received, on_signal):
            built.serve(stop, on_signal=on_signal, **{k: v for k, v in options.items() if v is not None})
    finally:
        built.close()
    return 128 + received[0] if received else 0


@contextlib.contextmanager
def signals_stop_the_run(daemon, then: Callable[[], None] | None = None):
    """While inside: SIGINT and SIGTERM stop the run at once (the motors first, the run recorded as
    stopped naming the signal) and are noted in the yielded list, so that robotd can end with
    128 + the signal (130, 143) once the run is recorded."""
    received: list[int] = []

    def on_signal(signum: int, frame=None) -> None:
        received.append(signum)
        daemon.stop(f"robotd received {signal.Signals(signum).name}")
        if then is not None:
            then()

    previous = {signum: signal.signal(signum, on_signal) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received, on_signal
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


if __name__ == "__main__":
    sys.exit(main())
