"""Test collection: doctests of modules whose examples need an optional extra are skipped without it.

``make test`` installs every extra, so CI runs them all; a checkout without river still runs the rest.
"""

from importlib.util import find_spec

#: Modules whose doctests import an optional extra, by the extra's import name.
_DOCTESTS_NEEDING = {"river": ["mlcb/river"]}

collect_ignore = [
    path for extra, paths in _DOCTESTS_NEEDING.items() if find_spec(extra) is None for path in paths
]
