"""Learning on the puzzles: Gymnasium environments (``solver.learning.envs``, extra ``[rl]``)
and training of the 3x3x3 cost-to-go network (``solver.learning.training``, extra ``[train]``).

Importing this package imports neither gymnasium nor torch; the robot never needs them.
"""
