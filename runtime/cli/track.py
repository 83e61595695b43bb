"""``swaycam track SOURCE``: track a face; record a pose track and/or draw a preview.

Angles are printed in degrees here (the CLI edge); everything inside is radians.
"""

from __future__ import annotations

import math

from .args import Progress, UsageError, add_command, add_face_model_options, add_out_option, count, positive

_DESCRIPTION = """Track the face in SOURCE with MediaPipe; write the head poses as a pose track (for 'swaycam run
--source', 'replay', 'check-fps' and 'metrics --track') and/or draw the landmarks and head axes.

    swaycam track clip.mp4 --out poses.jsonl     record a pose track (progress bar for files)
    swaycam track clip.mp4 --preview out.mp4     landmarks and head axes drawn on the frames
    swaycam track 0 --preview window             live webcam preview (needs a display)

SOURCE is a webcam index or /dev/video* path, a video file, a GIF, an image or a folder of
images. The summary gives the yaw, pitch and roll ranges in degrees. The tracker's own timing
is 'swaycam bench tracker'."""


def add_parser(sub) -> None:
    p = add_command(sub, "track", run,
                    help="track a face in a webcam, video, GIF or images; record poses / draw a preview",
                    description=_DESCRIPTION)
    p.add_argument("source", metavar="SOURCE", help="webcam index or /dev/video*, video file, GIF, image or image folder")
    add_out_option(p, what="the pose track (JSON Lines) to POSES.jsonl", metavar="POSES.jsonl")
    p.add_argument("--preview", metavar="OUT",
                   help="'window' or a video file (.mp4/.webm/.avi/.gif) with landmarks and axes")
    p.add_argument("--raw", action="store_true", help="record raw camera-frame observations (no mirror/filter)")
    p.add_argument("--no-mirror", action="store_true", help="do not mirror (the avatar copies the camera view)")
    p.add_argument("--no-recenter", action="store_true", help="do not take the first face as the neutral pose")
    add_face_model_options(p)
    p.add_argument("--max-frames", type=count(1), metavar="N", help="stop after N frames")
    p.add_argument("--realtime", action="store_true",
                   help="play files at their own speed instead of as fast as possible")
    p.add_argument("--fps", type=positive(1000), help="rate of still images and folders (default 25)")
    p.add_argument("--repeat", type=count(1), default=1, metavar="N", help="deliver a still image N times (default 1)")
    p.add_argument("--width", type=count(16, 7680), default=640, help="webcam width (default 640)")
    p.add_argument("--height", type=count(16, 4320), default=480, help="webcam height (default 480)")
    p.add_argument("--camera-fps", type=positive(1000), default=30.0, help="webcam frame rate (default 30)")
    p.add_argument("--no-mjpg", action="store_true", help="do not ask the webcam for MJPG")


def _range(name: str, r: tuple[float, float]) -> str:
    """An angle range (radians) as degrees: ``yaw -12.5..+20.1``."""
    return f"{name} {math.degrees(r[0]):+.1f}..{math.degrees(r[1]):+.1f}" if not math.isnan(r[0]) else f"{name} -"


def run(args) -> int:
    from tracking.face_tracker import FaceTrackerOptions
    from tracking.frame_sources import open_source
    from tracking.head_pose import HeadPoseOptions
    from tracking.pipeline import TrackOptions, run_track
    from tracking.pose_filter import PoseFilterOptions
    from tracking.webcam import WebcamOptions

    if not args.out and not args.preview:
        raise UsageError("give --out POSES.jsonl and/or --preview OUT")
    pose = PoseFilterOptions(head=HeadPoseOptions(mirror=not args.no_mirror), recenter_at_start=not args.no_recenter)
    opts = TrackOptions(tracker=FaceTrackerOptions(model_path=args.model, num_faces=args.num_faces), pose=pose,
                        raw=args.raw, max_frames=args.max_frames)  # fmt: skip
    cam = WebcamOptions(width=args.width, height=args.height, fps=args.camera_fps, mjpg=not args.no_mjpg)
    with open_source(args.source, fps=args.fps, realtime=args.realtime, repeat=args.repeat, webcam=cam) as src:
        s = run_track(src, out=args.out, preview=args.preview, options=opts, progress=Progress())
    print(f"{s.source}: {s.frames} frames, face in {s.found}; {_range('yaw', s.yaw)}, "
          f"{_range('pitch', s.pitch)}, {_range('roll', s.roll)} deg; tracker {s.tracker_ms_median:.1f} ms/frame"
          + (" (interrupted)" if s.interrupted else ""))  # fmt: skip
    if s.out:
        print(f"poses -> {s.out}")
    if s.preview:
        print(f"preview -> {s.preview}")
    return 130 if s.interrupted else 0    # like `swaycam run`: the files are complete, the exit says Ctrl-C
