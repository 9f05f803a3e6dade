"""Searches over cube states: neural A* (``astar``, guided by the cost-to-go network of
``heuristic``), its exact perimeter around solved (``perimeter``), and Kociemba's two-phase
algorithm (``twophase``)."""
