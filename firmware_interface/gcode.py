"""G-code as every G-code dialect writes it (Marlin, grbl)."""


def number(value: float) -> str:
    """A G-code number: no exponent, no trailing zeros (90, -180, 12.5)."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text
