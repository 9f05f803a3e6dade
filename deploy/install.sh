#!/usr/bin/env bash
# Install robotd on a Raspberry Pi (docs/install-pi.md), from this project folder:
#
#   sudo deploy/install.sh [--prefix /opt/robotd] [--dry-run]
#
# It checks the machine first (a 64-bit OS, Python 3.11 or later) and stops with the reason before it
# changes anything. Then it installs python3-venv and python3-picamera2 (where apt has it) with apt, copies
# the project to PREFIX (unless it is there already), makes the venv with --system-site-packages (picamera2
# and libcamera come from apt: docs/cameras.md), installs robotd with the [pi] extra, creates the robotd
# user, and installs the sample config (never over an existing one), the udev rule and the systemd unit.
# It does not start the service: edit the config and run `robotd check` first.
# --dry-run prints the commands instead of running them; PYTHON=python3.12 picks another interpreter.
set -euo pipefail

prefix=/opt/robotd
dry_run=0
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
    echo "usage: deploy/install.sh [--prefix DIR] [--dry-run]" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || usage; prefix=$2; shift 2 ;;
        --dry-run) dry_run=1; shift ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option $1" >&2; usage ;;
    esac
done

refuse() {
    echo "install.sh: $*" >&2
    exit 1
}

# 1. The machine. A 64-bit kernel under a 32-bit userland (uname says aarch64, LONG_BIT says 32) is
# refused too: pip installs for the userland.
machine=$(uname -m)
bits=$(getconf LONG_BIT)
case "$machine" in
    armv6l|armv7l|armv8l|armhf|arm) bits=32 ;;
esac
if [ "$bits" != 64 ]; then
    refuse "robotd needs a 64-bit OS, and this one is 32-bit ($machine, ${bits}-bit userland):" \
        "onnxruntime, which runs the 3x3x3 solver's network, publishes no wheel for 32-bit ARM (armv7)." \
        "Install Raspberry Pi OS (64-bit) (Bookworm or newer; Raspberry Pi 3, 4, 5 or Zero 2 W) and run this again."
fi

python=${PYTHON:-python3}
command -v "$python" >/dev/null || refuse "no $python: sudo apt-get install -y python3 python3-venv"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
    refuse "robotd needs Python 3.11 or later; $python is $("$python" -c 'import platform; print(platform.python_version())')" \
        "(Raspberry Pi OS Bookworm has 3.11)"
[ -f "$source_dir/pyproject.toml" ] && [ -f "$source_dir/models/cube3.onnx" ] ||
    refuse "$source_dir is not a complete robotd project folder (pyproject.toml and models/cube3.onnx are needed)"

if [ "$dry_run" = 0 ] && [ "$(id -u)" != 0 ]; then
    refuse "installing needs root: run it with sudo (or with --dry-run to see the commands)"
fi

run() {
    if [ "$dry_run" = 1 ]; then
        echo "+ $*"
    else
        "$@"
    fi
}

# 2. System packages: the venv module, a C compiler (two-phase compiles its search loops on first use),
#    and picamera2 with libcamera where apt has them (a Pi).
packages=(python3-venv gcc)
extra=""
if apt-cache show python3-picamera2 >/dev/null 2>&1; then
    packages+=(python3-picamera2)
    extra="[pi]"
else
    echo "install.sh: apt has no python3-picamera2 here: installing without the [pi] extra (V4L2 cameras only)" >&2
fi
run apt-get install -y "${packages[@]}"

# 3. The code and its venv; the venv sees the system's packages, for picamera2 and libcamera.
if [ "$(realpath -m "$source_dir")" != "$(realpath -m "$prefix")" ]; then
    run mkdir -p "$prefix"
    run cp -a "$source_dir"/* "$prefix/"
fi
run "$python" -m venv --system-site-packages "$prefix/.venv"
run "$prefix/.venv/bin/pip" install --upgrade pip
run "$prefix/.venv/bin/pip" install -e "$prefix$extra"

# 4. The user, the config, the udev rule and the unit.
if ! id robotd >/dev/null 2>&1; then
    run useradd --system --home /var/lib/robotd --shell /usr/sbin/nologin robotd
fi
run usermod -aG dialout,video robotd
run mkdir -p /etc/robotd
if [ ! -e /etc/robotd/robotd.toml ]; then
    run cp "$prefix/deploy/robotd.toml" /etc/robotd/robotd.toml
fi
run cp "$prefix/deploy/99-robotd.rules" /etc/udev/rules.d/99-robotd.rules
run udevadm control --reload
run udevadm trigger --subsystem-match=tty
# the unit names /opt/robotd: another prefix is written into it
if [ "$dry_run" = 1 ]; then
    echo "+ sed 's#/opt/robotd#$prefix#g' $prefix/deploy/robotd.service > /etc/systemd/system/robotd.service"
else
    sed "s#/opt/robotd#$prefix#g" "$prefix/deploy/robotd.service" >/etc/systemd/system/robotd.service
fi
run systemctl daemon-reload

cat <<EOF
robotd is installed in $prefix. Next:
  sudoedit /etc/robotd/robotd.toml      # [serial] port, [camera.NAME], [rig]
  sudo -u robotd $prefix/.venv/bin/robotd check --config /etc/robotd/robotd.toml
  sudo systemctl enable --now robotd    # then calibrate in the dashboard's Calibration tab
EOF
