"""The documentation site builds in strict mode, every page is in its navigation, the API
reference covers the public API, and no internal link of the built site is broken.

The build runs ``mkdocs build --strict`` (a broken link, a missing anchor, a page left out of the
navigation or a docstring that does not parse is an error) with the tutorials rendered but not
executed (``MLCB_DOCS_EXECUTE=false``): ``tests/test_tutorials.py`` executes them. The link
checker then reads every HTML file of the built site: every internal ``href`` and ``src`` must
name a built file, and every ``#anchor`` an ``id`` of that file.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CONFIG = ROOT / "mkdocs.yml"
#: The modules with a page of the API reference: ``docs/api/NAME.md`` documents ``MODULE``.
API_PAGES = {
    "mlcb": "mlcb",
    "testing": "mlcb.testing",
    "river": "mlcb.river",
    "paper": "mlcb.paper",
    "envs": "envs",
    "agents": "agents",
    "policies": "mlcb.policies",
    "theory": "mlcb.theory",
    "plot": "mlcb.plot",
    "contracts": "mlcb.contracts",
    "kernels": "mlcb.kernels",
    "random": "mlcb.kernels.random",
}
#: ``::: identifier`` lines of mkdocstrings.
DIRECTIVE = re.compile(r"^::: ([\w.]+)", re.M)


# --- the navigation (no mkdocs needed) ---------------------------------------------------------
def _nav_entries() -> list[str]:
    """The page paths named in mkdocs.yml's ``nav``, in order."""
    text = CONFIG.read_text(encoding="utf-8")
    nav = text[text.index("\nnav:") :]
    return re.findall(r"^\s+- (?:[^:\n]+: )?([\w./-]+\.(?:md|py))\s*$", nav, re.M)


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


def test_the_navigation_has_its_sections():
    text = CONFIG.read_text(encoding="utf-8")
    for section in ("Getting started", "Tutorials", "User guide", "Benchmarks", "API reference"):
        assert re.search(rf"^  - {section}:", text, re.M), f"mkdocs.yml's nav has no {section!r}"


def test_the_navigation_check_can_fail(tmp_path):
    assert "index.md" in _nav_entries() and "tutorials/first-simulation.py" in _nav_entries()
    assert "no-such-page.md" not in _nav_entries()


# --- the API reference ------------------------------------------------------------------------
def test_every_public_name_of_mlcb_has_one_entry():
    import mlcb

    identifiers = DIRECTIVE.findall((DOCS / "api" / "mlcb.md").read_text(encoding="utf-8"))
    names = [identifier.rsplit(".", 1)[-1] for identifier in identifiers]
    assert sorted(names) == sorted(mlcb.__all__), "docs/api/mlcb.md: one entry per name in mlcb.__all__"
    for identifier in identifiers:  # each entry names the object mlcb exports
        module, name = identifier.rsplit(".", 1)
        assert getattr(importlib.import_module(module), name) is getattr(mlcb, name), identifier


@pytest.mark.parametrize("page, module", sorted(API_PAGES.items()))
def test_every_module_of_the_public_api_has_a_page(page, module):
    path = DOCS / "api" / f"{page}.md"
    assert path.is_file(), f"the API reference has no page for {module} (docs/api/{page}.md)"
    if page != "mlcb":
        assert DIRECTIVE.findall(path.read_text(encoding="utf-8")) == [module]
    assert f"api/{page}.md" in _nav_entries()


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
    for page in ("index.html", "getting-started/index.html", "api/mlcb/index.html"):
        assert (out / page).is_file(), page
    for tutorial in (DOCS / "tutorials").glob("*.py"):
        assert (out / "tutorials" / tutorial.stem / "index.html").is_file(), tutorial.name


def test_no_internal_link_of_the_site_is_broken(site):
    out, build = site
    assert build.returncode == 0, "the build failed (see the test above)"
    broken = broken_links(out)
    assert not broken, "broken internal links:\n" + "\n".join(broken)


def test_the_api_reference_has_an_entry_for_every_public_name(site):
    import mlcb

    out, build = site
    assert build.returncode == 0, "the build failed (see the test above)"
    ids = _Page()
    ids.feed((out / "api" / "mlcb" / "index.html").read_text(encoding="utf-8"))
    for identifier in DIRECTIVE.findall((DOCS / "api" / "mlcb.md").read_text(encoding="utf-8")):
        assert identifier in ids.ids, f"api/mlcb has no entry {identifier}"
    assert len(mlcb.__all__) == len(DIRECTIVE.findall((DOCS / "api" / "mlcb.md").read_text()))


def test_docstring_markup_becomes_markdown():
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    import importlib.util

    import markdown

    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
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
