"""Rendering measurements: swaycam beside three-vrm 3.5.5 in headless Chromium
(:mod:`render.eval.threevrm`, :mod:`render.eval.compare`; its npm packages installed by
:mod:`avatars.eval.node`), the image measures they use (:mod:`render.eval.image_metrics`:
silhouette IoU, mean colour difference, SSIM) and ``swaycam bench render``
(:mod:`render.eval.bench`)."""
