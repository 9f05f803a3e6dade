"""Real cameras with fakes only: config, the exposure/gain/white-balance lock, picamera2, listing.

No camera exists here: OpenCV's VideoCapture is replaced by a fake that
models a driver (controls, automatics drifting while on, refusals), a fake
``picamera2`` module is put in ``sys.modules``, and the V4L2 ioctls are
answered by a fake kernel that packs the structures at their C offsets.
"""

import errno
import logging
import struct
import sys
import tomllib
import types

import cv2
import numpy as np
import pytest

from robot.camera import CaptureCamera, capture_settings, to_bgr
from robot.camera_probe import camera_lines, list_cameras, suggest_size
from robot.config import Config
from robot.errors import ConfigError, RobotError
from robot.v4l2_query import VIDIOC_ENUM_FMT, VIDIOC_ENUM_FRAMESIZES, VIDIOC_QUERYCAP, DeviceInfo, PixelFormat, describe


def settings(text, name="cam"):
    config = Config(tomllib.loads(text))
    return capture_settings(config.section(f"camera.{name}"), name)


# ---------------------------------------------------------------- config


def test_defaults_keep_the_old_options_working():
    got = settings('[camera.cam]\ndevice = "/dev/video0"\nwidth = 640\nheight = 480\nexposure = 150\n')
    assert (got.kind, got.device, got.width, got.height, got.exposure) == ("v4l2", "/dev/video0", 640, 480, 150)
    assert got.lock.lock and got.lock.settle_frames == 30 and got.lock.manual() == {"exposure": 150}
    assert got.warmup_frames == 3


def test_picamera2_options():
    got = settings(
        '[camera.cam]\nkind = "picamera2"\nexposure = 8000.4\ncolour_gains = [1.9, 1.4]\n'
        "gain = 2\nlock = false\nsettle_frames = 5\n"
    )
    assert got.device == 0 and got.lock.white_balance == (1.9, 1.4) and got.lock.exposure == 8000
    assert not got.lock.lock and got.lock.settle_frames == 5 and got.lock.gain == 2.0


@pytest.mark.parametrize(
    "text, message",
    [
        ('kind = "usb"\nindex = 0', r"kind: must be one of v4l2, picamera2; got 'usb'"),
        ('index = 0\ndevice = "/dev/video0"', r"give exactly one of 'index'"),
        ('kind = "v4l2"', r"give exactly one of 'index'"),
        ('device = ""', r"device: must not be empty"),
        ('index = 0\nlock = "yes"', r"lock: must be true or false"),
        ("index = 0\nsettle_frames = -1", r"settle_frames: must be at least 0"),
        ("index = 0\nsettle_frames = 2.5", r"settle_frames: must be a whole number"),
        ("index = 0\nwidth = 640", r"height: give 'width' and 'height' together"),
        ("index = 0\nexposure = 0", r"exposure: must be more than 0"),
        ("index = 0\nwhite_balance = 100", r"white_balance: must be at least 1000"),
        ("index = 0\ncolour_gains = [1.5, 1.5]", r'colour_gains: only for kind = "picamera2"'),
        ('kind = "picamera2"\nwhite_balance = 5000', r"white_balance: a picamera2 camera takes colour_gains"),
        ('kind = "picamera2"\ndevice = "/dev/video0"', r"device: a picamera2 camera is chosen by 'index'"),
        ('kind = "picamera2"\ncolour_gains = [1.5]', r"colour_gains: must be two numbers"),
        ('kind = "picamera2"\ncolour_gains = [1.5, 0]', r"colour_gains: must be two numbers"),
        ('kind = "picamera2"\ngain = 0.5', r"gain: must be at least 1.0"),
    ],
)
def test_bad_camera_options_name_the_key(text, message):
    with pytest.raises(ConfigError, match=message):
        settings("[camera.cam]\n" + text + "\n")


def test_unknown_camera_key_is_an_error_with_the_known_ones():
    config = Config(tomllib.loads('[camera.cam]\ndevice = "/dev/video0"\nexposre = 100\n'))
    with pytest.raises(ConfigError, match=r"\[camera.cam\] exposre: unknown option \(known here: .*exposure.*\)"):
        capture_settings(config.section("camera.cam"), "cam")


