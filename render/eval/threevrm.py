"""three-vrm 3.5.5 as the rendering reference, in Debian's headless Chromium.

:func:`render_threevrm` draws avatars with pixiv's three-vrm (``@pixiv/three-vrm`` 3.5.5,
three.js r180, the ``WebGLRenderer``) in headless Chromium with software WebGL
(SwiftShader), at a given camera, light, size and MToon time, and returns the pixels.

How it runs: a local HTTP server on 127.0.0.1 (an ephemeral port, this process only) serves
a page, the script :data:`SCRIPT`, the npm packages and the avatar files; Chromium opens the
page with a new empty profile, renders every job and POSTs the raw pixels back. No WebDriver
and no DevTools protocol: the page reports to the server that served it, so only Chromium
itself is needed (no chromium-driver, selenium or puppeteer). Chromium runs with
``--headless --no-sandbox --disable-gpu`` and the flags that keep it off the network
(:data:`CHROMIUM_FLAGS`) plus SwiftShader for WebGL; it is stopped through its own process
group when the page is done.

The packages are installed with npm on first use into a cache folder
(:data:`avatars.eval.node.THREEVRM_FULL`: ``$SWAYCAM_THREEVRM_RENDER_DIR``, else
``$XDG_CACHE_HOME/swaycam/threevrm-full-3.5.5``); a missing tool or a failed install raises
:class:`avatars.eval.node.ReferenceUnavailable`;
Chromium is ``$SWAYCAM_CHROMIUM`` or the first of ``chromium``, ``chromium-browser``,
``google-chrome`` on PATH (Debian: ``apt-get install chromium``, see ``.ci/system-deps.sh``).
"""

from __future__ import annotations

import http.server
import json
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from avatars.eval.node import THREEVRM_FULL, ReferenceUnavailable

log = logging.getLogger(__name__)

SCRIPT = Path(__file__).with_name("threevrm_render.mjs")
#: Chromium's flags: headless, no sandbox (containers), no GPU (software WebGL through
#: SwiftShader), nothing that talks to the network, a throwaway profile added per run.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--mute-audio", "--use-angle=swiftshader", "--enable-unsafe-swiftshader")
BROWSERS = ("chromium", "chromium-browser", "google-chrome")

_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>swaycam three-vrm reference</title>
<script type="importmap">
{"imports": {"three": "/node_modules/three/build/three.module.js",
             "three/addons/": "/node_modules/three/examples/jsm/",
             "@pixiv/three-vrm": "/node_modules/@pixiv/three-vrm/lib/three-vrm.module.js"}}
