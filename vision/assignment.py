"""Each row matched to its own column at the least total cost (scipy's ``linear_sum_assignment``).

scipy.optimize takes about 0.4 s to import on a desktop core and more on a Pi, and every ``robotd``
command paid for it, ``--help`` included (the config schema reads the light presets from ``vision``).
It is imported on the first match instead; the daemon imports it while it starts (``warm_up``), so that
its first scan does not pay either.
"""

from __future__ import annotations

import numpy as np


def assign(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) of the least-cost matching of ``cost``'s rows to its columns."""
    from scipy.optimize import linear_sum_assignment

    return linear_sum_assignment(cost)


def warm_up() -> None:
    """Import the matcher now, ahead of a first scan."""
    from scipy.optimize import linear_sum_assignment  # noqa: F401
