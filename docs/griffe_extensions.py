"""A griffe extension of the documentation site (named in ``mkdocs.yml``; not a page of the site).

Griffe reads docstrings from the source. A few of the package's docstrings are completed when
their module is imported: ``agents.rates`` writes the parameters every rate function shares once
and splices them into each docstring where it says ``%(n)s``. For a function whose docstring in
the source holds such a ``%(name)s`` placeholder, this extension takes the docstring of the
imported function instead, so the API reference shows what ``help()`` shows.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import griffe

PLACEHOLDER = re.compile(r"%\([A-Za-z_]+\)s")


class RuntimeDocstrings(griffe.Extension):
    """Docstrings with ``%(name)s`` placeholders are read from the imported object."""

    def on_function(self, *, func: griffe.Function, **kwargs: Any) -> None:
        docstring = func.docstring
        if docstring is None or not PLACEHOLDER.search(docstring.value):
            return
        owner: Any = importlib.import_module(func.module.path)
        for name in func.path[len(func.module.path) + 1 :].split("."):
            owner = getattr(owner, name)
        completed = inspect.getdoc(owner)
        if completed and not PLACEHOLDER.search(completed):
            docstring.value = completed
