"""The documentation site builds in strict mode, is arranged by kind, every page is in its
navigation, the API reference has an entry for every public name and an index of every page, and
no internal link of the built site is broken.

The API reference is generated at build time by ``docs/hooks.py`` from the packages' public names
(``__all__``, or what a module defines without a leading underscore): one page per public module
and one per documented public class. The tests here check that generator on a small package made
for the purpose, then check its output for the real packages against what Python itself says is
public (importing every module), so that a name added or moved in the packages is covered without
an edit to the reference.

The build runs ``mkdocs build --strict`` (a broken link, a missing anchor, a page left out of the
navigation or a docstring that does not parse is an error) with the tutorials rendered but not
executed (``MLCB_DOCS_EXECUTE=false``): ``tests/test_tutorials.py`` executes them. The link
checker then reads every HTML file of the built site: every internal ``href`` and ``src`` must
name a built file, and every ``#anchor`` an ``id`` of that file.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import pkgutil
import re
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CONFIG = ROOT / "mkdocs.yml"
#: The top-level sections of the navigation, in order: the manual by kind.
SECTIONS = ("Tutorials", "How-to guides", "Explanation", "The paper, reproduced", "Reference")
#: The packages the API reference documents.
PACKAGES = ("mlcb", "envs", "agents")
#: Largest page of the API reference, the index apart (the reference once put all of agents on
#: one 524 KB page; one page per module and per class keeps the largest near 140 KB).
MAX_PAGE_BYTES = 300_000


def _hooks() -> ModuleType:
    """docs/hooks.py, which is a file of the site, not a module of the package."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    if "docs_hooks" not in sys.modules:
        spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["docs_hooks"] = module  # dataclasses look their module up while it loads
        spec.loader.exec_module(module)
    return sys.modules["docs_hooks"]


# --- the navigation (no mkdocs needed) ---------------------------------------------------------
def _nav() -> str:
    text = CONFIG.read_text(encoding="utf-8")
    return text[text.index("\nnav:") :]


def _nav_entries() -> list[str]:
    """The page paths named in mkdocs.yml's ``nav``, in order."""
    return re.findall(r"^\s+- (?:[^:\n]+: )?([\w./-]+\.(?:md|py))\s*$", _nav(), re.M)


def _sections() -> dict[str, list[str]]:
    """The pages of each top-level section of mkdocs.yml's ``nav``."""
    found: dict[str, list[str]] = {}
    section = None
    for line in _nav().splitlines()[1:]:
        top = re.match(r"^  - ([^:]+):\s*(\S*)$", line)
        if top:
            section = top.group(1)
            found[section] = [top.group(2)] if top.group(2) else []
        elif section and (page := re.search(r"([\w./-]+\.(?:md|py))\s*$", line)):
            found[section].append(page.group(1))
    return found


def _pages() -> set[str]:
    """Every page of docs/: Markdown pages and the tutorials (Python scripts)."""
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    return pages | {p.relative_to(DOCS).as_posix() for p in (DOCS / "tutorials").glob("*.py")}


def test_every_page_is_in_the_navigation():
    entries = _nav_entries()
    assert len(entries) == len(set(entries)), "a page is named twice in mkdocs.yml's nav"
    missing = sorted(_pages() - set(entries))
    assert not missing, f"pages of docs/ that mkdocs.yml's nav lacks: {missing}"
    absent = sorted(set(entries) - _pages())
    assert not absent, f"mkdocs.yml's nav names pages that do not exist: {absent}"


def test_the_navigation_is_arranged_by_kind():
    sections = _sections()
    assert list(sections) == ["Home", *SECTIONS], f"mkdocs.yml's nav: sections {list(sections)}"
    assert sections["Home"] == ["index.md"]
    # Each section opens with its landing page, and the kinds hold what they should.
    assert sections["Tutorials"][0] == "tutorials/index.md"
    assert {f"tutorials/{p.name}" for p in (DOCS / "tutorials").glob("*.py")} <= set(sections["Tutorials"])
    assert sections["How-to guides"][0] == "how-to/index.md"
    assert sections["Reference"][0] == "api/index.md", "the API index opens the reference (hooks.py INDEX)"
    assert _hooks().INDEX == "api/index.md"
    assert "theory.md" in sections["Explanation"] and "paper.md" in sections["The paper, reproduced"]


def test_the_how_to_index_links_every_how_to_guide():
    text = (DOCS / "how-to" / "index.md").read_text(encoding="utf-8")
    linked = {(DOCS / "how-to" / target).resolve() for target in re.findall(r"\]\(([^)#\s]+)", text)}
    for page in _sections()["How-to guides"][1:]:
        assert (DOCS / page).resolve() in linked, f"docs/how-to/index.md does not link {page}"


