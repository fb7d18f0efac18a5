"""``python -m mlcb.cli``: the ``mlcb`` command."""

import sys

from mlcb.cli import program

if __name__ == "__main__":
    sys.exit(program())