# ---------------------------------------------------------------- a fake V4L2 driver behind cv2.VideoCapture

P = cv2
AUTO_DRIFT = {P.CAP_PROP_EXPOSURE: 10.0, P.CAP_PROP_WB_TEMPERATURE: 50.0}  # per frame while the automatic is on


class FakeCapture:
    """A UVC-like camera: controls (absent ones read -1), automatics that move the values each frame."""

    def __init__(self, device, backend, controls=None, refuse=(), image=None):
        self.device, self.backend = device, backend
        self.controls = dict(
            controls
            if controls is not None
            else {
                P.CAP_PROP_AUTO_EXPOSURE: 1,
                P.CAP_PROP_EXPOSURE: 100.0,
                P.CAP_PROP_GAIN: 40.0,
                P.CAP_PROP_AUTO_WB: 0,
                P.CAP_PROP_WB_TEMPERATURE: 4000.0,
            }
        )
        self.refuse = set(refuse)
        self.sets, self.reads, self.fail_reads, self.released = [], 0, False, False
        self.image = np.full((48, 64, 3), (10, 20, 30), np.uint8) if image is None else image

    def isOpened(self):
        return True

    def set(self, prop, value):
        self.sets.append((prop, value))
        if prop in (P.CAP_PROP_MODE, P.CAP_PROP_FRAME_WIDTH, P.CAP_PROP_FRAME_HEIGHT):
            return True
        if prop not in self.controls or prop in self.refuse:
            return False
        self.controls[prop] = value
        return True

    def get(self, prop):
        return float(self.controls.get(prop, -1.0))

    def read(self):
        if self.fail_reads:
            return False, None
        self.reads += 1
        if self.controls.get(P.CAP_PROP_AUTO_EXPOSURE) in (3, 0):
            self.controls[P.CAP_PROP_EXPOSURE] += AUTO_DRIFT[P.CAP_PROP_EXPOSURE]
        if self.controls.get(P.CAP_PROP_AUTO_WB) == 1:
            self.controls[P.CAP_PROP_WB_TEMPERATURE] += AUTO_DRIFT[P.CAP_PROP_WB_TEMPERATURE]
        return True, self.image.copy()

    def release(self):
        self.released = True

    def written(self, prop):
        return [value for p, value in self.sets if p == prop]


class Opened(list):
    """The fake captures made so far; ``options`` shape the next ones."""

    options: dict


@pytest.fixture
def v4l2(monkeypatch):
    opened = Opened()
    opened.options = {}
    kind = FakeCapture

    def make(device, backend=None):
        opened.append(
            opened.options.get("kind", kind)(
                device, backend, **{k: v for k, v in opened.options.items() if k != "kind"}
            )
        )
        return opened[-1]

    monkeypatch.setattr(cv2, "VideoCapture", make)
    monkeypatch.setattr(sys, "platform", "linux")
    return opened


def v4l2_camera(extra="", device='"/dev/video0"', key="device"):
    return CaptureCamera(settings(f"[camera.cam]\n{key} = {device}\nwarmup_frames = 2\nsettle_frames = 5\n{extra}"))


