"""``python -m parley``: the same as the ``parley`` command."""

import sys

from .cli import main

sys.exit(main())
