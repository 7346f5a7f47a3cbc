"""``python -m knorm``: the same as the ``knorm`` command."""

import sys

from knorm.cli import main

sys.exit(main())
