"""Entry point of ``python -m vision``."""

import sys

from .cli import main

sys.exit(main())
