"""Installing on a Pi as docs/install-pi.md says: ``deploy/install.sh`` refuses a 32-bit OS before anything
else, its dry run prints the venv with ``--system-site-packages`` and the ``[pi]`` extra, the doc's copy
commands run here, the systemd unit verifies, and the udev rule matches the board the sample config names.

The machine is faked with shims on PATH (``uname``, ``getconf``, ``apt-cache``); nothing is installed."""

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "deploy" / "install.sh"
DOC = (ROOT / "docs" / "install-pi.md").read_text()


def shims(folder: Path, machine: str, bits: int, picamera2: bool = True) -> dict:
    """An environment whose ``uname -m``, ``getconf LONG_BIT`` and ``apt-cache show`` answer as given."""
    folder.mkdir(exist_ok=True)
    for name, body in (
        ("uname", f'[ "$1" = -m ] && echo {machine} || exec /bin/uname "$@"'),
        ("getconf", f'[ "$1" = LONG_BIT ] && echo {bits} || exec /usr/bin/getconf "$@"'),
        ("apt-cache", f"exit {0 if picamera2 else 100}"),
    ):
        shim = folder / name
        shim.write_text(f"#!/bin/sh\n{body}\n")
        shim.chmod(0o755)
    return {"PATH": f"{folder}:/usr/bin:/bin", "PYTHON": sys.executable, "HOME": str(folder)}


def install(script: Path, env: dict, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(script), *options], env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize(
    "machine, bits",
    [("armv7l", 32), ("armv6l", 32), ("aarch64", 32)],  # the last: a 64-bit kernel under a 32-bit userland
)
def test_a_32_bit_os_is_refused_before_anything_with_the_reason(tmp_path, machine, bits):
    done = install(SCRIPT, shims(tmp_path / "bin", machine, bits), "--dry-run", "--prefix", str(tmp_path / "opt"))
    assert done.returncode == 1 and done.stdout == ""  # not one command, even as a dry run
    assert done.stderr.startswith(f"install.sh: robotd needs a 64-bit OS, and this one is 32-bit ({machine}, 32-bit")
    assert "onnxruntime" in done.stderr and "no wheel for 32-bit ARM (armv7)" in done.stderr
    assert "Raspberry Pi OS (64-bit)" in done.stderr
    assert not (tmp_path / "opt").exists()


def test_a_64_bit_pi_gets_the_venv_with_system_packages_and_the_pi_extra(tmp_path):
    prefix = tmp_path / "opt" / "robotd"
    done = install(SCRIPT, shims(tmp_path / "bin", "aarch64", 64), "--dry-run", "--prefix", str(prefix))
    assert done.returncode == 0, done.stderr
    commands = [line[2:] for line in done.stdout.splitlines() if line.startswith("+ ")]
    assert commands[0] == "apt-get install -y python3-venv gcc python3-picamera2"
    assert f"{sys.executable} -m venv --system-site-packages {prefix}/.venv" in commands
    assert f"{prefix}/.venv/bin/pip install -e {prefix}[pi]" in commands
    assert f"sed 's#/opt/robotd#{prefix}#g' {prefix}/deploy/robotd.service > /etc/systemd/system/robotd.service" in (
        commands
    )
    assert commands.index("mkdir -p /etc/robotd") < commands.index("systemctl daemon-reload")
    assert not prefix.exists()  # a dry run changes nothing
    assert "enable --now robotd" in done.stdout and "Calibration tab" in done.stdout


def test_without_picamera2_from_apt_the_pi_extra_is_left_out_and_said(tmp_path):
    prefix = tmp_path / "opt"
    done = install(SCRIPT, shims(tmp_path / "bin", "x86_64", 64, picamera2=False), "--dry-run", "--prefix", str(prefix))
    assert done.returncode == 0, done.stderr
    assert f"+ {prefix}/.venv/bin/pip install -e {prefix}\n" in done.stdout
    assert "no python3-picamera2 here: installing without the [pi] extra" in done.stderr


def test_a_real_install_needs_root_and_says_so_before_any_command(tmp_path):
    env = shims(tmp_path / "bin", "aarch64", 64)
    shim = tmp_path / "bin" / "id"
    shim.write_text('#!/bin/sh\n[ "$1" = -u ] && echo 1000 || exec /usr/bin/id "$@"\n')
    shim.chmod(0o755)
    done = install(SCRIPT, env, "--prefix", str(tmp_path / "opt"))
    assert done.returncode == 1 and done.stdout == "" and "installing needs root: run it with sudo" in done.stderr
    assert not (tmp_path / "opt").exists()


def test_an_unknown_option_is_refused_with_the_usage(tmp_path):
    done = install(SCRIPT, shims(tmp_path / "bin", "aarch64", 64), "--prefx", "/opt")
    assert (
        done.returncode == 2 and "unknown option --prefx" in done.stderr and "usage: deploy/install.sh" in done.stderr
    )


