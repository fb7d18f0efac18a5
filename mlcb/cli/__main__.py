"""``python -m mlcb.cli``: the ``mlcb`` command."""

import sys

from mlcb.cli import main

if __name__ == "__main__":
    sys.exit(main())