def test_the_navigation_check_can_fail(tmp_path):
    assert "index.md" in _nav_entries() and "tutorials/first-simulation.py" in _nav_entries()
    assert "no-such-page.md" not in _nav_entries()
    assert "User guide" not in _sections()


#: An example marked ``<!-- example: NAME -->`` before a fenced Python block of a page.
EXAMPLE = re.compile(r"<!-- example: ([A-Za-z0-9_-]+) -->\n```python\n(.*?)```", re.S)


def _example(name: str) -> str:
    """The code of the example marked ``name`` on a page of docs/."""
    found = [
        code
        for page in sorted(DOCS.rglob("*.md"))
        for key, code in EXAMPLE.findall(page.read_text())
        if key == name
    ]
    assert len(found) == 1, f"example {name!r} is marked {len(found)} times in docs/"
    return found[0]


def test_the_results_how_to_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the recipe writes under results/
    namespace: dict = {"__name__": "how_to_example"}
    exec(compile(_example("save-load-share"), "docs/how-to/results.md", "exec"), namespace)  # noqa: S102
    saved = tmp_path / "results" / "trap-small"
    assert {"curves.parquet", "metadata.json", "regret.png"} <= {p.name for p in saved.iterdir()}
    assert list(namespace["again"].summary()["setting"]) == ["mlcb M=1", "mlcb M=2"]
    assert len(list((tmp_path / "results" / "parts").iterdir())) == 2, "one resume directory per setting"
    assert "pseudo_regret" in capsys.readouterr().out


# --- the API reference, generated: the generator on a package made for the purpose ------------
TOY = {
    "toy/__init__.py": '''
        """A toy package: the reference's generator on every case it handles."""
        from toy._private import Hidden
        from toy.core import Model, fit
        from toy import compare as _compare_module  # noqa
        from toy.compare import compare

        __all__ = ["Model", "fit", "compare", "Hidden", "LIMIT"]

        #: The largest size, read from its comment.
        LIMIT = 10
    ''',
    "toy/_private.py": '''
        class Hidden:
            """Defined in a private module, public through the package."""
    ''',
    "toy/core.py": '''
        """Where the models live."""

        __all__ = ["FIRST", "SECOND", "STEP", "Model", "Bare", "fit"]

        FIRST, SECOND = 0, 1
        STEP = 0.5  #: A trailing comment.

        class Model:
            """A model with a page of its own."""

            def predict(self, x):
                """Predict."""
                return x

        class Bare:
            pass

        def fit(model):
            """Fit a model.

            A second paragraph that the index leaves out.
            """
            return model

        def _helper():
            """Private: not documented."""
    ''',
    "toy/compare.py": '''
        """A module and a function of the same name, as mlcb.compare is."""

        def compare():
            """Compare things."""
    ''',
}


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    hooks = _hooks()
    root = tmp_path_factory.mktemp("toy")
    for path, text in TOY.items():
        (root / path).parent.mkdir(exist_ok=True)
        (root / path).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    sys.path.insert(0, str(root))  # the entry of a name griffe cannot read imports its module
    try:
        yield hooks.Reference(root, packages=("toy",))
    finally:
        sys.path.remove(str(root))
        for name in [name for name in sys.modules if name == "toy" or name.startswith("toy.")]:
            del sys.modules[name]


def test_the_reference_documents_each_object_once_at_its_shortest_path(toy):
    entries = {entry.identifier: entry for entry in toy.entries}
    # Re-exported by the package: documented there, with a page per class that has a docstring.
    assert entries["toy.Model"].page == "api/toy/Model.md" and entries["toy.Model"].kind == "class"
    assert entries["toy.fit"].page == "api/toy/index.md" and entries["toy.fit"].summary == "Fit a model."
    assert entries["toy.Hidden"].page == "api/toy/Hidden.md", "a private module's class, public in toy"
    # A name that is also a module's path is documented in its module (as mlcb.compare.compare).
    assert "toy.compare.compare" in entries and "toy.compare" not in entries
    # Module-level data: the #: comment above, or after on its line, is the summary.
    assert entries["toy.LIMIT"].summary == "The largest size, read from its comment."
    assert entries["toy.core.STEP"].summary == "A trailing comment."
    # A name griffe cannot read (tuple unpacking) still has an entry, with its value.
    assert entries["toy.core.FIRST"].kind == "value"
    assert "FIRST = 0" in toy.module_markdown("toy.core")
    # A class without a docstring is an entry of its module's page, with its members.
    assert entries["toy.core.Bare"].page == "api/toy.core/index.md"
    assert "::: toy.core.Bare\n    options:\n      heading_level: 2\n      show_if_no_docstring: true" in (
        toy.module_markdown("toy.core")
    )
    assert not any(identifier.endswith("_helper") or ".core.Model" in identifier for identifier in entries)
    assert sorted(toy.modules) == ["toy", "toy.compare", "toy.core"], "private modules have no page"