def test_v4l2_lock_reads_after_settling_then_writes_with_automatics_off(v4l2):
    camera = v4l2_camera("width = 640\nheight = 480\n")
    frame = camera.frame()
    fake = v4l2[0]
    assert fake.backend == cv2.CAP_V4L2 and fake.device == 0  # some OpenCV builds open V4L2 by index only
    assert (P.CAP_PROP_MODE, 0) in fake.sets  # raw driver values
    # automatics on (an earlier run may have left them off), 5 settle frames, then fixed
    assert fake.written(P.CAP_PROP_AUTO_EXPOSURE) == [3, 1] and fake.written(P.CAP_PROP_AUTO_WB) == [1, 0]
    exposure, temperature = 100.0 + 5 * 10.0, 4000.0 + 5 * 50.0
    assert fake.written(P.CAP_PROP_EXPOSURE) == [exposure] and fake.written(P.CAP_PROP_WB_TEMPERATURE) == [temperature]
    assert fake.written(P.CAP_PROP_GAIN) == [40.0]
    at = fake.sets.index  # each automatic is off before its value is written
    assert at((P.CAP_PROP_AUTO_EXPOSURE, 1)) < at((P.CAP_PROP_EXPOSURE, exposure))
    assert at((P.CAP_PROP_AUTO_WB, 0)) < at((P.CAP_PROP_WB_TEMPERATURE, temperature))
    lock = camera.status()["lock"]
    assert lock["how"] == "settled" and lock["refused"] == {} and lock["auto"] == []
    assert lock["locked"] == {"exposure": exposure, "gain": 40.0, "white_balance": temperature}
    assert frame.dtype == np.uint8 and frame.shape == (48, 64, 3)
    assert camera.status()["open"] and camera.status()["size"] == [64, 48]


def test_stable_device_link_is_opened_by_its_index(v4l2, tmp_path):
    link = tmp_path / "usb-Cam_C525-video-index0"
    link.symlink_to("/dev/video7")
    v4l2_camera(device=f'"{link}"').frame()
    assert (v4l2[0].device, v4l2[0].backend) == (7, cv2.CAP_V4L2)


def test_v4l2_values_stay_fixed_across_frames(v4l2):
    camera = v4l2_camera()
    camera.frame()
    fixed = dict(v4l2[0].controls)
    for _ in range(5):
        camera.frame()
    assert v4l2[0].controls == fixed


def test_manual_values_override_the_automatics(v4l2):
    camera = v4l2_camera("exposure = 200\nwhite_balance = 5000\n")
    camera.frame()
    fake = v4l2[0]
    assert fake.written(P.CAP_PROP_EXPOSURE)[0] == 200 and fake.written(P.CAP_PROP_WB_TEMPERATURE)[0] == 5000
    assert 3 not in fake.written(P.CAP_PROP_AUTO_EXPOSURE)  # exposure was never handed to the automatic
    assert camera.status()["lock"]["locked"] == {"exposure": 200.0, "gain": 40.0, "white_balance": 5000.0}


def test_lock_off_leaves_the_automatics_on(v4l2):
    camera = v4l2_camera("lock = false\n")
    camera.frame()
    fake = v4l2[0]
    assert fake.written(P.CAP_PROP_AUTO_EXPOSURE) == [3] and fake.written(P.CAP_PROP_AUTO_WB) == [1]
    assert fake.written(P.CAP_PROP_EXPOSURE) == [] and fake.reads == 3  # warm-up and the frame, no settling
    lock = camera.status()["lock"]
    assert lock == {
        "enabled": False,
        "how": "off",
        "auto": ["exposure", "gain", "white_balance"],
        "locked": {},
        "refused": {},
    }


def test_control_the_driver_lacks_is_reported_not_fatal(v4l2, caplog):
    v4l2.options["controls"] = {P.CAP_PROP_AUTO_EXPOSURE: 3, P.CAP_PROP_EXPOSURE: 100.0, P.CAP_PROP_GAIN: 40.0}
    camera = v4l2_camera()
    with caplog.at_level(logging.WARNING, logger="robotd.camera"):
        assert camera.frame().shape == (48, 64, 3)
    lock = camera.status()["lock"]
    assert set(lock["locked"]) == {"exposure", "gain"}
    assert "white balance" in lock["refused"]["white_balance"]
    assert "camera 'cam': white_balance: the camera has no automatic white balance" in caplog.text
    assert camera.status()["error"] is None


def test_refused_manual_exposure_is_reported(v4l2):
    v4l2.options["refuse"] = {P.CAP_PROP_AUTO_EXPOSURE}
    v4l2.options["controls"] = {
        P.CAP_PROP_AUTO_EXPOSURE: 3,
        P.CAP_PROP_EXPOSURE: 100.0,
        P.CAP_PROP_GAIN: 40.0,
        P.CAP_PROP_AUTO_WB: 1,
        P.CAP_PROP_WB_TEMPERATURE: 4000.0,
    }
    camera = v4l2_camera()
    camera.frame()
    lock = camera.status()["lock"]
    assert "manual exposure" in lock["refused"]["exposure"] and "exposure" not in lock["locked"]
    assert set(lock["locked"]) == {"gain", "white_balance"}


