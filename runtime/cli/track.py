"""``swaycam track`` and ``swaycam bench-tracker`` (registered by runtime/cli.py).

    swaycam track SOURCE --out poses.jsonl       record a pose track (progress bar for files)
    swaycam track SOURCE --preview out.mp4       landmarks and head axes drawn on the frames
    swaycam track 0 --preview window             live webcam preview (needs a display)
    swaycam bench-tracker                        tracker ms/frame at 640x360 and 1280x720

SOURCE is a webcam index or /dev/video* path, a video file, a GIF, an image or a folder of
images. Angles are degrees here (the CLI edge); everything inside is radians. Also runs as
``python -m runtime.cli.track ...``.
"""

from __future__ import annotations

import argparse
import math
import sys
from tracking.errors import TrackingError


def _add_track(sub) -> None:
    p = sub.add_parser("track", help="track a face in a webcam, video, GIF or images; record poses / draw a preview",
                       description=__doc__.split("\n\n")[1] if __doc__ else None,
                       formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("source", help="webcam index or /dev/video*, video file, GIF, image or image folder")
    p.add_argument("--out", metavar="POSES.jsonl", help="write the pose track (JSON Lines)")
    p.add_argument("--preview", metavar="OUT", help="'window' or a video file (.mp4/.webm/.avi/.gif) with landmarks and axes")
    p.add_argument("--raw", action="store_true", help="record raw camera-frame observations (no mirror/filter)")
    p.add_argument("--no-mirror", action="store_true", help="do not mirror (the avatar copies the camera view)")
    p.add_argument("--no-recenter", action="store_true", help="do not take the first face as the neutral pose")
    p.add_argument("--model", metavar="PATH", help="face_landmarker.task (default: the cached, verified one)")
    p.add_argument("--num-faces", type=int, default=4, help="faces MediaPipe reports; one is chosen (default 4)")
    p.add_argument("--max-frames", type=int, help="stop after N frames")
    p.add_argument("--realtime", action="store_true", help="play files at their own speed instead of as fast as possible")
    p.add_argument("--fps", type=float, help="rate of still images and folders (default 25)")
    p.add_argument("--repeat", type=int, default=1, help="deliver a still image N times")
    p.add_argument("--width", type=int, default=640, help="webcam width (default 640)")
    p.add_argument("--height", type=int, default=480, help="webcam height (default 480)")
    p.add_argument("--camera-fps", type=float, default=30.0, help="webcam frame rate (default 30)")
    p.add_argument("--no-mjpg", action="store_true", help="do not ask the webcam for MJPG")
    p.set_defaults(func=cmd_track)


def _add_bench(sub) -> None:
    p = sub.add_parser("bench-tracker", help="MediaPipe tracker ms per frame (median, p95) at 640x360 and 1280x720")
    p.add_argument("--clip", help="video/GIF to time (default: the shared selfie clip)")
    p.add_argument("--frames", type=int, default=100, help="frames per size (default 100)")
    p.add_argument("--model", metavar="PATH", help="face_landmarker.task")
    p.add_argument("--num-faces", type=int, default=4)
    p.set_defaults(func=cmd_bench_tracker)


def add_parser(subparsers) -> None:
    """Register ``track`` and ``bench-tracker`` on an argparse subparsers object."""
    _add_track(subparsers)
    _add_bench(subparsers)


class Progress:
    """A one-line progress bar on a terminal stream; silent when it is not a terminal."""

    def __init__(self, stream=None, width: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = -1

    def __call__(self, done: int, total: int | None) -> None:
        if not self.enabled or not total:
            return
        filled = min(self.width, done * self.width // total)
        if filled == self._last and done != total:
            return
        self._last = filled
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} frames")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def _range(name: str, r: tuple[float, float]) -> str:
    return f"{name} {r[0]:+.1f}..{r[1]:+.1f}" if not math.isnan(r[0]) else f"{name} -"


def cmd_track(args) -> int:
    from tracking.face_tracker import FaceTrackerOptions
    from tracking.head_pose import HeadPoseOptions
    from tracking.pipeline import TrackOptions, run_track
    from tracking.pose_filter import PoseFilterOptions
    from tracking.frame_sources import open_source
    from tracking.webcam import WebcamOptions

    if not args.out and not args.preview:
        print("swaycam track: give --out POSES.jsonl and/or --preview OUT", file=sys.stderr)
        return 2
    pose = PoseFilterOptions(head=HeadPoseOptions(mirror=not args.no_mirror), recenter_at_start=not args.no_recenter)
    opts = TrackOptions(tracker=FaceTrackerOptions(model_path=args.model, num_faces=args.num_faces), pose=pose,
                        raw=args.raw, max_frames=args.max_frames)  # fmt: skip
    cam = WebcamOptions(width=args.width, height=args.height, fps=args.camera_fps, mjpg=not args.no_mjpg)
    try:
        with open_source(args.source, fps=args.fps, realtime=args.realtime, repeat=args.repeat, webcam=cam) as src:
            s = run_track(src, out=args.out, preview=args.preview, options=opts, progress=Progress())
    except TrackingError as exc:
        print(f"swaycam track: {exc}", file=sys.stderr)
        return 1
    print(f"{s.source}: {s.frames} frames, face in {s.found}; {_range('yaw', s.yaw_deg)}, "
          f"{_range('pitch', s.pitch_deg)}, {_range('roll', s.roll_deg)} deg; tracker {s.tracker_ms_median:.1f} ms/frame"
          + (" (interrupted)" if s.interrupted else ""))  # fmt: skip
    if s.out:
        print(f"poses -> {s.out}")
    if s.preview:
        print(f"preview -> {s.preview}")
    return 130 if s.interrupted else 0    # like `swaycam run`: the files are complete, the exit says Ctrl-C


def cmd_bench_tracker(args) -> int:
    from avatars.assets import SELFIE_CLIP, asset_path
    from tracking.bench import bench_tracker
    from tracking.frame_sources import open_source

    clip = args.clip or str(asset_path(*SELFIE_CLIP))
    try:
        with open_source(clip) as src:
            images = [f.image for _, f in zip(range(args.frames), src)]
        results = bench_tracker(images, model_path=args.model, num_faces=args.num_faces)
    except TrackingError as exc:
        print(f"swaycam bench-tracker: {exc}", file=sys.stderr)
        return 1
    print(f"tracker on {clip} ({len(images)} frames per size, num_faces={args.num_faces}):")
    for r in results:
        print(f"  {r.width}x{r.height}: median {r.median_ms:.1f} ms, p95 {r.p95_ms:.1f} ms ({r.frames} frames)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m runtime.cli.track track ...`` / ``bench-tracker`` without the runtime."""
    import logging

    ap = argparse.ArgumentParser(prog="python -m runtime.cli.track")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_parser(sub)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
