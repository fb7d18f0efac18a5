"""The IWPC warfarin reader (envs/warfarin.py) on a small synthetic subject file generated here with
the file's columns (the real file may not be committed, nor anything derived from it): the
patients with a dose, the dose classes, the 93 covariates, damaged values refused by name, and
the paper's section on it."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from envs import warfarin
from envs.real_data import RealDataEnv
from envs.tabular import Table

#: A copy of the released file, where one is at hand: shared/data/warfarin/ in a folder above the repository.
SHARED = next(
    (p / "shared" / "data" / "warfarin" / "warfarin.csv" for p in Path(__file__).resolve().parents[1:]
     if (p / "shared" / "data").is_dir()),
    Path("shared") / "data" / "warfarin" / "warfarin.csv",
)  # fmt: skip


def _subjects(n: int = 60, seed: int = 0) -> list[dict[str, str]]:
    """``n`` synthetic subjects with every column the reader needs, values from the file's dictionary."""
    rng = np.random.default_rng(seed)
    pick = lambda values: str(values[rng.integers(len(values))])  # noqa: E731
    out = []
    for i in range(n):
        row = {
            warfarin.SUBJECT: f"PA{100000 + i}",
            warfarin.DOSE: f"{rng.uniform(7, 80):.2f}",
            warfarin.AGE: pick([*warfarin.AGE_BINS, "NA"]),
            warfarin.HEIGHT: pick(["165.10", "170.18", "NA", "181.00"]),
            warfarin.WEIGHT: pick(["70.0", "82.5", "NA", "60"]),
            warfarin.GENDER: pick(["male", "female", "NA"]),
            warfarin.RACE: pick(["White", "Asian", "Black or African American", "Unknown"]),
            warfarin.ETHNICITY: pick(["not Hispanic or Latino", "Hispanic or Latino", "Unknown"]),
            warfarin.INDICATION: pick(["3", "4", "3; 8", "1 or 2", "NA", "1,2", "7"]),
            warfarin.SMOKER: pick(["0", "1", "NA"]),
            warfarin.TARGET_INR: pick(["2.5", "3", "NA"]),
            warfarin.INR_RANGE: pick(["2-3", "2-3.5", "1.7-2.8", "3.0-4.0", "NA"]),
            warfarin.CYP2C9: pick(["*1/*1", "*1/*2", "*1/*3", "*2/*3", "*1/*5", "NA"]),
        }
        for column in (*warfarin.DIAGNOSES.values(), *warfarin.MEDICATIONS.values()):
            row[column] = pick(["0", "1", "NA"])
        for column, genotypes in warfarin.VKORC1.items():
            row[column] = pick([*genotypes, "NA"])
        out.append(row)
    out[0][warfarin.DOSE] = "20.9"
    out[1][warfarin.DOSE] = "21"
    out[2][warfarin.DOSE] = "49.00"
    out[3][warfarin.DOSE] = "49.5"
    out[4][warfarin.DOSE] = "NA"  # not one of the patients
    return out