def test_clamped_value_is_reported_as_the_driver_keeps_it(v4l2):
    class Clamping(FakeCapture):
        def set(self, prop, value):
            return super().set(prop, min(value, 120.0) if prop == P.CAP_PROP_EXPOSURE else value)

    v4l2.options["kind"] = Clamping
    camera = v4l2_camera("exposure = 500\n")
    camera.frame()
    assert camera.status()["lock"]["locked"]["exposure"] == 120.0


def test_reopen_sets_the_held_values_again_without_settling(v4l2):
    camera = v4l2_camera()
    camera.frame()
    held = camera.status()["lock"]["locked"]
    v4l2[0].fail_reads = True
    with pytest.raises(RobotError, match=r"camera 'cam': no frame from '/dev/video0'"):
        camera.frame()
    assert v4l2[0].released and not camera.status()["open"] and camera.status()["error"]
    camera.frame()  # reopened
    again = v4l2[1]
    assert again.written(P.CAP_PROP_AUTO_EXPOSURE) == [1] and again.written(P.CAP_PROP_AUTO_WB) == [0]
    assert again.written(P.CAP_PROP_EXPOSURE) == [held["exposure"]]
    assert camera.status()["lock"]["how"] == "reapplied" and camera.status()["error"] is None


def test_relock_measures_again(v4l2):
    camera = v4l2_camera()
    camera.frame()
    camera.relock()
    camera.frame()
    assert v4l2[1].written(P.CAP_PROP_AUTO_EXPOSURE) == [3, 1] and camera.status()["lock"]["how"] == "settled"


def test_open_failure_is_a_clear_error_in_status(monkeypatch):
    class Closed(FakeCapture):
        def isOpened(self):
            return False

    monkeypatch.setattr(cv2, "VideoCapture", lambda device, backend=None: Closed(device, backend))
    camera = v4l2_camera(device="2", key="index")
    with pytest.raises(RobotError, match=r"camera 'cam': cannot open 2 .*'video' group"):
        camera.frame()
    assert "cannot open" in camera.status()["error"] and not camera.status()["open"]


def test_grey_frames_become_bgr(v4l2):
    v4l2.options["image"] = np.arange(12, dtype=np.uint8).reshape(3, 4)
    frame = v4l2_camera().frame()
    assert frame.shape == (3, 4, 3) and frame.dtype == np.uint8 and (frame[:, :, 0] == frame[:, :, 2]).all()


def test_to_bgr_formats():
    bgra = np.zeros((2, 3, 4), np.uint8)
    bgra[..., 2] = 200
    assert to_bgr(bgra).shape == (2, 3, 3) and to_bgr(bgra)[0, 0, 2] == 200
    assert to_bgr(np.full((2, 2, 3), 0xFF00, np.uint16))[0, 0, 0] == 0xFF
    with pytest.raises(RobotError, match="8-bit"):
        to_bgr(np.zeros((2, 2, 3), np.float32))
    with pytest.raises(RobotError, match="height x width x 3"):
        to_bgr(np.zeros((2, 2, 2), np.uint8))


# ---------------------------------------------------------------- a fake picamera2

LIBCAMERA_05 = {
    "AeEnable": (False, True, True),
    "ExposureTimeMode": (0, 1, 0),
    "ExposureTime": (1, 66666, 20000),
    "AnalogueGainMode": (0, 1, 0),
    "AnalogueGain": (1.0, 16.0, 1.0),
    "AwbEnable": (False, True, True),
    "ColourGains": (0.0, 32.0, None),
}


