"""Every labelled real scan of the dev set: read right, or refused, never wrong.

The dev set lives beside the repository (``../shared/vision-devset``) and is
read from there; some items are GPL-3.0 and are never copied into the
project. RGB scans go through the classifier, photo sets through grid
detection and the classifier, with no per-item settings.

``STILL_REFUSED`` lists the items the vision refuses today, each with its
cause (docs/vision.md). They must stay refused: a wrong cube would fail.
An item that starts reading right fails its check too, so the list is
kept honest.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from vision import ScanError, classify, scan_photos
from vision.lab import linear_to_srgb, srgb_to_linear

REPO = Path(__file__).resolve().parent.parent
DEVSET = REPO.parent / "shared" / "vision-devset"

# id: (why it is refused, words the refusal must say; see docs/vision.md, "What the dev set still refuses")
STILL_REFUSED = {
    "tracker-40f3729-3x3x3-random-01": (
        "overexposed: white and cream yellow differ by two or three levels of 255 in the photos "
        "(F4 F8 D4 L2 could be white or yellow), though the RGB readout of the same cube reads right",
        "overexposed",
    ),
}


def _devset_module():
    spec = importlib.util.spec_from_file_location("vision_cases", REPO / "bench" / "vision_cases.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _items():
    if not (DEVSET / "manifest.json").exists():
        return []
    return _devset_module().load_devset(DEVSET)


ITEMS = _items()


@pytest.mark.skipif(not ITEMS, reason=f"the vision dev set is not at {DEVSET}")
@pytest.mark.parametrize("item", ITEMS, ids=[item.id for item in ITEMS])
def test_dev_set_item_is_read_right_or_refused(item):
    def read():
        return classify(item.rgb) if item.kind == "rgb-scan" else scan_photos(item.photos)

    if item.id in STILL_REFUSED:
        with pytest.raises(ScanError) as error:
            read()
        assert error.value.stickers and STILL_REFUSED[item.id][1] in str(error.value)
        return
    assert read().state == item.answer


def test_every_refused_item_is_in_the_dev_set():
    if ITEMS:
        assert set(STILL_REFUSED) <= {item.id for item in ITEMS}


def _photos(item_id: str) -> dict:
    found = [item for item in ITEMS if item.id == item_id]
    if not found:
        pytest.skip(f"{item_id} is not in the dev set at {DEVSET}")
    return dict(found[0].photos)


def _relit(image_bgr, gain_rgb):
    """A BGR photo as if lit by another light: a per-channel gain in linear RGB."""
    rgb = image_bgr[:, :, ::-1].astype(float)
    return np.round(linear_to_srgb(srgb_to_linear(rgb) * gain_rgb)[:, :, ::-1]).astype(np.uint8)


def test_2x2_face_photo_turned_into_another_real_cube_is_refused_naming_the_face():
    # R turned 180 degrees still reads as a real cube (with two stickers repaired); turned back it reads
    # as another, cheaper one: which is meant cannot be told, so the scan must be refused, not guessed.
    photos = _photos("tracker-40f3729-2x2x2-random-02")
    photos["R"] = np.rot90(photos["R"], 2).copy()
    with pytest.raises(ScanError, match="face R may be turned") as error:
        scan_photos(photos)
    assert error.value.stickers == ("R1", "R2", "R3", "R4")


def test_2x2_face_turned_back_that_still_needs_repairs_must_explain_the_colours_clearly():
    # F photographed under warm light reads as no real cube; L turned back makes one only with two
    # stickers read against their colour and barely cheaper: a relit face, not a turned one.
    photos = _photos("tracker-40f3729-2x2x2-random-03")
    photos["F"] = _relit(photos["F"], (1.0, 0.72, 0.42))
    with pytest.raises(ScanError, match="lit differently rather than turned"):
        scan_photos(photos)