def _write(path: Path, rows: list[dict[str, str]], extra: tuple[str, ...] = ("Comorbidities",)) -> Path:
    header = [*warfarin.REQUIRED, *extra]
    with open(path, "w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for row in rows:
            writer.writerow([row.get(c, "") for c in header])
        writer.writerow([""] * len(header))  # the released file ends with an empty line
    return path


def test_the_subject_file_becomes_the_papers_table(tmp_path):
    rows = _subjects()
    table = warfarin.read(_write(tmp_path / "subjects.csv", rows))
    assert isinstance(table, Table) and len(table) == 59  # one subject has no dose
    assert table.feature_names == warfarin.COVARIATES and len(warfarin.COVARIATES) == 93
    assert table.y[:4] == (0, 1, 1, 2)  # < 21, 21 - 49 (both ends), > 49 mg/week
    doses = [float(r[warfarin.DOSE]) for r in rows if r[warfarin.DOSE] != "NA"]
    assert list(table.y) == [warfarin.dose_class(d) for d in doses]
    column = {name: j for j, name in enumerate(table.feature_names)}
    kept = [r for r in rows if r[warfarin.DOSE] != "NA"]
    for i, row in enumerate(kept):
        x = table.x[i]
        age = row[warfarin.AGE]
        assert x[column["age_missing"]] == (age == "NA")
        if age != "NA":
            assert x[column["age_decades"]] == warfarin.AGE_BINS.index(age)
        indication = row[warfarin.INDICATION]
        chosen = [j + 1 for j, name in enumerate(warfarin.INDICATIONS) if x[column[f"indication_{name}"]]]
        expected = {"3": [3], "4": [4], "3; 8": [3, 8], "1 or 2": [1, 2], "NA": [], "1,2": [1, 2], "7": [7]}
        assert chosen == expected[indication] and x[column["indication_missing"]] == (indication == "NA")
        assert x[column["cyp2c9_other"]] == (row[warfarin.CYP2C9] == "*1/*5")
        assert x[column["inr_range_3-4"]] == (row[warfarin.INR_RANGE] == "3.0-4.0")
        snp = row["VKORC1 -1639 consensus"]
        assert x[column["vkorc1_m1639_not_known"]] == (snp == "NA")
        if snp != "NA":
            assert x[column[f"vkorc1_m1639_{snp.replace('/', '')}"]] == 1
    # Each one-hot group marks exactly one level (its 'not known' level included).
    for prefix in ("race_", "ethnicity_", "cyp2c9_", "vkorc1_497_"):
        group = [j for name, j in column.items() if name.startswith(prefix)]
        assert np.all(table.x[:, group].sum(axis=1) == 1), prefix
    env = RealDataEnv(str(tmp_path / "subjects.csv"), reader="iwpc")
    assert env.table.digest == table.digest


@pytest.mark.parametrize(
    "column, value, expected",
    [
        (warfarin.AGE, "19-Oct", "column 'Age', row 7: '19-Oct' is a date written by a spreadsheet program, likely from the range '10 - 19': this copy is damaged"),
        (warfarin.AGE, "Oct-19", "likely from the range '10 - 19'"),
        (warfarin.INR_RANGE, "3-Feb", "column 'Estimated Target INR Range Based on Indication', row 7: '3-Feb' is a date written by a spreadsheet program, likely from the range '2 - 3'"),
        (warfarin.INR_RANGE, "3.5-Feb", "'3.5-Feb' is not one of 1.7-2.8, 1.7-3.3, 2-3, 2-3.5, 2.5-3.5, 3-4 or NA"),
        (warfarin.AGE, "100+", "column 'Age', row 7: '100+' is not one of 0 - 9, 10 - 19"),
        (warfarin.WEIGHT, "heavy", "column 'Weight (kg)', row 7: 'heavy' is not a number"),
        (warfarin.DOSE, "-3", "column 'Therapeutic Dose of Warfarin', row 7: '-3' is not a finite number >= 0"),
        ("VKORC1 497 consensus", "A/A", "column 'VKORC1 497 consensus', row 7: 'A/A' is not one of G/G, G/T, T/T"),
        (warfarin.CYP2C9, "1/1", "'1/1' is not a CYP2C9 diplotype such as *1/*3, or NA"),
        (warfarin.INDICATION, "9", "'9' is not a list of indication codes 1 to 8"),
        ("Aspirin", "yes", "column 'Aspirin', row 7: 'yes' is not 1 (yes), 0 (no) or NA"),
    ],
)  # fmt: skip
def test_a_damaged_or_unknown_value_is_refused_by_name(tmp_path, column, value, expected):
    rows = _subjects()
    rows[6][column] = value
    with pytest.raises(ValueError) as caught:
        warfarin.read(_write(tmp_path / "damaged.csv", rows))
    message = str(caught.value)
    assert message.startswith("damaged.csv: ") and expected in message and "\n" not in message


def test_a_file_that_is_not_the_subject_file_is_refused_before_any_work(tmp_path):
    rows = _subjects()
    path = tmp_path / "partial.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        header = [c for c in warfarin.REQUIRED if c != warfarin.DOSE]
        writer.writerow(header)
        writer.writerow([rows[0].get(c, "") for c in header])
    for bad, message in (
        (
            path,
            "warfarin: partial.csv has no column 'Therapeutic Dose of Warfarin'; is it the IWPC subject file",
        ),
        (tmp_path / "absent.csv", "warfarin: no such file"),
        (tmp_path, "is a folder, not a regular file"),
    ):
        with pytest.raises(ValueError, match=message):
            warfarin.read(bad)
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="warfarin: empty.csv is empty"):
        warfarin.read(tmp_path / "empty.csv")


