"""One module per experiment; each defines ``DESCRIPTION`` and ``run(quick: bool) -> dict`` (its JSON figures).

Register a new one in ``solver.research.__main__.EXPERIMENTS``.
"""
