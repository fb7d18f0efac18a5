"""Bring your own data (envs/tabular.py, RealDataEnv with a table or a path): every check's one
line, what is done to constant columns and labels, and the same table from Python, TOML and the
command line."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import envs
import mlcb
from agents.classifiers import mixed_pool
from envs.real_data import RealDataEnv, table_of
from envs.tabular import Table, from_arrays, from_frame, read_csv


def _frame(rows: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "a": rng.normal(size=rows),
            "b": rng.integers(0, 5, size=rows).astype(float),
            "flag": rng.integers(0, 2, size=rows).astype(bool),
            "y": ["cat", "dog", "emu"] * (rows // 3),
        }
    )


def _csv(tmp_path, text: str, name: str = "mine.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_frame_becomes_a_table_with_its_classes_mapped_in_sorted_order():
    table = from_frame(_frame(), "y", name="pets")
    assert isinstance(table, Table) and table.name == "pets"
    assert table.feature_names == ("a", "b", "flag") and table.x.shape == (12, 3)
    assert table.classes == ("cat", "dog", "emu") and table.labels.tolist()[:4] == [0, 1, 2, 0]
    assert table.rows[1] == {"a": table.x[1, 0], "b": table.x[1, 1], "flag": table.x[1, 2]}
    assert set(np.unique(table.x[:, 2])) <= {0.0, 1.0}  # booleans read as 0 and 1
    assert any("are class indices 0 .. 2" in note for note in table.notes)
    assert not table.x.flags.writeable and not table.labels.flags.writeable
    # Whole numbers read as integers; the digest depends on the content only.
    frame = _frame().assign(y=[1.0, 2.0, 3.0] * 4)
    numbers = from_frame(frame, "y")
    assert numbers.classes == (1, 2, 3) and all(type(v) is int for v in numbers.y)
    assert from_frame(frame, "y").digest == numbers.digest
    assert from_frame(frame.assign(a=frame["a"] + 1), "y").digest != numbers.digest
    assert from_frame(frame, "y", columns=["b", "a"]).feature_names == ("b", "a")


def test_arrays_and_a_csv_give_the_same_table_as_the_frame(tmp_path):
    frame = _frame().drop(columns="flag")
    path = tmp_path / "pets.csv"
    frame.to_csv(path, index=False)
    from_csv = read_csv(path, "y")
    from_array = from_arrays(frame[["a", "b"]].to_numpy(), frame["y"].to_numpy(), feature_names=["a", "b"])
    assert from_csv.name == "pets" and from_csv.feature_names == ("a", "b")
    np.testing.assert_array_equal(from_csv.x, from_array.x)
    assert from_csv.y == from_array.y and from_csv.classes == from_array.classes
    assert read_csv(path, "y") is from_csv  # read once per process
    assert from_arrays([[1.0], [2.0], [3.0], [4.0]], [0, 1, 0, 1]).feature_names == ("x0",)


def test_each_bad_input_is_one_line_naming_the_column_or_parameter(tmp_path):
    frame = _frame()
    cases = [
        (lambda: from_frame(frame, "z"), "label: no column 'z' in data; its columns: 'a', 'b', 'flag', 'y'"),
        (lambda: from_frame(frame.assign(a=[np.nan] + [0.0] * 11), "y"),
         "column 'a' of data has 1 missing value(s), the first at row 0; fill them or pass missing='drop'"),
        (lambda: from_frame(frame.assign(b=["x"] + [1] * 11), "y"),
         "column 'b' is not numeric (row 0: 'x'); encode it as numbers"),
        (lambda: from_frame(frame.assign(a=[np.inf] + [0.0] * 11), "y"),
         "column 'a' of data has an infinite value at row 0"),
        (lambda: from_frame(frame.assign(y=["cat"] * 12), "y"),
         "label 'y' has 1 class ('cat'); a classification stream needs at least 2"),
        (lambda: from_frame(frame.assign(y=["cat"] * 11 + ["dog"]), "y"),
         "label 'y': class 'dog' has 1 row(s), fewer than min_class_rows = 2"),
        (lambda: from_frame(frame.assign(y=np.linspace(0, 1, 12)), "y"),
         "label 'y' has values that are not whole numbers (row 1: 0.09090909090909091)"),
        (lambda: from_frame(frame.assign(y=[np.inf] + [1.0] * 11), "y"),
         "label 'y' has values that are not whole numbers (row 0: inf)"),
        (lambda: from_frame(frame.set_axis(["a", "a", "flag", "y"], axis=1), "y"),
         "data has duplicate column name 'a' (columns 0, 1)"),
        (lambda: from_frame(frame, "y", columns=["a", "nope"]), "columns: no column 'nope' in data"),
        (lambda: from_frame(frame, "y", columns=["a", "y"]), "columns: the label column 'y' cannot also be a feature"),
        (lambda: from_frame(frame.iloc[:0], "y"), "data has no rows"),
        (lambda: from_frame(frame[["y"]], "y"), "data has no feature column besides the label 'y'"),
        (lambda: from_frame(frame, "y", missing="fill"), r"missing must be one of \('error', 'drop'\)"),
        (lambda: from_frame([[1, 2]], "y"), "frame must be a pandas DataFrame, got list"),
        (lambda: from_arrays(np.zeros((3, 2)), [0, 1]), r"y must be a 1-D array with one label per row of x \(3 rows\)"),
        (lambda: from_arrays(np.zeros(3), [0, 1, 0]), r"x must be a 2-D array of shape \(rows, features\)"),
        (lambda: from_arrays(np.zeros((4, 2)), [0, 1, 0, 1], feature_names=["a"]),
         "feature_names must name the 2 columns of x, got 1 name"),
        (lambda: read_csv(_csv(tmp_path, "", "empty.csv"), "y"), "path: empty.csv is empty"),
        (lambda: read_csv(_csv(tmp_path, "a,b,y\n", "header.csv"), "y"), "path: header.csv has a header but no rows"),
        (lambda: read_csv(_csv(tmp_path, "a,a,y\n1,2,0\n3,4,1\n", "dup.csv"), "y"),
         "dup.csv has duplicate column name 'a' (columns 0, 1)"),
        (lambda: read_csv(_csv(tmp_path, "a,b,y\n1,2,0\n3,4,1\n", "nolabel.csv"), None),
         "label: name the label column of nolabel.csv; its columns: 'a', 'b', 'y'"),
        (lambda: read_csv(tmp_path / "absent.csv", "y"), "path: no such file"),
        (lambda: read_csv(_csv(tmp_path, "a,b,y\n1,2,0\n1,2,3,4\n", "ragged.csv"), "y"),
         "path: ragged.csv, line 3: 4 field(s), the header has 3: a row with more fields than the header names"),
    ]  # fmt: skip
    for make, message in cases:
        with pytest.raises(ValueError) as caught:
            make()
        text = str(caught.value)
        assert "\n" not in text and (message in text or re.search(message, text)), (
            message,
            text,
        )


def test_constant_columns_are_kept_or_dropped_and_said_so_and_missing_rows_dropped():
    frame = _frame().assign(k=1.5)
    with pytest.warns(UserWarning, match=r"data: constant column\(s\) 'k' kept: they carry no information"):
        kept = from_frame(frame, "y")
    assert kept.feature_names == ("a", "b", "flag", "k")
    with pytest.warns(UserWarning, match=r"constant column\(s\) 'k' dropped"):
        dropped = from_frame(frame, "y", constant="drop")
    assert dropped.feature_names == ("a", "b", "flag")
    holes = _frame().assign(a=[np.nan, 1.0] + [0.5] * 10)
    with pytest.warns(UserWarning, match=r"1 row\(s\) with missing values dropped"):
        table = from_frame(holes, "y", missing="drop")
    assert len(table) == 11 and table.y[0] == "dog"


def test_a_table_or_a_csv_path_streams_through_a_simulation_from_python_toml_and_the_command_line(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(90, 4))
    y = (x[:, 0] + 0.3 * rng.normal(size=90) > 0).astype(int) + (x[:, 1] > 1)
    frame = pd.DataFrame(x, columns=["p", "q", "r", "s"]).assign(label=y)
    path = tmp_path / "mine.csv"
    frame.to_csv(path, index=False)
    table = from_frame(frame, "label", name="mine")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to say about this table
        env = RealDataEnv(path.as_posix(), order="shuffle", label="label")
    assert env.table.digest == table.digest and env.dataset.startswith("mine@")
    assert table_of({"dataset": table}) is table
    common = {"experts": mixed_pool(4, 5), "budget": 2, "horizon": 60, "replications": 2, "seed": 3}
    by_table = mlcb.simulate(env="mlcb/RealData-v0", env_params={"dataset": table}, **common)
    by_path = mlcb.simulate(env="mlcb/RealData-v0", **common,
                            env_params={"dataset": str(path), "label": "label"})  # fmt: skip
    np.testing.assert_array_equal(by_table.curves["regret"], by_path.curves["regret"])
    # The setting's key tells the data apart: the table by its digest.
    config = mlcb.SimulationConfig(env="mlcb/RealData-v0", env_params={"dataset": table},
                                   experts=tuple(mixed_pool(4, 5)), horizon=60)  # fmt: skip
    other = from_frame(frame.assign(p=frame["p"] * 2), "label", name="mine")
    assert config.key() != config.replace(env_params={"dataset": other}).key()
    # TOML and the command line: a path and a label column.
    setting = tmp_path / "mine.toml"
    setting.write_text(
        'env = "mlcb/RealData-v0"\nhorizon = 60\nreplications = 2\n'
        f'env_params = {{dataset = "{path.as_posix()}", label = "label"}}\n'
        '[[experts]]\nfamily = "softmax"\ncount = 3\n[[experts]]\nfamily = "perceptron"\n'
    )
    from mlcb.cli import main

    assert main(["run", str(setting), "-o", str(tmp_path / "out"), "-q", "--no-plot"]) == 0
    assert main(["compare", "ctg", "--data", str(path), "--label", "label", "-T", "60", "-R", "2", "-M", "2",
                 "--policies", "mlcb", "round-robin", "-o", str(tmp_path / "out"), "-q", "--no-plot"]) == 0  # fmt: skip


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["run", "ctg", "--label", "y"],
            "label: --label names a column of the --data file; give --data PATH too",
        ),
        (
            ["run", "trap", "--data", "x.csv"],
            "data: --data applies to real-data settings (env mlcb/RealData-v0)",
        ),
        (["compare", "ctg", "--data", "absent.csv", "--label", "y"], "dataset: no such file 'absent.csv'"),
        (["run", "warfarin"], "dataset: give the path of your copy of the IWPC warfarin subject file"),
    ],
)
def test_the_command_lines_data_options_refuse_bad_input_in_one_line(
    argv, message, tmp_path, capsys, monkeypatch
):
    from mlcb.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith("mlcb: error: ") and message in error and error.count("\n") == 1
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    "rows, message",
    [
        (
            "a,b,c,y\n" + "1,2,3,0\n2,,4,1\n" * 10,
            "column 'b' of mine has 10 missing value(s), the first at row 1; fill them or pass "
            "missing='drop' to drop those rows (--data reads the file with the defaults: edit the file, "
            "or set this in env_params from Python or a TOML setting; docs/real-data.md)",
        ),
        (
            "a,b,y\n" + "1,2,0\n2,3,1\n" * 10,
            "data: the pool of the real-data presets reads features in halves, thirds and pairs, so it "
            "needs at least 3 feature columns; mine has 2 (a, b)",
        ),
    ],
)
def test_the_command_line_says_what_a_data_file_needs(rows, message, tmp_path, capsys, monkeypatch):
    """Advice that names an option of reading the file (missing=, columns=, ...) says where that
    option is set, as --data has no flag for it; a file too narrow for the presets' pool says so
    (before: 'n_features must be an integer >= 3, got 2')."""
    from mlcb.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.csv").write_text(rows)
    assert main(["run", "ctg", "--data", "mine.csv", "--label", "y", "-T", "20"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("mlcb: error: ") and message in error and error.count("\n") == 1
    assert not (tmp_path / "results").exists()


def test_min_class_rows_reaches_the_file_through_the_environment(tmp_path):
    path = tmp_path / "rare.csv"
    path.write_text("a,y\n" + "".join(f"{i},{i % 2}\n" for i in range(20)) + "5,2\n")
    with pytest.raises(ValueError, match="class 2 has 1 row"):
        envs.make("mlcb/RealData-v0", dataset=str(path), label="y")
    env = envs.make("mlcb/RealData-v0", dataset=str(path), label="y", min_class_rows=1)
    assert env.table.classes == (0, 1, 2)
    with pytest.raises(ValueError, match="min_class_rows applies to a file"):
        envs.make("mlcb/RealData-v0", dataset="ctg", min_class_rows=1)


def test_environment_parameters_that_do_not_apply_are_refused():
    table = from_frame(_frame(), "y")
    for params, message in (
        (
            {"dataset": "ctg", "label": "NSP"},
            "label applies to a file (dataset = a path), not to the bundled data set 'ctg'",
        ),
        (
            {"dataset": table, "columns": ["a"]},
            "columns applies to a file (dataset = a path), not to a Table",
        ),
        ({"dataset": "nope"}, "dataset must be one of ctg, ctg-35"),
        ({"dataset": "x.csv", "reader": "xls"}, r"reader must be one of \('csv', 'iwpc'\)"),
    ):
        with pytest.raises(ValueError, match=message if "must be one of" in message else re.escape(message)):
            RealDataEnv(**params)


def test_a_name_without_a_suffix_that_exists_is_read_as_the_path_it_is(tmp_path, monkeypatch):
    """``--data somefolder`` was refused as no bundled name ('dataset must be one of ...'): a
    name that exists is a path, so a folder is named as one, and a CSV file without a suffix is
    read; a name that neither is bundled nor exists is refused as before."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "somefolder").mkdir()
    _frame().to_csv(tmp_path / "mydata", index=False)
    with pytest.raises(ValueError, match=re.escape("dataset: somefolder is a folder, not a regular file")):
        RealDataEnv(dataset="somefolder", label="y")
    assert RealDataEnv(dataset="mydata", label="y").table.n_features == from_frame(_frame(), "y").n_features
    with pytest.raises(ValueError, match="dataset must be one of ctg, ctg-35"):
        RealDataEnv(dataset="nosuch", label="y")


