"""The one exception type the vision package raises for scans it cannot trust."""


class ScanError(ValueError):
    """A scan that cannot be turned into a cube state, or bad scan input.

    The message says what is wrong and where: the stickers in doubt by face
    and position (e.g. ``F3``) with the colours competing for them, the face
    whose sticker grid was not found, or the config key that is wrong. It can
    be shown to a user as is. ``stickers`` lists the doubtful sticker names;
    ``reading`` is the classifier's best cube (a ``Classification``) when the
    colours were read but not trusted, for showing what was seen, else None.
    """

    def __init__(self, message: str, stickers: tuple[str, ...] = (), reading=None):
        super().__init__(message)
        self.stickers = tuple(stickers)
        self.reading = reading
