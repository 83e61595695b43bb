"""Switching the hairstyle of a running session without stopping tracking or rendering::

    request(style)      any thread: the newest request wins; returns a Future
    worker thread       the disk cache, else a fit in the fitter process
                        (:mod:`runtime.tryon.fitter`: the fit's numpy/scipy work never holds
                        this process's GIL), then the whole rig: AvatarRig (ChainSet build,
                        body motion options), the numba warm-up and the camera framing
    poll()              render thread, between frames: body motion carried over
                        (AvatarRig.take_motion_from), the host's swap_rig (the new hair at
                        rest under the current pose; the GPU upload of the new avatar)

The old style keeps running until the new one is ready. A style that cannot be fitted (a
bad file, no head mesh, a hair nowhere near the head...) is reported — said, logged, and the
request's Future fails with :class:`StyleError` carrying the core's message — and the
previous style keeps running. A newer request supersedes an older one still in flight
(:class:`StyleSuperseded`). Closing drops whatever is in flight: the worker is a daemon
thread joined with a short timeout, the fitter process is killed, results are thrown away.

With ``prewarm`` (the kiosk's default) the idle worker fits every style of the folder once,
into the disk cache only, so a visitor's switch is a cached reload.

The switcher's host (:class:`TryOnHost`: the session's :class:`runtime.stage.Stage`) gives
it the base avatar and the rig drawn, builds and frames rigs, swaps them in and says what
happened.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

from .fitter import Fitter
from ..errors import SessionClosed, StyleError, StyleSuperseded
from .styles import BaseAvatar, HairStyles, keep_guides, summary

if TYPE_CHECKING:  # pragma: no cover
    from avatars.tryon import TryOnSettings
    from avatars.tryon.cache import TryOnCache

    from avatars import Avatar

    from ..drawing import Framing
    from ..rig import AvatarRig, MotionSetup

log = logging.getLogger(__name__)

#: Seconds :meth:`StyleSwitcher.close` waits for a busy worker before leaving it (a daemon).
CLOSE_TIMEOUT_S = 0.5
#: Longest wait (s) of the worker for the render thread's idle time before a step of its own
#: Python work (see :meth:`StyleSwitcher.between_frames`).
IDLE_WAIT_S = 0.1


class TryOnHost(Protocol):
    """What :class:`StyleSwitcher` needs of the run (runtime/stage.py ``Stage``)."""

    @property
    def base(self) -> BaseAvatar:
        """The avatar styles are tried on (any thread)."""

    @property
    def rig(self) -> AvatarRig:
        """The rig drawn now: its solver and hair settings carry over (any thread reads them)."""

    @property
    def motion_setup(self) -> MotionSetup | None:
        """The run's body motion program (for a rig whose skeleton differs)."""

    def make_rig(self, avatar: Avatar, solver: str, hair: dict | None = None, *, play: bool = True) -> AvatarRig:
        """A rig of ``avatar`` with the run's settings (the worker thread calls it)."""

    def framing(self, avatar: Avatar, world) -> Framing:
        """The cameras ``avatar`` would be drawn with (numpy only; the worker thread)."""

    def swap_rig(self, rig: AvatarRig, *, framing: Framing | None = None) -> None:
        """Draw ``rig`` from the next frame on (render thread)."""

    def say(self, line: str) -> None:
        """Tell the user."""


@dataclass(eq=False)
class _Request:
    name: str | None          # None: the avatar's own hair
    path: Path | None
    base: BaseAvatar
    solver: str
    hair: dict
    future: Future = field(default_factory=Future)


@dataclass(eq=False)
class _Ready:
    request: _Request
    rig: AvatarRig | None = None
    framing: Framing | None = None
    error: str | None = None
    info: dict = field(default_factory=dict)