def fake_picamera2(monkeypatch, controls=LIBCAMERA_05, refuse=(), cameras=1, busy=False):
    """A ``picamera2`` module: one Picamera2 per camera number, recording what is asked of it."""
    module = types.ModuleType("picamera2")
    module.made = []

    class Picamera2:
        def __init__(self, camera_num=0):
            if camera_num >= cameras:
                raise IndexError("list index out of range")
            if busy:
                raise RuntimeError("Failed to acquire camera: Device or resource busy")
            self.number, self.camera_controls = camera_num, dict(controls)
            self.sets, self.frames, self.config, self.started, self.closed = [], 0, None, False, False
            module.made.append(self)

        @staticmethod
        def global_camera_info():
            return [
                {
                    "Model": "imx708",
                    "Id": f"/base/soc/i2c0mux/i2c@{n}/imx708@1a",
                    "Location": 2,
                    "Rotation": 0,
                    "Num": n,
                }
                for n in range(cameras)
            ]

        @property
        def sensor_modes(self):
            return [
                {"size": (1536, 864), "bit_depth": 10, "fps": 120.13, "format": "SRGGB10_CSI2P"},
                {"size": (4608, 2592), "bit_depth": 10, "fps": 14.35, "format": "SRGGB10_CSI2P"},
            ]

        def create_video_configuration(self, main=None, **more):
            return {"use": "video", "main": main, **more}

        def configure(self, config):
            self.config = config

        def start(self):
            self.started = True

        def stop(self):
            self.started = False

        def close(self):
            self.closed = True

        def capture_array(self, name="main"):
            self.frames += 1
            width, height = (self.config["main"] or {}).get("size", (64, 48))
            image = np.zeros((height, width, 3), np.uint8)
            image[..., 2] = 255  # RGB888 is laid out B, G, R: this is a red picture
            return image

        def capture_metadata(self):
            return {
                "ExposureTime": 10000 + 100 * self.frames,
                "AnalogueGain": 2.5,
                "ColourGains": (1.8, 1.5),
                "Lux": 300.0,
            }

        def set_controls(self, wanted):
            bad = sorted(set(wanted) & set(refuse))
            if bad:
                raise RuntimeError(f"Control {bad[0]} is not advertised by libcamera")
            self.sets.append(dict(wanted))

    module.Picamera2 = Picamera2
    monkeypatch.setitem(sys.modules, "picamera2", module)
    return module


def pi_camera(extra=""):
    return CaptureCamera(settings(f'[camera.cam]\nkind = "picamera2"\nwarmup_frames = 2\nsettle_frames = 5\n{extra}'))


def test_picamera2_lock_sequence(monkeypatch):
    module = fake_picamera2(monkeypatch, cameras=2)
    camera = pi_camera("index = 1\nwidth = 640\nheight = 480\n")
    frame = camera.frame()
    cam = module.made[0]
    assert cam.number == 1 and cam.started and cam.config["main"] == {"format": "RGB888", "size": (640, 480)}
    assert cam.config["buffer_count"] == 4
    release, lock = cam.sets
    assert release == {"ExposureTimeMode": 0, "AnalogueGainMode": 0, "AwbEnable": True}
    exposure = 10000 + 100 * 7  # read after 2 warm-up and 5 settle frames
    assert lock == {
        "ExposureTimeMode": 1,
        "ExposureTime": exposure,
        "AnalogueGainMode": 1,
        "AnalogueGain": 2.5,
        "AwbEnable": False,
        "ColourGains": (1.8, 1.5),
    }
    status = camera.status()
    assert status["kind"] == "picamera2" and status["device"] == 1
    assert status["lock"]["locked"] == {"exposure": exposure, "gain": 2.5, "white_balance": [1.8, 1.5]}
    assert frame.dtype == np.uint8 and frame.shape == (480, 640, 3) and frame.flags.c_contiguous
    assert (frame[0, 0] == (0, 0, 255)).all()  # BGR as OpenCV wants it: red stays red


def test_picamera2_manual_values(monkeypatch):
    module = fake_picamera2(monkeypatch)
    camera = pi_camera("exposure = 8000\ngain = 4\ncolour_gains = [2.0, 1.2]\n")
    camera.frame()
    (fixed,) = module.made[0].sets  # nothing left automatic: no release, no settling
    assert fixed["ExposureTime"] == 8000 and fixed["AnalogueGain"] == 4.0 and fixed["ColourGains"] == (2.0, 1.2)
    assert fixed["ExposureTimeMode"] == fixed["AnalogueGainMode"] == 1 and fixed["AwbEnable"] is False
    assert module.made[0].frames == 2 + 7 + 1  # warm-up, flush after the lock, the frame


