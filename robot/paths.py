"""Where robotd looks for its config and keeps its data and caches: the one place that decides.

The per-user directories come from platformdirs (on Linux the XDG ones:
``$XDG_CONFIG_HOME`` or ``~/.config``, ``$XDG_DATA_HOME`` or
``~/.local/share``, ``$XDG_CACHE_HOME`` or ``~/.cache``); the system
config stays ``/etc/robotd/robotd.toml`` as docs/install-pi.md sets it up.
The solver's table cache is the solver's own (``solver.tables.cache``, which
may not import ``robot``); ``cache_dir`` here is that same function.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from solver.tables.cache import cache_dir

from .errors import ConfigError

APP = "robotd"
CONFIG_NAME = "robotd.toml"
SYSTEM_CONFIG = Path("/etc/robotd") / CONFIG_NAME
CONFIG_ENV = "ROBOTD_CONFIG"


def user_config_path() -> Path:
    """The user's config file (``~/.config/robotd/robotd.toml`` on Linux)."""
    return platformdirs.user_config_path(APP) / CONFIG_NAME


def default_data_dir() -> Path:
    """``[robotd] data_dir`` when the config names none (``~/.local/share/robotd`` on Linux)."""
    return platformdirs.user_data_path(APP)


def config_search_path() -> list[Path]:
    """The files tried, in order, when neither ``--config`` nor ``$ROBOTD_CONFIG`` names one."""
    return [SYSTEM_CONFIG, user_config_path()]


def find_config(explicit: str | os.PathLike | None = None) -> Path | None:
    """The config to use: ``explicit`` (``--config``), else ``$ROBOTD_CONFIG``, both of which must exist;
    else the first file of ``config_search_path`` that exists; else None (all defaults)."""
    named, origin = (explicit, "config file") if explicit is not None else (os.environ.get(CONFIG_ENV), CONFIG_ENV)
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise ConfigError(f"{origin} {path} does not exist")
        return path
    return next((path for path in config_search_path() if path.is_file()), None)


__all__ = ["SYSTEM_CONFIG", "cache_dir", "config_search_path", "default_data_dir", "find_config", "user_config_path"]