def test_a_csv_given_by_its_path_is_part_of_the_key_by_its_content(tmp_path):
    """The same path holding other data is another setting (a resume never reuses the parts of
    the old file); the same content under another name or after a rewrite is the same."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"]).assign(label=np.arange(40) % 2)
    path = tmp_path / "mine.csv"
    frame.to_csv(path, index=False)

    def key() -> str:
        return mlcb.SimulationConfig(
            env="mlcb/RealData-v0", env_params={"dataset": str(path), "label": "label"},
            experts=tuple(mixed_pool(4, 3)), horizon=30,
        ).key()  # fmt: skip

    first = key()
    frame.to_csv(path, index=False)  # rewritten, the same bytes
    assert key() == first
    frame.assign(a=frame["a"] + 1).to_csv(path, index=False)
    assert key() != first


# --- one discipline for every table mlcb reads (envs/warfarin.py's tests: the subject file) -----------
def _table_text(rows: int = 30) -> str:
    body = "".join(f"{i % 7},{(3 * i) % 5},{i % 4}.5,{i % 3},{i % 2}\n" for i in range(rows))
    return "a,b,c,d,y\n" + body + ",,,,\n"  # a spreadsheet's trailing line of empty fields: no row


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda t: t.replace("3,4,3.5,0,1\n", "3,4\n", 1), "path: mine.csv, line 5: 2 field(s), the header has 5: a row cut short"),
        (lambda t: t.replace("3,4,3.5,0,1\n", "3,4,3.5,0,1,7\n", 1), "path: mine.csv, line 5: 6 field(s), the header has 5: a row with more fields"),
        (lambda t: t.replace("a,b,c,d,y", "a,b,a,d,y", 1), "path: mine.csv has duplicate column name 'a' (columns 0, 2)"),
        (lambda t: t.replace("3,4,3.5", '3,"' + "7" * 1_000_000 + '",3.5', 1), "path: mine.csv, line 5: a cell longer than 131,072 characters"),
        (lambda t: t + '1,2,"3', "path: mine.csv, line 33: a quote that is never closed"),
        (lambda t: t.replace("3,4,3.5", "3,\x00,3.5", 1), "path: mine.csv holds a NUL byte (line 5)"),
        (lambda t: t.replace("\n", ",\n").replace("3,4,3.5,0,1,\n", "3,4,3.5,0,1,9\n", 1), "path: mine.csv, line 5: column 5 has no name but holds '9'"),
        (lambda t: t.replace("3,4,3.5", '3,"\x1b[2J\x1b]0;owned\x07\r\u202e",3.5', 1), r"column 'b' is not numeric (row 3: '\x1b[2J\x1b]0;owned\x07\r\u202e')"),
        (lambda t: t.replace("3,4,3.5", "3,1e308,3.5", 1), "column 'b' of mine has 1e+308 at row 3, larger than 1e+100 in size, which the learners cannot square"),
        (lambda t: t.replace("3,4,3.5", "3," + "x" * 100_000 + ",3.5", 1), "column 'b' is not numeric (row 3: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (100,000 characters))"),
    ],
)  # fmt: skip
def test_a_damaged_csv_file_is_refused_as_the_subject_file_is(tmp_path, capsys, monkeypatch, damage, message):
    """The ``--data`` CSV reader keeps the discipline of every table reader: a row cut short (was
    read as missing values), a row run on, a name twice, a huge cell, an open quote, binary data,
    a nameless column holding values: one line naming the line; a hostile cell shown escaped and
    bounded."""
    from mlcb.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.csv").write_text(damage(_table_text()), encoding="utf-8", newline="")
    with pytest.raises(ValueError) as caught:
        read_csv(tmp_path / "mine.csv", "y")
    assert message in str(caught.value) and len(str(caught.value)) < 400
    assert main(["run", "ctg", "--data", "mine.csv", "--label", "y", "-T", "20", "-q"]) == 2
    err = capsys.readouterr().err
    # through --data (a setting's dataset) the file is named by that parameter, not read_csv's
    through = message.replace("path: ", "dataset: ", 1)
    assert err.startswith("mlcb: error: ") and err.count("\n") == 1 and through in err, err
    assert "bug in mlcb" not in err and len(err) < 400 and not any(c in err for c in "\x1b\x07\r\u202e\x00")
    assert not (tmp_path / "results").exists()


def test_a_clean_csv_file_with_a_trailing_line_of_empty_fields_reads():
    """The undamaged table of the test above reads (its last line of empty fields is no row)."""
    import io

    table = from_frame(pd.read_csv(io.StringIO(_table_text())).dropna(how="all"), "y")
    assert len(table) == 30 and table.feature_names == ("a", "b", "c", "d")


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "folder"])
def test_a_special_file_is_named_as_such_by_every_reader(tmp_path, capsys, monkeypatch, special):
    """``--data /dev/zero`` said 'no such file'; a named pipe could block a reader for ever. Every
    reader of a user's file names what the path is, before opening it."""
    import os

    from mlcb.cli import main

    monkeypatch.chdir(tmp_path)
    if special == "/dev/zero":
        path, kind = "/dev/zero", "is a character device, not "
    elif special == "fifo":
        os.mkfifo(tmp_path / "pipe.csv")
        path, kind = "pipe.csv", "is a named pipe (FIFO), not "
    else:
        (tmp_path / "folder.csv").mkdir()
        path, kind = "folder.csv", "is a folder, not "
    outputs = []
    for argv, prefix in (
        (["run", "ctg", "--data", path, "--label", "y", "-q"], "dataset"),
        (["run", "warfarin", "--data", path, "-q"], "dataset"),
        (["paper", "--warfarin", path, "--only", "real-data", "-q"], "warfarin"),
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err == f"mlcb: error: {prefix}: {path} {kind}a regular file" + (
            " (name the file inside it)\n" if special == "folder" else "\n"
        ), err
        outputs.append(err)
    if special == "/dev/zero":
        assert outputs[0] == "mlcb: error: dataset: /dev/zero is a character device, not a regular file\n"
    for call in (lambda: read_csv(path, "y"), lambda: envs.make("mlcb/RealData-v0", dataset=path, label="y")):
        with pytest.raises(ValueError, match=re.escape(kind)):
            call()
    if special == "fifo":
        os.rename(tmp_path / "pipe.csv", tmp_path / "pipe.toml")
        for command in ("run", "sweep"):
            assert main([command, "pipe.toml", "-q"]) == 2
            err = capsys.readouterr().err
            assert "pipe.toml is a named pipe (FIFO), not a TOML file" in err and err.count("\n") == 1
        assert main(["run", "pipe.toml", "--data", "x.csv"]) == 2  # read before --data is checked
        assert "is a named pipe (FIFO), not a TOML file" in capsys.readouterr().err


# --- files as a careless user exports them -----------------------------------------------------------
def _rows(rows: int = 30, sep: str = ",", decimal: str = ".") -> str:
    body = "".join(
        sep.join((f"{i % 7}{decimal}5", str((3 * i) % 5), str(i % 4), "yes" if i % 2 else "no")) + "\n"
        for i in range(rows)
    )
    return sep.join("abcy") + "\n" + body


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (_rows(sep=";"), "semicolons"),
        (_rows(sep=";", decimal=","), "semicolons"),  # a decimal comma: was 'line 2: 5 field(s), damaged'
        (_rows(sep="\t"), "tabs"),
        (_rows(sep="|"), "vertical bars"),
        (_rows(sep=";").replace("a;", "age, years;", 1), "semicolons"),  # a name with a comma: 2 columns
    ],
)
def test_a_file_separated_by_another_mark_says_so(text, words, tmp_path, capsys, monkeypatch):
    """A spreadsheet's export in a locale with a decimal comma (semicolons), or a TSV file, was read
    as one column: 'no column y; its columns: a;b;c;y' or 'the file is damaged'. It is named as
    what it is, by every command, before any work."""
    from mlcb.cli import main

    monkeypatch.chdir(tmp_path)
    _csv(tmp_path, text)
    shape = "2 columns" if "age, years" in text else "one column"
    message = f"path: mine.csv is separated by {words}, not commas (its header line reads as {shape}, "
    with pytest.raises(ValueError, match=re.escape(message)):
        read_csv(tmp_path / "mine.csv", "y")
    for command in ("run", "compare"):
        assert main([command, "ctg", "--data", "mine.csv", "--label", "y", "-T", "20", "-q"]) == 2
        err = capsys.readouterr().err
        through = message.replace("path: ", "dataset: ", 1)  # named by the parameter it came in
        assert err.startswith(f"mlcb: error: {through}") and err.count("\n") == 1, err
        assert "export it again as comma-separated CSV" in err
    assert main(["paper", "--warfarin", "mine.csv", "--only", "real-data", "-q"]) == 2  # every reader
    err = capsys.readouterr().err
    assert (
        err.startswith(f"mlcb: error: warfarin: mine.csv is separated by {words}, not commas")
        and err.count("\n") == 1
    )
    assert not (tmp_path / "results").exists()


