"""MkDocs hooks of the documentation site (named in ``mkdocs.yml``; not a page of the site).

The package's docstrings are numpydoc with reStructuredText habits that Markdown does not know:
doctest blocks written as plain paragraphs (``>>> ...`` outside an ``Examples`` section),
``.. math::`` directives and Sphinx roles (``:class:`mlcb.Result```,
``:func:`~mlcb.theory.theorem_rate```). One Markdown preprocessor, added to the site's Markdown
extensions (which mkdocstrings uses for docstrings too), turns a doctest block into a fenced
``pycon`` block, a ``.. math::`` directive into a fenced ``tex`` block of its formula, and a role
into inline code linked to the API reference where the name has an entry there (an *optional*
cross-reference: a name without an entry stays plain code, and nothing is guessed). It also turns
a reStructuredText definition list (a term that is one code span or role, its definition indented
below it) into Markdown's.

The API reference itself is generated here at build time (:class:`Reference`, the events
``on_files`` and ``on_page_markdown``): one page per public module and per documented public
class, an index of them on ``api/index.md``, and their navigation after that page.
"""

from __future__ import annotations

import html
import importlib
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import griffe
from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

#: ``:class:`mlcb.Result```, ``:func:`~mlcb.theory.theorem_rate```, ``:mod:`envs.bandit```.
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|obj|exc|const):`(~?)([^`<>]+?)`")
FENCE = re.compile(r"^\s*(```|~~~)")
#: The term of a reStructuredText definition list: a line holding one code span or one role.
TERM = re.compile(r"^(\s*)(``[^`]+``|:(?:py:)?[a-z]+:`[^`]+`)\s*$")


def _role(match: re.Match) -> str:
    short, target = match.group(1) == "~", match.group(2).strip()
    title = target.rsplit(".", 1)[-1] if short else target
    return f'<autoref identifier="{html.escape(target)}" optional><code>{html.escape(title)}</code></autoref>'


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def definition_lists(lines: list[str]) -> list[str]:
    """reStructuredText definition lists as Markdown's (the ``def_list`` extension).

    A term is a line holding one code span or one role, after a blank line or another item, and
    its definition the lines right below it indented deeper::

        :func:`check_env`            :func:`check_env`
            an environment...   ->   :   an environment...

    Lines inside fenced code blocks are left alone.
    """
    out: list[str] = []
    fence: str | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        opened = FENCE.match(line)
        if fence is not None or opened:
            if fence is None:
                fence = opened.group(1)  # type: ignore[union-attr]
            elif opened and opened.group(1) == fence:
                fence = None
            out.append(line)
            index += 1
            continue
        term = TERM.match(line)
        after = lines[index + 1] if index + 1 < len(lines) else ""
        if (
            term
            and after.strip()
            and _indent(after) > len(term.group(1))
            and (not out or not out[-1].strip())
        ):
            indent, body = term.group(1), []
            index += 1
            while index < len(lines) and lines[index].strip() and _indent(lines[index]) > len(indent):
                body.append(lines[index].strip())
                index += 1
            out += [line, f"{indent}:   {body[0]}", *(f"{indent}    {text}" for text in body[1:]), ""]
            continue
        out.append(line)
        index += 1
    return out


class DocstringPreprocessor(Preprocessor):
    """Doctest paragraphs to fenced ``pycon`` blocks, ``.. math::`` to fenced ``tex`` blocks,
    reStructuredText definition lists to Markdown's, Sphinx roles to optional cross-references.

    Lines inside fenced code blocks are left alone, so pages that already fence their examples
    are unchanged.
    """

    def run(self, lines: list[str]) -> list[str]:
        lines = definition_lists(lines)
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


# --- The API reference ---------------------------------------------------------------------------
# One page per public module (its docstring, a table of its public names, the entries of its
# functions and constants) and one page per documented public class, generated from the packages
# at build time: a module's public names are its ``__all__`` or, without one, what it defines
# whose name does not start with ``_``. An object exported under several paths has one entry, at
# its shortest public path (``mlcb.Result``, not ``mlcb.storage.results.Result``); the other
# modules' tables link to it. ``api/index.md`` lists every module and every entry with its
# one-line summary, and the reference is added to the navigation after that page, so that a
# module added, moved or renamed in the packages needs no edit here.

