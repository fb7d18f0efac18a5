"""The type check: mypy, configured in pyproject.toml ([tool.mypy]), passes on mlcb/, envs/ and agents/.

The strictness is stated there and in docs/design.md: mypy's default mode plus warn_unused_ignores,
warn_redundant_casts, strict_equality and extra_checks. ``make test`` installs the pinned mypy (the
dev extra and constraints.txt); without it this test is skipped.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parents[1]


def _mypy(*arguments: str, cache: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "mypy", "--cache-dir", str(cache), *arguments]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)


def test_the_packages_type_check(tmp_path_factory):
    cache = tmp_path_factory.getbasetemp() / "mypy-cache"
    run = _mypy(cache=cache)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Success: no issues found" in run.stdout


def test_the_check_finds_a_type_error(tmp_path):
    """The same configuration rejects a module with a type error (so the check above can fail)."""
    module = tmp_path / "broken.py"
    module.write_text('def half(n: int) -> int:\n    return n / 2\n\n\nhalf("two")\n')
    run = _mypy("--config-file", str(ROOT / "pyproject.toml"), str(module), cache=tmp_path / "cache")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "[return-value]" in run.stdout and "[arg-type]" in run.stdout