def test_text_labels_are_read_without_the_spaces_around_them(tmp_path):
    """'yes ' and 'yes' were two classes (a spreadsheet's stray space): the spaces around a text
    label go, as around a header's names, and a warning says so; a label of spaces only is missing."""
    text = _rows().replace(",yes\n", ",yes \n", 3)
    with pytest.warns(
        UserWarning,
        match=re.escape("the spaces around 3 value(s) removed (row 1: 'yes ' is the class 'yes')"),
    ):
        table = read_csv(_csv(tmp_path, text), "y")
    assert table.classes == ("no", "yes") and table.counts() == {"no": 15, "yes": 15}
    frame = pd.DataFrame({"a": np.arange(6.0), "y": ["a", "b", " a", "b ", "a", "  "]})
    with pytest.raises(
        ValueError, match=re.escape("label 'y' has a value of spaces only at row 5: a missing label")
    ):
        from_frame(frame, "y")


def test_integer_labels_are_kept_exact_at_any_size(tmp_path):
    """Integer labels went through float64, where 2**53 + 1 is 2**53: two classes became one (or a
    label took another value). They are kept as the integers given, from a frame or from a CSV file,
    where pandas reads them as floats beyond 64 bits or beside a missing cell."""
    big = [2**53 + 1, 2**53, 10**25 + 1, 10**25]
    frame = pd.DataFrame({"a": np.arange(8.0), "y": big * 2})
    assert from_frame(frame, "y").classes == tuple(sorted(big))
    text = "a,y\n" + "".join(f"{i},{v}\n" for i, v in enumerate(big * 3 + [""]))
    with pytest.warns(UserWarning, match="missing values dropped"):
        table = read_csv(_csv(tmp_path, text, "big.csv"), "y", missing="drop")
    assert table.classes == tuple(sorted(big)) and set(table.counts().values()) == {3}
    mixed = "a,y\n" + "".join(f"{i},{v}\n" for i, v in enumerate([2**53 + 1, 2.0, 2**53, 2.0] * 2))
    assert read_csv(_csv(tmp_path, mixed, "mixed.csv"), "y").classes == (2, 2**53, 2**53 + 1)
    half = mixed.replace(",2.0\n", ",2.5\n", 1)
    with pytest.raises(ValueError, match=re.escape("not whole numbers (row 1: 2.5)")):
        read_csv(_csv(tmp_path, half, "half.csv"), "y")