def test_a_spreadsheet_needs_xlrd_or_says_what_to_do(tmp_path, monkeypatch):
    path = tmp_path / "PS206767-553247439.xls"
    path.write_bytes(b"not a workbook")
    monkeypatch.setitem(sys.modules, "xlrd", None)  # as if xlrd were not installed
    with pytest.raises(
        ValueError, match=r"reading PS206767-553247439.xls needs xlrd \(pip install xlrd\), or save"
    ):
        warfarin.read(path)
    monkeypatch.delitem(sys.modules, "xlrd")
    pytest.importorskip("xlrd")
    with pytest.raises(ValueError, match="is not a readable .xls workbook"):
        warfarin.read(path)


def test_the_paper_page_records_which_warfarin_file_and_recomputes_for_another(tmp_path, monkeypatch):
    from mlcb import paper
    from mlcb.paper import real_data

    calls = []
    real_run = real_data.run

    def counted(*args, **kwargs):
        calls.append(kwargs.get("warfarin"))
        return real_run(*args, **kwargs)

    tiny = {"ctg_replications": 2, "ctg_horizon": 40, "warfarin_replications": 2, "warfarin_horizon": 60,
            "scaling_replications": 2}  # fmt: skip
    monkeypatch.setitem(real_data.SIZES, "quick", tiny)
    monkeypatch.setattr(real_data, "run", counted)
    path = _write(tmp_path / "subjects.csv", _subjects(90, seed=1))
    out = tmp_path / "page"
    paper.reproduce("quick", out, only="real-data", warfarin=path)
    paper.reproduce("quick", out, only="real-data", warfarin=path)  # the same file: kept
    assert len(calls) == 1 and isinstance(calls[0], Table)
    assert "Warfarin (IWPC)" in (out / "index.html").read_text()
    saved = json.loads((out / "sections" / "real-data.json").read_text())
    assert not saved["title"].endswith("(stand-in)") and "stand-in" not in saved["text"]
    assert "your copy of the IWPC subject file (89 patients with a dose, 93 covariates" in saved["text"]
    titles = [t["title"] for t in saved["tables"]]
    assert titles[5].startswith("(b) Warfarin (IWPC)") and "Warfarin (IWPC) stream" in titles[6]
    assert {"6,604", "6,589"} <= {r["paper"].split(" ")[0] for r in saved["tables"][5]["rows"]}
    gap = next(r for r in saved["tables"][5]["rows"] if r["claim"] == "warfarin-gap")
    assert gap["verdict"] in ("holds", "does not hold", "not shown") and gap["paper"].startswith("+0.2 %")
    assert str(path) not in json.dumps(saved)  # the page records the file's digest, not where it is
    digest = saved["options"]["data"].rpartition("sha256 ")[2]
    with pytest.raises(ValueError) as refused:  # no file: the stand-in would replace the file's section
        paper.reproduce("quick", out, only="real-data")
    assert f"(real-data: size 'quick', seed 0, a Warfarin file of sha256 {digest[:12]}...); name" in str(
        refused.value
    )
    assert len(calls) == 1
    paper.reproduce("quick", out, only="real-data", overwrite=True)  # told to: computed again
    assert len(calls) == 2 and calls[1] is None
    assert "Warfarin stand-in" in (out / "index.html").read_text()
    with pytest.raises(ValueError, match="warfarin: no such file"):
        paper.reproduce("quick", out, only="real-data", warfarin=tmp_path / "absent.csv")
    assert len(calls) == 2


def test_the_released_file_where_a_copy_is_at_hand():
    """The IWPC subject file beside the repository (../shared/data/warfarin/), if any: the paper's
    5,528 patients and the usual class sizes (aggregates only)."""
    if not SHARED.is_file():
        pytest.skip(f"no copy of the IWPC subject file at {SHARED}")
    table = warfarin.read(SHARED)
    assert len(table) == 5_528 and table.n_features == 93
    assert table.counts() == {0: 1_495, 1: 3_382, 2: 651}
    assert not np.any(table.x.min(axis=0) == table.x.max(axis=0))  # no constant covariate