def test_picamera2_before_libcamera_05_uses_aeenable(monkeypatch):
    older = {key: value for key, value in LIBCAMERA_05.items() if not key.endswith("Mode")}
    module = fake_picamera2(monkeypatch, controls=older)
    pi_camera().frame()
    release, lock = module.made[0].sets
    assert release == {"AeEnable": True, "AwbEnable": True}
    assert lock == {
        "AeEnable": False,
        "ExposureTime": 10700,
        "AnalogueGain": 2.5,
        "AwbEnable": False,
        "ColourGains": (1.8, 1.5),
    }


def test_picamera2_before_libcamera_05_manual_exposure_leaves_gain_to_the_automatic(monkeypatch):
    older = {key: value for key, value in LIBCAMERA_05.items() if not key.endswith("Mode")}
    module = fake_picamera2(monkeypatch, controls=older)
    pi_camera("exposure = 5000\nlock = false\n").frame()
    assert module.made[0].sets == [{"AeEnable": True, "AwbEnable": True}, {"ExposureTime": 5000}]


def test_picamera2_refused_controls_are_reported(monkeypatch):
    mono = {key: value for key, value in LIBCAMERA_05.items() if key not in ("ColourGains", "AwbEnable")}
    module = fake_picamera2(monkeypatch, controls=mono, refuse={"AnalogueGain"})
    camera = pi_camera()
    camera.frame()
    lock = camera.status()["lock"]
    assert set(lock["locked"]) == {"exposure"}
    assert "does not offer AwbEnable" in lock["refused"]["white_balance"]
    assert "picamera2 refused" in lock["refused"]["gain"]
    assert module.made[0].sets[-1]["ExposureTime"] == 10700


def test_picamera2_reopen_relocks(monkeypatch):
    module = fake_picamera2(monkeypatch)
    camera = pi_camera()
    camera.frame()
    module.made[0].capture_array = lambda name="main": (_ for _ in ()).throw(RuntimeError("camera timed out"))
    with pytest.raises(RobotError, match=r"camera 'cam': picamera2 camera 0 failed: camera timed out"):
        camera.frame()
    assert module.made[0].closed
    camera.frame()
    assert module.made[1].sets == [module.made[0].sets[-1]] and camera.status()["lock"]["how"] == "reapplied"


def test_picamera2_missing_camera(monkeypatch):
    fake_picamera2(monkeypatch, cameras=1)
    camera = pi_camera("index = 3\n")
    with pytest.raises(RobotError, match=r"cannot open picamera2 camera 3: list index out of range"):
        camera.frame()


def test_picamera2_not_installed_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)
    camera = pi_camera()
    with pytest.raises(RobotError) as error:
        camera.frame()
    message = str(error.value)
    assert 'kind = "picamera2" needs the picamera2 package' in message
    assert "sudo apt install python3-picamera2" in message and "--system-site-packages" in message
    assert camera.status()["error"] == message