def test_the_reference_pages_index_and_navigation_agree(toy):
    pages = toy.pages()
    assert sorted(pages) == [
        "api/toy.compare/index.md",
        "api/toy.core/index.md",
        "api/toy/Hidden.md",
        "api/toy/Model.md",
        "api/toy/index.md",
    ]
    assert (
        pages["api/toy/Model.md"]
        == "---\ntitle: toy.Model\n---\n\n::: toy.Model\n    options:\n      heading_level: 1\n"
    )
    # The module's table lists every public name, re-exports linked to where they are documented.
    package = pages["api/toy/index.md"]
    for row in ("[`Model`][toy.Model]", "[`compare`][toy.compare.compare]", "[`LIMIT`][toy.LIMIT]"):
        assert row in package
    assert "::: toy.fit" in package and "::: toy.Model" not in package
    # The index: every module and every entry, each once.
    index = toy.index_markdown()
    for entry in toy.entries:
        assert index.count(f"][{entry.identifier}]") == 1, entry.identifier
    for module in toy.modules:
        assert f"[`{module}`][{module}]" in index
    # The navigation: every page once.
    flat: list[str] = []

    def walk(item):
        if isinstance(item, str):
            flat.append(item)
        elif isinstance(item, dict):
            for value in item.values():
                walk(value)
        else:
            for value in item:
                walk(value)

    walk(toy.navigation("toy"))
    assert sorted(flat) == sorted(pages)


def test_the_index_reads_docstrings_as_the_pages_do():
    # The index's summaries come from griffe with the extensions mkdocstrings renders the pages with.
    listed = re.findall(
        r"^\s+- docs/(griffe_extensions\.py:\w+)\s*$", CONFIG.read_text(encoding="utf-8"), re.M
    )
    assert listed == list(_hooks().EXTENSIONS)


def test_one_line_summaries():
    hooks = _hooks()
    assert hooks.one_line("First line\ncontinued.\n\nSecond paragraph.") == "First line continued."
    long = "A first sentence, e.g. this one. " + "More words. " * 20
    assert hooks.one_line(long) == "A first sentence, e.g. this one."
    assert hooks.one_line(">>> 1 + 1\n2") == "" and hooks.one_line(None) == ""


def test_comment_docstrings():
    pytest.importorskip("griffe")
    spec = importlib.util.spec_from_file_location("docs_griffe_extensions", DOCS / "griffe_extensions.py")
    extensions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extensions)
    lines = ["#: The sizes.", "#: Two of them.", "SIZES = (1, 2)", "# plain", "X = 1", "Y = 2  #: Why."]
    assert extensions.comment_docstring(lines, 3) == "The sizes.\nTwo of them."
    assert extensions.comment_docstring(lines, 5) is None
    assert extensions.comment_docstring(lines, 6) == "Why."


# --- the API reference of the packages: every public name, as Python sees it -------------------
def _public_modules() -> list[ModuleType]:
    """Every module of the packages without a leading underscore in its path, imported."""
    modules = []
    for package in PACKAGES:
        top = importlib.import_module(package)
        modules.append(top)
        for info in pkgutil.walk_packages(top.__path__, package + "."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                modules.append(importlib.import_module(info.name))
    return modules


def _public_names(module: ModuleType) -> list[str]:
    """``__all__``, or the classes and functions the module defines without a leading underscore."""
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or callable(value))
        and not inspect.ismodule(value)
        and getattr(value, "__module__", None) == module.__name__
    ]


def _resolve(identifier: str):
    """The object an entry's identifier names: a module, then attributes."""
    parts = identifier.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            value = getattr(value, part)
        return value
    raise LookupError(identifier)


@pytest.fixture(scope="module")
def reference():
    return _hooks().Reference(ROOT)


