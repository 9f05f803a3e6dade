"""What a grbl board does with the bytes it gets, without I/O: the simulated controller behind SimulatedGrbl.

Modelled: real-time bytes picked out of the stream wherever they are
(``?`` report, ``!`` feed hold, ``~`` cycle start, 0x18 soft reset, bytes
from 0x80 up dropped); lines cleaned as grbl does (blanks and control
characters dropped, lower case raised, ``(...)`` and ``;`` comments
removed) and answered ``ok`` or ``error:N`` (an empty line, such as the
line end after a ``?``, gets ``ok`` too); a planner of blocks that take
path length / F, no axis faster than its ``$110``-``$115``, each one
speeding up from rest and braking to rest at its ``$120``-``$125`` (then
``$1`` ms more of Run, unless ``$1=255``: grbl's step idle delay); states
Idle, Run, Hold:1 (braking, then ``hold_s`` or ``$1`` ms) and Hold:0,
Alarm. G-code (words.py reads the words): G0 G1 G4 G17-19 G20
G21 G53 G54-59 G80 G90 G91 G92 G92.1 G93 G94, M0-M9 and M30 accepted as
no-ops, F N P S T words, and the errors of malformed or conflicting words;
arcs, probing, G10, G28/G30, tool offsets and canned cycles are not
modelled (error:20). ``G4`` answers once the motion before it and its
dwell are over. ``$X``, ``$I``, ``$G``, ``$#``, ``$$``, ``$N=value``
(eeprom.py, with soft limits) and ``$H`` (error:5 with homing off; with
homing on the real board seeks switches a rig lacks: ALARM:9 here) answer;
other ``$`` lines are error:3.

What a build prints and how long its resets keep it deaf is its ``Build``
(builds.py: grblHAL, or the stock grbl-Mega-5X build); a ``?`` in the last
``reset_idle_s`` of a reset (grbl's start-up) is answered after its banner,
anything else sent during a reset is lost. Alarms as grbl
raises them: a move past a soft limit (or ``alarm(1)``, a limit switch)
prints ``ALARM:N`` and ``[MSG:Reset to continue]`` and reads no line, ``$X``
included, until a soft reset (one that comes before that message is lost); after the reset, and after one in motion
(``ALARM:3``) or a power-on with homing on (``$22=1``), the board stays
locked (G-code gets ``error:9``) until ``$X``. A reset restores the modal
state (G0, G90, G21, G94, no feed rate).

The motion is segments.py's: blocks replanned as grbl does, a status
report's position the live one along the running block, a feed hold that
runs on as the stock binary's does before it brakes, and a soft reset or
an alarm in motion that leaves the motors where they are. G92 offsets and
the settings survive resets, as grbl keeps them in its non-volatile
memory.
"""

from __future__ import annotations

import math
from collections import deque

from ..gcode import number
from ..planner import Block, planned_block, steady_block
from .builds import GRBLHAL, Build
from .dialect import ACCELERATION_SETTING, MAX_RATE_SETTING
from .eeprom import HOMING, Eeprom
from .segments import Segment, SegmentQueue
from .words import LineError, clean, group, read_block

UNLOCK_HINT = "[MSG:'$H'|'$X' to unlock]"
RESET_HINT = "[MSG:Reset to continue]"
LIMIT_ALARMS = (1, 2)  # read nothing until a soft reset
MAX_LINE = 256
RAPID = 100000.0  # units/min of G0 and of inverse-time limits