class StyleSwitcher:
    """Switches the hairstyle drawn by ``host`` (module doc).

    Args:
        host: the run's stage (:class:`TryOnHost`).
        styles: the hair folder.
        settings: the try-on settings (``[tryon] hide_own_hair``), or a function making them
            on first use.
        cache: the fit cache (default: the user's cache folder).
        fitter: where fits run (default: a :class:`runtime.tryon.fitter.Fitter` child process).
        prewarm: when idle, fit every style of the folder into the cache.

    Attributes:
        current: the name of the style drawn now (None: the avatar's own hair).
        current_path: its file.
        last_error: the message of the last style that could not be fitted (None after a
            successful switch).
        swaps: switches done; ``refused``: requests that failed (fit or swap refused);
            ``last_swap_ms``: render-thread time of the last one (body
            motion hand-over, rig swap, GPU upload).
        paced: set by a live session: see :meth:`frame_drawn`.
    """

    @property
    def settings(self) -> TryOnSettings:
        """The try-on settings (made on first use when given as a function: the fitting core
        takes a second to import, which a run without hairstyles never pays)."""
        with self._settings_lock:
            if callable(self._settings):
                self._settings = self._settings()
            return self._settings

    def __init__(self, host: TryOnHost, styles: HairStyles, settings: TryOnSettings | Callable[[], TryOnSettings], *,
                 cache: TryOnCache | None = None, fitter: Fitter | None = None, prewarm: bool = False):
        self.host = host
        self.fitter = fitter or Fitter()
        self.styles = styles
        self._settings = settings
        self._settings_lock = threading.Lock()
        self.cache = cache
        self.prewarm = prewarm
        self.current: str | None = None
        self.current_path: Path | None = None
        self.last_error: str | None = None
        self.swaps = 0
        self.refused = 0
        self.last_swap_ms: float | None = None
        self._lock = threading.Condition()
        self._next: _Request | None = None          # not yet taken by the worker
        self._pending: _Request | None = None       # the newest request not yet resolved
        self._ready: _Ready | None = None           # prepared by the worker, for poll()
        self._warm_todo: list[Path] | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self._cursor: str | None = None             # the style asked for last (the keys cycle from it)
        #: live runs: the worker's own Python steps wait for the render thread's idle time
        self.paced = False
        self._tick = threading.Event()

    # ------------------------------------------------------------------ requests (any thread)
    def request(self, path: Path | None, name: str | None = None) -> Future:
        """Try on the style file ``path`` (None: back to the avatar's own hair) from the
        next frame after it is ready; ``name`` defaults to the file's stem. Returns a Future
        whose result is the switch's report (:func:`summary` with ``current``), or whose
        exception is :class:`StyleError`, :class:`StyleSuperseded` or :class:`SessionClosed`."""
        s = self.host
        with self._lock:
            if self._closed:
                raise SessionClosed("the session is closed")
            req = _Request(None if path is None else (name or Path(path).stem),
                           None if path is None else Path(path), s.base, s.rig.solver, dict(s.rig.hair_params))
            old = self._pending
            self._next = self._pending = req
            self._cursor = req.name
            self._start()
            self._lock.notify_all()
        if old is not None:
            _fail(old.future, StyleSuperseded(f"superseded by a newer request ({_label(req.name)})"))
        return req.future

    def request_name(self, name: str) -> Future:
        """:meth:`request` of the style ``name`` in the hair folder (StyleError when unknown)."""
        return self.request(self.styles.resolve(name), name)

    def cycle(self, step: int) -> Future | None:
        """The next (``step`` = 1) or previous (-1) style of the folder after the one asked
        for last (drawn, in flight, or refused: the keys walk past a style that cannot be
        fitted; the own hair sits between the last and the first); None when the folder has
        no style."""
        names = list(self.styles.styles())
        if not names:
            return None
        with self._lock:
            at = self._cursor
        ring = [None, *names]
        k = ring.index(at) if at in ring else 0
        nxt = ring[(k + step) % len(ring)]
        return self.request(None) if nxt is None else self.request_name(nxt)

    def pick(self, index: int) -> Future | None:
        """Style number ``index`` (1-based) of the folder; 0: the avatar's own hair. None when
        there is no such style."""
        if index == 0:
            return self.request(None)
        names = list(self.styles.styles())
        return self.request_name(names[index - 1]) if index <= len(names) else None

    def state(self) -> dict:
        """{"styles", "current", "pending", "switching", "error", "folders"} (any thread)."""
        with self._lock:
            pending = self._pending
            out = {"current": self.current, "pending": pending.name if pending is not None else None,
                   "switching": pending is not None, "error": self.last_error}
        out["styles"] = list(self.styles.styles())
        out["folders"] = [str(f) for f in self.styles.folders]
        return out

    def prepare(self) -> None:
        """Import what a switch needs on this process's side (the try-on's data classes, to
        unpickle results: ~0.5 s, which would otherwise hold the GIL while frames are drawn).
        The session calls it at open when styles can be switched."""
        import avatars.tryon.cache  # noqa: F401

    def frame_drawn(self) -> None:
        """Render thread, after each live frame, before it sleeps until the next one: the
        worker's next step of Python work in this process (unpickling a result, building the
        rig, framing) starts now, in the render thread's idle time, so the two do not take
        the GIL from each other (each step is tens of milliseconds; measured: NOTES)."""
        self._tick.set()

    def _idle(self) -> None:
        """Worker: with :attr:`paced`, wait (at most :data:`IDLE_WAIT_S`) for the render
        thread to finish a frame."""
        if self.paced:
            self._tick.clear()
            self._tick.wait(IDLE_WAIT_S)

    @property
    def switching(self) -> bool:
        """A request is in flight (fitting, or ready and waiting for the next frame)."""
        return self._pending is not None

    @property
    def pending_name(self) -> str | None:
        """The style in flight (None: none, or the avatar's own hair; see :attr:`switching`)."""
        p = self._pending
        return p.name if p is not None else None

    def set_current(self, name: str | None, path: Path | None) -> None:
        """Record the style the session was opened with (no switch)."""
        self.current, self.current_path = name, path
        self._cursor = name

    def rebase(self) -> str | None:
        """The session's base avatar changed (``POST /avatar``; render thread): it is drawn
        with its own hair now, and the style drawn or asked for last is tried on it again.
        Returns the name of that style (pending now), or None."""
        with self._lock:
            want = (self._pending.name, self._pending.path) if self._pending is not None else \
                (self.current, self.current_path)
        self.current = self.current_path = None
        if want[0] is None:
            return None
        self.request(want[1], want[0])
        return want[0]

    # ------------------------------------------------------------------ worker
    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="swaycam-tryon", daemon=True)
            self._thread.start()

    def start_prewarm(self) -> None:
        """Fit every style of the folder into the cache while the worker has nothing else to
        do (lowest priority: a request goes first)."""
        with self._lock:
            if self._closed:
                return
            self._warm_todo = list(self.styles.styles().values())
            self._start()
            self._lock.notify_all()

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._closed and self._next is None and not self._warm_todo:
                    self._lock.wait()
                if self._closed:
                    return
                req, self._next = self._next, None
                warm = self._warm_todo.pop(0) if req is None else None
            if req is None:
                self._warm(warm)
                continue
            ready = self._prepare(req)
            with self._lock:
                if self._closed:
                    return
                if self._ready is not None and self._ready.request is not req:
                    _fail(self._ready.request.future, StyleSuperseded("superseded by a newer request"))
                self._ready = ready

    def _prepare(self, req: _Request) -> _Ready:
        """The worker's part: fit (or reload) and build the whole rig. Never raises."""
        t0 = time.perf_counter()
        try:
            return self._prepare_rig(req, t0)
        except StyleError as exc:
            return _Ready(req, error=str(exc))
        except Exception as exc:  # noqa: BLE001 - the worker reports, it never dies
            log.exception("try-on of %s failed", _label(req.name))
            return _Ready(req, error=f"{_label(req.name)}: {type(exc).__name__}: {exc}")

    def _prepare_rig(self, req: _Request, t0: float) -> _Ready:
        """The result (the cache, else the fitter process), then the rig, its warm-up and its
        cameras. Raises StyleError."""
        s = self.host
        info: dict = {}
        avatar = req.base.avatar
        if req.path is not None:
            result, cached = self._fit(req.base, req.path)
            keep_guides(result)
            avatar = result.avatar
            info = summary(result, cached=cached)
        t1 = time.perf_counter()
        self._idle()
        rig = s.make_rig(avatar, req.solver, req.hair, play=False)
        self._idle()
        rig.warm_up()
        self._idle()
        framing = s.framing(avatar, rig.world)
        info.update(rig_seconds=round(time.perf_counter() - t1, 4), seconds=round(time.perf_counter() - t0, 4))
        return _Ready(req, rig=rig, framing=framing, info=info)

    def _fit(self, base: BaseAvatar, path: Path, *, want_result: bool = True):
        """(result, cache hit): the disk cache here, else a fit in the fitter process."""
        from avatars.tryon.cache import TryOnCache

        cache = self.cache or TryOnCache()
        self._idle()
        try:
            hit = cache.load(base.path, path, self.settings)
        except OSError as exc:
            raise StyleError(f"{path.name}: {exc.strerror or exc}") from None
        if hit is not None:
            return hit, True
        return self.fitter.fit(base, path, self.settings, cache.folder, want_result=want_result, gate=self._idle)

    def _warm(self, path: Path) -> None:
        """Fit ``path`` into the cache (a pre-warm step; nothing is swapped)."""
        from avatars.tryon.cache import TryOnCache

        base = self.host.base
        cache = self.cache or TryOnCache()
        try:
            if cache.path(base.path, path, self.settings).is_file():
                return                                    # cached already: nothing to unpickle here
            _, hit = self.fitter.fit(base, path, self.settings, cache.folder, want_result=False)
            if not hit:
                log.info("try-on: %s fitted into the cache", path.stem)
        except (StyleError, OSError) as exc:
            log.info("try-on: %s cannot be fitted (%s)", path.stem, exc)
        except Exception:  # noqa: BLE001
            log.exception("try-on: pre-fitting %s failed", path.stem)

    # ------------------------------------------------------------------ render thread
    def poll(self) -> None:
        """Swap in a prepared style (render thread, between frames), or report its failure."""
        if self._ready is None:
            return
        with self._lock:
            ready, self._ready = self._ready, None
        if ready is None:
            return
        req = ready.request
        s = self.host
        if req is not self._pending:
            _fail(req.future, StyleSuperseded("superseded by a newer request"))
            return
        if req.base is not s.base:          # the avatar changed meanwhile (POST /avatar asks again)
            self._resolve(req)
            _fail(req.future, StyleSuperseded("the avatar changed"))
            return
        if ready.error is not None:
            self.last_error = ready.error
            self.refused += 1
            self._resolve(req)
            log.warning("hairstyle: %s", ready.error)
            s.say(f"hairstyle: {ready.error} (keeping {_label(self.current)})")
            _fail(req.future, StyleError(ready.error))
            return
        t0 = time.perf_counter()
        try:
            self._swap(ready)
        except Exception as exc:  # noqa: BLE001 - a rig the session refuses: keep the old one
            msg = f"{_label(req.name)}: {exc}"
            self.last_error = msg
            self.refused += 1
            self._resolve(req)
            log.warning("hairstyle: %s", msg)
            s.say(f"hairstyle: {msg} (keeping {_label(self.current)})")
            _fail(req.future, StyleError(msg))
            return
        self.last_swap_ms = 1e3 * (time.perf_counter() - t0)
        self.swaps += 1
        self.current, self.current_path, self.last_error = req.name, req.path, None
        self._resolve(req)
        info = {"current": req.name, **ready.info, "swap_ms": round(self.last_swap_ms, 2)}
        how = "cached" if info.get("cached") else f"fitted in {info.get('fit_seconds', 0):.2f} s"
        s.say(f"hairstyle: {_label(req.name)}" + (f" ({info.get('chains', 0)} chains, {how})" if req.name else ""))
        _succeed(req.future, info)

    def _swap(self, ready: _Ready) -> None:
        s = self.host
        rig, old = ready.rig, s.rig
        if rig.solver != old.solver:                  # switched meanwhile (the s key)
            rig = rig.with_solver(old.solver)
        if rig.hair_params != old.hair_params:        # retuned meanwhile (POST /hair)
            rig.set_hair(old.hair_params)
        carry_motion(rig, old, s.motion_setup)
        s.swap_rig(rig, framing=ready.framing)

    def _resolve(self, req: _Request) -> None:
        with self._lock:
            if self._pending is req:
                self._pending = None

    def close(self) -> None:
        """Drop what is in flight (its Future fails with :class:`SessionClosed`) and stop the
        worker; waits at most :data:`CLOSE_TIMEOUT_S` for a busy one (a daemon: it may be left
        to finish its fit, whose result is thrown away). Idempotent."""
        with self._lock:
            self._closed = True
            pending, self._pending, self._next = self._pending, None, None
            ready, self._ready = self._ready, None
            self._lock.notify_all()
        for r in {id(x): x for x in (pending, ready.request if ready else None) if x is not None}.values():
            _fail(r.future, SessionClosed("the session closed"))
        self.fitter.close()                 # a fit in flight ends now; the worker sees it fail
        if self._thread is not None:
            self._thread.join(timeout=CLOSE_TIMEOUT_S)


