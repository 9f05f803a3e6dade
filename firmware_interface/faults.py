"""Fault injection for the simulated firmware: damaged frames and misbehaving devices.

``FrameFaults`` are per-frame rates for one direction (drop, corrupt,
duplicate, delay); ``FaultConfig`` adds device faults (stalled motors, home
switches never found, a reset, going silent or closing the port after a
number of finished steps). ``Channel`` applies frame faults to one
direction of the stream; line noise puts a burst of random bytes (as a
loose ground or a motor's interference would) ahead of a frame. A delay
holds the frame and everything behind it, as a serial line does: frames are
never reordered.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field, fields

from .errors import ConfigError

_RATES = ("drop", "corrupt", "duplicate", "delay", "noise")


@dataclass
class FrameFaults:
    """Probability per frame of each fault in one direction, and how long a delay lasts."""

    drop: float = 0.0
    corrupt: float = 0.0
    duplicate: float = 0.0
    delay: float = 0.0
    noise: float = 0.0
    delay_ms: float = 50.0

    def __post_init__(self):
        for name in _RATES:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ConfigError(f"fault rate {name} must be a probability 0..1, got {value!r}")
        if isinstance(self.delay_ms, bool) or not isinstance(self.delay_ms, (int, float)) or self.delay_ms < 0:
            raise ConfigError(f"delay_ms must be a number of milliseconds >= 0, got {self.delay_ms!r}")

    def any(self) -> bool:
        return any(getattr(self, name) for name in _RATES)


_DEVICE_KEYS = ("stall", "limit", "reset_after", "silent_after", "close_after", "seed")


@dataclass
class FaultConfig:
    """Everything the simulator can do wrong. Counts are finished steps since the simulator started."""

    to_device: FrameFaults = field(default_factory=FrameFaults)
    to_host: FrameFaults = field(default_factory=FrameFaults)
    stall: tuple[str, ...] = ()  # motors that stall part-way through their next move
    limit: tuple[str, ...] = ()  # motors whose home switch is never found (HOME fails: LIMIT)
    reset_after: int | None = None  # reboot after this many finished steps
    silent_after: int | None = None  # stop answering after this many
    close_after: int | None = None  # close the port (an unplugged cable) after this many
    seed: int | None = None

    @classmethod
    def from_config(cls, config: FaultConfig | dict | None) -> FaultConfig:
        """From a mapping: rate keys (drop, corrupt, duplicate, delay, delay_ms) apply to both
        directions unless given in a ``to_device`` or ``to_host`` table; unknown keys are errors."""
        if config is None:
            return cls()
        if isinstance(config, FaultConfig):
            return config
        both = {k: v for k, v in config.items() if k in (*_RATES, "delay_ms")}
        kwargs: dict = {}
        for key, value in config.items():
            if key in both:
                continue
            if key in ("to_device", "to_host"):
                continue
            if key not in _DEVICE_KEYS:
                known = ", ".join((*_RATES, "delay_ms", "to_device", "to_host", *_DEVICE_KEYS))
                raise ConfigError(f"simulator faults: unknown key {key!r} (known: {known})")
            kwargs[key] = value
        for direction in ("to_device", "to_host"):
            rates = dict(both, **config.get(direction, {}))
            unknown = [k for k in rates if k not in [f.name for f in fields(FrameFaults)]]
            if unknown:
                raise ConfigError(f"simulator faults: unknown key {unknown[0]!r} in {direction}")
            kwargs[direction] = FrameFaults(**rates)
        for key in ("stall", "limit"):
            kwargs[key] = tuple(kwargs.get(key, ()))
        for key in ("reset_after", "silent_after", "close_after"):
            value = kwargs.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ConfigError(f"simulator faults: {key} must be a whole number of steps >= 0, got {value!r}")
        return cls(**kwargs)


class DeviceTriggers:
    """The one-shot device faults of a ``FaultConfig``: each fires once, when enough steps have finished."""

    def __init__(self, faults: FaultConfig):
        self._limits = {"reset": faults.reset_after, "silent": faults.silent_after, "close": faults.close_after}
        self._fired: set[str] = set()

    def due(self, finished: int) -> list[str]:
        """The faults (``reset``, ``silent``, ``close``) to fire now that ``finished`` steps are done."""
        names = [
            name
            for name, limit in self._limits.items()
            if limit is not None and finished >= limit and name not in self._fired
        ]
        self._fired.update(names)
        return names


class Channel:
    """One direction of the simulated wire: takes whole frames, hands out bytes when due."""

    def __init__(self, faults: FrameFaults, rng: random.Random, reserved: frozenset[int] = frozenset()):
        """``reserved``: bytes that noise never contains (a device acts on them alone, e.g. grbl's 0x18 reset)."""
        self.faults, self.rng = faults, rng
        self._noise_bytes = [byte for byte in range(256) if byte not in reserved]
        self._due: deque[tuple[float, bytes]] = deque()
        self.counts = {"frames": 0, "dropped": 0, "corrupted": 0, "duplicated": 0, "delayed": 0, "noise": 0}

    def push(self, frame: bytes, now: float) -> None:
        f, rng = self.faults, self.rng
        self.counts["frames"] += 1
        if f.drop and rng.random() < f.drop:
            self.counts["dropped"] += 1
            return
        if f.corrupt and rng.random() < f.corrupt:
            self.counts["corrupted"] += 1
            frame = self._corrupt(frame)
        if f.noise and rng.random() < f.noise:
            self.counts["noise"] += 1
            frame = self._noise() + frame
        copies = 1
        if f.duplicate and rng.random() < f.duplicate:
            self.counts["duplicated"] += 1
            copies = 2
        due = self._last_due(now)
        if f.delay and rng.random() < f.delay:
            self.counts["delayed"] += 1
            due = max(due, now + f.delay_ms / 1000)
        self._due.extend([(due, frame)] * copies)

    def push_whole(self, frame: bytes, now: float) -> None:
        """Pass ``frame`` unharmed, right after what the wire holds (a real-time byte that travels alone)."""
        self.counts["frames"] += 1
        self._due.append((self._last_due(now), frame))

    def _last_due(self, now: float) -> float:
        """Nothing overtakes what the wire holds back."""
        return max(self._due[-1][0], now) if self._due else now

    def _corrupt(self, frame: bytes) -> bytes:
        """Replace one byte (the newline included) by another: at most an 8-bit burst."""
        data = bytearray(frame)
        i = self.rng.randrange(len(data))
        data[i] = (data[i] + self.rng.randrange(1, 256)) % 256
        return bytes(data)

    def _noise(self) -> bytes:
        """1 to 8 random bytes, now and then with a line end among them."""
        count = self.rng.randint(1, 8)
        if len(self._noise_bytes) == 256:
            return bytes(self.rng.randrange(256) for _ in range(count))
        return bytes(self.rng.choice(self._noise_bytes) for _ in range(count))

    def take(self, now: float) -> bytes:
        out = bytearray()
        while self._due and self._due[0][0] <= now:
            out += self._due.popleft()[1]
        return bytes(out)

    def next_due(self) -> float | None:
        return self._due[0][0] if self._due else None

    def clear(self) -> None:
        self._due.clear()
