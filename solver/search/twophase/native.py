"""The two-phase search loops compiled from ``ida.c``, where the machine has a C compiler.

The same search as ``ida.ViewSearch`` (same tables, move order and pruning,
so the same solutions when the clock does not cut it short), about a
hundred times quicker per node: what two-phase finds in its first 0.05 s
decides the robot's first commands. ``ida.c`` is compiled once into the
table cache (``solver.compiled``). Without a compiler, or with
``ROBOTD_TWO_PHASE_NATIVE=0``, the search runs in Python as before, and
``status()`` says why.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ...compiled import CompiledSource

SOURCE = Path(__file__).with_name("ida.c")
Offer = Callable[[list[int]], int]  # a solution's moves -> the most moves one still worth finding may have, -1: stop
OFFER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int8), ctypes.c_int)
_P32, _P8, _PU8 = ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int8), ctypes.POINTER(ctypes.c_uint8)
_FIELDS = (
    ("twist", _P32),
    ("flip", _P32),
    ("slice", _P32),
    ("twist_slice", _PU8),
    ("flip_slice", _PU8),
    ("twist_flip", _PU8),
    ("corner", _P32),
    ("edge", _P32),
    ("slice_perm", _P32),
    ("ud_split", _P32),
    ("corner_slice_perm", _PU8),
    ("edge_slice_perm", _PU8),
    ("corner_ud_split", _PU8),
    ("ud_split_of_edge", _P32),
    ("move_cp", _P8),
    ("move_ep", _P8),
    ("phase2_moves", _P8),
    ("allowed", _PU8),
    ("ends_phase1", _PU8),
)
_CTYPE_DTYPE = {_P32: np.int32, _P8: np.int8, _PU8: np.uint8}


class _Tables(ctypes.Structure):
    _fields_ = list(_FIELDS)


class NativeTables:
    """The search tables as the compiled loops read them (the arrays are kept alive here)."""

    def __init__(self, library: ctypes.CDLL, arrays: dict[str, np.ndarray]):
        self._arrays = {
            name: np.ascontiguousarray(arrays[name], dtype=_CTYPE_DTYPE[kind]).ravel() for name, kind in _FIELDS
        }
        self._struct = _Tables(**{name: self._arrays[name].ctypes.data_as(kind) for name, kind in _FIELDS})
        self._phase1_at = library.phase1_at
        self._phase1_at.restype = ctypes.c_int
        self._phase1_at.argtypes = [
            ctypes.POINTER(_Tables),
            *(ctypes.c_int,) * 3,
            _P8,
            _P8,
            ctypes.c_int,
            ctypes.c_double,
            ctypes.c_int,
            OFFER,
        ]

    def phase1_at(
        self,
        coordinates: tuple[int, int, int],
        cp: tuple[int, ...],
        ep: tuple[int, ...],
        depth: int,
        deadline: float,
        bound: int,
        offer: Offer,
    ) -> bool:
        """Every phase-1 sequence of ``depth`` moves, each followed by phase 2; False when stopped.

        ``deadline`` is in ``time.perf_counter`` seconds (CLOCK_MONOTONIC, as the C side reads it).
        An exception raised by ``offer`` stops the search and is raised here.
        """
        raised: list[BaseException] = []

        def call_back(moves, count: int) -> int:
            try:
                return offer([moves[i] for i in range(count)])
            except BaseException as error:  # noqa: BLE001 - carried across the C frames and raised below
                raised.append(error)
                return -1

        result = self._phase1_at(
            ctypes.byref(self._struct),
            *coordinates,
            (ctypes.c_int8 * 8)(*cp),
            (ctypes.c_int8 * 12)(*ep),
            depth,
            deadline,
            bound,
            OFFER(call_back),
        )
        if raised:
            raise raised[0]
        if result == -2:
            raise ValueError(f"phase-1 depth {depth} is beyond the compiled search's limit")
        return result == 0


COMPILED = CompiledSource(SOURCE, "twophase-ida", "ROBOTD_TWO_PHASE_NATIVE")


def library() -> ctypes.CDLL | None:
    """The compiled search loops, compiled on first use; None where they cannot be (see ``status``)."""
    return COMPILED.library()


def status() -> str:
    """Which search loops two-phase runs: compiled, or why not."""
    return COMPILED.status()
