"""Griffe extensions of the documentation site (named in ``mkdocs.yml``; not a page of the site).

Griffe reads docstrings from the source. Two kinds of documentation are not where it looks:

* A few docstrings are completed when their module is imported: ``agents.rates`` writes the
  parameters every rate function shares once and splices them into each docstring where it says
  ``%(n)s``. For a function whose docstring in the source holds such a ``%(name)s`` placeholder,
  :class:`RuntimeDocstrings` takes the docstring of the imported function instead, so the API
  reference shows what ``help()`` shows.
* Constants and fields are documented the way Sphinx reads them, by ``#:`` comments on the lines
  above the assignment (or after it, on its line). :class:`CommentDocstrings` makes such a
  comment the attribute's docstring, so the reference and its index show it.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import griffe

PLACEHOLDER = re.compile(r"%\([A-Za-z_]+\)s")
#: A ``#:`` comment after the code on an assignment's line.
TRAILING = re.compile(r"\s#:\s?(.*)$")


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


def comment_docstring(lines: list[str], lineno: int) -> str | None:
    """The ``#:`` comment documenting the assignment on line ``lineno`` (1-based), or None.

    The comment lines directly above the assignment win; otherwise a ``#:`` comment at the end
    of the assignment's own line.

    >>> comment_docstring(["#: The sizes.", "#: Two of them.", "SIZES = (1, 2)"], 3)
    'The sizes.\\nTwo of them.'
    >>> comment_docstring(["DELTA = 0.1  #: The confidence level."], 1)
    'The confidence level.'
    >>> comment_docstring(["# a plain comment", "X = 1"], 2) is None
    True
    """
    above: list[str] = []
    index = lineno - 2
    while index >= 0 and lines[index].lstrip().startswith("#:"):
        above.insert(0, lines[index].lstrip()[2:].strip())
        index -= 1
    if above:
        return "\n".join(above)
    trailing = TRAILING.search(lines[lineno - 1]) if 0 < lineno <= len(lines) else None
    return trailing.group(1).strip() if trailing and trailing.group(1).strip() else None


class CommentDocstrings(griffe.Extension):
    """An attribute without a docstring takes its ``#:`` comment as one."""

    def on_attribute_instance(self, *, attr: griffe.Attribute, **kwargs: Any) -> None:
        if attr.docstring is not None or attr.lineno is None or attr.filepath is None:
            return
        path = attr.filepath
        if not isinstance(path, Path) or path not in attr.lines_collection:
            return
        text = comment_docstring(attr.lines_collection[path], attr.lineno)
        if text:
            attr.docstring = griffe.Docstring(text, lineno=attr.lineno, parent=attr)