def test_picamera2_without_libcamera_bindings(monkeypatch, tmp_path):
    (tmp_path / "picamera2").mkdir()
    (tmp_path / "picamera2" / "__init__.py").write_text("import libcamera\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "picamera2", raising=False)
    monkeypatch.setitem(sys.modules, "libcamera", None)
    with pytest.raises(RobotError, match=r"libcamera's Python bindings are not visible.*python3-libcamera"):
        pi_camera().frame()


# ---------------------------------------------------------------- V4L2 ioctls, answered by a fake kernel


def fourcc(text):
    return int.from_bytes(text.encode(), "little")


class FakeKernel:
    """Answers QUERYCAP / ENUM_FMT / ENUM_FRAMESIZES, packing at the offsets of linux/videodev2.h."""

    def __init__(self, caps=0x84200001, device_caps=0x04200001, formats=()):
        self.caps, self.device_caps, self.formats = caps, device_caps, list(formats)

    def __call__(self, fd, request, buffer):
        if request == VIDIOC_QUERYCAP:
            assert len(buffer) == 104
            struct.pack_into(
                "=16s32s32sIII",
                buffer,
                0,
                b"uvcvideo",
                b"HD Webcam C525",
                b"usb-0000:01:00.0-1.2",
                0x060100,
                self.caps,
                self.device_caps,
            )
        elif request == VIDIOC_ENUM_FMT:
            assert len(buffer) == 64
            index, kind = struct.unpack_from("=II", buffer, 0)
            assert kind == 1  # V4L2_BUF_TYPE_VIDEO_CAPTURE
            if index >= len(self.formats):
                raise OSError(errno.EINVAL, "Invalid argument")
            code, description, flags, _ = self.formats[index]
            struct.pack_into("=I", buffer, 8, flags)
            struct.pack_into("=32s", buffer, 12, description.encode())
            struct.pack_into("=I", buffer, 44, fourcc(code))
        elif request == VIDIOC_ENUM_FRAMESIZES:
            assert len(buffer) == 44
            index, code = struct.unpack_from("=II", buffer, 0)
            sizes = next(s for c, _, _, s in self.formats if fourcc(c) == code)
            if index >= len(sizes):
                raise OSError(errno.EINVAL, "Invalid argument")
            kind, *numbers = sizes[index]
            struct.pack_into(f"=I{len(numbers)}I", buffer, 8, kind, *numbers)
        else:
            raise OSError(errno.ENOTTY, "Inappropriate ioctl for device")


def test_describe_parses_the_kernel_structures():
    kernel = FakeKernel(
        formats=[
            ("MJPG", "Motion-JPEG", 1, [(1, 1280, 720), (1, 640, 480)]),
            ("YUYV", "YUYV 4:2:2", 0, [(3, 160, 1920, 8, 120, 1080, 4)]),
        ]
    )
    info = describe(-1, kernel)
    assert (info.driver, info.card, info.bus_info) == ("uvcvideo", "HD Webcam C525", "usb-0000:01:00.0-1.2")
    assert info.captures_video and info.capabilities == 0x04200001
    mjpg, yuyv = info.formats
    assert (mjpg.fourcc, mjpg.description, mjpg.compressed, mjpg.sizes) == (
        "MJPG",
        "Motion-JPEG",
        True,
        [(1280, 720), (640, 480)],
    )
    assert yuyv.size_range == "160x120 to 1920x1080, step 8x4" and not yuyv.compressed


def test_metadata_node_has_no_formats_and_is_not_video():
    info = describe(-1, FakeKernel(device_caps=0x04800000))  # META_CAPTURE | STREAMING
    assert not info.captures_video and info.formats == []


def test_suggested_size():
    assert suggest_size([(1280, 720), (640, 480)]) == (640, 480)
    assert suggest_size([(320, 240), (1920, 1080), (800, 600)]) == (800, 600)
    assert suggest_size([(320, 240), (160, 120)]) == (320, 240)
    assert suggest_size([]) is None


# ---------------------------------------------------------------- listing


def webcam(sizes=((1280, 720), (640, 480))):
    return DeviceInfo(
        "uvcvideo",
        "HD Webcam C525",
        "usb-0000:01:00.0-1.2",
        0x04200001,
        [PixelFormat(fourcc("MJPG"), "MJPG", "Motion-JPEG", True, list(sizes))],
    )


def fake_tree(tmp_path, nodes):
    """/dev/videoN files, their sysfs names, and a by-id link for video0."""
    dev, sys_dir = tmp_path / "dev", tmp_path / "sys"
    (dev / "v4l" / "by-id").mkdir(parents=True)
    for number, name in nodes.items():
        (dev / f"video{number}").write_text("")
        (sys_dir / f"video{number}").mkdir(parents=True)
        (sys_dir / f"video{number}" / "name").write_text(name + "\n")
    (dev / "v4l" / "by-id" / "usb-Cam_C525-video-index0").symlink_to(dev / "video0")
    (dev / "v4l" / "by-id" / "usb-Cam_C525-video-index1").symlink_to(dev / "video1")
    return dev, sys_dir


def test_listing_v4l2_nodes(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)
    dev, sys_dir = fake_tree(tmp_path, {0: "C525 webcam", 1: "C525 webcam", 10: "unicam-image", 2: "denied"})
    answers = {
        "video0": webcam(),
        "video1": DeviceInfo("uvcvideo", "C525", "usb", 0x04800000),
        "video10": DeviceInfo("unicam", "unicam", "platform:fe801000.csi", 0x04200001),
    }

    def query(path):
        name = path.rsplit("/", 1)[1]
        if name == "video2":
            raise PermissionError(errno.EACCES, "Permission denied")
        return answers[name]

    found = list_cameras(dev, sys_dir, query)
    assert [(e["kind"], e["usable"]) for e in found] == [
        ("v4l2", True),
        ("v4l2", False),
        ("v4l2", False),
        ("picamera2", False),
    ]
    by_device = {e.get("device", "picamera2").rsplit("/", 1)[-1]: e for e in found}
    assert "video1" not in by_device  # the metadata node
    cam = by_device["video0"]
    assert cam["name"] == "C525 webcam" and cam["stable_path"].endswith("usb-Cam_C525-video-index0")
    assert cam["config"] == ["[camera.NAME]", f'device = "{cam["stable_path"]}"', "width = 640", "height = 480"]
    assert cam["formats"][0]["sizes"] == ["1280x720", "640x480"]
    assert "video' group" in by_device["video2"]["why"]
    assert by_device["video10"]["pipeline"]
    assert "python3-picamera2" in by_device["picamera2"]["why"]  # a Pi camera is there, picamera2 is not

    lines = camera_lines(found)
    assert lines[0].endswith("video0: C525 webcam (uvcvideo, usb-0000:01:00.0-1.2)")
    assert "    MJPG (Motion-JPEG): 1280x720, 640x480" in lines
    assert "    to use it: [camera.NAME]" in lines and any('device = "' in line for line in lines)
    assert any("1 Raspberry Pi camera pipeline node(s)" in line and 'kind = "picamera2"' in line for line in lines)
    assert any(line.endswith("video2: permission denied (is the user in the 'video' group?)") for line in lines)


def test_listing_without_a_pi_camera_does_not_mention_picamera2(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)
    dev, sys_dir = fake_tree(tmp_path, {0: "C525 webcam"})
    found = list_cameras(dev, sys_dir, lambda path: webcam())
    assert [e["kind"] for e in found] == ["v4l2"]


def test_listing_picamera2_cameras(tmp_path, monkeypatch):
    module = fake_picamera2(monkeypatch, cameras=2)
    found = list_cameras(tmp_path / "none", tmp_path / "none", lambda path: webcam())
    assert [(e["kind"], e["index"], e["name"]) for e in found] == [("picamera2", n, "imx708") for n in (0, 1)]
    assert found[1]["modes"] == ["1536x864 10-bit 120.1 fps", "4608x2592 10-bit 14.3 fps"]
    assert found[1]["config"] == ["[camera.NAME]", 'kind = "picamera2"', "index = 1", "width = 640", "height = 480"]
    assert all(camera.closed for camera in module.made)
    lines = camera_lines(found)
    assert "picamera2 camera 1: imx708 (/base/soc/i2c0mux/i2c@1/imx708@1a)" in lines
    assert "    sensor modes: 1536x864 10-bit 120.1 fps, 4608x2592 10-bit 14.3 fps" in lines
    assert '               kind = "picamera2"' in lines


def test_listing_a_busy_picamera2_still_lists_it(tmp_path, monkeypatch):
    fake_picamera2(monkeypatch, busy=True)
    (entry,) = list_cameras(tmp_path / "none", tmp_path / "none")
    assert entry["usable"] and "Device or resource busy" in entry["modes_error"]


def test_nothing_found(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)
    assert list_cameras(tmp_path, tmp_path) == []
    assert camera_lines([]) == ["no usable camera found"]
