"""Body motion playback for one rig (docs/design.md §10): a program of retargeted clips on a
timeline sampled at the substep times, cross-fades, the generated idle, authored hair.

The timeline is loop time (integer ns, the same clock as the pose inputs): clip A plays
from an anchor time, clip B (the previous clip) fades out for ``fade_s`` after a switch.
Everything the compiled kernels (:mod:`runtime.rig.motion_kernels`) read is preallocated
here and changed only between substeps, at *events*:

- a pending :meth:`MotionPlayer.play` (a live switch: it starts at the next substep time;
  before the loop starts, at its first time t0, so replays are bit-identical at any rate);
- a one-shot clip nearing its end: the next clip of the program starts ``fade_s`` before
  the end (a sequence ``A+B+C`` plays each once, the last loops if it is a loop clip),
  after the program the ``after`` motion (the idle, the rest pose, or hold the last pose);
- the end of a cross-fade (clip B is dropped).

An event's time is a pure function of the timeline (never of a frame time), and it is
taken at the first substep (or drawn frame) at or after it; the check is one integer
comparison per substep.

Authored hair (docs/design.md §10 "authored motion wins"): the hair joints a playing clip animates
(clip A's, and clip B's while it fades out) belong to the clip: the rig hands them over
(:meth:`solver.chains.ChainSet.set_authored`) and rebuilds its pose plan — an event, not a
substep's work. When the next clip does not animate them, they cross-fade like every
other joint, to their rest pose, and are handed back to the solver at the end of the fade:
the solver takes them at their rest shape with the fade's gentle velocity (no snap-back
from wherever the clip left them).

Options (:class:`MotionOptions`): the head layering (``additive``: the tracked head on top
of the clip's, ``override``: the tracked head replaces it), the cross-fade, the speed, root
motion (``in_place``), rest alignment, and what follows a one-shot clip.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from avatars import Avatar
from avatars.clips import Clip, ClipError
from avatars.errors import did_you_mean
from avatars.clips.head_turn import HEAD_TURN_MOTIONS, head_turn_clip
from avatars.clips.idle import idle_clip

from . import kernels as RK
from . import motion_kernels as MK
from .errors import MotionError
from .motion_options import LAYERS, MotionOptions
from .retarget import RetargetedClip, _leg, retarget

log = logging.getLogger(__name__)

#: The ``--motion`` values that name no file.
MOTION_KEYWORDS = ("idle", "rest", "none", "turn-test", "move-then-settle")
#: "no event pending" (ns)
NEVER = 1 << 62


#: The motion spec words that are not files.
BUILTIN_MOTIONS = ("idle", "rest", "none", "turn-test", "move-then-settle")


@dataclass(frozen=True)
class MotionSetup:
    """What a run plays: a program (clips in sequence, or "idle" / "rest") and the options.

    Attributes:
        program: the clips (:class:`avatars.clips.Clip`, played in order) or "idle" / "rest".
        options: see :class:`MotionOptions`.
        loop: force the last clip to loop (True) or play once (False); None: its own flag.
        label: the spec it came from (for tables and messages).
    """

    program: tuple | str
    options: MotionOptions = MotionOptions()
    loop: bool | None = None
    label: str = ""

    def apply(self, rig) -> None:
        """Start this program on ``rig`` (an :class:`runtime.rig.AvatarRig` with motion).
        Raises ClipError for a clip the avatar cannot play."""
        rig.play_motion(self.program if isinstance(self.program, str) else list(self.program), loop=self.loop)


def load_motion(spec: str | None, *, options: MotionOptions = MotionOptions(), bone_map=None,
                bvh_scale: float | None = None, loop: bool | None = None) -> MotionSetup | None:
    """A ``--motion`` spec -> :class:`MotionSetup`: "none" (or None) -> None (no body motion),
    "idle" / "rest" -> the generated idle / the still body, "turn-test" / "move-then-settle" ->
    the standard head turn repeated / then 8 s still (:func:`avatars.clips.head_turn.head_turn_clip`),
    else ``FILE[#Name[+Name...]]``
    (:func:`avatars.clips.load_clips`).

    Raises:
        ClipError (an AvatarError): the file cannot be read or has no such clip.
    """
    from avatars.clips import load_clips

    if spec is None or spec == "none":
        return None
    if spec in ("idle", "rest"):
        return MotionSetup(spec, options, loop, spec)
    if spec in HEAD_TURN_MOTIONS:         # the head turn as a clip (avatars/clips/head_turn.py)
        return MotionSetup((head_turn_clip(spec),), options, loop, spec)
    try:
        clips = load_clips(spec, bone_map=bone_map, unit_scale=bvh_scale)
    except ClipError as exc:          # 'idel': a mistyped keyword rather than a file
        hint = "" if Path(spec).exists() else did_you_mean(spec, MOTION_KEYWORDS)
        if hint:
            raise ClipError(exc.path, exc.element, exc.reason + hint) from None
        raise
    return MotionSetup(tuple(clips), options, loop, "+".join(c.name for c in clips))


def rest_motion(avatar: Avatar) -> RetargetedClip:
    """The still body: a clip that writes nothing (every driven node at its base pose)."""
    return RetargetedClip(name="rest", source="", times=np.array([0.0, 1.0]), nodes=np.zeros(0, np.int64),
                          local=np.zeros((2, 0, 4)), hips=-1, hips_local=np.zeros((2, 3)), drift=np.zeros(3),
                          loop=True, authored=np.zeros(0, np.int64))


def idle_motion(avatar: Avatar, *, amplitude: float = 1.0) -> RetargetedClip:
    """The generated idle (:func:`avatars.clips.idle.idle_clip`) on ``avatar``'s legs."""
    from avatars.math3d import mat_decompose

    rest_t = mat_decompose(avatar.skeleton.rest_world)[0]
    leg = _leg({b: rest_t[n] for b, n in avatar.humanoid.items()}) or 0.85
    return retarget(idle_clip(leg_m=leg, amplitude=amplitude), avatar)


class _Bound:
    """A retargeted clip packed for the kernels (``cf``, ``ci``: module doc of
    :mod:`runtime.rig.motion_kernels`) against one driven set and pose plan."""

    def __init__(self, rc: RetargetedClip, slot_of: np.ndarray, sub_slots: set[int]):
        self.rc = rc
        k, b = len(rc.times), len(rc.nodes)
        slots = slot_of[rc.nodes] if b else np.zeros(0, np.int64)
        if np.any(slots < 0):
            raise MotionError(f"clip {rc.name!r}: nodes {rc.nodes[slots < 0].tolist()} are not in the driven set")
        cols = [j for j in range(b) if int(slots[j]) in sub_slots]
        hips = int(slot_of[rc.hips]) if rc.hips >= 0 else -1
        self.cf = np.ascontiguousarray(np.concatenate([
            [rc.duration_s], rc.drift, rc.times, rc.local.reshape(-1), rc.hips_local.reshape(-1)]), np.float64)
        self.ci = np.ascontiguousarray(np.concatenate([
            [k, b, hips, 1 if rc.loop else 0, len(cols)], slots, cols]), np.int64)


class MotionPlayer:
    """The motion program of one rig and the timeline the kernels read (module doc).

    Args:
        avatar: the rig's avatar.
        options: see :class:`MotionOptions`.
        base_rotation: (N, 4) the rig's base local rotations (rest with the lowered arms).

    Attributes:
        tl, tf: the timeline arrays (:mod:`runtime.rig.motion_kernels`).
        buf: (3, D, 10) base rows and cross-fade scratch.
        next_event_ns: loop time of the next event (:data:`NEVER` when none).
    """

    def __init__(self, avatar: Avatar, *, options: MotionOptions = MotionOptions(),
                 base_rotation: np.ndarray | None = None):
        self.avatar = avatar
        self.options = options
        self.base_rotation = avatar.skeleton.rest_rotation if base_rotation is None else base_rotation
        self.idle = idle_motion(avatar, amplitude=options.idle_amplitude)
        self.rest = rest_motion(avatar)
        self.program: list[RetargetedClip] = [self.idle]
        self._loop_last: bool | None = None
        self.index = 0
        self.a: _Bound | None = None
        self.b: _Bound | None = None
        self.anchored = False
        self._pending: tuple[list[RetargetedClip], bool | None] | None = None
        self._speed_pending: float | None = None
        #: the first substep (or draw) anchors the program: due at once
        self.next_event_ns = -NEVER
        self._end_event = False
        #: (A,) the hair joints handed to the playing clip
        self.authored = np.zeros(0, np.int64)
        self.tl = np.zeros(MK.TL_HEAD, np.int64)
        self.tf = np.zeros(MK.TF_W + 1)
        self.buf = np.zeros((3, 0, RK.TRS_W))
        self._known: list[RetargetedClip] = [self.idle, self.rest]
        #: called as on_authored(nodes) when the hair joints the playing clip owns change
        self.on_authored = None

    # ------------------------------------------------------------------ program
    def retarget(self, clips: list[Clip]) -> list[RetargetedClip]:
        """``clips`` retargeted on this avatar with this player's options (numpy, build time).
        Raises ClipError for a clip the avatar cannot play."""
        return [retarget(c, self.avatar, options=self.options.retarget, base_rotation=self.base_rotation)
                for c in clips]

    def driven_nodes(self, extra: list[RetargetedClip] = ()) -> set[int]:
        """Every node a clip of the program (and ``extra``) writes, the humanoid bones included."""
        out = {int(n) for n in self.avatar.humanoid.values()}
        for rc in [*self._known, *self.program, *extra]:
            out.update(int(n) for n in rc.nodes)
        return out

    def needs_nodes(self, clips: list[RetargetedClip]) -> bool:
        """True when ``clips`` write nodes outside the driven set of the last :meth:`bind`."""
        return not self.driven_nodes(clips) <= self._bound_nodes

    def play(self, clips: list[RetargetedClip] | str, *, loop: bool | None = None) -> None:
        """Play ``clips`` (a sequence; or "idle" / "rest") from the next substep time (before
        the loop starts: from its first time), cross-fading from what plays now. ``loop``
        forces the last clip to loop (True) or play once (False); None: the clip's flag.
        The driven set must hold every node of ``clips`` (the rig checks :meth:`needs_nodes`)."""
        if isinstance(clips, str):
            clips = [{"idle": self.idle, "rest": self.rest}[clips]]
        clips = list(clips)
        if not clips:
            raise MotionError("play: no clip")
        self._known.extend(c for c in clips if all(c is not k for k in self._known))
        if not self.anchored:
            self.program, self._loop_last, self.index = clips, loop, 0
            if self._slot_of is not None:
                self.a = self._bound(clips[0])
                self.b = None
                self.tl[MK.TL_B_ON] = 0
            return
        self._pending = (clips, loop)
        self.next_event_ns = -NEVER

    def set_layer(self, layer: str) -> None:
        """Layer the tracked head "additive" or "override" from the next substep on."""
        if layer not in LAYERS:
            raise MotionError(f"motion layer {layer!r} is not one of {', '.join(LAYERS)}")
        self.options = replace(self.options, layer=layer)
        self.tl[MK.TL_LAYER] = LAYERS.index(layer)

    def set_speed(self, speed: float) -> None:
        """Play at ``speed`` from the next substep time on (clip time continues: no jump).
        Raises MotionError for a speed that is not > 0."""
        if not (np.isfinite(speed) and speed > 0):
            raise MotionError(f"motion speed {speed!r} must be > 0")
        self.options = replace(self.options, speed=float(speed))
        if self.anchored:
            self._speed_pending = float(speed)
            self.next_event_ns = -NEVER

    # ------------------------------------------------------------------ binding
    _slot_of: np.ndarray | None = None
    _bound_nodes: set[int] = frozenset()

    def bind(self, slot_of: np.ndarray, base_trs: np.ndarray, sub_slots: np.ndarray,
             layer: str | None = None) -> None:
        """Pack everything against a driven set (``slot_of`` (N,), base rows ``base_trs``
        (D, 10)) and a pose plan (its driven slots ``sub_slots``). Keeps the timeline."""
        d = len(base_trs)
        self._slot_of = slot_of
        self._sub = set(int(s) for s in sub_slots)
        self._bound_nodes = {int(n) for n in np.nonzero(slot_of >= 0)[0]}
        tl = np.zeros(MK.TL_HEAD + len(sub_slots), np.int64)
        tl[:MK.TL_HEAD] = self.tl[:MK.TL_HEAD]
        tl[MK.TL_D] = d
        tl[MK.TL_NSUB] = len(sub_slots)
        tl[MK.TL_HEAD:] = sub_slots
        tl[MK.TL_LAYER] = LAYERS.index(layer or self.options.layer)
        tl[MK.TL_CUR_A] = tl[MK.TL_CUR_B] = 0
        self.tl = tl
        self.buf = np.zeros((3, d, RK.TRS_W))
        self.buf[MK.BUF_BASE] = base_trs
        self.a = self._bound(self.a.rc if self.a is not None else self.program[self.index])
        self.b = self._bound(self.b.rc) if self.b is not None else None

    def _bound(self, rc: RetargetedClip) -> _Bound:
        return _Bound(rc, self._slot_of, self._sub)

    @property
    def fb(self) -> np.ndarray:
        return (self.b or self.a).cf

    @property
    def ib(self) -> np.ndarray:
        return (self.b or self.a).ci

    # ------------------------------------------------------------------ timeline
    def start(self, t_ns: int) -> None:
        """Anchor the program at loop time ``t_ns`` (the loop's first time) unless anchored."""
        if self.anchored:
            return
        self.anchored = True
        self._start_clip(self.program[0], t_ns, fade_ns=0)
        self.index = 0

    def rewind(self) -> None:
        """Forget the anchor (after a warm-up): the next :meth:`start` anchors again."""
        self.anchored = False
        self._pending = None
        self._speed_pending = None
        self.next_event_ns = -NEVER
        self.program, self.index = self.program[:], 0
        self.a = self._bound(self.program[0]) if self._slot_of is not None else None
        self.b = None
        self.tl[MK.TL_B_ON] = 0

    def _start_clip(self, rc: RetargetedClip, t_ns: int, *, fade_ns: int) -> None:
        if fade_ns > 0 and self.a is not None:
            self.b = self.a
            self.tl[MK.TL_B_ANCHOR] = self.tl[MK.TL_A_ANCHOR]
            self.tf[MK.TF_B_TAU0] = self.tf[MK.TF_A_TAU0]
            self.tf[MK.TF_B_SPEED] = self.tf[MK.TF_A_SPEED]
            self.tl[MK.TL_CUR_B] = self.tl[MK.TL_CUR_A]
            self.tl[MK.TL_B_ON] = 1
        else:
            self.b = None
            self.tl[MK.TL_B_ON] = 0
        self.a = self._bound(rc)
        self.tl[MK.TL_A_ANCHOR] = t_ns
        self.tf[MK.TF_A_TAU0] = 0.0
        self.tf[MK.TF_A_SPEED] = self.options.speed
        self.tl[MK.TL_CUR_A] = 0
        self.tl[MK.TL_FADE_START] = t_ns
        self.tl[MK.TL_FADE_NS] = fade_ns
        self._schedule()
        self._update_authored()

    def _update_authored(self) -> None:
        """Hand the hair joints of clip A (and of B while it fades out) to the clips, and the
        others back to the solver (the rig's ``on_authored``)."""
        parts = [self.a.rc.authored] + ([self.b.rc.authored] if self.b is not None else [])
        new = np.unique(np.concatenate(parts)).astype(np.int64)
        if not np.array_equal(self.authored, new):
            old, self.authored = self.authored, new
            if self.on_authored is not None:
                self.on_authored(old, new)

    def _loops(self) -> bool:
        last = self.index == len(self.program) - 1
        if not last:
            return False
        return self.a.rc.loop if self._loop_last is None else self._loop_last

    def _schedule(self) -> None:
        """The next event time: the fade's end, or the time the next clip must start."""
        ev = NEVER
        self._end_event = False
        if self.tl[MK.TL_B_ON]:
            ev = int(self.tl[MK.TL_FADE_START] + self.tl[MK.TL_FADE_NS])
        is_after = self.a.rc is self.idle or self.a.rc is self.rest
        if not self._loops() and not is_after and not (self.index == len(self.program) - 1
                                                       and self.options.after == "hold"):
            rem_s = (self.a.rc.duration_s - self.tf[MK.TF_A_TAU0]) / self.tf[MK.TF_A_SPEED]
            fade = min(self.options.fade_s, max(rem_s, 0.0))
            end = int(self.tl[MK.TL_A_ANCHOR]) + int(round((rem_s - fade) * 1e9))
            if end < ev:
                ev = end
                self._end_event = True
        self.next_event_ns = ev

    def event(self, t_ns: int) -> None:
        """Handle what is due at loop time ``t_ns`` (module doc); called when ``t_ns`` >=
        :attr:`next_event_ns`."""
        if not self.anchored:
            self.start(t_ns)
        fade_ns = int(round(self.options.fade_s * 1e9))
        if self._speed_pending is not None:
            tau = self.tf[MK.TF_A_TAU0] + (t_ns - int(self.tl[MK.TL_A_ANCHOR])) * 1e-9 * self.tf[MK.TF_A_SPEED]
            self.tf[MK.TF_A_TAU0], self.tl[MK.TL_A_ANCHOR] = tau, t_ns
            self.tf[MK.TF_A_SPEED] = self._speed_pending
            self._speed_pending = None
            self._schedule()
        if self._pending is not None:
            clips, loop = self._pending
            self._pending = None
            self.program, self._loop_last, self.index = clips, loop, 0
            self._start_clip(clips[0], t_ns, fade_ns=fade_ns)
            return
        if self._end_event and t_ns >= self.next_event_ns:
            start = self.next_event_ns
            rem = max(int(self.tl[MK.TL_A_ANCHOR]) + int(round(
                (self.a.rc.duration_s - self.tf[MK.TF_A_TAU0]) / self.tf[MK.TF_A_SPEED] * 1e9)) - start, 0)
            if self.index + 1 < len(self.program):
                self.index += 1
                nxt = self.program[self.index]
            else:
                nxt = self.idle if self.options.after == "idle" else self.rest
                self.program, self.index, self._loop_last = [nxt], 0, None
            self._start_clip(nxt, start, fade_ns=rem)
            if t_ns >= self.next_event_ns:
                self.event(t_ns)
            return
        if self.tl[MK.TL_B_ON] and t_ns >= int(self.tl[MK.TL_FADE_START] + self.tl[MK.TL_FADE_NS]):
            self.tl[MK.TL_B_ON] = 0
            self.b = None
            self._update_authored()
        self._schedule()

    # ------------------------------------------------------------------ what plays
    @property
    def playing(self) -> str:
        """The name of clip A."""
        return self.a.rc.name if self.a is not None else self.program[self.index].name

    def clip_time(self, t_ns: int) -> float:
        """Clip A's time (seconds, wrapped) at loop time ``t_ns``."""
        rc = self.a.rc
        tau = self.tf[MK.TF_A_TAU0] + (t_ns - int(self.tl[MK.TL_A_ANCHOR])) * 1e-9 * self.tf[MK.TF_A_SPEED]
        if rc.loop and rc.duration_s > 0:
            return float(tau % rc.duration_s)
        return float(min(max(tau, 0.0), rc.duration_s))

    def expressions(self, t_ns: int) -> dict[str, float] | None:
        """The playing clip's expression weights at ``t_ns``, or None when it carries none."""
        rc = self.a.rc if self.a is not None else None
        if rc is None or not rc.expressions:
            return None
        tau = self.clip_time(t_ns)
        return {k: float(np.interp(tau, rc.times, v)) for k, v in rc.expressions.items()}

    def state(self) -> dict:
        """JSON-ready: the clip playing, the program (a switch asked for and starting at the
        next substep: its program, with ``pending`` true), options."""
        program = self._pending[0] if self._pending is not None else self.program
        return {"playing": self.playing, "program": [c.name for c in program], "pending": self._pending is not None,
                "index": 0 if self._pending is not None else self.index,
                "layer": LAYERS[int(self.tl[MK.TL_LAYER])], "speed": float(self.tf[MK.TF_A_SPEED] or
                                                                                 self.options.speed),
                "fading": bool(self.tl[MK.TL_B_ON]), "in_place": self.options.in_place}

    def copy_state_from(self, other: MotionPlayer) -> None:
        """Take over ``other``'s program and timeline (a rig rebuilt for a solver switch);
        call :meth:`bind` first (the same avatar: the same driven set)."""
        self.idle, self.rest = other.idle, other.rest
        self._known = list(other._known)
        self.program, self._loop_last, self.index = list(other.program), other._loop_last, other.index
        self.anchored, self._pending = other.anchored, other._pending
        self.next_event_ns, self._end_event = other.next_event_ns, other._end_event
        self.tl[:MK.TL_HEAD] = other.tl[:MK.TL_HEAD]
        self.tf[:] = other.tf
        self.a = self._bound(other.a.rc) if other.a is not None else None
        self.b = self._bound(other.b.rc) if other.b is not None else None
        self.authored = other.authored.copy()
        self.options = other.options

    def with_options(self, **changes) -> MotionOptions:
        return replace(self.options, **changes)
