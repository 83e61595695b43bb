"""What an audit covers: styles × avatars, each entry with its two matrix cells.

An :class:`AuditSpec` names the avatars (the matrix's avatar values: ``default``,
``layered``, ``godette``, files, folders), the hair folders, whether the procedural corpus
joins them, an optional subset of style names, the fast clip and the run settings.
:func:`plan` writes the corpus into ``OUT/corpus`` (deterministic bytes, so the cells' keys
do not change between audits) and returns one :class:`Entry` per (style, avatar) in style
order, then avatar order.

Errors: :class:`runtime.eval.matrix.axes.SpecError` (a ValueError) naming the value: an
unknown avatar or clip, a style name no folder has, two folders with the same style name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..matrix.axes import Axes, Cell, Settings, SpecError, expand

#: The fast body clip of an audit (shared animation library; issue 33 asks for "a fast clip").
FAST_CLIP = "assets:anim/ual/AnimationLibrary_Godot_Standard.gltf#Sprint_Loop"
#: Render rates of the fps identity: the brief's two, no jittered runs (module doc of the package).
RATES = (30, 120)
#: The avatars of a default audit (``godette`` when the shared assets have her).
DEFAULT_AVATARS = ("default", "layered", "godette")
CORPUS = "corpus"


@dataclass(frozen=True)
class AuditSpec:
    """An audit's inputs (module doc). ``hair_dirs`` None: the run's hair folders
    (:class:`runtime.tryon.HairStyles`). ``clip`` None: the head turn only."""

    avatars: tuple[str, ...] = DEFAULT_AVATARS
    hair_dirs: tuple[str, ...] | None = None
    corpus: bool = True
    styles: tuple[str, ...] = ()
    clip: str | None = FAST_CLIP
    settings: Settings = field(default_factory=lambda: Settings(rates=RATES, jittered=()))


@dataclass(frozen=True)
class Entry:
    """One (style, avatar) of the audit: the style's name, file and folder (``source``:
    "shared", "corpus" or the folder's name), the avatar as the spec names it and its file,
    and its matrix cells (``turn``: the head turn; ``clip``: the fast clip or None)."""

    style: str
    style_path: Path
    folder: Path
    source: str
    avatar: str
    avatar_path: Path
    turn: Cell
    clip: Cell | None

    @property
    def cells(self) -> list[Cell]:
        return [c for c in (self.turn, self.clip) if c is not None]

    @property
    def avatar_name(self) -> str:
        """The avatar as the page shows it: a built-in name, or the file's stem."""
        return self.avatar if self.avatar in ("default", "layered", "godette") else self.avatar_path.stem


def hair_folders(spec: AuditSpec, out: Path) -> list[tuple[Path, str]]:
    """(folder, source) of every hair folder of ``spec``, the corpus (written now) last."""
    from avatars.assets import assets_dir
    from avatars.hair.procedural import write_corpus

    from ...tryon import HairStyles

    shared = (assets_dir() / "hair").resolve()
    if spec.hair_dirs is None:
        folders = HairStyles().folders
    else:
        folders = [Path(f).expanduser() for f in spec.hair_dirs]
        missing = [str(f) for f in folders if not f.is_dir()]
        if missing:
            raise SpecError(f"hair folder {missing[0]!r} does not exist")
    out_folders = [(f, "shared" if f.resolve() == shared else f.name) for f in folders]
    if spec.corpus:
        corpus = Path(out) / CORPUS
        write_corpus(corpus)
        out_folders.append((corpus, "corpus"))
    return out_folders


def _avatars(spec: AuditSpec) -> tuple[str, ...]:
    """``spec.avatars``, with the default audit's ``godette`` left out where the shared
    assets do not have her (a spec naming her on purpose still fails)."""
    if spec.avatars != DEFAULT_AVATARS:
        return spec.avatars
    from avatars.assets import GODETTE, find_asset

    return spec.avatars if find_asset(*GODETTE) is not None else spec.avatars[:2]


def plan(spec: AuditSpec, out: str | Path) -> list[Entry]:
    """The entries of ``spec`` (module doc); the corpus is written under ``out``.

    Raises:
        SpecError: an unknown avatar, clip or style, or a style name in two folders.
    """
    from ...tryon import HairStyles

    styles: dict[str, tuple[Path, Path, str]] = {}
    for folder, source in hair_folders(spec, Path(out)):
        for name, path in HairStyles(folder).styles().items():
            if name in styles:
                raise SpecError(f"style {name!r} is in two hair folders: {styles[name][1]} and {folder}")
            styles[name] = (path, folder, source)
    if spec.styles:
        unknown = [s for s in spec.styles if s not in styles]
        if unknown:
            raise SpecError(f"no style {unknown[0]!r} in the hair folders (styles: {', '.join(styles) or 'none'})")
        styles = {s: styles[s] for s in dict.fromkeys(spec.styles)}
    if not styles:
        raise SpecError("no style in the hair folders")
    avatars = _avatars(spec)
    clips = ("turn-test",) + ((spec.clip,) if spec.clip else ())
    entries = []
    for name, (path, folder, source) in styles.items():
        cells = expand(Axes(avatars=avatars, hairstyles=(name,), clips=clips, solvers=("rest-shape",),
                            settings=spec.settings, hair_dir=str(folder)))
        by_avatar: dict[str, dict[str, Cell]] = {}
        for c in cells:
            by_avatar.setdefault(c.avatar, {})["turn" if c.clip == "turn-test" else "clip"] = c
        for avatar, mine in by_avatar.items():
            turn = mine["turn"]
            entries.append(Entry(name, path, folder, source, avatar, Path(turn.avatar_input.path), turn,
                                 mine.get("clip")))
    return entries
