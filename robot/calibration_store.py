"""The calibration the dashboard shows and edits: the view config and the colour calibration.

An update is validated whole (``vision``'s own checks, plus: every view names a camera robotd has, and
its corners lie inside that camera's frame), then written to its file and applied to the running
scanner: the next scan uses it, no restart. ``check`` does the validation alone and says what the page
would look like after the save (the preview), with each problem tied to the field it is about.

Files: the views go to the file ``[vision] views`` names (TOML or JSON, by its suffix; comments in it are
not kept) and the colour calibration to ``[vision] calibration``; with none named (a simulated rig, or
no calibration configured) to ``views.json`` and ``calibration.json`` in the data directory, where a real
rig also finds its calibration at the next start. A save goes through a temporary file in the same
folder and ``os.replace``, so the file is always either the old one or the new one whole; the old one is
first copied to ``<name>.<YYYYmmdd-HHMMSS-micro>.bak`` beside it, and only the newest ``BACKUPS`` backups
stay.

Before the first calibration the scanner has no views (``calibration_start``): the page then offers a
starting layout, and ``check_solved`` confirms a saved calibration by scanning a solved cube. A real
flip/spin rig's face under its camera (``top_face``) is saved on its own (``save_top_face``).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from vision import ScanError, ViewConfig, view_config_from_dict
from vision.calibration import Calibration, calibration_from_json

from .calibration_start import CORNER_RIG, NotCalibrated, refused_verdict, solved_verdict, starting_views
from .errors import RobotError
from .run import ScanRefused
from .scanner import ViewScanner, views_for_page

BACKUPS = 5
PARTS = ("views", "calibration")
_KEYS = {
    "views": ("corners", "image", "face", "inner", "size", "at", "view"),
    "calibration": ("palette", "position_gains", "size"),
}


class CalibrationStore:
    """Shows, checks and saves the calibration of one scanner; ``busy()`` says a run is in progress."""

    def __init__(
        self,
        scanner: ViewScanner,
        cameras: dict,
        files: dict[str, Path],
        *,
        views_fixed: str | None = None,
        busy: Callable[[], bool] = lambda: False,
        top_face=None,
    ):
        self.scanner, self.cameras, self.files, self.busy = scanner, cameras, files, busy
        self.views_fixed = views_fixed  # why the views cannot be edited (a flip/spin rig's follow from top_face)
        self.top_face = top_face  # a real flip/spin rig's face under its camera (robot.top_face.TopFace)

    def page(self) -> dict:
        """The page's view: per camera its size and face quads, the colour references, and the editable form;
        before the first calibration (no views yet) ``config.views`` is None and ``starting`` the layout to
        drag onto the cube."""
        return self._page(self._current_views(), self.scanner.calibration, self._frame_sizes())

    def _current_views(self) -> ViewConfig | None:
        try:
            return self.scanner.views()
        except NotCalibrated:
            return None

    def _page(self, views: ViewConfig | None, calibration: Calibration | None, sizes: dict) -> dict:
        references = (
            None
            if calibration is None
            else {face: [round(float(v), 1) for v in calibration.palette[k]] for k, face in enumerate("URFDLB")}
        )
        page = {
            "views": views_for_page(views, sizes) if views is not None else _bare_cameras(self.cameras, sizes),
            "references": references,
            "config": {
                "views": None if views is None else views.to_json(),
                "calibration": None if calibration is None else calibration.to_json(),
            },
            "files": {part: str(path) for part, path in self.files.items()},
            "editable": {"views": self.views_fixed is None, "calibration": True},
            "views_fixed": self.views_fixed,
        }
        if views is None and self.views_fixed is None:
            page["starting"] = starting_views({name: sizes.get(name, CORNER_RIG) for name in self.cameras}).to_json()
        if self.top_face is not None:
            page["top_face"] = self.top_face.page(sizes.get(self.top_face.camera))
        return page

    def _frame_sizes(self) -> dict[str, tuple[int, int]]:
        sizes = {}
        for name, camera in self.cameras.items():
            try:
                height, width = camera.frame().shape[:2]
                sizes[name] = (width, height)
            except RobotError:
                pass
        return sizes

    def check(self, body: dict) -> dict:
        """What ``update`` would do with ``body``, without doing it: ``valid``, ``problems`` (field, message),
        the page as it would read after the save, and the files it would write."""
        sizes = self._frame_sizes()
        parsed, problems = self._parse(body, sizes)
        views = parsed.get("views") or self._current_views()
        calibration = parsed.get("calibration", self.scanner.calibration)
        return {
            "valid": not problems,
            "problems": problems,
            "preview": None if problems else self._page(views, calibration, sizes),
            "files": {part: str(self.files[part]) for part in PARTS if part in body},
        }

    def update(self, body: dict) -> dict:
        """Validate, save (atomically, with a backup) and apply; RobotError says what is wrong."""
        if self.busy():
            raise RobotError("a run is in progress: change the calibration once it has ended")
        parsed, problems = self._parse(body, self._frame_sizes())
        if problems:
            raise RobotError("; ".join(f"{p['field']}: {p['message']}" for p in problems))
        saved: list[dict] = []
        for part, value in parsed.items():
            saved.append(self._save(part, value, saved))
            if part == "views":
                self.scanner.set_views(value)
            else:
                self.scanner.calibration = value
        return {**self.page(), "saved": saved}

    def check_solved(self) -> dict:
        """Scan the cube in the rig, which should be a solved one, with the saved views: ``solved``, else the
        faces that read wrong and in which camera, and the scan's id (its overlay shows what was read)."""
        if self.busy():
            raise RobotError("a run is in progress: check the calibration once it has ended")
        views = self._current_views()
        if views is None:
            raise RobotError("no views are saved yet: place the faces on the camera pictures and Save and apply first")
        try:
            result = self.scanner.scan()
        except ScanRefused as refused:
            return {**refused_verdict(str(refused), refused.stickers, views), "scan_id": refused.scan_id}
        return {**solved_verdict(result.state, views), "scan_id": result.scan_id, "state": result.state}

    def save_top_face(self, corners) -> dict:
        """A flip/spin rig's face under its camera: validated, saved to its file and used from the next scan."""
        if self.top_face is None:
            raise RobotError("top_face: only a real flip/spin rig's face under its camera is set here")
        if self.busy():
            raise RobotError("a run is in progress: change the calibration once it has ended")
        points = self.top_face.checked(corners, self._frame_sizes().get(self.top_face.camera))
        try:
            backup = self.top_face.save(points)
        except OSError as error:
            raise RobotError(f"could not save top_face to {self.top_face.file}: {error.strerror or error}") from None
        saved = {"part": "top_face", "file": str(self.top_face.file), "backup": None if backup is None else str(backup)}
        return {**self.page(), "saved": [saved]}

    def _parse(self, body: dict, sizes: dict) -> tuple[dict, list[dict]]:
        if not any(part in body for part in PARTS):
            return {}, [{"field": "body", "message": "send views, a colour calibration, or both"}]
        parsed, problems = {}, []
        for part, parse in (("views", self._views), ("calibration", _calibration)):
            if part not in body:
                continue
            try:
                parsed[part] = parse(body[part], sizes)
            except ScanError as error:
                problems.append({"field": field_of(part, str(error)), "message": str(error)})
        return parsed, problems

    def _views(self, data: dict, sizes: dict) -> ViewConfig:
        if self.views_fixed is not None:
            raise ScanError(f"view config: cannot be changed here: {self.views_fixed}")
        views = view_config_from_dict(data, "views")
        for k, view in enumerate(views.views):
            where = f"view config views view #{k + 1} (face {view.face})"
            if view.image not in self.cameras:
                raise ScanError(
                    f"{where}: 'image' {view.image!r} is no camera of this rig "
                    f"(cameras: {', '.join(self.cameras) or 'none'})"
                )
            width, height = sizes.get(view.image, (None, None))
            outside = [(x, y) for x, y in view.corners if width and not (0 <= x <= width and 0 <= y <= height)]
            if outside:
                x, y = outside[0]
                raise ScanError(
                    f"{where}: 'corners' point ({x:g}, {y:g}) lies outside the {width}x{height} frame "
                    f"of camera {view.image!r}"
                )
        return views

    def _save(self, part: str, value, before: list[dict]) -> dict:
        path = self.files[part]
        text = views_text(value, path) if part == "views" else json.dumps(value.to_json(), indent=1) + "\n"
        try:
            backup = save_atomically(path, text)
        except OSError as error:
            done = f"the {before[0]['part']} were saved and applied" if before else "nothing was changed"
            raise RobotError(f"could not save the {part} to {path}: {error.strerror or error}; {done}") from None
        return {"part": part, "file": str(path), "backup": None if backup is None else str(backup)}


