"""``python -m runtime.tryon.child``: the fitter process (:func:`runtime.tryon.fitter.main`)."""

import os
import sys

try:
    os.nice(10)          # before the imports: the child's start-up too leaves the CPU to the render thread
except (AttributeError, OSError):  # pragma: no cover - no nice() on this platform
    pass

from .fitter import main  # noqa: E402

sys.exit(main())
