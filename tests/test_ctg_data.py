"""The cardiotocography table shipped with the package (envs/data/): its shape and labels, its
attribution, its checksum, and that it is the UCI data (compared with a copy of the source where
one is at hand, beside the repository in ../shared/data/ctg/)."""

from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from envs.real_data import CTG_35, CTG_FEATURES, CTG_FILE, CTG_PATTERNS, load

ROOT = Path(__file__).resolve().parent.parent
ATTRIBUTION = CTG_FILE.with_suffix(".md")
#: A copy of the source, where one is at hand: shared/data/ctg/ in a folder above the repository.
SHARED = next(
    (p / "shared" / "data" / "ctg" for p in ROOT.parents if (p / "shared" / "data").is_dir()),
    ROOT.parent / "shared" / "data" / "ctg",
)


def _recorded(name: str) -> str:
    """The SHA-256 the attribution file records on the row that starts with ``name``."""
    for line in ATTRIBUTION.read_text(encoding="utf-8").splitlines():
        if line.startswith(f"| {name}"):
            return re.findall(r"`([0-9a-f]{64})`", line)[0]
    raise AssertionError(f"no checksum of {name} in {ATTRIBUTION.name}")


def test_the_shipped_table_has_the_uci_shape_and_labels():
    with open(CTG_FILE, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, records = rows[0], rows[1:]
    assert header == [*CTG_FEATURES, "LBE", "DR", "b", "e", *CTG_PATTERNS, "CLASS", "NSP"]
    assert len(records) == 2126 and all(len(r) == len(header) for r in records)
    nsp = [int(r[-1]) for r in records]
    assert [nsp.count(c) for c in (1, 2, 3)] == [1655, 295, 176]
    assert sorted({int(r[-2]) for r in records}) == list(range(1, 11))  # CLASS: 10 patterns
    table = load("ctg")
    assert table.x.shape == (2126, 21) and table.feature_names == CTG_FEATURES
    assert table.classes == (1, 2, 3) and table.counts() == {1: 1655, 2: 295, 3: 176}
    wide = load("ctg-35")
    assert wide.n_features == 35 == len(CTG_35) and wide.feature_names[21:25] == ("LBE", "DR", "b", "e")
    np.testing.assert_array_equal(wide.x[:, :21], table.x)
    # Each pattern indicator marks its morphologic class: they leak the label.
    classes = np.array([int(r[-2]) for r in records])
    indicators = wide.x[:, 25:35]
    assert np.array_equal(indicators.argmax(axis=1) + 1, classes) and np.all(indicators.sum(axis=1) == 1)


def test_the_shipped_file_is_the_one_its_attribution_describes():
    text = ATTRIBUTION.read_text(encoding="utf-8")
    for needed in ("CC BY 4.0", "doi:10.24432/C51S4N", "Campos, D. and Bernardes, J. (2000)",
                   "Ayres de Campos", "SisPorto 2.0", "benchmarks/derive_ctg.py"):  # fmt: skip
        assert needed in text, needed
    assert hashlib.sha256(CTG_FILE.read_bytes()).hexdigest() == _recorded("`cardiotocography.csv`")
    docs = (ROOT / "docs" / "real-data.md").read_text(encoding="utf-8")
    assert "CC BY 4.0" in docs and "doi:10.24432/C51S4N" in docs and "Ayres de Campos" in docs


def test_the_package_data_ships_the_table():
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "data/*.csv" in data["envs"] and "data/*.md" in data["envs"]


def test_the_shipped_table_is_the_uci_source():
    """Where a copy of the source is at hand (../shared/data/ctg/: the UCI workbook and its
    23-column CSV of the 21 features, CLASS and NSP), the shipped table is it, value for value."""
    if not (SHARED / "ctg.csv").is_file():
        pytest.skip(f"no copy of the source at {SHARED} to compare with")
    source = SHARED / "ctg.csv"
    assert hashlib.sha256(source.read_bytes()).hexdigest() == _recorded("the 23-column CSV")
    with open(source, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == [*CTG_FEATURES, "CLASS", "NSP"]
    expected = np.array(rows[1:], dtype=float)
    table = load("ctg")
    np.testing.assert_array_equal(table.x, expected[:, :21])
    assert [int(v) for v in expected[:, 22]] == list(table.y)
    workbook = SHARED / "CTG.xls"
    if workbook.is_file():
        assert hashlib.sha256(workbook.read_bytes()).hexdigest() == _recorded("`CTG.xls`")
        xlrd = pytest.importorskip("xlrd")
        assert xlrd is not None
        import sys

        sys.path.insert(0, str(ROOT / "benchmarks"))
        try:
            from derive_ctg import derive
        finally:
            sys.path.remove(str(ROOT / "benchmarks"))
        assert derive(workbook) == CTG_FILE.read_text(encoding="utf-8")
