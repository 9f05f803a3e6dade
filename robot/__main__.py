"""``python -m robot`` is the same as the ``robotd`` command."""

import sys

from .cli import main

sys.exit(main())