#: The packages documented, in the order of the reference.
PACKAGES = ("mlcb", "envs", "agents")
#: The modules whose names a user calls, listed first in the index, in this order (the rest are
#: the rooms they are built of, listed after them for those who extend mlcb or read its code).
FRONT = (
    "mlcb",
    "mlcb.config",
    "mlcb.plot",
    "mlcb.theory",
    "mlcb.presets",
    "mlcb.policies",
    "agents",
    "envs",
    "mlcb.sweeps",
    "mlcb.report",
    "mlcb.testing",
    "mlcb.contracts",
    "mlcb.learners",
    "mlcb.river",
    "mlcb.selection_env",
)
#: The page that holds the index: the generated pages follow it in the navigation.
INDEX = "api/index.md"
#: Where the index goes on that page.
INDEX_MARKER = "<!-- api-index -->"
#: The griffe extensions mkdocstrings uses (mkdocs.yml), so that the index reads what the pages show.
EXTENSIONS = ("griffe_extensions.py:RuntimeDocstrings", "griffe_extensions.py:CommentDocstrings")
#: The order of the entries on a module's page: classes without a page of their own, functions, data.
ENTRY_ORDER = {"class": 0, "function": 1}
#: Longest one-line summary kept whole; a longer first paragraph is cut after its first sentence.
SUMMARY_CHARS = 160
SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]`'\"])\.(?=\s+[A-Z(`])")


@dataclass
class Name:
    """One public name of a module, and the entry that documents it."""

    name: str
    identifier: str  # the path of its entry (its shortest public path)
    kind: str  # class, function, attribute, module, or value (a name griffe cannot read)
    summary: str
    page: str  # the page of its entry


@dataclass
class Module:
    """One public module: its page, its public names and its public submodules."""

    path: str
    summary: str
    names: list[Name] = field(default_factory=list)
    submodules: list[str] = field(default_factory=list)

    @property
    def page(self) -> str:
        return module_page(self.path)


def module_page(module: str) -> str:
    return f"api/{module}/index.md"


def class_page(identifier: str) -> str:
    module, name = identifier.rsplit(".", 1)
    return f"api/{module}/{name}.md"


def one_line(docstring: str | None) -> str:
    """The first paragraph of a docstring on one line, cut after its first sentence if long.

    >>> one_line("Sweeps: a grid of settings.\\n\\nMore text.")
    'Sweeps: a grid of settings.'
    >>> one_line(None)
    ''
    """
    if not docstring:
        return ""
    paragraph = " ".join(docstring.strip().split("\n\n")[0].split())
    if paragraph.startswith(">>>"):
        return ""
    if len(paragraph) > SUMMARY_CHARS and (end := SENTENCE_END.search(paragraph)):
        paragraph = paragraph[: end.end()]
    return paragraph


