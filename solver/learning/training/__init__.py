"""Training of the 3x3x3 cost-to-go network (needs the ``train`` extra: torch, onnx).

Deep approximate value iteration in the quarter-turn metric, as in DeepCubeA:
the target for a state is ``min over its 12 neighbours of 1 + teacher(neighbour)``
(0 at solved), where the teacher is an exponential moving average of the
network. Nothing here is imported at run time; the solver only loads the
exported ONNX file.
"""