def test_a_column_without_values_and_the_text_read_as_missing_are_named(tmp_path, capsys, monkeypatch):
    """A column with no value at all: 'fill them or pass missing=drop' would drop every row; it is
    named as empty. A cell pandas reads as missing ('NA', 'None', 'null') is named as read so."""
    from mlcb.cli import main

    monkeypatch.chdir(tmp_path)
    empty = (
        _rows()
        .replace("a,b,c,y\n", "a,b,c,y,z\n")
        .replace("\n", ",\n")
        .replace("a,b,c,y,z,\n", "a,b,c,y,z\n")
    )
    cases = [
        (empty, "column 'z' of mine has no value in any of its 30 rows; leave it out with columns=[...] or fill it"),
        (_rows().replace("yes", "None").replace("no", "null"),
         "column 'y' of mine has no value in any of its 30 rows (read as missing: the text 'null'); the label "
         "must give each row's class"),
        (_rows().replace("\n1.5,", "\nNA,", 1),
         "column 'a' of mine has 1 missing value(s) (read as missing: the text 'NA'), the first at row 1"),
    ]  # fmt: skip
    for text, message in cases:
        path = _csv(tmp_path, text)
        with pytest.raises(ValueError, match=re.escape(message)):
            read_csv(path, "y")
        for command in ("run", "compare"):
            assert main([command, "ctg", "--data", "mine.csv", "--label", "y", "-T", "20", "-q"]) == 2
            err = capsys.readouterr().err
            assert message in err and err.count("\n") == 1, err
            if "missing=" in message or "columns=" in message:  # an option --data has no flag for
                assert "(--data reads the file with the defaults" in err, (command, err)


