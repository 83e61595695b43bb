"""What a run has on stage: the rig (and compare mode's companion), the avatar hairstyles are
tried on, the body motion program, and the one way each of them changes.

The :class:`Stage` of a session is built with the run's start-up config and its
:class:`runtime.live_settings.LiveSettings` (which it owns); :meth:`Stage.first_rig` loads
the first avatar before anything opens, and :meth:`Stage.attach` puts it on stage once the
loop, the drawer and the VMC sender exist (``Session.open``). From then on every
method that changes the stage runs on the render thread between frames (the window keys, the
command queue, the try-on switcher's ``poll``); :meth:`make_rig`, :meth:`make_companion`,
:meth:`framing` and :meth:`load_motion` touch no render-thread state, so the service threads
and the try-on worker use them too.

The stage is the try-on switcher's host (:class:`runtime.tryon.switcher.TryOnHost`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from avatars import Avatar, AvatarError, load_avatar
from solver.modes import SolverMode

from .config import RunConfig
from .errors import SettingsError
from .live_settings import LiveSettings
from .results import RunError
from .rig import AvatarRig, DriveOptions, MotionError, MotionSetup, RigError, load_motion
from .tryon import BaseAvatar, StyleError, fit_style

if TYPE_CHECKING:  # pragma: no cover
    from .drawing import FrameDrawer, Framing
    from .loop import Loop
    from .tryon import StyleSwitcher

log = logging.getLogger(__name__)


class Stage:
    """The rig, the companion, compare mode, the base avatar and the body motion of one run.

    Args:
        cfg: the start-up config (read only).
        settings: the run-time settings (default: a new :class:`LiveSettings` of ``cfg``).
        say: where user-facing lines go.

    Attributes:
        rig: the rig simulated and drawn (None before :meth:`attach`); ``companion``: compare
            mode's other solver, or None; ``compare``: compare mode is on.
        base: the avatar hairstyles are tried on (its own hair included), set by
            :meth:`first_rig` and :meth:`set_base`.
        motion_setup: the body motion program new rigs play (None: ``--motion none``).
        settings: the run-time settings.
    """

    def __init__(self, cfg: RunConfig, *, settings: LiveSettings | None = None, say=print):
        self.cfg = cfg
        self.settings = settings if settings is not None else LiveSettings(cfg)
        self.say = say
        self.rig: AvatarRig | None = None
        self.companion: AvatarRig | None = None
        self.compare = False
        self.base: BaseAvatar | None = None
        self._base_label: str | None = None      # "default" / "layered": the generated avatars
        self.motion_setup: MotionSetup | None = None
        self._motion_cycle: list | None = None
        self._motion_index = -1
        self._body = False           # the input may carry a whole-body pose (VMC): rigs drive every bone
        self._loop: Loop | None = None
        self._drawer: FrameDrawer | None = None
        self._vmc_sender = None

    # ------------------------------------------------------------------ the first rig (before open)
    def first_rig(self, tryon: StyleSwitcher | None) -> AvatarRig:
        """Load the body motion, the ``--avatar`` (the base avatar) and, with a hairstyle, its
        try-on through ``tryon``'s cache (needed only then); the rig of it, warmed up (numba
        compiles before any timing starts). Not on stage yet: :meth:`attach`.

        Raises:
            AvatarError (ClipError included): the avatar or the clip cannot be loaded.
            RunError: an avatar it cannot drive, bad hair settings, a clip it cannot play on
                it, a hairstyle that cannot be fitted.
        """
        cfg = self.cfg
        m = cfg.motion
        self._body = cfg.vmc_listen is not None or _track_has_body(cfg.source) or cfg.hands
        self.motion_setup = load_motion(m.clip, options=m.options(), bone_map=m.bone_map, bvh_scale=m.bvh_scale,
                                        loop=m.loop)
        path = cfg.avatar
        self._base_label = None
        if path in (None, "default", "layered"):   # the generated avatars, by name (config files use it)
            from avatars.generate import default_avatar_path, layered_avatar_path

            self._base_label = path or "default"
            path = layered_avatar_path() if path == "layered" else default_avatar_path()
        avatar = load_avatar(path)   # AvatarError (a ValueError) goes out as it is
        self.base = BaseAvatar(Path(path), avatar)
        if cfg.hair_style is not None:
            avatar = self._first_style(tryon, cfg.hair_style)
        try:
            rig = self.make_rig(avatar, cfg.solver)
        except (RigError, SettingsError, AvatarError) as exc:
            # an avatar it cannot drive (no head), bad hair settings, a clip (ClipError) it cannot play
            raise RunError(str(exc)) from None
        rig.warm_up()
        return rig

    def _first_style(self, tryon: StyleSwitcher, style: str) -> Avatar:
        """The base avatar with ``style`` (a name in the hair folder or a file) tried on: the
        fit cache or a fit, before anything opens (an offline run draws it from its first
        frame). Raises RunError with the core's message when it cannot be fitted."""
        try:
            path = tryon.styles.resolve(style)
            result, hit = fit_style(self.base, path, tryon.settings, tryon.cache)
        except StyleError as exc:
            raise RunError(f"hairstyle: {exc}") from None
        from .config import looks_like_path

        name = path.stem if looks_like_path(style) else style
        tryon.set_current(name, path)
        g = result.guide_report
        self.say(f"hairstyle: {name}: {len(result.chains)} chains, guides {g.attached} attached + {g.joined} joined "
                 f"of {g.candidates}" + (" (cached)" if hit else f" (fitted in {result.seconds:.2f} s)"))
        from avatars.tryon.pipeline import own_hair_text

        self.say(f"hairstyle: {name}: the avatar's own hair: {own_hair_text(result.own_hair)}")
        return result.avatar

    def attach(self, rig: AvatarRig, *, loop: Loop, drawer: FrameDrawer, vmc_sender=None) -> None:
        """Put ``rig`` on stage, simulated by ``loop`` and drawn by ``drawer`` (its avatar
        already uploaded), sent by ``vmc_sender`` (``--vmc-send``, or None)."""
        self._loop, self._drawer, self._vmc_sender = loop, drawer, vmc_sender
        self.rig = rig
        self.settings.set_hair(rig.hair_params)

    # ------------------------------------------------------------------ rigs (any thread)
    def make_rig(self, avatar: Avatar, solver: str, hair: dict | None = None, *, play: bool = True) -> AvatarRig:
        """A rig with the run's drive options, ``hair`` settings (default: the ones a newly
        loaded avatar starts with, :attr:`LiveSettings.start_hair`), calibration and body
        motion program (:attr:`motion_setup`; with ``play`` false only its options: the
        caller hands the running program over with :meth:`AvatarRig.take_motion_from`).
        Touches no render-thread state (the try-on worker builds rigs with it).

        Raises:
            RigError: an avatar it cannot drive; SettingsError: bad hair settings;
            ClipError: a clip it cannot play.
        """
        cfg = self.cfg
        hair = self.settings.start_hair if hair is None else hair
        setup = self.motion_setup
        rig = AvatarRig(avatar, solver=solver, drive=DriveOptions(**cfg.drive), hair=hair or None,
                        mirror=cfg.mirror, motion=setup.options if setup is not None else None,
                        body=self._body, hands=cfg.hands)
        rig.mouth = cfg.lipsync.mix_options()
        if setup is not None and play:
            setup.apply(rig)
        calibration = self.settings.calibration
        if calibration:
            from tracking import ExpressionCalibration

            rig.expressions.calibrate(ExpressionCalibration({k: tuple(v) for k, v in calibration.items()}))
        return rig

    def companion_solver(self, solver: str) -> str:
        """The compare mode's other solver for a rig running ``solver``."""
        return (SolverMode.LEGACY if solver != SolverMode.LEGACY else SolverMode.REST_SHAPE).value

    def make_companion(self, rig: AvatarRig) -> AvatarRig:
        """The compare mode's companion of a fresh ``rig``: its avatar and hair settings with
        the other solver, the same body motion. Touches no render-thread state, as
        :meth:`make_rig`; raises as it does."""
        companion = self.make_rig(rig.avatar, self.companion_solver(rig.solver), rig.hair_params)
        if rig.motion is not None and companion.motion is not None:
            companion.take_motion_from(rig)       # the same body on both sides
        return companion

    def framing(self, avatar: Avatar, world):
        """The cameras and reduced-detail triangles ``avatar`` posed by ``world`` (N, 4, 4)
        would be drawn with (:meth:`runtime.drawing.FrameDrawer.framing`; numpy only, any
        thread)."""
        return self._drawer.framing(avatar, world)

    def hair_resets(self) -> int:
        """Times the loop restarted the hair at rest (rig swaps; render thread)."""
        return self._loop.resets

    def rig_inputs(self) -> tuple:
        """What :meth:`make_rig` builds a rig from, beside the avatar: the solver drawn, the
        body motion program (compared by identity), the start hair and the calibration. A rig
        prepared under other inputs is built again (runtime/controller.py ``load_avatar``)."""
        return (self.rig.solver, self.motion_setup, self.settings.start_hair, self.settings.calibration)

    def load_motion(self, clip: str, *, loop: bool | None = None) -> MotionSetup:
        """The program of ``clip`` ("idle", "rest", ``FILE[#Name...]``) with the run's motion
        options: loaded and not played (any thread; :meth:`set_motion` plays it).

        Raises:
            ClipError: it cannot be loaded. MotionError: "none" (not playable live).
        """
        m = self.cfg.motion
        options = self.motion_setup.options if self.motion_setup is not None else m.options()
        setup = load_motion(clip, options=options, bone_map=m.bone_map, bvh_scale=m.bvh_scale, loop=loop)
        if setup is None:
            raise MotionError("'none' cannot be played live; use 'rest' for a still body")
        return setup

    def avatar_name(self) -> str | None:
        """The avatar drawn as the user named it (any thread): its file (the base avatar's:
        with a hairstyle on, the rig draws the try-on kept in the fit cache), or "default" /
        "layered" for the generated avatars (their files are in a cache folder too)."""
        base = self.base
        if base is None:
            return self.rig.avatar.path if self.rig is not None else None
        return self._base_label or str(base.path)

    # ------------------------------------------------------------------ changes (render thread)
    def set_base(self, path: Path, avatar: Avatar) -> None:
        """The avatar hairstyles are tried on is ``avatar`` (from ``path``) from now on
        (``POST /avatar``, after its rig was swapped in)."""
        self.base = BaseAvatar(Path(path), avatar)
        self._base_label = None

    def swap_rig(self, rig: AvatarRig, *, keep_hair: bool = False, framing: Framing | None = None,
                 companion: AvatarRig | None = None, upload=None) -> None:
        """Simulate and draw ``rig`` from now on: the one way the rig changes (the ``s`` key,
        ``POST /hair`` with a solver, ``POST /avatar``, compare mode, a hairstyle). Its hair
        starts at rest under the current pose, or, with ``keep_hair``, goes on from the
        motion ``rig`` carries (a solver switch: :meth:`AvatarRig.with_solver`). In compare
        mode a companion with the other solver is built for it (starting with the same hair);
        a new avatar is uploaded and framed (with ``framing`` when given: cameras computed
        beforehand, see :meth:`FrameDrawer.framing`). ``companion``: that companion built
        beforehand (off this thread; used when compare mode is on and it is ``rig``'s avatar
        with the other solver). ``upload``: the new avatar's GPU upload stepped over earlier
        frames (:meth:`begin_upload`; cancelled when not used). Parameter changes do not swap
        the rig: :meth:`set_hair`.

        Raises:
            RigError, SettingsError: the companion cannot be built, or a chain set steps
                another h (runtime/loop.py). The current rig stays.
        """
        prepared, companion = companion, None
        try:
            if self.compare:
                other = self.companion_solver(rig.solver)
                if keep_hair:
                    companion = rig.with_solver(other)
                elif prepared is not None and prepared.avatar is rig.avatar and prepared.solver == other:
                    companion = prepared
                else:
                    companion = self.make_companion(rig)
            self._loop.set_rig(rig, (companion,) if companion is not None else (), reset=not keep_hair)
        except BaseException:
            if upload is not None:
                upload.cancel()
            raise
        if rig.avatar is not self.rig.avatar:
            self._drawer.set_avatar(rig.avatar, rig.world, framing=framing, upload=upload)
            if self._vmc_sender is not None:
                self._vmc_sender.set_avatar(rig.avatar)
        elif upload is not None:
            upload.cancel()
        self.rig, self.companion = rig, companion
        self.settings.set_hair(rig.hair_params)

    def begin_upload(self, avatar: Avatar, framing: Framing | None = None):
        """``avatar``'s GPU upload for a later :meth:`swap_rig` (render thread): step it once
        per frame (:class:`render.staged.AvatarUpload`), so no frame carries the whole upload."""
        return self._drawer.begin_upload(avatar, framing)

    def switch_solver(self, solver: str) -> None:
        """Run the hair with ``solver`` from the next substep on, its motion carried over (the
        ``s`` key, ``POST /hair {"solver": ...}``). Raises ValueError for an unknown solver."""
        if solver != self.rig.solver:
            self.swap_rig(self.rig.with_solver(SolverMode.parse(solver).value), keep_hair=True)

    def set_hair(self, hair: dict | None, resolved=None) -> None:
        """Retune the running hair in place (``[hair]`` settings; the companion too in compare
        mode); ``resolved``: the settings resolved for the rig's springs beforehand
        (:meth:`AvatarRig.resolve_hair`). Raises SettingsError for bad settings; nothing is
        changed then."""
        self.rig.set_hair(hair, resolved)
        if self.companion is not None:
            self.companion.set_hair(hair, resolved)
        self.settings.set_hair(self.rig.hair_params)

    def set_calibration(self, ranges: dict) -> None:
        """Use the per-user input ranges ``ranges`` ({blendshape: [lo, hi]}, the config's
        ``[calibration]``) from the next frame on, on this rig and every later one. Raises
        SettingsError (or tracking's ValueError) for bad ranges; nothing changes then."""
        from tracking import ExpressionCalibration

        cal = ExpressionCalibration({k: tuple(v) for k, v in ranges.items()})
        self.settings.set_calibration(dict(ranges))
        for r in (self.rig, self.companion):
            if r is not None:
                r.expressions.calibrate(cal)

    def _motion_rigs(self, no_motion: str) -> list[AvatarRig]:
        rigs = [r for r in (self.rig, self.companion) if r is not None]
        if any(r.motion is None for r in rigs):
            raise MotionError(no_motion)
        return rigs

    def set_motion(self, setup: MotionSetup, *, speed: float | None = None, layer: str | None = None) -> None:
        """Play ``setup``'s program from the next substep, cross-fading (the ``m`` key,
        ``POST /motion``); ``speed`` / ``layer`` change the playback in place.

        Raises:
            MotionError: the run has no body motion (``--motion none``), a bad speed or layer;
            ClipError: a clip the avatar cannot play. Nothing changes then: the previous clip
                keeps playing.
        """
        rigs = self._motion_rigs("this run has no body motion (--motion none); restart with --motion idle or a clip")
        if speed is not None and not (speed > 0 and speed == speed and speed != float("inf")):
            raise MotionError(f"speed {speed!r} must be > 0")
        _check_layer(layer)
        program = setup.program if isinstance(setup.program, str) else list(setup.program)
        for r in rigs:                                   # retarget everywhere before anything plays
            if not isinstance(program, str):
                r.motion.retarget(program)
        for r in rigs:
            r.play_motion(program, loop=setup.loop)
            if speed is not None:
                r.motion.set_speed(speed)
            if layer is not None:
                r.motion.set_layer(layer)
        self.motion_setup = setup

    def set_motion_options(self, *, speed: float | None = None, layer: str | None = None) -> None:
        """Change the playback speed and/or the head layering in place (the clip goes on).
        Raises MotionError without body motion or for a bad value; nothing changes then."""
        rigs = self._motion_rigs("this run has no body motion (--motion none)")
        if speed is not None and not (speed > 0 and speed != float("inf")):
            raise MotionError(f"speed {speed!r} must be > 0")
        _check_layer(layer)
        for r in rigs:
            if speed is not None:
                r.motion.set_speed(speed)
            if layer is not None:
                r.motion.set_layer(layer)

    def restart_motion(self) -> str:
        """The ``k`` key: the clip playing now from its start (cross-fading, as a switch).
        Returns its name. Raises MotionError without body motion."""
        if self.motion_setup is None:
            raise MotionError("this run has no body motion (--motion none)")
        self.set_motion(self.motion_setup)
        return str(self.motion_setup.name)

    def next_motion(self) -> str:
        """The ``m`` key: the next clip of the ``--motion`` file (the idle after the last one).
        Returns the name of what plays now. Raises MotionError without body motion, ClipError
        for a clip this avatar cannot play (the previous one keeps playing)."""
        from avatars.clips import load_file, parse_spec

        if self._motion_cycle is None:
            m = self.cfg.motion
            clips = []
            if m.clip not in ("idle", "rest", "none"):
                clips = load_file(parse_spec(m.clip).path, bone_map=m.bone_map, unit_scale=m.bvh_scale)
            self._motion_cycle = clips
        cycle = self._motion_cycle
        self._motion_index = (self._motion_index + 1) % (len(cycle) + 1)
        base = self.motion_setup.options if self.motion_setup is not None else None
        if base is None:
            raise MotionError("this run has no body motion (--motion none)")
        if self._motion_index == len(cycle):
            self.set_motion(MotionSetup("idle", base, None, "idle"))
            return "idle"
        c = cycle[self._motion_index]
        self.set_motion(MotionSetup((c,), base, None, c.name))
        return c.name

    def set_compare(self, on: bool) -> None:
        """Compare mode on (the rig and a companion with the other solver, side by side, both
        restarted at rest) or off. Raises as :meth:`swap_rig`; compare mode stays as it was."""
        was = self.compare
        self.compare = bool(on)
        try:
            self.swap_rig(self.rig)
        except Exception:
            self.compare = was
            raise
        self._drawer.reframe(self.rig.world)
        if self.compare:
            self.say(f"compare: left {self.rig.solver}, right {self.companion.solver}")


def _check_layer(layer: str | None) -> None:
    from .rig.motion_options import LAYERS

    if layer is not None and layer not in LAYERS:
        raise MotionError(f"layer {layer!r} is not one of {', '.join(LAYERS)}")


def _track_has_body(source: str | None) -> bool:
    """A ``.jsonl`` source recorded from a VMC performer (it carries a whole-body pose)."""
    if not source or not source.endswith(".jsonl"):
        return False
    try:
        with open(source, encoding="utf-8", errors="replace") as f:
            for _, line in zip(range(200), f):
                if '"body"' in line:
                    return True
    except OSError:
        return False
    return False


__all__ = ["Stage"]
