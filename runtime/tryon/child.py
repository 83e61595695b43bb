"""``python -m runtime.tryon.child``: the fitter process (:func:`runtime.tryon.fitter.main`)."""

import sys

from .fitter import main

sys.exit(main())