class Reference:
    """The public modules and names of :data:`PACKAGES`, read statically by griffe."""

    def __init__(self, root: Path, packages: tuple[str, ...] = PACKAGES) -> None:
        here = Path(__file__).resolve().parent
        extensions = griffe.load_extensions(*(str(here / spec) for spec in EXTENSIONS))
        self.loader = griffe.GriffeLoader(
            search_paths=[str(root)], extensions=extensions, docstring_parser=griffe.Parser.numpy
        )
        self.packages = packages
        self.every: dict[str, griffe.Module] = {}  # module path -> griffe's module
        self.griffe: dict[str, griffe.Module] = {}  # the public ones (no part starts with _)
        for package in packages:
            self._walk(self.loader.load(package))  # type: ignore[arg-type]
        self.modules = {path: Module(path, one_line(_doc(mod))) for path, mod in sorted(self.griffe.items())}
        for path in self.modules:
            parent = path.rpartition(".")[0]
            if parent in self.modules:
                self.modules[parent].submodules.append(path)
        self._document()

    def _walk(self, module: griffe.Module) -> None:
        """Every module of a package into ``self.every``, the public ones into ``self.griffe``."""
        self.every[module.path] = module
        if not any(part.startswith("_") for part in module.path.split(".")):
            self.griffe[module.path] = module
        for member in module.members.values():
            if not member.is_alias and member.is_module:
                self._walk(member)  # type: ignore[arg-type]

    @staticmethod
    def public_names(module: griffe.Module) -> list[str]:
        """``__all__``, or the names the module defines without a leading underscore."""
        if module.exports is not None:
            return [str(name) for name in module.exports]
        return [
            name
            for name, member in module.members.items()
            if not name.startswith("_") and not member.is_alias and not member.is_module
        ]

    def _definition(self, module: griffe.Module, name: str) -> tuple[str, griffe.Object | None]:
        """Where ``module.name`` is defined (imports followed), and griffe's object for it."""
        for _ in range(20):  # a chain of re-exports
            target = module.imports.get(name)
            if target is None:
                member = module.members.get(name)
                if member is None or member.is_alias:
                    return f"{module.path}.{name}", None
                return member.path, member  # type: ignore[return-value]
            owner, _, name = target.rpartition(".")
            if owner not in self.every:  # outside the packages, or an attribute of a class
                return target, None
            module = self.every[owner]
        raise PluginError(f"API reference: the re-exports of {module.path}.{name} go round in a circle")

    def _document(self) -> None:
        exported: dict[str, list[tuple[str, str]]] = {}  # definition -> [(module, name)]
        objects: dict[str, griffe.Object | None] = {}
        for path, module in self.griffe.items():
            for name in self.public_names(module):
                definition, obj = self._definition(module, name)
                exported.setdefault(definition, []).append((path, name))
                objects[definition] = obj
        entries: dict[str, Name] = {}
        for definition, places in exported.items():
            obj = objects[definition]
            owner = definition.rpartition(".")[0]
            # The shortest public path that is not also a module (mlcb.compare is the module;
            # the function is mlcb.compare.compare), the defining module first among equals.
            paths = sorted(
                (path.count("."), path.rpartition(".")[0] != owner, path)
                for path in (f"{module}.{name}" for module, name in places)
                if path not in self.griffe
            )
            identifier = paths[0][2] if paths else definition
            kind = "module" if definition in self.griffe else (obj.kind.value if obj is not None else "value")
            summary = self.modules[definition].summary if kind == "module" else one_line(_doc(obj))
            if kind == "class" and summary:
                page = class_page(identifier)
            elif kind == "module":
                page = module_page(definition)
                identifier = definition
            else:
                page = module_page(identifier.rpartition(".")[0])
            entries[definition] = Name(identifier.rpartition(".")[2], identifier, kind, summary, page)
        for definition, places in exported.items():
            for where, name in places:
                entry = entries[definition]
                self.modules[where].names.append(
                    Name(name, entry.identifier, entry.kind, entry.summary, entry.page)
                )
        self.entries = sorted(entries.values(), key=lambda entry: entry.identifier)

    # --- pages ---------------------------------------------------------------------------------
    def own(self, module: str) -> list[Name]:
        """The entries documented under ``module`` (not the names it re-exports)."""
        return [name for name in self.modules[module].names if _parent(name.identifier) == module]

    def module_markdown(self, path: str) -> str:
        module = self.modules[path]
        parts = [f"---\ntitle: {path}\n---", _directive(path, heading_level=1, members=False)]
        if module.submodules:
            modules = [(sub, sub, "", self.modules[sub].summary) for sub in module.submodules]
            parts += ["## Modules", _table(modules, kinds=False)]
        if module.names:
            parts += [
                "## Contents",
                _table([(n.name, n.identifier, n.kind, n.summary) for n in module.names]),
            ]
        here = [name for name in self.own(path) if name.page == module.page and name.kind != "module"]
        for name in sorted(here, key=lambda name: ENTRY_ORDER.get(name.kind, len(ENTRY_ORDER))):
            if name.kind == "value":
                parts.append(self._value(name))
            else:
                parts.append(
                    _directive(name.identifier, heading_level=2, show_if_no_docstring=not name.summary)
                )
        return "\n\n".join(parts) + "\n"

    @staticmethod
    def class_markdown(name: Name) -> str:
        return f"---\ntitle: {name.identifier}\n---\n\n" + _directive(name.identifier, heading_level=1) + "\n"

    @staticmethod
    def _value(name: Name) -> str:
        """An entry for a public name griffe cannot read (``A, B = 0, 1``): its value, imported."""
        module, _, attribute = name.identifier.rpartition(".")
        value = repr(getattr(importlib.import_module(module), attribute))
        value = value if len(value) <= 80 else value[:77] + "..."
        return f"## `{name.identifier}` {{ #{name.identifier} }}\n\n```python\n{attribute} = {value}\n```"

    def index_markdown(self) -> str:
        """The index: first the modules of :data:`FRONT` (what a user calls), then, package by
        package, every other module (the rooms they are built of)."""
        front = [path for path in FRONT if path in self.modules]
        parts = [
            "## The API you call { #the-api-you-call }",
            "What a simulation, its figures and its theory need, and the registries and checks of "
            "one's own policies, experts and environments.",
        ]
        parts += self._index_modules(front)
        parts += [
            "## Inside the package { #inside-the-package }",
            "The rooms the API above is built of ([the design](../design.md) arranges them by "
            "layer): for extending mlcb and for reading its code.",
        ]
        for package in self.packages:
            inside = [p for p in self.modules if p.partition(".")[0] == package and p not in front]
            if inside:
                parts.append(f"### `{package}` {{ #package-{package} }}")
                parts += self._index_modules(inside, level="####")
        return "\n\n".join(parts) + "\n"

    def _index_modules(self, paths: list[str], level: str = "###") -> list[str]:
        parts = []
        for path in paths:
            module = self.modules[path]
            parts += [f"{level} [`{path}`][{path}] {{ #module-{path} }}", module.summary]
            rows = [(n.name, n.identifier, n.kind, n.summary) for n in self.own(path) if n.kind != "module"]
            if rows:
                parts.append(_table(rows))
        return parts

    def pages(self) -> dict[str, str]:
        """Every generated page: its path under docs/ and its Markdown."""
        pages = {module.page: self.module_markdown(path) for path, module in self.modules.items()}
        for entry in self.entries:
            if entry.kind == "class" and entry.page != module_page(_parent(entry.identifier)):
                pages[entry.page] = self.class_markdown(entry)
        return pages

    def navigation(self, path: str) -> dict[str, Any]:
        """The navigation of a module: its page, its classes' pages, its submodules."""
        children: list[Any] = [self.modules[path].page]
        children += [
            {name.name: name.page}
            for name in self.own(path)
            if name.kind == "class" and name.page != self.modules[path].page
        ]
        children += [self.navigation(sub) for sub in self.modules[path].submodules]
        title = path if path in self.packages else path.rpartition(".")[2]
        return {title: children if len(children) > 1 else children[0]}