class GrblMachine:
    """One grbl board. ``say(line)`` prints a line; ``finished(segment)`` is told of each finished one."""

    def __init__(
        self,
        *,
        letters: str,
        planner: int | None = None,
        hold_s: float | None = None,
        start_locked: bool = False,
        report_wpos: bool = False,
        build: Build = GRBLHAL,
        offsets: dict[str, float] | None = None,
        say,
        finished,
    ):
        self.letters, self.planner_size = letters, planner or build.buffers[0]
        self.hold_s = build.delays.feed_hold_s if hold_s is None else hold_s
        self.start_locked, self.report_wpos, self.build = start_locked, report_wpos, build
        self.say, self.finished = say, finished
        self.g92 = {axis: 0.0 for axis in letters}
        self.g92.update(offsets or {})  # G92 offsets, kept in non-volatile memory
        self.eeprom = Eeprom(build.settings, letters)
        self.blank = build.blank_eeprom  # the first power-on finds no settings
        self.accepted: list[str] = []
        self.move_times: list[tuple[float, float]] = []  # each finished segment's start and end (holds aside)
        self.errors: list[int] = []
        self.resets: list[float] = []
        self.power_on()

    # ------------------------------------------------------------ life cycle

    def power_on(self) -> None:
        self.mpos = {axis: 0.0 for axis in self.letters}
        self.locked = self.start_locked or self.eeprom.on(HOMING)  # homing on: locked until $H or $X
        self._restart()

    def _restart(self) -> None:
        self.planner = SegmentQueue(self.build.delays.hold_lead_s)
        self.pending: deque[str | None] = deque()  # complete lines not yet executed (None: too long)
        self.line = bytearray()
        self.held, self.hold_until = False, 0.0  # a feed hold: Hold:1 until hold_until, then Hold:0
        self.idle_at = 0.0  # the last move over, grbl waits $1 ms (unless $1=255) before it says Idle
        self.motion: float = 0
        self.absolute, self.inches, self.inverse = True, False, False
        self.feed, self.wcs = 0.0, 54
        self.wco_count = 0  # 0: the next report carries WCO
        self.blocked = self.owed_ok = False  # a limit alarm: nothing read until a reset; its line's ok
        self.asks_reset_at = 0.0  # ... and a reset before it says so is lost
        self.syncing = False  # a G4 waits for the motion before it to end
        self.deaf_until = 0.0  # a reset in progress: bytes are lost until the banner
        self.report_after_reset = False  # a ? came during the reset's start-up: answered after its banner
        self.due: list[tuple[float, str]] = []  # lines said later (a reset's banner)

    def welcome(self) -> None:
        """What a power-on prints (a blank EEPROM's first one: its defaults restored and listed first)."""
        if self.blank:
            self.say("error:7")
            for line in self.eeprom.lines():
                self.say(line)
        self._banner()
        if self.blank:
            self.blank = False
            self.say(">:error:7")  # the two empty startup lines ($N0, $N1) of a blank EEPROM
            self.say(">:error:7")

    def _banner(self) -> None:
        self.say("")
        self.say(self.build.banner)
        if self.locked:
            self.say(UNLOCK_HINT)

    def soft_reset(self, now: float) -> None:
        """0x18: stop at once; a board in motion is locked (ALARM:3) since it cannot vouch for its position."""
        if now < self.deaf_until or (self.blocked and now < self.asks_reset_at):
            return  # already resetting, or a limit alarm not yet at its [MSG:Reset to continue]: lost
        self.resets.append(now)
        moving = self.state(now) in ("Run", "Hold:1")
        owed = self.owed_ok
        self._stop_motors(now)
        if moving:
            self.locked = True
        self._restart()
        if owed:
            self.say("ok")  # the line that raised a limit alarm returns at last
        delays = self.build.delays
        delay = delays.reset_moving_s if moving else delays.reset_idle_s
        self.deaf_until = now + delay
        if moving:
            self._later(now + delays.alarm3_s, "ALARM:3")
        self._later(now + delay, None)

    def _later(self, at: float, line: str | None) -> None:
        """Say ``line`` at ``at`` (None: the banner); at once when that is not later than now."""
        self.due.append((at, line or ""))
        self.due.sort(key=lambda item: item[0])

    def alarm(self, code: int, now: float = 0.0, from_line: bool = False) -> None:
        """An alarm of the board's own (a limit switch, a soft limit): motion stops at once and the board locks;
        after a limit alarm it reads nothing until a soft reset."""
        self._stop_motors(now)
        self.pending.clear()
        self.held, self.locked, self.syncing = False, True, False
        self.say(f"ALARM:{code}")
        if code in LIMIT_ALARMS:
            self.blocked, self.owed_ok = True, from_line
            self.asks_reset_at = now + self.build.delays.reset_message_s
            self._later(self.asks_reset_at, RESET_HINT)

    def state(self, now: float) -> str:
        if self.locked:
            return "Alarm"
        if self.held:
            return "Hold:1" if now < self.hold_until else "Hold:0"
        return "Run" if self.planner.moving or now < self.idle_at else "Idle"

    # ------------------------------------------------------------ input

    def receive(self, data: bytes, now: float, resets: bool = True) -> None:
        """Bytes as they arrive: real-time ones act at once, the rest builds lines."""
        self._finish_due(now)
        for byte in data:
            if now < self.deaf_until:
                self._heard_resetting(byte, now)
                continue
            if byte == 0x18:
                if resets:
                    self.soft_reset(now)
            elif byte >= 0x80 or byte in b"?!~":
                self.realtime(byte, now)
            elif byte in b"\r\n":
                if not self.blocked:
                    self.pending.append(self.line.decode("latin-1") if len(self.line) <= MAX_LINE else None)
                self.line.clear()
            else:
                self.line.append(byte)

    def _heard_resetting(self, byte: int, now: float) -> None:
        """A byte during a reset is lost, except a ``?`` in its last ``reset_idle_s`` (grbl's start-up, after it
        cleared its flags): the stock binary answers that one after the banner."""
        if byte == ord("?") and now >= self.deaf_until - self.build.delays.reset_idle_s:
            self.report_after_reset = True

    def realtime(self, byte: int, now: float) -> None:
        if byte == ord("?"):
            self.say(self.report(now))
        elif byte == ord("!") and not self.locked and not self.held:
            moving = self.planner.moving
            rest_at = self.planner.hold(now)
            self.held = True
            self.hold_until = rest_at + max(self.hold_s, self.eeprom.idle_lock_s()) if moving else now
        elif byte == ord("~") and self.held and now >= self.hold_until:
            self.held = False
            self.planner.resume(now)

    def _stop_motors(self, now: float) -> None:
        """The motors stop where they are (a soft reset, an alarm): that is the machine position now."""
        self._finish_due(now)
        covered = self.planner.cut(now)
        if covered is not None:
            self.mpos = dict(covered.end)
            self.finished(covered)

    # ------------------------------------------------------------ time

    def advance(self, now: float) -> None:
        """Finish the segments whose time is up, execute waiting lines the planner has room for, then say what
        is due."""
        self._finish_due(now)
        if self.syncing and not self.planner:
            self.syncing = False
            self.say("ok")  # the G4's
        while self.pending and len(self.planner) < self.planner_size and not self.syncing:
            self.execute(self.pending.popleft(), now)
        while self.due and self.due[0][0] <= now:
            _, line = self.due.pop(0)
            if line:
                self.say(line)
                continue
            self._banner()
            if self.report_after_reset:
                self.report_after_reset = False
                self.say(self.report(now))

    def _finish_due(self, now: float) -> None:
        if self.locked:
            return
        for segment in self.planner.done(now):
            self.mpos = dict(segment.end)
            self.move_times.append((segment.begins, segment.ends))
            self.idle_at = segment.ends + (0.0 if self.planner.moving else self.eeprom.idle_lock_s())  # $1: Run
            self.finished(segment)

    # ------------------------------------------------------------ lines

    def execute(self, raw: str | None, now: float) -> None:
        if raw is None:
            return self._error(11)
        line = clean(raw)
        try:
            if line.startswith("$"):
                self._system(line, now)
            elif line:
                if self.locked:
                    raise LineError(9)
                self._gcode(line, now)
        except LineError as err:
            return self._error(err.code)
        if self.blocked:
            return  # the line raised a limit alarm: its ok comes after the reset
        if line:
            self.accepted.append(line)
        if not self.syncing:
            self.say("ok")

    def _error(self, code: int) -> None:
        self.errors.append(code)
        self.say(f"error:{code}")

    def _system(self, line: str, now: float) -> None:
        if line == "$X":
            if self.locked:
                self.locked = False
                self.say("[MSG:Caution: Unlocked]")
        elif line == "$I":
            for info in self.build.build_info(self.letters, self.planner_size):
                self.say(info)
        elif line == "$G":
            units, dist = ("G20" if self.inches else "G21"), ("G90" if self.absolute else "G91")
            self.say(
                f"[GC:G{self.motion} G{self.wcs} G17 {units} {dist} G{93 if self.inverse else 94} M5 M9 T0 "
                f"F{number(self.feed)} S0]"
            )
        elif line == "$#":
            zeros = ",".join("0.000" for _ in self.letters)
            for wcs in range(54, 60):
                self.say(f"[G{wcs}:{zeros}]")
            self.say(f"[G92:{_values(self.g92, self.letters)}]")
            self.say("[TLO:0.000]")
        elif line == "$$":
            for setting in self.eeprom.lines():
                self.say(setting)
        elif line == "$H":
            if not self.eeprom.on(HOMING):
                raise LineError(5)
            self.alarm(9, now)
        elif "=" in line:
            self.eeprom.write(line)
        else:
            raise LineError(3)

    def _gcode(self, line: str, now: float) -> None:
        block = read_block(line, self.letters)
        self._modal(block.g, block.values)
        if 92.1 in block.g:
            self.g92 = {axis: 0.0 for axis in self.letters}
            self.wco_count = 0
        if 92 in block.g:
            return self._set_offsets(block.axes, block.g)
        if 4 in block.g:
            if "P" not in block.values:
                raise LineError(28)
            self._plan(self._planned(), None, 0.0, now, dwell=block.values["P"])  # a segment that moves nothing
            self.syncing = True
        self._move(block.g, block.values, block.axes, now)

    def _modal(self, gs: tuple[float, ...], values: dict[str, float]) -> None:
        motions = [g for g in gs if group(g) == "motion"]
        if 53 in gs and (motions[0] if motions else self.motion) not in (0, 1):
            raise LineError(30)
        self.motion = motions[0] if motions else self.motion
        for g in gs:
            if g in (20, 21):
                self.inches = g == 20
            elif g in (90, 91):
                self.absolute = g == 90
            elif g in (93, 94):
                self.inverse = g == 93
            elif 54 <= g <= 59:
                self.wcs = int(g)
        if "F" in values:
            self.feed = values["F"] * (25.4 if self.inches and not self.inverse else 1.0)

    def _set_offsets(self, axes: dict[str, float], gs: tuple[float, ...]) -> None:
        if any(group(g) == "motion" and g != 80 for g in gs):
            raise LineError(24)
        if not axes:
            raise LineError(26)
        scale = 25.4 if self.inches else 1.0
        for axis, value in axes.items():
            self.g92[axis] = self._planned()[axis] - value * scale
        self.wco_count = 0

    def _move(self, gs: tuple[float, ...], values: dict[str, float], axes: dict[str, float], now: float) -> None:
        unused = set(values) & set("IJKLR") or ({"P"} & set(values) if 4 not in gs else set())
        if unused:
            raise LineError(36)
        if not axes:
            return
        if self.motion == 80:
            raise LineError(31)
        scale = 25.4 if self.inches else 1.0
        start = self._planned()
        end = dict(start)
        for axis, value in axes.items():
            if 53 in gs:
                end[axis] = value * scale
            elif self.absolute:
                end[axis] = value * scale + self.g92[axis]
            else:
                end[axis] = start[axis] + value * scale
        deltas = {axis: end[axis] - start[axis] for axis in self.letters if end[axis] != start[axis]}
        block = self._block(deltas, values)  # its errors (no feed rate) come for a move of nothing too
        if self.eeprom.beyond_travel(end):
            return self.alarm(2, now, from_line=True)
        if deltas:
            self._plan(end, block, self.feed, now)

    def _block(self, deltas: dict[str, float], values: dict[str, float]) -> Block:
        """G0 at the rapid rate; G93 in the time its F gives (no quicker than rapid); a feed move at F, no axis
        faster than its $110-$115 (units/min) nor speeding up or braking faster than its $120-$125 (units/s²)."""
        length = math.hypot(*deltas.values())
        if self.motion == 0:
            return steady_block(deltas, length / RAPID * 60.0)
        if self.inverse:
            if "F" not in values or values["F"] <= 0:
                raise LineError(22)
            return steady_block(deltas, max(60.0 / values["F"], length / RAPID * 60.0))
        if self.feed <= 0:
            raise LineError(22)
        index = {axis: i for i, axis in enumerate(self.letters)}
        top = {axis: self.eeprom.limit(MAX_RATE_SETTING + index[axis]) / 60.0 for axis in deltas}
        accelerations = {axis: self.eeprom.limit(ACCELERATION_SETTING + index[axis]) for axis in deltas}
        return planned_block(deltas, self.feed / 60.0, top, accelerations)

    def _plan(self, end: dict[str, float], block: Block | None, feed: float, now: float, dwell: float = 0.0) -> None:
        """Queue a block (or a dwell); grbl replans every block, the one running too (its braking is not yet
        prepared). Nothing is queued after a dwell until it is over (G4 waits for it)."""
        self.planner.add(Segment(self._planned(), end, block, feed, dwell), now)

    def _planned(self) -> dict[str, float]:
        return dict(self.planner[-1].end) if self.planner else dict(self.mpos)

    # ------------------------------------------------------------ reports

    def report(self, now: float) -> str:
        wco = {axis: self.g92[axis] for axis in self.letters}
        mpos = self.planner.position(self.mpos, now)
        if self.report_wpos:
            position = "WPos:" + _values({a: mpos[a] - wco[a] for a in self.letters}, self.letters)
        else:
            position = "MPos:" + _values(mpos, self.letters)
        state = self.state(now)
        feed = self.planner[0].feed if state == "Run" and self.planner else 0.0  # (none in $1's wait)
        fields = [state, position, f"FS:{number(feed)},0"]
        if int(self.eeprom.values.get(10, "1")) & 2:  # $10 bit 1: buffer state
            fields.insert(2, f"Bf:{self.planner_size - len(self.planner)},{self.build.rx_buffer - len(self.line)}")
        if self.wco_count <= 0:
            fields.append("WCO:" + _values(wco, self.letters))
            self.wco_count = 30 if state in ("Run", "Hold:1") else 10
        self.wco_count -= 1
        return "<" + "|".join(fields) + ">"


def _values(position: dict[str, float], letters: str) -> str:
    return ",".join(f"{position[axis]:.3f}" for axis in letters)
