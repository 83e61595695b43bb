"""``python -m runtime.cli``: the ``swaycam`` command without the console script."""

import sys

from . import console_main

sys.exit(console_main())