def test_every_public_module_has_a_page(reference):
    modules = [module.__name__ for module in _public_modules()]
    assert sorted(modules) == sorted(reference.modules), "the reference's modules are not the packages'"
    pages = reference.pages()
    for name in modules:
        assert f"api/{name}/index.md" in pages, name
    # The rooms named in the issue that once had no page.
    for name in ("mlcb.engine", "mlcb.registry", "mlcb.sweeps", "mlcb.selection_env", "mlcb.storage"):
        assert f"api/{name}/index.md" in pages, name


def test_every_public_name_has_an_entry(reference):
    documented: dict[int, list] = {}
    for entry in reference.entries:
        if entry.kind != "module":
            documented.setdefault(id(_resolve(entry.identifier)), []).append(entry)
    pages = reference.pages()
    missing = []
    for module in _public_modules():
        for name in _public_names(module):
            value = getattr(module, name)
            if inspect.ismodule(value):  # a submodule in __all__: its page
                assert f"api/{value.__name__}/index.md" in pages
                continue
            plain = inspect.isclass(value) or inspect.isroutine(value) or hasattr(value, "py_func")
            entries = [e for e in documented.get(id(value), []) if plain or e.name == name]
            if not entries:
                missing.append(f"{module.__name__}.{name}")
            for entry in entries:
                assert entry.page in pages, entry
    assert not missing, f"public names without an entry in the API reference: {missing}"
    assert len(reference.entries) > 500  # the check is not vacuous


def test_the_index_lists_the_api_a_user_calls_before_the_internals(reference):
    front, inside = reference.index_markdown().split("## Inside the package", 1)
    for name in (
        "mlcb.simulate",
        "mlcb.plot.regret",
        "mlcb.theory.theorem_rate",
        "mlcb.testing.check_expert",
    ):
        assert f"][{name}]" in front, name
    for module in ("mlcb.cli.output", "mlcb.engine.replications", "mlcb.kernels.tables"):
        assert f"][{module}]" in inside and f"][{module}]" not in front, module


def test_every_page_is_in_the_index_and_the_navigation(reference):
    pages = reference.pages()
    index = reference.index_markdown()
    linked = set()
    for entry in reference.entries:
        if f"][{entry.identifier}]" in index:
            linked.add(entry.page)
    linked |= {module.page for path, module in reference.modules.items() if f"[`{path}`][{path}]" in index}
    assert sorted(set(pages) - linked) == [], "pages of the reference its index does not link"
    nav = str([reference.navigation(package) for package in PACKAGES])
    assert [page for page in pages if f"'{page}'" not in nav] == [], "pages missing from the navigation"