# --- one discipline for every table mlcb reads --------------------------------------------------------
def _damaged(tmp_path: Path, damage: str) -> Path:
    """A copy of a synthetic subject file (the real file's column names) damaged one way: the
    table's structure (the checks every table reader shares) or a hostile value in a cell."""
    rows = _subjects()
    if damage == "escape codes in a cell":
        rows[6][warfarin.GENDER] = "\x1b[2J\x1b]0;owned\x07male\r\u202e"
    if damage == "a 100,000-character value":
        rows[6][warfarin.WEIGHT] = "9" * 100_000
    if damage == "a height of 1e308":
        rows[6][warfarin.HEIGHT] = "1e308"
    path = _write(tmp_path / "damaged.csv", rows, extra=("Comorbidities", "", "", ""))  # as the released file
    lines = path.read_bytes().split(b"\r\n")
    if damage == "a row cut to half its fields":
        fields = lines[7].split(b",")
        lines[7] = b",".join(fields[: len(fields) // 2])
    elif damage == "a row with one field too many":
        lines[7] += b",70"
    elif damage == "a column name twice":
        lines[0] = lines[0].replace(b"Comorbidities", warfarin.AGE.encode())
    elif damage == "a 1 MB cell":
        lines[7] = lines[7] + b'"' + b"x" * 1_000_000 + b'"'
    elif damage == "a quote never closed":
        lines[-2] += b',"70'
        lines[1 : len(lines) - 2] = [line + b"," for line in lines[1 : len(lines) - 2]]
        lines[0] += b",Subject Reached Stable Dose of Warfarin"
    elif damage == "a NUL byte":
        lines[7] = lines[7].replace(b"PA1000", b"PA\x001000", 1)
    elif damage == "Latin-1 text":
        lines[7] = lines[7].replace(b"PA1000", "PAé".encode("latin-1"), 1)
    elif damage == "a column without a name holding values":
        lines[0] += b","
        lines[1:-2] = [line + b",5" for line in lines[1:-2]]
        lines[-2] += b","
    path.write_bytes(b"\r\n".join(lines))
    return path


#: Damaged copies of the subject file and the line each is refused with, from Python
#: (``warfarin.read``), ``mlcb run warfarin --data`` and ``mlcb paper --warfarin`` alike.
DAMAGED = [
    ("a row cut to half its fields", "warfarin: damaged.csv, line 8: 21 field(s), the header has 44: a row cut short"),
    ("a row with one field too many", "line 8: 45 field(s), the header has 44: a row with more fields than the header names"),
    ("a column name twice", "warfarin: damaged.csv has duplicate column name 'Age' (columns 2, 40)"),
    ("a 1 MB cell", "warfarin: damaged.csv, line 8: a cell longer than 131,072 characters; not a CSV file"),
    ("a quote never closed", "warfarin: damaged.csv, line 62: a quote that is never closed; not a CSV file"),
    ("a NUL byte", "warfarin: damaged.csv holds a NUL byte (line 8): binary data, not a CSV file"),
    ("Latin-1 text", "warfarin: damaged.csv is not UTF-8 text (invalid continuation byte at byte"),
    ("a column without a name holding values", "warfarin: damaged.csv, line 2: column 44 has no name but holds '5'"),
    ("escape codes in a cell", r"column 'Gender', row 7: '\x1b[2J\x1b]0;owned\x07male\r\u202e' is not one of male, female or NA"),
    ("a height of 1e308", "column 'Height (cm)', row 7: '1e308' is larger than 1e+100: not a measurement"),
    ("a 100,000-character value", "column 'Weight (kg)', row 7: '999999999999999999999999999999999999999999999999999999999999'... (100,000 characters) is not a finite number"),
]  # fmt: skip


@pytest.mark.parametrize(("damage", "message"), DAMAGED)
def test_a_damaged_subject_file_is_one_line_of_bad_input_everywhere(tmp_path, capsys, damage, message):
    """Each damage is refused by name in one short line with exit status 2, from Python and from
    both commands that read the file (before: a traceback ending in 'this is a bug in mlcb', a row
    cut short read as missing values, a column name given twice ignored, a cell printed whole)."""
    from mlcb.cli import main

    path = _damaged(tmp_path, damage)
    with pytest.raises(ValueError) as caught:
        warfarin.read(path)
    assert message in str(caught.value) and len(str(caught.value)) < 400
    for argv in (
        ["run", "warfarin", "--data", str(path), "-o", str(tmp_path / "out"), "-T", "50", "-q"],
        ["paper", "--warfarin", str(path), "--only", "real-data", "-o", str(tmp_path / "page"), "-q"],
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("mlcb: error: ") and err.count("\n") == 1 and message in err, err
        assert "bug in mlcb" not in err and len(err) < 400
        assert not any(c in err for c in "\x1b\x07\r\u202e\x00")
    assert not (tmp_path / "out").exists() and not (tmp_path / "page").exists()