</script></head>
<body style="margin:0"><script type="module" src="/threevrm_render.mjs"></script></body></html>
"""


def find_chromium() -> str:
    """The Chromium executable (see the module docstring). Raises ReferenceUnavailable."""
    env = os.environ.get("SWAYCAM_CHROMIUM")
    if env:
        return env
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise ReferenceUnavailable("Chromium is not installed (Debian: apt-get install chromium; "
                               "or set SWAYCAM_CHROMIUM); the three-vrm rendering reference needs it")


def missing_tools(directory: Path | None = None) -> str | None:
    """Why the reference cannot even be attempted (no Chromium; no npm while the packages are
    not installed yet), or None when it can: then any failure is a real one."""
    try:
        find_chromium()
    except ReferenceUnavailable as exc:
        return str(exc)
    if not THREEVRM_FULL.installed(directory) and shutil.which("npm") is None:
        return f"npm is not on PATH; {THREEVRM_FULL.purpose} installs its packages with npm"
    return None


@dataclass(frozen=True)
class ReferenceJob:
    """One avatar drawn by three-vrm at one camera and light, at one or more MToon times.

    Attributes:
        avatar: the .vrm / .glb file.
        size: (width, height) pixels.
        camera: {"position", "target", "up": (3,) world metres (the avatar faces +Z, VRM 0.x
            files are turned as three-vrm's ``VRMUtils.rotateVRM0`` does), "fov_deg", "near", "far"}.
        light: {"direction": (3,) toward the light, "color", "ambient": (3,) linear RGB} in
            swaycam's units (:class:`render.Lighting`; three.js intensity = π × these).
        times: seconds of MToon UV animation at which frames are drawn (ascending).
        antialias: the canvas's ``antialias`` (4x MSAA in SwiftShader).
        background: linear RGB clear colour, or None for transparent (alpha 0).
    """

    avatar: Path
    size: tuple[int, int]
    camera: dict
    light: dict
    times: tuple[float, ...] = (0.0,)
    antialias: bool = True
    background: tuple[float, float, float] | None = None

    def spec(self, url: str) -> dict:
        return {"avatar": url, "width": int(self.size[0]), "height": int(self.size[1]), "antialias": self.antialias,
                "background": None if self.background is None else [float(v) for v in self.background],
                "camera": {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.camera.items()},
                "light": {k: np.asarray(v, float).tolist() for k, v in self.light.items()},
                "times": [float(t) for t in self.times]}


@dataclass
class _Exchange:
    jobs: list[dict]
    files: dict[str, Path]
    root: Path
    results: dict[tuple[int, int], bytes] = field(default_factory=dict)
    error: str | None = None
    done: dict | None = None
    event: threading.Event = field(default_factory=threading.Event)


def _handler(ex: _Exchange):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def _send(self, body: bytes, ctype: str, status: int = 200) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path = self.path.split("?", 1)[0]
            if path in ("/", "/index.html"):
                return self._send(_PAGE.encode(), "text/html")
            if path == "/jobs.json":
                return self._send(json.dumps(ex.jobs).encode(), "application/json")
            if path == "/threevrm_render.mjs":
                return self._send(SCRIPT.read_bytes(), "text/javascript")
            if path in ex.files:
                return self._send(ex.files[path].read_bytes(), "application/octet-stream")
            if path.startswith("/node_modules/") and ".." not in path:
                f = ex.root / path.lstrip("/")
                if f.is_file():
                    ctype = "text/javascript" if f.suffix in (".js", ".mjs") else "application/octet-stream"
                    return self._send(f.read_bytes(), ctype)
            return self._send(b"not found", "text/plain", 404)

        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            parts = self.path.strip("/").split("/")
            if parts[0] == "result" and len(parts) == 3:
                ex.results[(int(parts[1]), int(parts[2]))] = body
            elif parts[0] == "error":
                ex.error = body.decode(errors="replace")
                ex.event.set()
            elif parts[0] == "done":
                ex.done = json.loads(body or b"{}")
                ex.event.set()
            self._send(b"ok", "text/plain")

    return Handler


def render_threevrm(jobs: list[ReferenceJob], *, timeout: float = 180.0,
                    directory: Path | None = None) -> tuple[list[list[np.ndarray]], dict]:
    """Draw ``jobs`` with three-vrm in headless Chromium.

    Returns:
        (frames, info): ``frames[j][k]`` is job j's frame at ``times[k]``, (H, W, 4) uint8,
        sRGB-encoded, colour premultiplied by alpha (as the WebGL canvas holds it), row 0 =
        top; ``info`` = {"three": revision, "renderer": the WebGL renderer string, "seconds"}.

    Raises:
        ReferenceUnavailable: no Chromium / npm, or the packages cannot be installed.
        RuntimeError: the page failed (its error is in the message) or timed out.
    """
    root = THREEVRM_FULL.ensure(directory)
    browser = find_chromium()
    files = {f"/avatar/{j}{Path(job.avatar).suffix}": Path(job.avatar) for j, job in enumerate(jobs)}
    urls = list(files)
    ex = _Exchange(jobs=[job.spec(urls[j]) for j, job in enumerate(jobs)], files=files, root=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(ex))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    t0 = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="swaycam-chromium-") as profile, \
                tempfile.TemporaryFile() as logfile:
            url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
            proc = subprocess.Popen([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", url],
                                    stdout=logfile, stderr=logfile, start_new_session=True)
            try:
                deadline = time.monotonic() + timeout
                while not ex.event.wait(0.1):
                    if proc.poll() is not None or time.monotonic() > deadline:
                        break
            finally:
                _stop(proc)
            if ex.error is not None or ex.done is None:
                logfile.seek(0)
                tail = logfile.read().decode(errors="replace")[-1500:]
                why = ex.error or ("timed out" if proc.returncode is None or proc.returncode < 0
                                   else f"Chromium exited with {proc.returncode}")
                raise RuntimeError(f"three-vrm reference page: {why}\n--- chromium log ---\n{tail}")
    finally:
        server.shutdown()
        server.server_close()
    frames = []
    for j, job in enumerate(jobs):
        w, h = job.size
        got = []
        for k in range(len(job.times)):
            raw = ex.results.get((j, k))
            if raw is None or len(raw) != w * h * 4:
                raise RuntimeError(f"three-vrm reference: job {j} frame {k} missing or of the wrong size")
            got.append(np.frombuffer(raw, np.uint8).reshape(h, w, 4)[::-1].copy())  # GL rows are bottom-up
        frames.append(got)
    info = dict(ex.done)
    info["seconds"] = time.perf_counter() - t0
    return frames, info


def _stop(proc: subprocess.Popen) -> None:
    """Stop Chromium and its helper processes (its own process group, started by us)."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue
