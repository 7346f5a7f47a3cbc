"""``python -m knorm.cli``: the same as the ``knorm`` command."""

import sys

from knorm.cli import main

sys.exit(main())
