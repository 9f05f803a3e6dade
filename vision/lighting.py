"""Lighting presets of the synthetic camera and the sticker colours they produce.

Sticker and plastic colours are linear reflectances (0..1). A preset is the
light and camera: illuminant colour as seen by a camera whose white
balance is fixed near 5000 K (so warm light stays orange and cool LED
light stays blue, as on a robot whose camera has auto white balance off),
exposure, ambient versus directional light, a one-sided gradient, a
specular glare spot, and sensor noise (shot and read noise, amplified by
gain in dim light).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ScanError
from .lab import linear_to_srgb, srgb_to_linear

# Default scheme: U white, R red, F green, D yellow, L orange, B blue (linear reflectance).
STICKER_ALBEDO = {
    "U": (0.80, 0.80, 0.76),
    "R": (0.52, 0.012, 0.025),
    "F": (0.0, 0.33, 0.085),
    "D": (0.92, 0.66, 0.0),
    "L": (0.98, 0.16, 0.006),
    "B": (0.0, 0.075, 0.45),
}
PLASTIC_ALBEDO = (0.035, 0.035, 0.038)
SAMPLE_NOISE_REDUCTION = 4.0  # noise of a median over 16 pixels, relative to one pixel


@dataclass(frozen=True)
class Lighting:
    """One lighting preset (see the module docstring)."""

    name: str
    illuminant: tuple[float, float, float]
    exposure: float = 1.0
    ambient: float = 0.55
    directional: float = 0.45
    light_from: tuple[float, float, float] = (0.3, 1.0, 0.6)
    gradient: float = 0.1  # brightness change across the image, as a fraction
    vignetting: float = 0.15
    glare: float = 0.0  # peak of the specular spot, in linear units
    glare_radius: float = 0.12  # Gaussian sigma, in sticker widths
    read_noise: float = 0.003
    shot_noise: float = 0.0004
    gain: float = 1.0  # camera gain applied after the noise (dim light)
    description: str = ""


PRESETS = {
    "daylight": Lighting(
        "daylight", (1.0, 0.98, 0.94), exposure=0.95, description="neutral daylight from a window, even"
    ),
    "tungsten": Lighting(
        "tungsten",
        (1.0, 0.56, 0.2),
        exposure=0.95,
        read_noise=0.004,
        description="warm tungsten bulb, about 2700 K, uncorrected orange cast",
    ),
    "led": Lighting("led", (0.72, 0.9, 1.0), exposure=1.0, description="cool white LED, about 6500 K, blue cast"),
    "dim": Lighting(
        "dim",
        (1.0, 0.9, 0.78),
        exposure=0.16,
        gain=5.5,
        read_noise=0.004,
        shot_noise=0.002,
        vignetting=0.3,
        description="dim room light, camera gain up: noisy",
    ),
    "side": Lighting(
        "side",
        (1.0, 0.95, 0.9),
        exposure=1.0,
        ambient=0.22,
        directional=0.9,
        light_from=(-1.0, 0.7, 0.4),
        gradient=0.55,
        glare=2.2,
        description="one lamp from the side: uneven faces and a specular glare spot",
    ),
}


def preset(name: str) -> Lighting:
    """A preset by name; a ScanError lists the names."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ScanError(f"unknown lighting preset {name!r} (presets: {', '.join(PRESETS)})") from None


def face_shading(light: Lighting, normals: np.ndarray) -> np.ndarray:
    """Ambient plus Lambertian factor of each face normal (rows) under the preset's light."""
    direction = np.array(light.light_from, dtype=np.float64)
    direction /= np.linalg.norm(direction)
    return light.ambient + light.directional * np.clip(normals @ direction, 0.0, None)


def add_noise(linear: np.ndarray, light: Lighting, rng: np.random.Generator) -> np.ndarray:
    """Shot and read noise in linear units, then the camera gain."""
    sigma = np.sqrt(light.shot_noise * np.clip(linear, 0, None) + light.read_noise**2)
    noise = rng.standard_normal(size=linear.shape, dtype=np.float32).astype(linear.dtype, copy=False)
    return (linear + noise * sigma) * light.gain


def sticker_colours(state: str, light: Lighting | str, rng: np.random.Generator) -> np.ndarray:
    """sRGB colour of every sticker of a face-letter state under a preset, without any geometry.

    Each face gets the preset's shading from a random side, each sticker a
    slice of the one-sided gradient, a little reflectance spread, the
    illuminant cast and the sensor noise left in a median of 16 pixels (a
    small sampled region): the input the classifier must read on its own.
    """
    light = preset(light) if isinstance(light, str) else light
    albedo = np.array([STICKER_ALBEDO[c] for c in state])
    albedo = albedo * rng.uniform(0.95, 1.05, albedo.shape)
    normals = rng.normal(size=(6, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    per_face = len(state) // 6
    shade = np.repeat(face_shading(light, normals), per_face)
    spread = rng.uniform(-0.5, 0.5, len(state)) * light.gradient
    linear = albedo * (shade * (1 + spread))[:, None] * np.array(light.illuminant) * light.exposure
    noisy = linear + (add_noise(linear, light, rng) / light.gain - linear) / SAMPLE_NOISE_REDUCTION
    return linear_to_srgb(noisy * light.gain)


def recolour(rgb: np.ndarray, gain, gamma: float = 1.0) -> np.ndarray:
    """sRGB values (0..255, last axis R G B) lit by a per-channel linear gain, then a gamma on the encoding."""
    linear = srgb_to_linear(rgb) * np.asarray(gain, dtype=np.float64)
    return 255.0 * (linear_to_srgb(linear) / 255.0) ** gamma


def recolour_image(image: np.ndarray, gain, gamma: float = 1.0) -> np.ndarray:
    """``recolour`` for a BGR uint8 image, through one 256-entry table per channel."""
    table = np.round(recolour(np.repeat(np.arange(256.0)[:, None], 3, axis=1), gain, gamma)).astype(np.uint8)
    out = np.empty_like(image)
    for c in range(3):  # BGR channel c is RGB channel 2 - c
        out[:, :, c] = table[:, 2 - c][image[:, :, c]]
    return out
