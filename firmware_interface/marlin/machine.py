"""Stock Marlin 2.1's serial and motion behaviour as a state machine, for the simulated board (simulator.py).

No I/O and no clock of its own: ``receive(data, now)`` takes the host's
bytes, ``advance(now)`` runs the board up to ``now``, what it prints goes to
``say`` and each axis's motion to ``moved``. It does what
shared/stock-firmware/README.md records of the real binaries:

* bytes arrive at the baud rate into a 128-byte receive buffer (dropped
  while it is full); lines move from there into a 4-line command queue
  (the line running holds one), and that is where numbers and checksums are
  checked: ``Error:...``, ``Resend: last+1``, ``ok``, and the receive buffer
  emptied (what arrives after is a fragment, run as it is); a repeat of the
  last line or the one before is dropped without a word; a line without a
  number runs as it is, ``*checksum`` or not;
* ``ok`` once a line has run (a ``G1`` once planned: it waits while the
  planner is full); ``M400`` once the planner is empty, saying ``echo:busy:
  processing`` every ``busy_s`` meanwhile;
* a move planned into an empty planner starts 0.1 s later, or as soon as
  three are queued (``BLOCK_DELAY_FOR_1ST_MOVE``); moves speed up, cruise
  at their feed rate and brake (firmware_interface/planner.py; the stock builds' 500 units/s
  and 5000 units/s² with ``STOCK_LIMITS``, which make a quarter turn take
  at least 0.27 s; by default so high that a move takes its feed's time);
* ``M410`` (Marlin 2.1's ``quickstop_stepper``): the planner is emptied
  at once, the position is where the motors stopped, then the main loop
  waits 1 s while moves are refused, reading lines on meanwhile. Without
  EMERGENCY_PARSER it acts as the line is read (an ``M410`` read during the
  pause starts it again); the pause over, its queue slot gets a copy of the
  last line read, as Marlin's line buffer was overwritten meanwhile: a line
  read during the pause runs twice, and an ``M410`` that nothing followed
  runs again from the queue, pausing again. With EMERGENCY_PARSER it acts as
  it arrives and is a no-op in the queue, but one that arrives during a
  pause acts only after the next command (Marlin's idle() does not re-enter
  itself). Tests/test_marlin_stock.py holds these against the binaries;
  e.g. ``M410``, ``M118 mark``, ``M410`` 50 ms later: without the parser
  ``mark`` and ``ok`` at 1.1 s, ``ok`` at 2.1 s and 3.1 s; with it ``ok`` at
  1.0 s, ``mark``, ``ok``, ``ok`` at 2.1 s;
* ``M112``: ``echo:M112 Shutdown``, ``Error:Printer halted. kill()
  called!``; the motors run on for 0.7 s, then nothing until a reset;
* ``M203`` (no axis moves faster: ``Build.max_feed``), ``M201`` and ``M204``
  (no axis speeds up faster; ``T`` for every move), each set by its words or, alone,
  reported as the stock build does (``M203 X500.00 ...``);
* ``M115`` (``FIRMWARE_NAME:...``, ``Cap:`` lines), ``M114`` (``X:..
  Count X:..``, the end of the planned moves), ``M118``, ``M110``,
  ``G90``/``G91``, ``G92``, ``M17``/``M18``/``M84`` (a move switches the
  drivers on too, and they go off ``IDLE_OFF_S`` after the last move ends;
  ``M84 S<s>`` sets that, 0 for never), ``M108``; anything else
  is ``echo:Unknown command: "..."`` and ``ok``.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ..planner import Block, planned_block, replan
from .dialect import checksum, split_numbered

RX_BUFFER = 128
COMMAND_QUEUE = 4
QUICK_STOP_S = 1.0  # Marlin refuses moves (and runs nothing) this long after M410
FIRST_MOVE_S = 0.1  # BLOCK_DELAY_FOR_1ST_MOVE: a block planned into an empty planner waits this long ...
FIRST_MOVE_BLOCKS = 3  # ... unless this many are queued first
# the stock builds' DEFAULT_MAX_FEEDRATE (units/s) and DEFAULT_MAX_ACCELERATION, DEFAULT_TRAVEL_ACCELERATION
STOCK_LIMITS = {"max_feed": 500.0, "acceleration": 5000.0}
REST_STEPS_S = 222.0  # a move "from rest" starts at this many steps/s along its path, one "to rest" ends at it
RETRACT_ACCELERATION = 3000.0  # M204 R: reported only (DEFAULT_RETRACT_ACCELERATION)
IDLE_OFF_S = 120.0  # DEFAULT_STEPPER_DEACTIVE_TIME: the drivers go off this long after motion ends (M84 S0: never)
KILL_RUN_ON_S = 0.7  # kill() waits this long, interrupts on, before it disables the drivers
CAPABILITIES = ("EEPROM", "AUTOREPORT_POS", "EMERGENCY_PARSER", "PROMPT_SUPPORT", "THERMAL_PROTECTION", "ARCS")
_COMMAND = re.compile(r"^([GMT])(\d+)$")


@dataclass(frozen=True)
class Build:
    """How the simulated board was built: its axis names, planner blocks, keepalive interval (M113),
    EMERGENCY_PARSER, ADVANCED_OK, baud rate and firmware name."""

    letters: str = "XYZABC"
    planner: int = 16
    busy_s: float = 2.0
    emergency_parser: bool = False
    advanced_ok: bool = False
    baudrate: int = 115200
    firmware: str = "Marlin 2.1.2"
    steps_per_unit: tuple[float, ...] = (400 / 90,) * 6  # DEFAULT_AXIS_STEPS_PER_UNIT, per axis in order
    max_feed: float = 10000.0  # M203, units/s on every axis: no move is faster
    acceleration: float = 1e9  # M201 on every axis and M204: so high by default that it costs no time


class MarlinMachine:
    """One Marlin board. ``moved(axis, delta, finished)``: an axis moved by delta units (a whole block, or the
    part of one a stop left)."""

    def __init__(self, build: Build, say: Callable[[str], None], moved: Callable[[str, float, bool], None]):
        self.say, self.moved, self.letters = say, moved, build.letters
        self.default_steps = dict(zip(build.letters, build.steps_per_unit))
        self.planner_size, self.busy_s, self.emergency_parser = build.planner, build.busy_s, build.emergency_parser
        self.advanced_ok, self.byte_s, self.firmware = build.advanced_ok, 10 / build.baudrate, build.firmware
        self.max_feed, self.acceleration = build.max_feed, build.acceleration
        self.accepted: list[tuple[int | None, str]] = []  # every line run (number, command)
        self.moves_done: list[dict[str, float]] = []  # every finished move (axis -> delta)
        self.move_times: list[tuple[float, float]] = []  # when each of them started and ended
        self.stop_times: list[float] = []  # when the motors stopped on M410 or M112
        self.line_errors = 0
        self.boot(0.0)

    def boot(self, now: float) -> None:
        """Power-up or reset: everything forgotten."""
        self.wire: deque[tuple[float, int]] = deque()
        self.wire_free = now
        self.rx = bytearray()
        self.ep_line = bytearray()
        self.queue: deque[tuple[int | None, str]] = deque()
        self.running: tuple | None = None  # (command, n, ...): it waits, its ok still to come
        self.planner: deque[Block] = deque()
        self.first_start = now  # when the first block in the planner starts (BLOCK_DELAY_FOR_1ST_MOVE)
        self.pos = {axis: 0.0 for axis in self.letters}  # the end of every planned move
        self.steps_per_unit = dict(self.default_steps)
        self.limits = {  # M92, M203, M201, M204: each holds until a reset (no EEPROM: M500 is not modelled)
            "M92": self.steps_per_unit,
            "M203": dict.fromkeys(self.letters, self.max_feed),
            "M201": dict.fromkeys(self.letters, self.acceleration),
            "M204": {"P": self.acceleration, "R": min(self.acceleration, RETRACT_ACCELERATION), "T": self.acceleration},
        }
        self.last_n, self.relative, self.enabled, self.halted = 0, False, False, False
        self.idle_off_s, self.last_motion = IDLE_OFF_S, now  # M84 S: drivers off this long after the last move
        self.feed, self.next_busy = 1000.0, 0.0
        self.blocked_until = 0.0  # the main loop waits out a quick stop until then
        self.ep_stop = self.resumed = False  # EMERGENCY_PARSER's M410 to act on; a pause just ended
        self.stop_slots = 0  # M410 lines acted on as read, whose queue slot is filled once the pause is over
        self.last_read = ""  # the last line read: what fills those slots
        self.kill_at: float | None = None

    def banner(self) -> list[str]:
        return [
            "start",
            self.firmware,
            "echo: Last Updated: 2023-09-23 | Author: (robotd simulator)",
            "echo: Free Memory: 4096  PlannerBufferBytes: 1408",
            "echo:Hardcoded Default Settings Loaded",
            "echo:  M206 " + " ".join(f"{a}0.00" for a in self.letters),
        ]

    # ------------------------------------------------------------ bytes in

    def receive(self, data: bytes, now: float) -> None:
        """Bytes from the host: each arrives one byte time after the one before, at the baud rate."""
        for byte in data:
            self.wire_free = max(now, self.wire_free) + self.byte_s
            self.wire.append((self.wire_free, byte))

    def _arrive_line(self, now: float) -> float | None:
        """The bytes arrived by ``now``, up to the first end of line: when that came (None: none did)."""
        while self.wire and self.wire[0][0] <= now:
            at, byte = self.wire.popleft()
            if len(self.rx) < RX_BUFFER:
                self.rx.append(byte)
            if self.emergency_parser:
                self._parse_emergency(byte, at)
            if byte == 10:
                return at
        return None

    def _parse_emergency(self, byte: int, now: float) -> None:
        """EMERGENCY_PARSER: M112 and M410 act as they arrive, whatever is queued."""
        if byte != 10:
            self.ep_line.append(byte)
            return
        command = re.sub(r"^N\d+\s*", "", self.ep_line.decode("latin-1").strip()).split("*")[0].strip()
        self.ep_line.clear()
        self._emergency(command, now)

    def _emergency(self, command: str, now: float) -> None:
        if command == "M410" and not self.halted:
            self.ep_stop = True  # Marlin's idle() calls the quick stop, not while one already pauses
        elif command == "M112" and not self.halted:
            self._kill(now)

    # ------------------------------------------------------------ running

    def advance(self, now: float) -> None:
        """Run up to ``now``, each line as it arrived: Marlin's loop reads a line within a fraction of a byte
        time, so a line is never read together with the next one, however late this is called."""
        while (at := self._arrive_line(now)) is not None:
            self._run(at)
        self._run(now)

    def _run(self, now: float) -> None:
        """Marlin's loop: idle() (lines read, the emergency parser's stop), then a step of a command."""
        self._finish_blocks(now)
        while not self.halted:
            if now < self.blocked_until:
                self._read_lines(now)  # idle() during a quick stop's pause: lines are read, nothing runs
                return
            self._fill_stop_slots()
            if self.ep_stop and not self.resumed:
                self.ep_stop = False
                self._quick_stop(now)
                continue
            self.resumed = False
            if not self._step(now) and not self.ep_stop:
                return

    def _step(self, now: float) -> bool:
        """The command that waits goes on, or else the next one in the queue runs; False when neither did
        anything."""
        if self.running is not None:
            done = self._go_on(now)
            if not done:
                self._read_lines(now)
            return done
        self._read_lines(now)
        if not self.queue:
            return False
        self._execute(*self.queue.popleft(), now)
        return True

    def _fill_stop_slots(self) -> None:
        """Each M410 acted on as it was read takes its queue slot once its pause is over, holding the last line
        read (the line buffer it was read into was overwritten)."""
        if self.stop_slots:
            n, command, _ = split_numbered(self.last_read)
            self.queue.extend([(n, command)] * self.stop_slots)
            self.stop_slots = 0

    def _finish_blocks(self, now: float) -> None:
        if self.enabled and self.idle_off_s and not self.planner and now >= self.last_motion + self.idle_off_s:
            self.enabled = False  # Marlin's manage_inactivity()
        if self.kill_at is not None and now >= self.kill_at + KILL_RUN_ON_S:
            self._cut(self.kill_at + KILL_RUN_ON_S)
            self.kill_at = None
        while self.planner and self.planner[0].end <= now:
            block = self.planner.popleft()
            self.last_motion = block.end
            self.moves_done.append(block.deltas)
            self.move_times.append((block.end if block.start is None else block.start, block.end))
            for axis, delta in block.deltas.items():
                self.moved(axis, delta, True)

    def _go_on(self, now: float) -> bool:
        """The command that waits (a G1 for planner room, M400 for an empty planner, M410 for its pause): True
        once it is done and answered."""
        assert self.running is not None
        kind, n = self.running[0], self.running[1]
        if kind == "G1" and len(self.planner) < self.planner_size:
            self._plan(self.running[2], self.running[3], now)
        elif kind == "G1" or (kind == "M400" and self.planner):
            if now >= self.next_busy:
                self.say("echo:busy: processing")
                self.next_busy = now + self.busy_s
            return False
        self.running = None
        self._ok(n)
        return True

    def _read_lines(self, now: float) -> None:
        """Lines from the receive buffer into the command queue, checked, while it has room."""
        while b"\n" in self.rx and len(self.queue) + (self.running is not None) < COMMAND_QUEUE:
            raw, _, rest = bytes(self.rx).partition(b"\n")
            self.rx = bytearray(rest)
            text = raw.decode("latin-1").split(";", 1)[0].strip()
            if text:
                self.last_read = text
            if not self.emergency_parser and text[:4] == "M410" and not self.halted:
                self.stop_slots += 1  # acted on as it is read; queued once the pause is over
                self._quick_stop(now)
                continue
            if text:
                self._check(text)
            if not self.emergency_parser and text[:4] == "M112":
                self._kill(now)  # acted on as it is read (and queued as well)
            if self.halted:
                return

    def _check(self, text: str) -> None:
        n, command, given = split_numbered(text)
        if n is not None:
            if "M110" in command:
                n = int(_params(command.split()[1:]).get("N", n))
            elif n in (self.last_n, self.last_n - 1):
                return  # a repeat: dropped without a word
            elif n != self.last_n + 1:
                return self._line_error("Line Number is not Last Line Number+1")
            if given is None:
                return self._line_error("No Checksum with line number")
            if given != checksum(text[: text.rfind("*")]):
                return self._line_error("checksum mismatch")
            self.last_n = n
        if command:
            self.queue.append((n, command))

    def _line_error(self, message: str) -> None:
        self.line_errors += 1
        self.say(f"Error:{message}, Last Line: {self.last_n}")
        self.rx.clear()  # Marlin empties its receive buffer: a line arriving now is cut
        self.say(f"Resend: {self.last_n + 1}")
        self._ok(self.last_n)

    def _ok(self, n: int | None) -> None:
        if self.advanced_ok:
            free = COMMAND_QUEUE - len(self.queue) - (self.running is not None)
            self.say(f"ok N{n if n is not None else self.last_n} P{self.planner_size - len(self.planner)} B{free}")
        else:
            self.say("ok")

    def _execute(self, n: int | None, command: str, now: float) -> None:
        self.accepted.append((n, command))
        words = command.split()
        match = _COMMAND.match(words[0].upper())
        code, params = (match.group(1) + str(int(match.group(2))) if match else ""), _params(words[1:])
        if code in ("G0", "G1"):
            self.feed = params.get("F", self.feed)
            deltas = {a: (v if self.relative else v - self.pos[a]) for a, v in params.items() if a in self.pos}
            self.running = ("G1", n, {a: d for a, d in deltas.items() if d}, self.feed)
        elif code == "M400":
            self.running, self.next_busy = ("M400", n), now + self.busy_s
        elif code == "M410" and not self.emergency_parser:
            self._quick_stop(now)
            self.running = ("M410", n)
        elif code == "M112":
            self._kill(now)
        elif not self._setting(code, params, command, now):
            self.say(f'echo:Unknown command: "{command}"')
            self._ok(n)
            return
        if self.running is None and not self.halted:
            self._ok(n)

    def _setting(self, code: str, params: dict[str, float], command: str, now: float) -> bool:
        """The commands that answer at once; False for an unknown one."""
        if code in ("G90", "G91"):
            self.relative = code == "G91"
        elif code == "G92":
            for axis in params.keys() & self.pos.keys():
                self.pos[axis] = params[axis]
        elif code in ("M18", "M84") and "S" in params:
            self.idle_off_s, self.last_motion = params["S"], now  # the timeout only; the drivers stay as they are
        elif code in ("M17", "M18", "M84"):
            self.enabled = code == "M17"
        elif code == "M114":
            self.say(self._position())
        elif code in self.limits:
            self._limit(code, params)
        elif code == "M115":
            self._identify()
        elif code == "M118":
            text = command.split(None, 1)[1] if " " in command else ""
            self.say("echo:" + text[3:] if text.startswith("E1 ") else text)
        elif code in ("M110", "M108", "M410"):
            pass  # M110: numbered lines set it as they are read; M410 with EMERGENCY_PARSER: acted on as it came
        else:
            return False
        return True

    def _position(self) -> str:
        units = " ".join(f"{a}:{self.pos[a]:.2f}" for a in self.letters)
        counts = " ".join(f"{a}:{round(self.pos[a] * self.steps_per_unit[a])}" for a in self.letters)
        return f"{units} Count {counts}"

    def _limit(self, code: str, params: dict[str, float]) -> None:
        """M92 (steps per unit), M203 (top speed per axis, units/s), M201 (acceleration per axis), M204 (P R T
        accelerations): set what is given; alone, report them as the stock build does (M201's axes 4 to 6 in
        whole units)."""
        values = self.limits[code]
        values.update({key: value for key, value in params.items() if key in values and value > 0})
        if not params:
            whole = range(3, 6) if code == "M201" else ()
            words = (
                f"{key}{value:.0f}" if i in whole else f"{key}{value:.2f}"
                for i, (key, value) in enumerate(values.items())
            )
            self.say(f"  {code} " + " ".join(words))

    def _identify(self) -> None:
        self.say(
            f"FIRMWARE_NAME:{self.firmware} (robotd simulator) SOURCE_CODE_URL:github.com/MarlinFirmware/Marlin "
            f"PROTOCOL_VERSION:1.0 MACHINE_TYPE:3D Printer EXTRUDER_COUNT:0 AXIS_COUNT:{len(self.letters)} "
            "UUID:00000000-0000-4000-8000-000000000000"
        )
        for name in CAPABILITIES:
            self.say(f"Cap:{name}:{int(name == 'EMERGENCY_PARSER' and self.emergency_parser)}")

    # ------------------------------------------------------------ motion and stops

    def _plan(self, deltas: dict[str, float], feed: float, now: float) -> None:
        if not deltas:
            return
        if not self.planner:
            self.first_start = now + FIRST_MOVE_S
        self.enabled = True  # a move switches the drivers on
        limits, rest = self.limits, REST_STEPS_S / max(self.steps_per_unit[axis] for axis in deltas)
        block = planned_block(deltas, feed / 60.0, limits["M203"], limits["M201"], limits["M204"]["T"], rest)
        self.planner.append(block)
        if len(self.planner) >= FIRST_MOVE_BLOCKS:  # enough queued: the held blocks go at once
            self.first_start = min(self.first_start, now)
        begun = sum(1 for block in self.planner if block.start is not None and block.start <= now)
        replan(self.planner, begun, self.first_start)
        for axis, delta in deltas.items():
            self.pos[axis] += delta

    def _cut(self, at: float) -> None:
        """The motors stop at ``at``: the block running is cut short, the rest never runs; the position is read
        back from where the motors are."""
        for block in self.planner:
            share = block.share_at(at)
            for axis, delta in block.deltas.items():
                self.pos[axis] -= delta * (1 - share)
                if share:
                    self.moved(axis, delta * share, False)
        self.planner.clear()
        self.stop_times.append(at)

    def _quick_stop(self, now: float) -> None:
        self._cut(now)
        self.blocked_until = now + QUICK_STOP_S
        self.resumed = True  # the pause over, one step of a command before idle() again

    def _kill(self, now: float) -> None:
        self.halted, self.kill_at, self.running = True, now, None
        self.say("echo:M112 Shutdown")
        self.say("Error:Printer halted. kill() called!")


def _params(words: list[str]) -> dict[str, float]:
    out = {}
    for word in words:
        try:
            out[word[0].upper()] = float(word[1:]) if len(word) > 1 else 0.0
        except ValueError:
            continue
    return out
