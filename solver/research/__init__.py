"""The research this product grew out of, reproduced: exact baselines and tabular learning on the move graph.

``python -m solver.research <experiment>`` reruns one experiment, prints its
figures as JSON and redraws its plots under docs/img/ (matplotlib, from the
``[research]`` extra). ``docs/research.md`` puts the figures next to the
published ones. Nothing in the robot's runtime imports this package.
"""
