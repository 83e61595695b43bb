"""What a worker process keeps across cells: loaded avatars, clips, fitted styles.

:data:`PROCESS_INPUTS` is the per-process cache every executor's worker uses (a pool
process, a Ray worker process): cells of the same avatar, clip or style loaded there
before reuse the loaded objects, keyed by the inputs' content digests (never by path), so
a cached object is the one a fresh load gives. Fitted styles also go through the try-on's
disk cache (:func:`runtime.tryon.fit_style`: ``<swaycam cache>/tryon`` on each machine).

Inputs shipped to another machine (Ray with an address) arrive as bytes
(:func:`bundle`) and are written once per machine under ``<swaycam cache>/matrix/inputs/
<digest>/`` with their original names (:func:`materialize`), so a glTF keeps its buffers
and a MakeHuman style its ``.mhmat``/``.mhclo`` beside it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path

from .axes import Cell, InputFile

#: Loaded objects kept per kind (least recently used dropped first).
CACHE_SIZE = 8


@dataclass(frozen=True, eq=False)
class Fitted:
    """A style fitted on an avatar: the try-on result, the style's label as ``swaycam
    metrics`` names it, the attachment report, the head model of the try-on's measures,
    and how it was obtained (disk cache hit, seconds)."""

    result: object
    label: str
    report: dict
    head: object
    cached: bool
    seconds: float


class _Lru(OrderedDict):
    def get_or(self, key, make):
        if key in self:
            self.move_to_end(key)
            return self[key], True
        value = make()
        self[key] = value
        while len(self) > CACHE_SIZE:
            self.popitem(last=False)
        return value, False


class Inputs:
    """The cache of one process (module doc)."""

    def __init__(self):
        self.avatars = _Lru()
        self.fits = _Lru()
        self.motions = _Lru()

    def avatar(self, inp: InputFile):
        """The loaded :class:`avatars.Avatar` of ``inp``. Raises AvatarError."""
        from avatars import load_avatar

        return self.avatars.get_or(inp.digest, lambda: load_avatar(inp.path))[0]

    def fitted(self, avatar_inp: InputFile, hair_inp: InputFile, style: str) -> Fitted:
        """``style`` (its file ``hair_inp``) tried on the avatar as ``swaycam metrics --hair``
        does it: :func:`runtime.tryon.fit_style` with the own hair hidden.
        Raises StyleError (a ValueError) with the try-on's message."""
        from ...config import looks_like_path, tryon_settings
        from ...config_sections import TryOnSection
        from ...tryon import BaseAvatar, fit_style

        def fit() -> Fitted:
            from avatars.tryon import build_head

            t0 = time.perf_counter()
            path = Path(hair_inp.path)
            result, hit = fit_style(BaseAvatar(Path(avatar_inp.path), self.avatar(avatar_inp)), path,
                                    tryon_settings(TryOnSection(hide_own_hair=True)))
            g = result.guide_report
            report = {"guides": g.candidates, "attached": g.attached, "joined": g.joined, "rejected": g.rejected}
            head = build_head(result.avatar, hide=(result.hair_instance,))
            return Fitted(result, path.stem if looks_like_path(style) else style, report, head, hit,
                          time.perf_counter() - t0)

        fitted, again = self.fits.get_or((avatar_inp.digest, hair_inp.digest, style), fit)
        return replace(fitted, cached=True, seconds=0.0) if again else fitted

    def motion(self, clip_inp: InputFile | None, clip: str, names: tuple[str, ...]):
        """The :class:`runtime.rig.MotionSetup` of a clip cell as ``swaycam metrics --motion``
        loads it (root motion kept). Raises ClipError."""
        from ...config import motion_options
        from ...rig.motion import load_motion

        def load():
            spec = clip if clip_inp is None else clip_inp.path + ("#" + "+".join(names) if names else "")
            return load_motion(spec, options=motion_options({"in_place": False}, "option"))

        key = (clip_inp.digest if clip_inp else clip, names)
        return self.motions.get_or(key, load)[0]


#: The per-process cache of every worker.
PROCESS_INPUTS = Inputs()


def bundle(inp: InputFile) -> dict[str, bytes]:
    """{name: bytes} of every file of ``inp`` (what is shipped to another machine)."""
    return {name: Path(p).read_bytes() for name, p in inp.files}


def inputs_dir() -> Path:
    """Where shipped inputs are written on a worker machine."""
    from avatars.user_cache import cache_dir

    return cache_dir() / "matrix" / "inputs"


def materialize(inp: InputFile, fetch) -> InputFile:
    """``inp`` with its files under :func:`inputs_dir` and its paths pointing there. The files
    are written once per machine (atomically: a temporary folder renamed into place);
    ``fetch()`` returns their :func:`bundle` and is called only when they are not there yet."""
    folder = inputs_dir() / inp.digest[:32]
    if not all((folder / name).is_file() for name, _ in inp.files):
        files = fetch()
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".in-", dir=folder.parent))
        for name, data in files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_bytes(data)
        try:
            os.replace(tmp, folder)
        except OSError:               # another worker put it there first
            shutil.rmtree(tmp, ignore_errors=True)
    return replace(inp, path=str(folder / inp.files[0][0]), files=tuple((n, str(folder / n)) for n, _ in inp.files))


def localize(cell: Cell, fetch) -> tuple[Cell, dict[str, str]]:
    """``cell`` with shipped inputs written locally (:func:`materialize`): ``fetch(digest)``
    returns the :func:`bundle` of an input. Returns (the local cell, {local path: original path}) so
    messages can name the original files."""
    paths = {}
    changes = {}
    for attr in ("avatar_input", "hair_input", "clip_input"):
        inp = getattr(cell, attr)
        if inp is None:
            continue
        local = materialize(inp, lambda d=inp.digest: fetch(d))
        paths[local.path] = inp.path
        changes[attr] = local
    return replace(cell, **changes), paths
