"""Rendering measurements: swaycam beside three-vrm 3.5.5 in headless Chromium
(:mod:`render.eval.threevrm`, :mod:`render.eval.compare`) and the image measures they use
(:mod:`render.eval.image_metrics`: silhouette IoU, mean colour difference, SSIM)."""