def test_a_spreadsheet_export_with_a_bom_crlf_and_quoted_commas_reads_as_the_frame(tmp_path):
    """UTF-8 with a byte-order mark, CRLF line ends, text labels holding commas and quotes: the
    table is the frame's."""
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(rng.normal(size=(24, 3)), columns=["x 1", "x,2", 'x"3'])
    frame["class"] = ["a, b", 'say "c"', "d"] * 8
    path = tmp_path / "export.csv"
    frame.to_csv(path, index=False, encoding="utf-8-sig", lineterminator="\r\n")
    table = read_csv(path, "class")
    assert table.feature_names == ("x 1", "x,2", 'x"3') and table.classes == ("a, b", "d", 'say "c"')
    np.testing.assert_array_equal(table.x, from_frame(frame, "class").x)


@pytest.mark.parametrize(
    ("start", "workbook"),
    [
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Excel workbook (.xls)"),
        (b"PK\x03\x04", "a zip archive (an Excel .xlsx or OpenDocument workbook)"),
    ],
)
def test_a_workbook_or_a_legacy_encoding_given_as_csv_says_what_to_save(
    start, workbook, tmp_path, capsys, monkeypatch
):
    """A spreadsheet given where a CSV file is read was 'not UTF-8 text (invalid start byte at byte
    0)': it is named as a workbook, by every table reader; a CSV in a legacy encoding says to save
    it as UTF-8."""
    from mlcb.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.csv").write_bytes(start + bytes(range(256)) * 4)
    message = f"mine.csv is {workbook}, not a CSV file: save its sheet as CSV (UTF-8, comma-separated)"
    for argv, role in (
        (["compare", "ctg", "--data", "mine.csv", "--label", "y", "-q"], "dataset"),
        (["run", "warfarin", "--data", "mine.csv", "-q"], "warfarin"),
        (["paper", "--warfarin", "mine.csv", "--only", "real-data", "-q"], "warfarin"),
    ):
        assert main(argv) == 2
        assert capsys.readouterr().err == f"mlcb: error: {role}: {message}\n", argv
    (tmp_path / "mine.csv").write_bytes(
        _rows().replace("yes", "oui, très").replace("no", "non").encode("latin-1")
    )
    with pytest.raises(
        ValueError, match=re.escape("is not UTF-8 text (invalid continuation byte at byte ")
    ) as caught:
        read_csv(tmp_path / "mine.csv", "y")
    assert str(caught.value).endswith(
        "which a CSV file must be; save it as UTF-8 (a spreadsheet's 'CSV UTF-8')"
    )
    assert not (tmp_path / "results").exists()


