"""Exact distance tables: every state of a puzzle with its distance from solved.

``exact`` builds a table by breadth-first search over a ``PuzzleModel``'s
coordinates and caches it with ``solver.tables.cache``; ``solving`` turns a
table into optimal solutions and random-state scrambles.
"""