def carry_motion(rig: AvatarRig, old: AvatarRig, setup: MotionSetup | None) -> None:
    """Give ``rig`` (another avatar of the same skeleton: a try-on avatar or its base) the
    body motion of ``old``: its program and timeline when every node they write exists in
    ``rig``'s avatar under the same name, else the run's motion program ``setup`` from its
    start."""
    if rig.motion is None or old.motion is None:
        return
    new_names, old_names = rig.avatar.skeleton.names, old.avatar.skeleton.names
    nodes = set()
    for rc in [*old.motion._known, *old.motion.program]:
        nodes.update(int(n) for n in rc.nodes)
    if all(n < len(new_names) and n < len(old_names) and new_names[n] == old_names[n] for n in nodes):
        rig.take_motion_from(old)
    elif setup is not None:
        setup.apply(rig)


def _fail(fut: Future, exc: BaseException) -> None:
    try:
        fut.set_exception(exc)
    except InvalidStateError:     # answered already (another thread superseded it first)
        pass


def _succeed(fut: Future, value) -> None:
    try:
        fut.set_result(value)
    except InvalidStateError:     # superseded by a request that came in during the swap
        pass


def _label(name: str | None) -> str:
    return "the avatar's own hair" if name is None else repr(name)


__all__ = ["StyleSwitcher", "TryOnHost", "carry_motion"]
