"""Which board robotd is talking to: the link's identity after connecting, for ``robotd check`` and the dashboard.

Every link (``RigLink``, ``MarlinLink``, ``GrblLink``, ``MaestroLink``)
keeps what it learnt at connect in its ``info``: the firmware, its version,
its axes, what it can do, how it is stopped. The keys differ from link to
link and grow with them, so the identity is the whole dict, known keys
first (``KNOWN_ORDER``) and the rest as the link gives them.
"""

from __future__ import annotations

KNOWN_ORDER = (
    "firmware",
    "version",
    "dialect",
    "protocol",
    "axes",
    "axis_count",
    "axis_letters",
    "motors",
    "channels",
    "capabilities",
    "stop_method",
    "stop_latency_ms",
)
LEFT_OUT = ("port",)  # said beside the identity (``board on PORT``)


def link_info(link) -> dict | None:
    """The link's handshake, None before a connect; ``info`` is a property of today's links (a method works too)."""
    info = getattr(link, "info", None)
    if callable(info):
        info = info()
    return dict(info) if info else None


def board_identity(info: dict | None) -> dict | None:
    """``info`` in display order (known keys first), without empty values and the port; None before a connect."""
    if not info:
        return None
    known = [key for key in KNOWN_ORDER if key in info]
    rest = [key for key in info if key not in KNOWN_ORDER]
    return {key: info[key] for key in (*known, *rest) if key not in LEFT_OUT and info[key] not in (None, "", [], {})}


def plain(key: str, value) -> str:
    """A value as a person reads it: lists joined, tables as ``k=v``, yes/no, milliseconds with their unit."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return " ".join(f"{k}={plain(k, v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(plain(key, v) for v in value)
    if isinstance(value, float):
        value = f"{value:g}"
    return f"{value} ms" if key.endswith("_ms") else str(value)


def label(key: str) -> str:
    """``stop_latency_ms`` -> ``stop latency`` (the value carries the unit)."""
    return key.removesuffix("_ms").replace("_", " ")


def board_lines(identity: dict) -> list[str]:
    """One ``name : value`` line per key, names aligned."""
    width = max((len(label(key)) for key in identity), default=0)
    return [f"{label(key):<{width}} : {plain(key, value)}" for key, value in identity.items()]
