"""The one exception type the solver package raises for bad user input."""


class InvalidState(ValueError):
    """A cube state, move sequence or solver argument that cannot be used.

    The message says what is wrong and where (face and sticker, e.g. ``F3``,
    or the position of a bad move token), so it can be shown to a user as is.
    """
