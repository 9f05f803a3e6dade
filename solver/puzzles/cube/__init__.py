"""The cubes (2x2x2 and 3x3x3): sticker geometry, notation, facelet strings, the cubie model,
its vectorised form and random states. The 2x2x2's table numbering is ``solver.puzzles.pocket``."""
