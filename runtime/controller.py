"""The control service's controller for a running session, and the queue that hands its work
to the render thread.

The service (:mod:`runtime.service`) answers HTTP requests on its own threads; anything that
touches GL, the rig or the pose input must run on the render thread. :class:`CommandQueue`
carries such work there: a service thread :meth:`~CommandQueue.call` s a function and waits
for its result; the session :meth:`~CommandQueue.drain` s the queue between frames.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from avatars import load_avatar

from .results import RunError
from .rig.hair_params import parse_hair
from .tryon import BaseAvatar

if TYPE_CHECKING:  # pragma: no cover
    from .session import Session


class CommandQueue:
    """Functions run on the render thread, in order, between frames."""

    def __init__(self):
        self._queue: queue.Queue = queue.Queue()

    def call(self, fn: Callable[[], Any], timeout_s: float = 10.0) -> Any:
        """Run ``fn()`` on the render thread and return its result (from any other thread).

        Raises:
            whatever ``fn`` raised; TimeoutError when the render thread did not get to it in
            ``timeout_s`` seconds (the run is not drawing frames; it is then dropped, unless it
            had started).
        """
        return _wait(self.submit(fn), timeout_s)

    def submit(self, fn: Callable[[], Any]) -> Future:
        """Queue ``fn()`` for the render thread (any thread); its Future carries the result or
        the exception. Functions run in the order they were submitted."""
        fut: Future = Future()
        self._queue.put((fn, fut))
        return fut

    def drain(self) -> None:
        """Run everything queued (render thread); each result or exception goes to its caller."""
        while True:
            try:
                fn, fut = self._queue.get_nowait()
            except queue.Empty:
                return
            if not fut.set_running_or_notify_cancel():      # its caller gave up waiting (a timeout)
                continue
            try:
                fut.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed back to the service thread
                fut.set_exception(exc)
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise                                    # the run ends as well


def _wait(fut: Future, timeout_s: float):
    """``fut``'s result; on a timeout the queued work is cancelled (it will not run later,
    after its caller was told it failed) unless it already started."""
    try:
        return fut.result(timeout=timeout_s)
    except TimeoutError:
        fut.cancel()
        raise


class SessionController:
    """:class:`runtime.service.Controller` of ``session``: every method but :meth:`status` runs
    on the render thread through the session's command queue."""

    def __init__(self, session: Session):
        self.session = session
        self._load_lock = threading.Lock()    # POST /avatar requests are prepared one at a time

    def status(self) -> dict:
        """The live metrics, the solver, the avatar file, whether the run is paused and
        whether the pose input has a face now (a pose track: the pose sampled last) — read
        from the service thread: counters and plain attributes only."""
        s = self.session
        out = s.metrics.summary()
        out.update({"solver": s.rig.solver, "avatar": s.rig.avatar.path, "paused": s.clock.paused,
                    "face_found": s.pose_input.status().face_found, "hairstyle": s.tryon.current,
                    "hair_params": s.rig.hair_params})
        return out

    def recenter(self) -> None:
        self.session.commands.call(self.session.pose_input.recenter)

    def load_avatar(self, path: Path) -> dict:
        """Load ``path`` and drive it (its hair at rest); the old avatar stays when it fails.

        The file is read, rigged, warmed up and framed (cameras and reduced-detail triangles)
        on the calling service thread, one request at a time; the render thread only swaps the
        rig in and uploads the meshes, so the avatar drawn meanwhile keeps moving (issue 20: it
        stood still for 120-130 ms while Godette loaded at 1280×720). A rig built under
        settings that changed before the swap (solver, body motion, the config keys
        :meth:`Session.make_rig` reads) is built again on the render thread. In compare mode
        the companion (the other solver) is built here too.

        Raises:
            ValueError: not an avatar (AvatarError), or one that cannot be driven (no head):
                the service answers 422.
            TimeoutError: the render thread did not swap it in within 60 s (504).
        """
        s = self.session
        with self._load_lock:
            made_under = _rig_settings(s)
            avatar = load_avatar(path)
            rig = s.make_rig(avatar, made_under[0])
            rig.warm_up()
            framing = s.drawer.framing(avatar, rig.world)
            companion = s.make_companion(rig) if s.compare else None
            if companion is not None:
                companion.warm_up()

            def do():
                new, other = rig, companion
                if not _same_rig_settings(_rig_settings(s), made_under):
                    new, other = s.make_rig(avatar, s.rig.solver), None
                    new.warm_up()
                s.swap_rig(new, framing=framing, companion=other)
                s.base = BaseAvatar(Path(path), avatar)
                style = s.tryon.rebase()        # the hairstyle is tried on the new avatar (off this thread)
                return {"avatar": str(path), "springs": len(avatar.springs),
                        "warnings": [str(w) for w in avatar.warnings], "hairstyle_pending": style}

            swapped = s.commands.submit(do)     # queued in request order; waited for without the lock
        return _wait(swapped, 60.0)

    def set_hair(self, solver: str | None, params: dict | None) -> dict:
        """Switch to ``solver`` (None: keep it) and/or replace the ``[hair]`` settings with
        ``params`` (None: keep them; {}: the avatar's own), in place: the hair's motion goes on
        (:meth:`Session.switch_solver`, :meth:`Session.set_hair`).

        Returns:
            {"solver", "params" (the settings), "springs" {name: parameters in effect}}.

        Raises:
            ValueError: bad params or solver (the service answers 400); nothing is changed then.
        """
        s = self.session

        def do():
            if params is not None:
                parse_hair(params)          # validate before anything changes
            if solver is not None:
                s.switch_solver(solver)
            if params is not None:
                s.set_hair(params)
            return {"solver": s.rig.solver, "params": s.rig.hair_params, "springs": s.rig.hair_springs(),
                    "warnings": s.rig.hair_warnings()}

        return s.commands.call(do)

    def motion(self) -> dict:
        """What the body plays: {"playing", "program", "index", "layer", "speed", "fading",
        "in_place"} ({"playing": None} with ``--motion none``)."""
        s = self.session

        def do():
            m = s.rig.motion
            return m.state() if m is not None else {"playing": None}

        return s.commands.call(do)

    def set_motion(self, clip: str | None, *, speed: float | None = None, loop: bool | None = None,
                   layer: str | None = None) -> dict:
        """Play ``clip`` ("idle", "rest", or ``FILE[#Name[+Name...]]`` in the motion folder,
        resolved by the service) from the next substep, cross-fading; and/or change the speed
        or the head layering in place. A clip that cannot be loaded or played changes nothing:
        the previous one keeps playing.

        Raises:
            ValueError: the clip cannot be loaded or played on this avatar, no body motion,
                a bad speed or layer (the service answers 422).
        """
        s = self.session
        from .rig.motion import load_motion

        setup = None
        if clip is not None:       # load (the slow part) on the service thread, play on the render thread
            m = s.cfg.motion
            options = s.motion_setup.options if s.motion_setup is not None else m.options()
            setup = load_motion(clip, options=options, bone_map=m.bone_map, bvh_scale=m.bvh_scale, loop=loop)
            if setup is None:
                raise ValueError("'none' cannot be played live; use 'rest' for a still body")

        def do():
            if setup is not None:
                s.set_motion(setup, speed=speed, layer=layer)
            else:
                s.set_motion_options(speed=speed, layer=layer)
            return s.rig.motion.state()

        return s.commands.call(do, timeout_s=60.0)

    def hairstyles(self) -> dict:
        """The styles of the hair folder, the one drawn (``current``, None: the avatar's own
        hair) and the one being fitted (``pending``): :meth:`runtime.tryon.StyleSwitcher.state`
        (read from the service thread)."""
        return self.session.tryon.state()

    def set_hairstyle(self, path: Path | None, name: str | None, *, wait: bool = True,
                      timeout_s: float = 120.0) -> dict:
        """Try on the style file ``path`` (None: the avatar's own hair): fitted off the render
        thread, swapped in between frames; the previous style is drawn until then.

        Returns:
            with ``wait``, once it is drawn: {"current", "guides" {candidates, attached,
            joined, rejected}, "chains", "cached", "seconds", ...}; without: {"pending"}.

        Raises:
            StyleError (a ValueError): the style cannot be fitted (the service answers 422;
                the previous style stays); StyleSuperseded: a newer request replaced it (409);
                SessionClosed (503); TimeoutError: still fitting after ``timeout_s`` (504).
        """
        fut = self.session.tryon.request(path, name)
        if not wait:
            return {"pending": name, "switching": True}
        return fut.result(timeout=timeout_s)

    def frame_png(self) -> bytes | None:
        """The last drawn frame as PNG, read from the framebuffer now (render thread, between
        frames), or None before the first frame."""
        return self.session.commands.call(self.session.drawer.png)


