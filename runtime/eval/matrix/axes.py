"""The matrix's axes (options or a TOML file) and their expansion into cells.

Axes (TOML keys of the ``[matrix]`` table, or the options of ``swaycam matrix``):

- ``avatars``: files (.vrm/.glb/.gltf), folders (every such file in them, sorted), or the
  built-in names ``default`` / ``layered`` (the generated avatars) and ``godette`` (the shared
  assets' Godette, :data:`avatars.assets.GODETTE`);
- ``hairstyles``: ``none`` (the avatar's own hair), style names of the hair folders
  (``hair_dir``, else ``$SWAYCAM_HAIR_DIR`` and the shared assets' ``hair``), files, or
  ``all`` (every style in the hair folders);
- ``clips``: ``turn-test`` (the standard head turn), ``idle`` (the generated idle, head
  still), ``FILE#Name`` or ``FILE#A+B`` (one clip or a sequence), or ``FILE``: every clip of
  the file (a whole glTF animation library is one cell per clip);
- ``solvers``: names of :data:`solver.modes.SOLVER_NAMES`;
- settings (:class:`Settings`): ``rates`` (render rates of the fps identity, default
  :data:`runtime.replay.CHECK_RATES`), ``jittered`` ([fps, jitter, seed] triples, default
  :data:`runtime.replay.CHECK_JITTERED`), ``duration_s`` (motion seconds; default as
  ``swaycam metrics``: 4 s of head turn, a looping clip repeated to at least 4 s, a one-shot
  once) and ``settle_s`` (seconds still after the motion, default 8).

Paths may start with ``assets:`` (relative to :func:`avatars.assets.assets_dir`: presets
stay machine-independent); other relative paths in a TOML file are relative to its folder.
Errors are :class:`SpecError` (a ValueError) naming the value.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from solver.modes import SOLVER_NAMES

from ...replay import CHECK_JITTERED, CHECK_RATES

ASSETS_PREFIX = "assets:"
BUILTIN_AVATARS = ("default", "layered", "godette")
CLIP_KEYWORDS = ("turn-test", "idle")
AVATAR_SUFFIXES = (".vrm", ".glb", ".gltf")
#: Files beside a MakeHuman style that change its fit (as :data:`avatars.tryon.cache.SIDECARS`).
HAIR_SIDECARS = (".mhmat", ".mhclo")
PRESETS_DIR = Path(__file__).parent / "presets"
AXIS_KEYS = ("avatars", "hairstyles", "clips", "solvers")
SETTING_KEYS = ("rates", "jittered", "duration_s", "settle_s")


class SpecError(ValueError):
    """A matrix spec that cannot be expanded: an unknown key or name, a missing file."""


def _rate(value) -> int | float:
    v = float(value)
    if not v > 0 or v > 1000:
        raise SpecError(f"rate {value!r}: must be in (0, 1000] frames per second")
    return int(v) if v.is_integer() else v


@dataclass(frozen=True)
class Settings:
    """The run settings every cell shares (module doc); units in the names."""

    rates: tuple = CHECK_RATES
    jittered: tuple = CHECK_JITTERED
    duration_s: float | None = None
    settle_s: float = 8.0

    def __post_init__(self):
        object.__setattr__(self, "rates", tuple(_rate(r) for r in self.rates))
        jit = []
        for t in self.jittered:
            if len(t) != 3 or not 0 <= float(t[1]) < 1:
                raise SpecError(f"jittered run {list(t)!r}: expected [fps, jitter in [0, 1), seed]")
            jit.append((_rate(t[0]), float(t[1]), int(t[2])))
        object.__setattr__(self, "jittered", tuple(jit))
        if not self.rates:
            raise SpecError("rates: at least one render rate")
        if self.duration_s is not None and not float(self.duration_s) > 0:
            raise SpecError(f"duration_s {self.duration_s!r}: must be > 0 seconds")
        if not float(self.settle_s) >= 2.0:       # the settle measure reads the last 2 s
            raise SpecError(f"settle_s {self.settle_s!r}: must be >= 2 seconds")

    def as_dict(self) -> dict:
        return {"rates": list(self.rates), "jittered": [list(t) for t in self.jittered],
                "duration_s": self.duration_s, "settle_s": float(self.settle_s)}


@dataclass(frozen=True)
class Axes:
    """A matrix before expansion: the axis values as given, and the settings."""

    avatars: tuple[str, ...] = ("default",)
    hairstyles: tuple[str, ...] = ("none",)
    clips: tuple[str, ...] = ("turn-test",)
    solvers: tuple[str, ...] = ("rest-shape",)
    settings: Settings = Settings()
    hair_dir: str | None = None

    def override(self, **values) -> Axes:
        """A copy with the given (non-None) axes or settings replaced."""
        axes = {k: tuple(v) for k, v in values.items() if k in AXIS_KEYS and v}
        sets = {k: v for k, v in values.items() if k in SETTING_KEYS and v is not None}
        hair_dir = values.get("hair_dir") or self.hair_dir
        return replace(self, **axes, settings=replace(self.settings, **sets), hair_dir=hair_dir)


def preset_path(name: str) -> Path:
    """The TOML file of a checked-in preset (``quick``, ``full``). Raises SpecError."""
    p = PRESETS_DIR / f"{name}.toml"
    if not p.is_file():
        known = sorted(q.stem for q in PRESETS_DIR.glob("*.toml"))
        raise SpecError(f"no preset {name!r} (known: {', '.join(known)})")
    return p


def load_toml(path: str | Path) -> Axes:
    """The ``[matrix]`` table of a TOML file -> :class:`Axes` (relative paths made relative to
    the file's folder). Raises SpecError (unknown keys, wrong types) or OSError."""
    p = Path(path)
    try:
        doc = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{p}: {exc}") from None
    table = doc.get("matrix")
    if not isinstance(table, dict):
        raise SpecError(f"{p}: no [matrix] table")
    unknown = set(table) - set(AXIS_KEYS) - set(SETTING_KEYS) - {"hair_dir", "description"}
    if unknown:
        raise SpecError(f"{p}: unknown key(s) {', '.join(sorted(unknown))}")
    base = p.resolve().parent

    def rel(v: str) -> str:
        if not isinstance(v, str):
            raise SpecError(f"{p}: {v!r} is not a string")
        head = v.split("#", 1)[0]
        if v.startswith(ASSETS_PREFIX) or v in BUILTIN_AVATARS + CLIP_KEYWORDS + ("none", "all") \
                or Path(head).is_absolute() or not ("/" in head or Path(head).suffix):
            return v
        return str(base / v)

    axes = {}
    for k in AXIS_KEYS:
        if k in table:
            vals = table[k]
            if not isinstance(vals, list) or not vals:
                raise SpecError(f"{p}: {k} must be a non-empty list")
            axes[k] = tuple(rel(v) for v in vals) if k != "solvers" else tuple(vals)
    sets = {k: table[k] for k in SETTING_KEYS if k in table}
    hair_dir = rel(table["hair_dir"]) if "hair_dir" in table else None
    return Axes(**axes, settings=Settings(**sets), hair_dir=hair_dir)


def resolve_path(spec: str) -> Path:
    """``assets:REL`` -> the shared asset's path; anything else as a path (``~`` expanded)."""
    if spec.startswith(ASSETS_PREFIX):
        from avatars.assets import asset_path

        return asset_path(*Path(spec[len(ASSETS_PREFIX):]).parts)
    return Path(spec).expanduser()


@dataclass(frozen=True)
class InputFile:
    """An input of a cell: the main file and every file it reads beside it (glTF buffers and
    images, a style's ``.mhmat``/``.mhclo``), as (name relative to the main file's folder,
    path); ``digest`` is the hex SHA-256 over those names and bytes."""

    kind: str
    path: str
    files: tuple[tuple[str, str], ...]
    digest: str


_DIGESTS: dict[tuple, InputFile] = {}


def input_file(kind: str, path: Path) -> InputFile:
    """The :class:`InputFile` of ``path`` (read and hashed once per process and file state)."""
    path = Path(path)
    st = path.stat()
    memo = (kind, str(path), st.st_mtime_ns, st.st_size)
    if memo in _DIGESTS:
        return _DIGESTS[memo]
    files = [(path.name, str(path))]
    if path.suffix.lower() == ".gltf":
        try:
            doc = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            doc = {}
        for entry in (doc.get("buffers") or []) + (doc.get("images") or []):
            uri = entry.get("uri") if isinstance(entry, dict) else None
            if uri and not uri.startswith("data:") and (path.parent / uri).is_file():
                files.append((uri, str(path.parent / uri)))
    if kind == "hair":
        files += [(path.with_suffix(s).name, str(path.with_suffix(s))) for s in HAIR_SIDECARS
                  if path.with_suffix(s).is_file()]
    h = hashlib.sha256(kind.encode())
    for name, p in files:
        h.update(name.encode() + b"\0" + Path(p).read_bytes() + b"\0")
    out = InputFile(kind, str(path), tuple(files), h.hexdigest())
    _DIGESTS[memo] = out
    return out


@dataclass(frozen=True)
class Cell:
    """One cell: the axis values as the spec names them (the row's identity columns), the
    run settings and the resolved inputs. ``key`` (:func:`runtime.eval.matrix.key.cell_key`)
    is filled by :func:`expand`."""

    avatar: str
    hairstyle: str
    clip: str
    solver: str
    settings: Settings
    avatar_input: InputFile
    hair_input: InputFile | None = None
    clip_input: InputFile | None = None
    clip_names: tuple[str, ...] = ()
    hair_dir: str | None = field(default=None, compare=False)
    key: str = ""

    @property
    def label(self) -> str:
        return f"{self.avatar} · {self.hairstyle} · {self.clip} · {self.solver}"


def avatar_files(spec: str) -> list[Path]:
    """The files of an ``avatars`` value (module doc). Raises SpecError."""
    if spec in ("default", "layered"):
        from avatars.generate import default_avatar_path, layered_avatar_path

        return [layered_avatar_path() if spec == "layered" else default_avatar_path()]
    if spec == "godette":
        from avatars.assets import GODETTE, find_asset

        p = find_asset(*GODETTE)
        if p is None:
            raise SpecError("avatar 'godette': the shared assets have no " + "/".join(GODETTE))
        return [p]
    p = resolve_path(spec)
    if p.is_dir():
        found = sorted(q for q in p.iterdir() if q.suffix.lower() in AVATAR_SUFFIXES and q.is_file())
        if not found:
            raise SpecError(f"avatar folder {spec!r} holds no {'/'.join(AVATAR_SUFFIXES)} file")
        return found
    if not p.is_file():
        raise SpecError(f"avatar {spec!r}: no such file or built-in name ({', '.join(BUILTIN_AVATARS)})")
    return [p]


def _styles(spec: str, hair_dir: str | None) -> list[tuple[str, Path | None]]:
    from ...tryon import HairStyles, StyleError

    if spec == "none":
        return [("none", None)]
    styles = HairStyles(hair_dir)
    if spec == "all":
        return list(styles.styles().items())
    try:
        return [(spec, styles.resolve(str(resolve_path(spec)) if spec.startswith(ASSETS_PREFIX) else spec))]
    except StyleError as exc:
        raise SpecError(f"hairstyle {exc}") from None


def _clips(spec: str) -> list[tuple[str, Path | None, tuple[str, ...]]]:
    from avatars.clips import ClipError, load_file, parse_spec

    if spec in CLIP_KEYWORDS:
        return [(spec, None, ())]
    head, sep, names = spec.rpartition("#") if "#" in spec else (spec, "", "")
    try:
        parsed = parse_spec(f"{resolve_path(head)}{sep}{names}")
    except ClipError as exc:
        raise SpecError(str(exc)) from None
    if not parsed.path.is_file():
        raise SpecError(f"clip {spec!r}: no such file or keyword ({', '.join(CLIP_KEYWORDS)})")
    if parsed.names:
        return [(spec, parsed.path, parsed.names)]
    try:
        clips = load_file(parsed.path)
    except ClipError as exc:
        raise SpecError(str(exc)) from None
    if len(clips) == 1:
        return [(spec, parsed.path, ())]
    return [(f"{spec}#{c.name}", parsed.path, (c.name,)) for c in clips]


def expand(axes: Axes) -> list[Cell]:
    """Every cell of ``axes`` in axis order (avatar, hairstyle, clip, solver), keys filled.

    Raises:
        SpecError: an unknown solver, name or missing file (nothing is run then).
    """
    from .key import cell_key, code_version

    bad = [s for s in axes.solvers if s not in SOLVER_NAMES]
    if bad:
        raise SpecError(f"solver {bad[0]!r} is not one of {', '.join(SOLVER_NAMES)}")
    avatars = []
    for spec in dict.fromkeys(axes.avatars):
        files = avatar_files(spec)
        avatars += [(spec if len(files) == 1 and not resolve_path(spec).is_dir() else str(f), f) for f in files]
    styles = [s for spec in dict.fromkeys(axes.hairstyles) for s in _styles(spec, axes.hair_dir)]
    clips = [c for spec in dict.fromkeys(axes.clips) for c in _clips(spec)]
    code = code_version()
    cells = []
    for a_label, a_path in avatars:
        a_in = input_file("avatar", a_path)
        for h_label, h_path in styles:
            h_in = input_file("hair", h_path) if h_path is not None else None
            for c_label, c_path, names in clips:
                c_in = input_file("clip", c_path) if c_path is not None else None
                for solver in dict.fromkeys(axes.solvers):
                    cell = Cell(a_label, h_label, c_label, solver, axes.settings, a_in, h_in, c_in, names,
                                axes.hair_dir)
                    cells.append(replace(cell, key=cell_key(cell, code)))
    return list({c.key: c for c in cells}.values())      # a file named twice is one cell