def test_a_tables_rows_as_dicts_are_built_on_first_use_only():
    # A dict per row takes far more memory than the row in x; compiled experts read x alone.
    table = from_arrays([[0.0, 1.0], [1.0, 3.0], [2.0, 2.0], [3.0, 0.0]], [0, 1, 0, 1])
    assert table._rows is None and len(table) == 4
    rows = table.rows
    assert rows is table.rows and rows[3] == {"x0": 3.0, "x1": 0.0}


def test_a_column_of_dates_or_times_is_refused_not_counted_in_some_unit():
    # pandas would make it nanoseconds (or seconds, or months) since 1970, as its dtype says.
    frame = _frame(6).drop(columns="flag")
    columns = {
        "when": pd.date_range("2020-01-01", periods=6),
        "lag": pd.to_timedelta(range(6), unit="s"),
        "month": pd.period_range("2020-01", periods=6, freq="M"),
        "zoned": pd.date_range("2020-01-01", periods=6, tz="UTC"),
    }
    for name, values in columns.items():
        with pytest.raises(ValueError, match=rf"column '{name}' holds dates, times or intervals \(") as error:
            from_frame(frame.assign(**{name: values}), "y")
        assert "not numbers; encode them as numbers of your choosing (e.g. days since a date)" in str(
            error.value
        )
    message = "column 'x0' holds dates, times or intervals (datetime64[s]), not numbers"
    with pytest.raises(ValueError, match=re.escape(message)):
        from_arrays(np.array([[1.0, 0], [2.0, 0], [3.0, 0], [4.0, 0]]).astype("datetime64[s]"), [0, 1, 0, 1])