def _rig_settings(s: Session) -> tuple:
    """What :meth:`Session.make_rig` builds a rig from: the solver, the body motion program
    and the config keys it reads."""
    cfg = s.cfg
    return (s.rig.solver, s.motion_setup, cfg.hair, cfg.drive, cfg.mirror, cfg.calibration)


def _same_rig_settings(a: tuple, b: tuple) -> bool:
    return a[1] is b[1] and a[0] == b[0] and a[2:] == b[2:]     # the motion program by identity


def bind_service(controller: SessionController, *, port: int, avatar_dir: str | None,
                 motion_dir: str | None = None, hair_dirs: list[Path] = (), panel=None, token: str | None = None):
    """A :class:`runtime.service.ControlService` for ``controller``, bound to 127.0.0.1:``port``
    (0: a free port) but not serving yet (``start()``; ``close()`` releases the port).
    ``token``: the service token (:func:`runtime.service.security.make_token`; None: none).

    Raises:
        RunError: the port is taken (the message says which and what to do).
    """
    from .service import ControlService

    try:
        return ControlService(controller, port=port, avatar_dir=Path(avatar_dir) if avatar_dir else None,
                              motion_dir=Path(motion_dir) if motion_dir else None, hair_dirs=hair_dirs,
                              panel=panel, token=token)
    except OSError as exc:
        raise RunError(f"control service: cannot listen on 127.0.0.1:{port} ({exc.strerror}); "
                       "choose another --port") from None
