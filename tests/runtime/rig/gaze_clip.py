"""The selfie clip's gaze through the pose filter (tracked once per session)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=2)
def tracked_gaze(path, model):
    from tracking.expressions import BLENDSHAPE_INDEX
    from tracking.face_tracker import FaceTracker, FaceTrackerOptions
    from tracking.frame_sources import open_source
    from tracking.pose_filter import PoseFilter, PoseFilterOptions
    from tracking.pose_track import PoseSample
    from dataclasses import replace

    pf = PoseFilter(replace(PoseFilterOptions(), delay_ns=0))
    s = PoseSample()
    gz, blinks = [], []
    with FaceTracker(FaceTrackerOptions(model_path=model)) as tr, open_source(path) as src:
        for k, frame in enumerate(src):
            if k >= 120:
                break
            obs = tr.process_frame(frame)
            pf.push(obs)
            pf.sample(obs.timestamp_ns, out=s)
            gz.append(s.gaze.copy())
            b = max(obs.blendshapes[BLENDSHAPE_INDEX["eyeBlinkLeft"]], obs.blendshapes[BLENDSHAPE_INDEX["eyeBlinkRight"]])
            blinks.append(b > 0.5)
    return np.array(gz), np.array(blinks)