# --- the built site ---------------------------------------------------------------------------
class _Page(HTMLParser):
    """The ``id``s of one HTML file and the ``href``/``src`` values it links."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"])
        if tag == "a" and values.get("name"):
            self.ids.add(values["name"])
        for key in ("href", "src"):
            if values.get(key) is not None:
                self.links.append(values[key])


def broken_links(site: Path) -> list[str]:
    """Every internal link of the HTML files under ``site`` whose file or anchor is not there.

    External links (a scheme or a host) are not followed. A path ending in ``/`` (or naming a
    folder) means its ``index.html``; a path starting with ``/`` is taken from the site's root.
    """
    site = site.resolve()
    pages = {}
    for path in sorted(site.rglob("*.html")):
        parser = _Page()
        parser.feed(path.read_text(encoding="utf-8"))
        pages[path.resolve()] = parser
    broken = []
    for path, parser in pages.items():
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                continue
            if not parts.path:
                target = path
            elif parts.path.startswith("/"):
                target = (site / unquote(parts.path).lstrip("/")).resolve()
            else:
                target = (path.parent / unquote(parts.path)).resolve()
            if parts.path.endswith("/") or target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(site)}: {link}"
            if not target.is_file():
                broken.append(f"{where} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in pages[target].ids:
                    broken.append(f"{where} (no such anchor)")
    return broken


def test_the_link_checker_finds_broken_links(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text('<h2 id="here">x</h2><a href="#here">ok</a>')
    (tmp_path / "index.html").write_text(
        '<a href="a/">ok</a> <a href="a/#here">ok</a> <a href="/a/index.html">ok</a>'
        ' <a href="https://example.org/x">external</a> <img src="b.png">'
        ' <a href="a/#nowhere">bad anchor</a> <a href="missing/">bad file</a>'
    )
    assert broken_links(tmp_path) == [
        "index.html: b.png (no such file)",
        "index.html: a/#nowhere (no such anchor)",
        "index.html: missing/ (no such file)",
    ]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, MLCB_DOCS_EXECUTE="false", NO_MKDOCS_2_WARNING="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(CONFIG), "-d", str(out)]
    build = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    return out, build


def test_the_site_builds_in_strict_mode_without_warnings(site):
    out, build = site
    log = build.stdout + build.stderr
    assert build.returncode == 0, f"mkdocs build --strict failed:\n{log[-6000:]}"
    warnings = [line for line in log.splitlines() if re.match(r"(WARNING|ERROR)\b", line)]
    assert not warnings, "\n".join(warnings)
    for page in ("index.html", "getting-started/index.html", "how-to/index.html", "api/index.html"):
        assert (out / page).is_file(), page
    for page in ("api/mlcb/index.html", "api/mlcb/Result/index.html", "api/mlcb.engine/index.html"):
        assert (out / page).is_file(), page
    for tutorial in (DOCS / "tutorials").glob("*.py"):
        assert (out / "tutorials" / tutorial.stem / "index.html").is_file(), tutorial.name
    # Code blocks wrap at the column's edge rather than run past it (docs/stylesheets/code.css).
    assert "stylesheets/code.css" in (out / "getting-started" / "index.html").read_text(encoding="utf-8")
    assert "white-space: pre-wrap" in (out / "stylesheets" / "code.css").read_text(encoding="utf-8")


def test_no_internal_link_of_the_site_is_broken(site):
    out, build = site
    assert build.returncode == 0, "the build failed (see the test above)"
    broken = broken_links(out)
    assert not broken, "broken internal links:\n" + "\n".join(broken)


def _read(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def test_every_entry_of_the_reference_is_on_its_page(site, reference):
    out, build = site
    assert build.returncode == 0, "the build failed (see the test above)"
    ids: dict[str, set[str]] = {}
    for entry in reference.entries:
        html = out / entry.page.removesuffix(".md").removesuffix("index").strip("/") / "index.html"
        if html not in ids:
            ids[html] = _read(html).ids
        assert entry.identifier in ids[html], f"{html.relative_to(out)} has no entry {entry.identifier}"


def test_the_index_links_every_page_of_the_reference(site):
    out, build = site
    assert build.returncode == 0, "the build failed (see the test above)"
    index = out / "api" / "index.html"
    linked = {(index.parent / urlsplit(link).path).resolve() for link in _read(index).links}
    linked = {path / "index.html" if path.is_dir() else path for path in linked}
    pages = {path.resolve() for path in (out / "api").rglob("index.html")} - {index.resolve()}
    assert len(pages) > 150
    assert sorted(str(p.relative_to(out)) for p in pages - linked) == [], "pages the API index does not link"
    sizes = {str(p.relative_to(out)): p.stat().st_size for p in pages}
    assert max(sizes.values()) <= MAX_PAGE_BYTES, sorted(sizes.items(), key=lambda item: -item[1])[:3]


def test_docstring_markup_becomes_markdown():
    hooks = _hooks()
    import markdown

    source = (
        "See :func:`~mlcb.theory.theorem_rate`.\n\n>>> 1 + 1\n2\n\n.. math::\n\n    U(n) = n\n\n"
        "After.\n\n```python\n>>> left alone\n```\n"
    )
    html = markdown.Markdown(extensions=[hooks.DocstringExtension(), "fenced_code"]).convert(source)
    assert (
        '<autoref identifier="mlcb.theory.theorem_rate" optional><code>theorem_rate</code></autoref>' in html
    )
    assert '<code class="language-pycon">&gt;&gt;&gt; 1 + 1\n2\n</code>' in html
    assert '<code class="language-tex">U(n) = n\n</code>' in html
    assert "<p>After.</p>" in html
    assert '<code class="language-python">&gt;&gt;&gt; left alone\n</code>' in html


def test_definition_lists_become_markdown():
    hooks = _hooks()
    import markdown

    source = (
        "Intro.\n\n:func:`check_env`\n    an environment,\n    checked.\n``plain``\n    a code term.\n\n"
        "After.\n\n```\n``fenced``\n    left alone\n```\n"
    )
    html = markdown.Markdown(extensions=[hooks.DocstringExtension(), "fenced_code", "def_list"]).convert(
        source
    )
    assert html.count("<dt>") == 2 and "<dd>an environment,\nchecked.</dd>" in html
    assert '<dt><autoref identifier="check_env" optional><code>check_env</code></autoref></dt>' in html
    assert "<dt><code>plain</code></dt>" in html and "<p>After.</p>" in html
    assert "<code>``fenced``\n    left alone\n</code>" in html
    # A term needs a blank line (or another item) above it: a paragraph's last line is no term.
    assert hooks.definition_lists(["text", "``x``", "    more"]) == ["text", "``x``", "    more"]