def _bare_cameras(cameras: dict, sizes: dict) -> dict:
    """Each camera as the page draws it before any face is placed on it."""
    return {
        name: {"width": sizes.get(name, (None, None))[0], "height": sizes.get(name, (None, None))[1], "faces": {}}
        for name in cameras
    }


def calibration_at_start(configured: str | None, data_dir: Path) -> Path | None:
    """The colour calibration a real rig loads at start: the configured file, else one the dashboard saved."""
    if configured:
        return Path(configured)
    saved = Path(data_dir) / "calibration.json"
    return saved if saved.is_file() else None


def _calibration(data: dict, sizes: dict) -> Calibration:
    return calibration_from_json(data, "calibration")


def field_of(part: str, message: str) -> str:
    """The field a vision error message is about: ``views.view.2.corners``, ``calibration.palette``, or the part."""
    view = re.search(r"view #(\d+)", message)
    key = next((k for k in _KEYS[part] if re.search(rf"'{k}'|\b{k} enclose", message)), None)
    if view is not None:
        return ".".join([part, "view", str(int(view.group(1)) - 1)] + ([key] if key and key != "view" else []))
    return f"{part}.{key}" if key and key != "view" else part


def views_text(views: ViewConfig, path: Path) -> str:
    """The view config as its file's format wants it: TOML for a ``.toml`` file, else JSON."""
    data = views.to_json()
    if path.suffix.lower() != ".toml":
        return json.dumps(data, indent=1) + "\n"
    lines = [
        "# written by robotd's dashboard (the previous file is kept as a .bak beside this one)",
        f"size = {data['size']}",
        f"inner = {data['inner']!r}",
    ]
    for view in data["view"]:
        corners = ", ".join(f"[{x!r}, {y!r}]" for x, y in view["corners"])
        lines += [
            "",
            "[[view]]",
            f"image = {json.dumps(view['image'])}",
            f"face = {json.dumps(view['face'])}",
            f"corners = [{corners}]",
            f"at = [{', '.join(json.dumps(a) for a in view['at'])}]",
        ]
    return "\n".join(lines) + "\n"


def save_atomically(path: Path, text: str, keep: int = BACKUPS) -> Path | None:
    """Write ``text`` to ``path`` through a temporary file and ``os.replace``; returns the backup of the
    previous file (None when there was none). Only the newest ``keep`` backups of ``path`` stay."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if path.exists():
        backup = path.with_name(f"{path.name}.{datetime.now():%Y%m%d-%H%M%S-%f}.bak")
        shutil.copy2(path, backup)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        if backup is not None:
            os.chmod(temporary, stat.S_IMODE(backup.stat().st_mode))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)
    for old in sorted(path.parent.glob(f"{glob.escape(path.name)}.*.bak"))[: -keep or None]:
        old.unlink(missing_ok=True)
    return backup


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (a power cut right after the save keeps the new file)."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)
