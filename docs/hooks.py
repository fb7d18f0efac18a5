"""MkDocs hooks of the documentation site (named in ``mkdocs.yml``; not a page of the site).

The package's docstrings are numpydoc with reStructuredText habits that Markdown does not know:
doctest blocks written as plain paragraphs (``>>> ...`` outside an ``Examples`` section),
``.. math::`` directives and Sphinx roles (``:class:`mlcb.Result```,
``:func:`~mlcb.theory.theorem_rate```). One Markdown preprocessor, added to the site's Markdown
extensions (which mkdocstrings uses for docstrings too), turns a doctest block into a fenced
``pycon`` block, a ``.. math::`` directive into a fenced ``tex`` block of its formula, and a role
into inline code linked to the API reference where the name has an entry there (an *optional*
cross-reference: a name without an entry stays plain code, and nothing is guessed).
"""

from __future__ import annotations

import html
import re
import textwrap

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority

#: ``:class:`mlcb.Result```, ``:func:`~mlcb.theory.theorem_rate```, ``:mod:`envs.bandit```.
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|obj|exc|const):`(~?)([^`<>]+?)`")
FENCE = re.compile(r"^\s*(```|~~~)")


def _role(match: re.Match) -> str:
    short, target = match.group(1) == "~", match.group(2).strip()
    title = target.rsplit(".", 1)[-1] if short else target
    return f'<autoref identifier="{html.escape(target)}" optional><code>{html.escape(title)}</code></autoref>'


class DocstringPreprocessor(Preprocessor):
    """Doctest paragraphs to fenced ``pycon`` blocks, ``.. math::`` to fenced ``tex`` blocks,
    Sphinx roles to optional cross-references.

    Lines inside fenced code blocks are left alone, so pages that already fence their examples
    are unchanged.
    """

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        fence: str | None = None
        doctest = False
        math: str | None = None  # the indentation of an open ``.. math::`` directive
        body: list[str] = []
        for line in lines:
            if math is not None:  # the directive's body: blank lines and lines indented deeper
                if not line.strip() or line.startswith(math + " "):
                    body.append(line)
                    continue
                out.extend(self._math(math, body))
                math, body = None, []
            opened = FENCE.match(line)
            if fence is not None:  # inside a fenced block: copy until it closes
                out.append(line)
                if opened and opened.group(1) == fence:
                    fence = None
                continue
            if doctest:
                if line.strip():  # a doctest block runs to the next blank line
                    out.append(line)
                    continue
                out.append("```")
                doctest = False
            if opened:
                fence = opened.group(1)
                out.append(line)
            elif line.strip() == ".. math::":
                math = line[: len(line) - len(line.lstrip())]
            elif line.lstrip().startswith(">>> "):
                indent = line[: len(line) - len(line.lstrip())]
                out.extend(["", f"{indent}```pycon", line])
                doctest = True
            else:
                out.append(ROLE.sub(_role, line))
        if doctest:
            out.append("```")
        if math is not None:
            out.extend(self._math(math, body))
        return out

    @staticmethod
    def _math(indent: str, body: list[str]) -> list[str]:
        """A fenced ``tex`` block of a ``.. math::`` directive's body, dedented."""
        formula = textwrap.dedent("\n".join(body)).strip("\n").splitlines()
        return ["", f"{indent}```tex", *(indent + line for line in formula), f"{indent}```", ""]


class DocstringExtension(Extension):
    """The Markdown extension carrying :class:`DocstringPreprocessor`."""

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Markdown's name)
        # Before the fenced-code preprocessor (priority 25), so that the blocks made here are fenced.
        md.preprocessors.register(DocstringPreprocessor(md), "mlcb_docstrings", 30)


@event_priority(100)  # before mkdocstrings reads the list of extensions
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    config.markdown_extensions.append(DocstringExtension())
    return config