def test_a_binary_table_or_a_compressed_file_is_named_not_called_bad_utf8(tmp_path):
    # A Parquet file or a .csv.gz given as a dataset path was "not UTF-8 text; save it as UTF-8".
    frame = _frame(6)
    cases = {
        "mine.parquet": (
            lambda path: frame.to_parquet(path),
            "is a Parquet file, not a CSV file: save it as CSV",
        ),
        "mine.csv.gz": (
            lambda path: frame.to_csv(path, index=False),
            "is a gzip-compressed file, not a CSV file",
        ),
        "mine.pkl": (
            lambda path: frame.to_pickle(path),
            "is a Python pickle, not a CSV file; a pickle is never",
        ),
    }
    for name, (write, message) in cases.items():
        write(tmp_path / name)
        with pytest.raises(ValueError, match=re.escape(f"dataset: {name} {message}")):
            RealDataEnv(dataset=str(tmp_path / name), label="y")


def test_a_table_built_directly_is_checked_as_the_readers_check_theirs():
    # Table(...) took three rows with two labels (compiled experts would read past the labels),
    # two names for one column, nan features and a single class without a word.
    good = ("t", ("a",), [[0.0], [1.0]], (0, 1))
    assert Table(*good).classes == (0, 1)
    cases = [
        (
            ("t", ("a",), [[0.0], [1.0], [2.0]], (0, 1)),
            "Table: y must hold one label per row of x (3 rows), got 2",
        ),
        (
            ("t", ("a", "b"), [[0.0], [1.0]], (0, 1)),
            "Table: feature_names must name the 1 columns of x, got 2 name(s)",
        ),
        (
            ("t", ("a",), [[np.nan], [1.0]], (0, 1)),
            "Table: x has nan at row 0, column 'a'; every value must be a",
        ),
        (
            ("t", ("a",), [[0.0], [1.0]], (0, 0)),
            "Table: y has 1 class (0); a classification stream needs at least 2",
        ),
        (("t", ("a",), [[0.0], [1.0]], (0, "b")), "Table: y must hold labels of one kind that can be sorted"),
        (
            ("t", ("a",), [0.0, 1.0], (0, 1)),
            "Table: x must be a 2-D array of shape (rows, features), both >= 1",
        ),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            Table(*args)