def doc_command(prefix: str) -> str:
    """The one command line of the doc that starts with ``prefix`` (its comment left out)."""
    lines = [line.strip() for line in DOC.splitlines() if line.strip().startswith(prefix)]
    assert len(lines) == 1, f"docs/install-pi.md should have one command starting {prefix!r}: {lines}"
    return re.sub(r"\s+#.*$", "", lines[0])


def test_the_docs_copy_and_install_commands_work_as_written(tmp_path):
    """The doc's ``tar czf`` on a project folder, its ``tar xzf`` on the Pi side, then the script it names,
    as a dry run: the unpacked project is complete and the venv, the virtual environment's packages and
    caches did not travel."""
    project = tmp_path / "computer" / "robotd"
    for part in ("pyproject.toml", "README.md", "deploy", "models/cube3.onnx", "models/cube3.json"):
        source, target = ROOT / part, project / part
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, target)
    for junk in (".venv/bin", ".git/objects", ".mypy_cache/3.11"):
        (project / junk).mkdir(parents=True)
    pi = tmp_path / "pi"
    pi.mkdir()
    env = shims(tmp_path / "bin", "aarch64", 64)
    pack = doc_command("tar czf")
    subprocess.run(["bash", "-c", pack], cwd=project, env=env, check=True, timeout=60)
    shutil.copy2(project.parent / "robotd.tar.gz", pi)  # the doc's scp
    subprocess.run(["bash", "-c", doc_command("mkdir robotd && tar xzf")], cwd=pi, env=env, check=True, timeout=60)
    unpacked = pi / "robotd"
    assert (unpacked / "models" / "cube3.onnx").read_bytes() == (ROOT / "models" / "cube3.onnx").read_bytes()
    assert not any((unpacked / junk).exists() for junk in (".venv", ".git", ".mypy_cache"))
    command = doc_command("sudo robotd/deploy/install.sh").removeprefix("sudo ").split()
    assert command == ["robotd/deploy/install.sh"]
    done = install(pi / command[0], env, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert f"+ cp -a {unpacked}/README.md" in done.stdout and " /opt/robotd/\n" in done.stdout


def test_the_install_doc_has_no_placeholder_and_names_what_a_pi_needs():
    assert "<your" not in DOC and "git clone" not in DOC
    for needed in ("--system-site-packages", '"/opt/robotd[pi]"', "32-bit", "onnxruntime", "getconf LONG_BIT"):
        assert needed in DOC, needed
    readme = (ROOT / "README.md").read_text()
    assert "deploy/install.sh" in readme and "--system-site-packages" in readme and "64-bit" in readme


def test_the_unit_verifies_with_the_prefix_the_script_writes(tmp_path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("no systemd-analyze on this machine")
    prefix = tmp_path / "opt"
    (prefix / ".venv" / "bin").mkdir(parents=True)
    (prefix / ".venv" / "bin" / "robotd").symlink_to(Path(sys.executable).parent / "robotd")
    unit = tmp_path / "robotd.service"
    unit.write_text((ROOT / "deploy" / "robotd.service").read_text().replace("/opt/robotd", str(prefix)))
    done = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


# ---------------------------------------------------------------- the board's name and the udev rule

MEGA_2560 = ("2341", "0042")
CH340 = ("1a86", "7523")


def rule_ids() -> list[tuple[str, str]]:
    text = (ROOT / "deploy" / "99-robotd.rules").read_text()
    rules = [line for line in text.splitlines() if line.startswith("SUBSYSTEM==")]
    ids = [
        (re.search(r'ATTRS\{idVendor\}=="(\w+)"', r).group(1), re.search(r'ATTRS\{idProduct\}=="(\w+)"', r).group(1))
        for r in rules
    ]
    assert all('SYMLINK+="robotd-rig"' in r for r in rules)
    return ids


def test_the_udev_rule_is_for_the_mega_2560_and_its_ch340_clones():
    assert rule_ids() == [MEGA_2560, CH340]
    text = (ROOT / "deploy" / "99-robotd.rules").read_text()
    assert "Arduino Mega 2560" in text and "Uno / Mega" not in text


def test_the_sample_config_names_the_board_the_rule_and_the_firmware_doc_name():
    port = tomllib.loads((ROOT / "deploy" / "robotd.toml").read_text())["serial"]["port"]
    vendor, product = MEGA_2560
    assert port.startswith("/dev/serial/by-id/usb-Arduino") and f"_{product}_" in port and "Uno" not in port
    assert (vendor, product) in rule_ids()
    for doc in ("docs/firmware.md", "docs/hardware.md"):
        assert f'port = "{port}"' in (ROOT / doc).read_text(), doc