def _doc(obj: griffe.Object | None) -> str | None:
    return obj.docstring.value if obj is not None and obj.docstring is not None else None


def _parent(identifier: str) -> str:
    return identifier.rpartition(".")[0]


def _directive(identifier: str, **options: Any) -> str:
    lines = [f"::: {identifier}", "    options:"]
    for key, value in options.items():
        lines.append(f"      {key}: {str(value).lower() if isinstance(value, bool) else value}")
    return "\n".join(lines)


def _table(rows: list[tuple[str, str, str, str]], kinds: bool = True) -> str:
    """A table of (name, identifier, kind, summary) rows, each name linked to its entry."""
    css = "api-table" if kinds else "api-table api-modules"
    out = [
        f'<div class="{css}" markdown>',
        "",
        "| name | kind | summary |" if kinds else "| name | summary |",
    ]
    out.append("|---|---|---|" if kinds else "|---|---|")
    for name, identifier, kind, summary in rows:
        cell = summary.replace("|", "\\|")
        if kind in ("attribute", "value"):  # a module's data: its constants, a registry object
            kind = "constant" if name.isupper() else "data"
        kind = f" {kind} |" if kinds else ""
        out.append(f"| [`{name}`][{identifier}] |{kind} {cell} |")
    return "\n".join([*out, "", "</div>"])


_REFERENCE: Reference | None = None


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    """Adds the generated pages of the API reference and their navigation after :data:`INDEX`."""
    global _REFERENCE
    root = Path(config.config_file_path).parent
    _REFERENCE = reference = Reference(root)
    for path, markdown in reference.pages().items():
        files.append(File.generated(config, path, content=markdown))
    sections = [reference.navigation(package) for package in reference.packages]
    if not _insert_after(config.nav, INDEX, sections):
        raise PluginError(f"API reference: mkdocs.yml's nav has no {INDEX}, after which the reference goes")
    return files


def _insert_after(nav: Any, page: str, sections: list[dict[str, Any]]) -> bool:
    if not isinstance(nav, list):
        return False
    for position, item in enumerate(nav):
        if item == page or (isinstance(item, dict) and page in item.values()):
            if nav[position + 1 : position + 1 + len(sections)] != sections:  # once (mkdocs serve)
                nav[position + 1 : position + 1] = sections
            return True
        if isinstance(item, dict) and any(_insert_after(value, page, sections) for value in item.values()):
            return True
    return False


def on_page_markdown(markdown: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
    """The index of the API reference, where :data:`INDEX` says ``<!-- api-index -->``."""
    if page.file.src_uri != INDEX:
        return markdown
    if INDEX_MARKER not in markdown or _REFERENCE is None:
        raise PluginError(f"API reference: {INDEX} has no {INDEX_MARKER} line for the index")
    return markdown.replace(INDEX_MARKER, _REFERENCE.index_markdown())
