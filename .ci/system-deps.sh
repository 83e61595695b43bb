#!/bin/sh
# Installs the Debian/Ubuntu packages swaycam needs, only where they are missing.
#
#   sh .ci/system-deps.sh run    what running needs (make run): Mesa EGL + llvmpipe for headless
#                                OpenGL, libGL/glib for OpenCV, venv for Python
#   sh .ci/system-deps.sh test   that, and what only the tests need (make test): Xvfb, so the
#                                window backend is tested without a screen; Chromium for the
#                                render comparison with three-vrm (tests/render/test_compare_threevrm.py;
#                                headless, software WebGL) and, with chromium-driver, the control
#                                panel's browser tests (selenium drives this Chromium; no browser
#                                is downloaded); Node.js + npm (the three-vrm references install
#                                their npm packages on first use; checked by command, since Node.js
#                                may come from elsewhere, e.g. NodeSource, with npm inside); espeak-ng
#                                and sox, which make the lip-sync tests' speech (tests/tracking/audio).
#   Both levels: libportaudio2, the PortAudio library sounddevice needs for --audio (microphone).
set -e
level=${1:-run}
run_pkgs="libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri libgles2 libglib2.0-0 libportaudio2 python3-venv"
case "$level" in
    run) pkgs=$run_pkgs ;;
    test) pkgs="$run_pkgs xvfb chromium chromium-driver espeak-ng sox" ;;
    *) echo "usage: sh .ci/system-deps.sh run|test" >&2; exit 2 ;;
esac
need=""
for pkg in $pkgs; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need="$need $pkg"
done
if [ "$level" = test ]; then
    command -v npm >/dev/null 2>&1 || need="$need nodejs npm"
fi
# python3-venv is only needed when the interpreter lacks a working venv module.
case "$need" in *python3-venv*) python3 -c 'import venv, ensurepip' 2>/dev/null && need=$(echo "$need" | sed 's/python3-venv//');; esac
need=$(echo "$need" | xargs)
[ -z "$need" ] && exit 0
command -v apt-get >/dev/null 2>&1 || { echo "swaycam: please install: $need" >&2; exit 1; }
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "swaycam: installing system packages ($level): $need"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need
