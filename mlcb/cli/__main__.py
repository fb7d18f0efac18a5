"""``python -m mlcb.cli``: the ``mlcb`` command."""

import sys

from mlcb.cli import main

sys.exit(main())
