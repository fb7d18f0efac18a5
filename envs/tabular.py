"""A labelled table of one's own as a supervised stream: from a pandas DataFrame, NumPy arrays or
a CSV file with a named label column.

:func:`from_frame`, :func:`from_arrays` and :func:`read_csv` check the data before any work and
return a :class:`Table`, which ``mlcb/RealData-v0`` streams (``env_params={"dataset": table}``;
from TOML or the command line, ``dataset = "path/to/file.csv"`` with ``label = "column"``).
Every check raises one ``ValueError`` line that names the column or the parameter:

* an empty file, a header without rows, or a table without rows;
* duplicate column names (a CSV's header is read as written: pandas would rename them);
* a label column that does not exist (the columns are listed), or a feature column that does not;
* missing values (``missing="error"``, the default, names the column, the count and the first
  row; ``missing="drop"`` drops the rows that have any and says how many);
* non-numeric feature columns (the first value that is not a number, with its row), and
  infinite values;
* the label: fewer than 2 classes, a class with fewer than ``min_class_rows`` rows (default 2),
  a label with fractional values (a continuous target, not a class).

What is done, and said (:attr:`Table.notes`, and a ``UserWarning`` for a table of one's own):

* **constant columns** carry no information; ``constant="keep"`` (the default) keeps them, so
  that column indices stay those of the file (the online classifiers standardise such a column
  to 0), ``constant="drop"`` drops them;
* **labels** are mapped to class indices ``0 .. C - 1`` in sorted order (``Table.classes`` lists
  them): integer labels stay integers (``1.0`` reads as ``1``), text labels are sorted as text,
  ``True``/``False`` stay booleans;
* **boolean feature columns** read as 0 and 1.

Examples
--------
>>> import numpy as np
>>> table = from_arrays(np.array([[0.0, 1.0], [1.0, 3.0], [2.0, 2.0], [3.0, 0.0]]),
...                     ["a", "b", "a", "b"], feature_names=["x", "z"], name="tiny")
>>> table  # doctest: +ELLIPSIS
Table('tiny', 4 rows x 2 features, 2 classes, sha256 ...)
>>> table.classes, table.labels.tolist()
(('a', 'b'), [0, 1, 0, 1])
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import threading
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from mlcb.validation import LARGEST, InputError, printable, shown, shown_list
from mlcb.validation import distinct_columns as _check_duplicates

#: What :func:`from_frame` does with missing values and constant columns.
MISSING = ("error", "drop")
CONSTANT = ("keep", "drop")
#: The texts a CSV cell may hold that :func:`read_csv` reads as a missing value (pandas' default
#: list, besides the empty cell): a message about missing values names the one the file holds.
MISSING_TEXTS = frozenset(
    ("#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
     "NA", "NULL", "NaN", "None", "n/a", "nan", "null")
)  # fmt: skip


#: Builds :attr:`Table.rows` once when threads ask for it together.
_ROWS_LOCK = threading.Lock()


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


class Table:
    """A checked, labelled table: feature names, rows as dicts (river's format) and as an array,
    labels and their class indices.

    Build one with :func:`from_frame`, :func:`from_arrays` or :func:`read_csv` (or
    :func:`envs.warfarin.read`); the data sets bundled with ``mlcb/RealData-v0`` are tables too.
    Built directly, ``Table(name, feature_names, x, y)`` checks what any stream relies on (a 2-D
    ``x`` of finite numbers, one name per column, one label per row, labels of one kind, at
    least 2 classes) and raises one ``ValueError`` line otherwise; the readers' other checks
    (missing values, constant columns, rare classes) are theirs.
    A table is immutable: copies are the table itself, and it is described in a setting's record
    by its name, shape and the SHA-256 of its content (:attr:`digest`), so two settings on
    different data never share a key.

    Attributes
    ----------
    name : str
        A label (the data set's name, or the file's stem).
    feature_names : tuple of str
        The feature columns, in order: expert ``features`` index into them.
    rows : tuple of dict
        Every row as ``{feature name: float}``.
    x : numpy.ndarray
        ``(n, d)`` float64 features, read-only.
    y : tuple
        Every row's label as given (``int``, ``str`` or ``bool``).
    classes : tuple
        The distinct labels, sorted: class ``i`` is ``classes[i]``.
    labels : numpy.ndarray
        ``(n,)`` int64: each row's label as an index into ``classes``.
    source : str
        Where the table came from.
    notes : tuple of str
        What was done to the data (constant columns kept or dropped, rows dropped, labels mapped).
    """

    __slots__ = ("name", "feature_names", "_rows", "x", "y", "classes", "labels", "source", "notes", "digest")

    def __init__(
        self,
        name: str,
        feature_names: tuple,
        x: np.ndarray,
        y: tuple,
        source: str = "",
        notes: tuple = (),
    ) -> None:
        self.name = str(name)
        self.feature_names = tuple(str(f) for f in feature_names)
        self.x = _read_only(_checked_features(x, self.feature_names))
        self.y = tuple(y)
        if len(self.y) != self.x.shape[0]:
            raise InputError(
                f"Table: y must hold one label per row of x ({self.x.shape[0]} rows), got {len(self.y)}"
            )
        try:
            self.classes = tuple(sorted(set(self.y)))
        except TypeError:
            kinds = ", ".join(sorted({type(v).__name__ for v in self.y}))
            raise InputError(
                f"Table: y must hold labels of one kind that can be sorted (numbers, text or booleans), got "
                f"labels of kind(s) {kinds}"
            ) from None
        if len(self.classes) < 2:
            only = shown_list(self.classes) or "none"
            raise InputError(
                f"Table: y has {len(self.classes)} class ({only}); a classification stream needs at least 2"
            )
        index = {c: i for i, c in enumerate(self.classes)}
        self.labels = _read_only(np.array([index[v] for v in self.y], dtype=np.int64))
        names = self.feature_names
        self._rows: tuple | None = None
        self.source = str(source)
        self.notes = tuple(notes)
        digest = hashlib.sha256()
        digest.update(repr((names, self.classes, self.x.shape)).encode())
        digest.update(self.x.tobytes())
        digest.update(self.labels.tobytes())
        self.digest = digest.hexdigest()

    @property
    def rows(self) -> tuple:
        """Every row as ``{feature name: float}``, built once, on first use (one tuple for every
        thread: the round data of Python experts share its dicts)."""
        rows = self._rows
        if rows is None:
            with _ROWS_LOCK:
                rows = self._rows
                if rows is None:
                    names = self.feature_names
                    rows = tuple(dict(zip(names, values)) for values in self.x.tolist())
                    self._rows = rows
        return rows

    @property
    def n_features(self) -> int:
        """The number of feature columns ``d``."""
        return int(self.x.shape[1])

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def __repr__(self) -> str:
        n, d = self.x.shape
        shape = f"{n} rows x {d} features, {len(self.classes)} classes"
        return f"Table({self.name!r}, {shape}, sha256 {self.digest[:12]})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Table) and other.digest == self.digest and other.name == self.name

    def __hash__(self) -> int:
        return hash((self.name, self.digest))

    def __copy__(self) -> Table:
        return self

    def __deepcopy__(self, memo: dict) -> Table:
        return self

    def __reduce__(self) -> tuple:
        return (Table, (self.name, self.feature_names, self.x, self.y, self.source, self.notes))

    def get_params(self) -> dict[str, Any]:
        """What describes the table in a setting's record: name, shape, classes, source, digest."""
        return {
            "name": self.name,
            "rows": len(self),
            "features": self.n_features,
            "classes": [c if isinstance(c, (int, str, bool)) else str(c) for c in self.classes],
            "source": self.source,
            "sha256": self.digest,
        }

    def counts(self) -> dict[Any, int]:
        """Rows per class, in class order.

        >>> from_arrays([[0.0], [1.0], [2.0]], [2, 1, 2], min_class_rows=1).counts()
        {1: 1, 2: 2}
        """
        return {
            c: int(n) for c, n in zip(self.classes, np.bincount(self.labels, minlength=len(self.classes)))
        }


def _checked_features(x: Any, names: tuple) -> np.ndarray:
    """``x`` as a C-contiguous float64 array of shape ``(rows, len(names))`` of finite numbers,
    or a ``ValueError`` saying what is wrong: a table built directly (not by :func:`from_frame`)
    is checked too, since the compiled experts index its rows without bounds checks."""
    try:
        array = np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(
            f"Table: x must be a 2-D array of numbers (rows, features), got {shown(x)}"
        ) from None
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
        raise InputError(
            f"Table: x must be a 2-D array of shape (rows, features), both >= 1, got shape {array.shape}"
        )
    if len(names) != array.shape[1]:
        raise InputError(
            f"Table: feature_names must name the {array.shape[1]} columns of x, got {len(names)} name(s)"
        )
    bad = np.argwhere(~np.isfinite(array))
    if bad.size:
        row, column = (int(v) for v in bad[0])
        raise InputError(
            f"Table: x has {float(array[row, column])!r} at row {row}, column {shown(names[column])}; "
            "every value must be a finite number"
        )
    return array


# --- building tables ---------------------------------------------------------------------------------
def _label_values(name: str, values: list) -> tuple[tuple, str | None]:
    """The labels as plain Python values (``int`` for integral numbers, ``bool``, ``str``) and a
    note on how they are mapped; a ``ValueError`` for fractional numbers."""
    kinds = {type(v) for v in values}
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        return tuple(bool(v) for v in values), None
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in values):
        # Integers are kept as they are (through float64 two labels above 2**53 would become one);
        # a float must be finite and whole, and is the integer it equals.
        floats = [row for row, v in enumerate(values) if isinstance(v, (float, np.floating))]
        numbers = np.asarray([values[row] for row in floats], dtype=np.float64)
        fractional = np.flatnonzero(~np.isfinite(numbers) | (numbers != np.round(numbers)))
        if fractional.size:
            row = floats[int(fractional[0])]
            raise InputError(
                f"label {shown(name)} has values that are not whole numbers (row {row}: "
                f"{shown(values[row])}): a class "
                "label is needed, not a continuous target; bin it into classes first"
            )
        return tuple(int(v) for v in values), None
    if kinds <= {str}:
        return _trimmed(name, tuple(values), None)
    # Mixed kinds (numbers and text): compared as text.
    texts = tuple(str(v) for v in values)
    listed = ", ".join(sorted(k.__name__ for k in kinds))
    return _trimmed(name, texts, f"label {shown(name)}: values of several kinds ({listed}) read as text")


def _trimmed(name: str, texts: tuple, note: str | None) -> tuple[tuple, str | None]:
    """Text labels without the spaces around them (``"yes "`` is the class ``"yes"``, as a
    header's names are read), and a note naming the first one changed; a label left empty is a
    ``ValueError``."""
    trimmed = tuple(text.strip() for text in texts)
    changed = [row for row, (old, new) in enumerate(zip(texts, trimmed)) if old != new]
    if not changed:
        return texts, note
    empty = [row for row in changed if not trimmed[row]]
    if empty:
        raise InputError(
            f"label {shown(name)} has a value of spaces only at row {empty[0]}: a missing label; fill "
            "it or drop the row"
        )
    first = changed[0]
    said = (
        f"label {shown(name)}: the spaces around {len(changed)} value(s) removed (row {first}: "
        f"{shown(texts[first])} is the class {shown(trimmed[first])})"
    )
    return trimmed, f"{note}; {said}" if note else said


def _check_labels(name: str, labels: tuple, min_class_rows: int) -> None:
    counts = Counter(labels)
    if len(counts) < 2:
        only = shown_list(counts) or "none"
        raise InputError(
            f"label {shown(name)} has {len(counts)} class ({only}); a classification stream needs at least 2"
        )
    small = sorted((c for c, n in counts.items() if n < min_class_rows), key=str)
    if small:
        first = small[0]
        raise InputError(
            f"label {shown(name)}: class {shown(first)} has {counts[first]} row(s), fewer than "
            f"min_class_rows = "
            f"{min_class_rows}"
            + (f" (and {len(small) - 1} more such classes)" if len(small) > 1 else "")
            + "; drop those rows, merge the class into another or lower min_class_rows"
        )


def _read_as(texts: dict, column: str) -> str:
    """What a message about ``column``'s missing values says of the text a file held there."""
    return f" (read as missing: the text {shown(texts[column])})" if column in texts else ""


def _numeric_column(column: str, values: Any) -> np.ndarray:
    """A feature column as float64; a ``ValueError`` naming its first non-numeric value and row."""
    import pandas as pd

    series = pd.Series(values)
    kind = series.dtype
    if isinstance(kind, pd.CategoricalDtype):
        kind = kind.categories.dtype
    if kind.kind in "mM" or isinstance(kind, (pd.DatetimeTZDtype, pd.PeriodDtype, pd.IntervalDtype)):
        # pandas would give a count of some unit since some origin, which the dtype alone fixes
        # (nanoseconds or seconds, 1970 or the period's): a number no one chose, and read from a
        # CSV file the same column is text, refused above
        raise InputError(
            f"column {shown(column)} holds dates, times or intervals ({kind}), not numbers; encode "
            "them as numbers of your choosing (e.g. days since a date) or leave it out with columns=[...]"
        )
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.to_numpy(dtype=np.float64)
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_complex_dtype(series.dtype):
        return series.to_numpy(dtype=np.float64)
    converted = pd.to_numeric(series, errors="coerce")
    bad = np.flatnonzero(converted.isna().to_numpy() & series.notna().to_numpy())
    if bad.size or pd.api.types.is_complex_dtype(series.dtype):
        row = int(bad[0]) if bad.size else 0
        raise InputError(
            f"column {shown(column)} is not numeric (row {row}: {shown(series.iloc[row])}); encode it as "
            "numbers "
            "(e.g. one-hot columns) or leave it out with columns=[...]"
        )
    return converted.to_numpy(dtype=np.float64)


def from_frame(
    frame: Any,
    label: str,
    *,
    columns: Any = None,
    name: str | None = None,
    missing: str = "error",
    constant: str = "keep",
    min_class_rows: int = 2,
    source: str = "",
) -> Table:
    """A :class:`Table` from a pandas DataFrame with a label column.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per example.
    label : str
        The label column.
    columns : list of str, optional
        The feature columns, in this order; default: every column but the label.
    name : str, optional
        The table's name (default ``"data"``).
    missing : {"error", "drop"}
        Missing values (``NaN``, ``None``, empty cells) in the label or a feature column: refused
        with the column's name (default), or their rows dropped.
    constant : {"keep", "drop"}
        Constant feature columns: kept (default; the column indices stay the frame's) or dropped.
        Either way a warning names them.
    min_class_rows : int
        ``>= 1``: the fewest rows a class may have (default 2).
    source : str
        Where the data came from, for the record.

    Returns
    -------
    Table

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"x": [0.1, 0.5, 0.2, 0.9], "y": ["no", "yes", "no", "yes"]})
    >>> from_frame(frame, "y").classes
    ('no', 'yes')
    >>> from_frame(frame, "z")
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: label: no column 'z' in data; its columns: 'x', 'y'
    """
    import pandas as pd

    from mlcb import validation

    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    texts = frame.attrs.get("missing_texts", {})  # read_csv: the texts read as missing, by column
    name = "data" if name is None else str(name)
    what = printable(name)
    validation.choice("missing", missing, MISSING)
    validation.choice("constant", constant, CONSTANT)
    min_class_rows = validation.integer("min_class_rows", min_class_rows)
    header = [str(c) for c in frame.columns]
    _check_duplicates(header, what)
    if not isinstance(label, str) or label not in header:
        listed = shown_list(header) or "none"
        raise InputError(f"label: no column {shown(label)} in {what}; its columns: {listed}")
    if columns is None:
        features = [c for c in header if c != label]
    else:
        if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
            raise InputError(f"columns must be a list of column names, got {shown(columns)}")
        features = list(columns)
        unknown = [c for c in features if c not in header]
        if unknown:
            listed = shown_list(header)
            raise InputError(f"columns: no column {shown(unknown[0])} in {what}; its columns: {listed}")
        if label in features:
            raise InputError(f"columns: the label column {shown(label)} cannot also be a feature")
        _check_duplicates(features, "columns")
    if not features:
        raise InputError(f"{what} has no feature column besides the label {shown(label)}")
    frame = frame.set_axis(header, axis=1)
    if len(frame) == 0:
        raise InputError(f"{what} has no rows")
    notes: list[str] = []
    used = frame[[*features, label]]
    absent = used.isna()
    empty = [str(c) for c in used.columns[absent.all(axis=0).to_numpy()]]
    if empty:  # no row would be left by missing='drop'
        more = f" ({len(empty) - 1} more such column(s))" if len(empty) > 1 else ""
        where = (
            "the label must give each row's class"
            if empty[0] == label
            else "leave it out with columns=[...] or fill it"
        )
        raise InputError(
            f"column {shown(empty[0])} of {what} has no value in any of its {len(used)} rows"
            f"{_read_as(texts, empty[0])}{more}; {where}"
        )
    if absent.to_numpy().any():
        if missing == "error":
            counts = absent.sum()
            column = str(counts[counts > 0].index[0])
            first = int(np.flatnonzero(absent[column].to_numpy())[0])
            others = int((counts > 0).sum()) - 1
            more = f" ({others} more column(s) have some)" if others else ""
            raise InputError(
                f"column {shown(column)} of {what} has {int(counts[column])} missing value(s)"
                f"{_read_as(texts, column)}, the first at row {first}{more}; fill them or pass "
                "missing='drop' to drop those rows"
            )
        keep = ~absent.any(axis=1).to_numpy()
        dropped = int((~keep).sum())
        used = used[keep]
        notes.append(f"{dropped} row(s) with missing values dropped (missing='drop')")
        if len(used) == 0:
            raise InputError(f"{what}: every row has a missing value; nothing is left with missing='drop'")
    x = np.column_stack([_numeric_column(c, used[c].to_numpy()) for c in features])
    infinite = np.argwhere(~np.isfinite(x))
    if infinite.size:
        row, position = (int(v) for v in infinite[0])
        raise InputError(f"column {shown(features[position])} of {what} has an infinite value at row {row}")
    huge = np.argwhere(np.abs(x) > LARGEST)
    if huge.size:
        row, position = (int(v) for v in huge[0])
        raise InputError(
            f"column {shown(features[position])} of {what} has {x[row, position]:g} at row {row}, larger "
            f"than {LARGEST:g} in size, which the learners cannot square; scale the column"
        )
    labels, note = _label_values(label, used[label].tolist())
    if note:
        notes.append(note)
    _check_labels(label, labels, min_class_rows)
    flat = [features[j] for j in np.flatnonzero(x.min(axis=0) == x.max(axis=0))]
    if flat:
        listed = ", ".join(repr(c) for c in flat)
        if constant == "drop":
            kept = [j for j, c in enumerate(features) if c not in flat]
            if not kept:
                raise InputError(
                    f"{what}: every feature column is constant ({listed}); nothing to learn from"
                )
            x, features = x[:, kept], [features[j] for j in kept]
            notes.append(f"constant column(s) {listed} dropped (constant='drop')")
        else:
            notes.append(f"constant column(s) {listed} kept: they carry no information (constant='keep')")
    classes = sorted(set(labels))
    if classes != list(range(len(classes))):
        listed = ", ".join(map(repr, classes))
        notes.append(
            f"label {label!r}: classes {listed} are class indices 0 .. {len(classes) - 1}, in this order"
        )
    for text in notes:
        if "constant column" in text or "dropped" in text or "spaces around" in text:
            warnings.warn(f"{name}: {text}", UserWarning, stacklevel=3)
    return Table(
        name, tuple(features), x, labels, source=source or f"DataFrame, label {label!r}", notes=tuple(notes)
    )


def from_arrays(
    x: Any,
    y: Any,
    *,
    feature_names: Any = None,
    name: str | None = None,
    missing: str = "error",
    constant: str = "keep",
    min_class_rows: int = 2,
) -> Table:
    """A :class:`Table` from a feature array ``x`` (``(n, d)``) and labels ``y`` (``(n,)``).

    Feature names default to ``x0 .. x{d-1}``; the checks are :func:`from_frame`'s.

    Examples
    --------
    >>> from_arrays([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]], [0, 1, 0, 1]).feature_names
    ('x0', 'x1')
    """
    import pandas as pd

    features = np.asarray(x)
    if features.ndim != 2 or features.shape[0] == 0 or features.shape[1] == 0:
        raise InputError(
            f"x must be a 2-D array of shape (rows, features), both >= 1, got shape {features.shape}"
        )
    labels = np.asarray(y)
    if labels.ndim != 1 or labels.shape[0] != features.shape[0]:
        raise InputError(
            f"y must be a 1-D array with one label per row of x ({features.shape[0]} rows), got shape "
            f"{labels.shape}"
        )
    if feature_names is None:
        names = [f"x{j}" for j in range(features.shape[1])]
    else:
        names = [str(f) for f in feature_names]
        if len(names) != features.shape[1]:
            raise InputError(
                f"feature_names must name the {features.shape[1]} columns of x, got {len(names)} name(s)"
            )
        _check_duplicates(names, "feature_names")
    label = "label"
    while label in names:
        label = "_" + label
    frame = pd.DataFrame({n: features[:, j] for j, n in enumerate(names)})
    frame[label] = labels.tolist()
    return from_frame(frame, label, name=name, source="arrays", missing=missing, constant=constant,
                      min_class_rows=min_class_rows)  # fmt: skip


#: Tables read from files, by (path, size, modification time, options): a file is read once per
#: process, and read again when it changes.
_READ: dict[tuple, Table] = {}


def read_csv(
    path: Any,
    label: str | None,
    *,
    columns: Any = None,
    name: str | None = None,
    missing: str = "error",
    constant: str = "keep",
    min_class_rows: int = 2,
    role: str = "path",
) -> Table:
    """A :class:`Table` from a CSV file with a header line and a label column.

    The file is read as UTF-8 (a byte-order mark is allowed), separated by commas; its header is
    checked as written (duplicate names are refused, where pandas would rename them), then every
    check of :func:`from_frame`. The name defaults to the file's stem. A file is read once per
    process (again when it changes).

    Parameters
    ----------
    path : str or Path
        The CSV file.
    label : str
        The label column (a ``ValueError`` lists the columns when it is missing).
    columns, name, missing, constant, min_class_rows
        As in :func:`from_frame`.
    role : str
        The name that messages about the file give it: the parameter it came in (``"dataset"``
        through :class:`~envs.real_data.RealDataEnv`, a setting file and ``--data``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.csv"
    >>> _ = path.write_text("a,b,y\\n1,2,0\\n3,4,1\\n5,6,0\\n7,9,1\\n")
    >>> read_csv(path, "y")  # doctest: +ELLIPSIS
    Table('tiny', 4 rows x 2 features, 2 classes, sha256 ...)
    """
    import pandas as pd

    from mlcb import validation

    file = validation.regular_file(role, path)
    stat = file.stat()
    chosen = None if columns is None or isinstance(columns, str) else tuple(columns)
    key = (str(file.resolve()), stat.st_size, stat.st_mtime_ns, label, chosen, name, missing, constant,
           min_class_rows)  # fmt: skip
    if key in _READ:
        return _READ[key]
    # The file's structure, checked as every table mlcb reads is: no header, a column name twice,
    # a row cut short or run on, a cell beyond any table's, not UTF-8, binary data.
    _check_not_binary(file, role)
    text = validation.read_table(role, file)
    shown_name = validation.printable(file.name)
    if not text.rows:
        raise InputError(f"{role}: {shown_name} has a header but no rows")
    if label is None:
        listed = validation.shown_list([h for h in text.header if h], most=30)
        raise InputError(f"label: name the label column of {shown_name}; its columns: {listed}")
    named = [j for j, h in enumerate(text.header) if h]  # columns without a name hold nothing
    try:
        frame = pd.read_csv(io.StringIO(text.text, newline=""), skipinitialspace=True, usecols=named)
    except (pd.errors.ParserError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(
            f"{role}: {shown_name} is not a well-formed CSV file: {validation.shown(first, 200)}"
        ) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    if label in frame.columns and _rounded_integers(frame[label]):
        # Whole numbers beyond float64's 2**53 (or beyond 64 bits, or in a column with a missing
        # cell) that pandas read as floats: read as the integers the file wrote.
        exact = pd.read_csv(
            io.StringIO(text.text, newline=""), skipinitialspace=True, usecols=named, dtype={label: str}
        )
        exact.columns = frame.columns
        frame[label] = _integer_texts(exact[label])
    frame = frame.dropna(how="all").reset_index(drop=True)  # a line of empty fields is no row
    found = {}  # the first text in each column that pandas reads as a missing value, for messages
    # (only a column pandas found a missing value in can hold one: the others are not scanned)
    for j, missed in zip(named, frame.isna().any(axis=0).tolist()):
        if not missed:
            continue
        cell = next((c.strip() for row in text.rows if (c := row[j]).strip() in MISSING_TEXTS), None)
        if cell is not None:
            found[text.header[j]] = cell
    frame.attrs["missing_texts"] = found
    table = from_frame(
        frame,
        label,
        columns=columns,
        name=file.stem if name is None else name,
        missing=missing,
        constant=constant,
        min_class_rows=min_class_rows,
        source=f"{file} (CSV, label {label!r})",
    )
    if len(_READ) > 64:
        _READ.clear()
    _READ[key] = table
    return table


#: How files of other formats begin, and what a message calls them: given as a CSV path, each
#: was "not UTF-8 text" and told to be saved as UTF-8.
OTHER_FORMATS = {
    b"PAR1": "a Parquet file",
    b"ARROW1": "an Arrow (Feather) file",
    b"\x89HDF\r\n\x1a\n": "an HDF5 file",
    b"\x1f\x8b": "a gzip-compressed file",
    b"BZh": "a bzip2-compressed file",
    b"\xfd7zXZ\x00": "an xz-compressed file",
    b"\x28\xb5\x2f\xfd": "a zstd-compressed file",
}


def _check_not_binary(file: Path, role: str) -> None:
    """A ``ValueError`` naming the format of a file that is no text but a table of another kind
    (:data:`OTHER_FORMATS`) or a Python pickle (which nothing here unpickles), with what to do."""
    with open(file, "rb") as stream:
        start = stream.read(8)
    name = printable(file.name)
    kind = next((what for magic, what in OTHER_FORMATS.items() if start.startswith(magic)), None)
    if kind is not None:
        what = "decompress it" if "compressed" in kind else "save it as CSV"
        raise InputError(
            f"{role}: {name} is {kind}, not a CSV file: {what}, or read it with pandas and give the "
            "frame (envs.tabular.from_frame(frame, label))"
        )
    if len(start) >= 2 and start[0] == 0x80 and 2 <= start[1] <= 5:
        raise InputError(f"{role}: {name} is a Python pickle, not a CSV file; a pickle is never loaded here")


def _rounded_integers(column: Any) -> bool:
    """Whether pandas read ``column`` as floats of which some are whole and at least 2**53 in size,
    where float64 no longer holds every integer."""
    if column.dtype.kind != "f":
        return False
    values = column.to_numpy(dtype=np.float64)
    whole = np.isfinite(values) & (values == np.round(values))
    return bool(np.any(whole & (np.abs(values) >= 2.0**53)))


_INTEGER = re.compile(r"[+-]?[0-9]{1,4000}")  # (Python reads at most 4,300 digits as an int)


def _integer_texts(column: Any) -> Any:
    """A label column read as text, with every integer written in the file as a Python ``int``
    (exact at any size) and any other value as pandas reads it alone (``float``, missing)."""
    import pandas as pd

    def value(text: Any) -> Any:
        if not isinstance(text, str):
            return text  # missing
        text = text.strip()
        return int(text) if _INTEGER.fullmatch(text) else float(pd.to_numeric(text, errors="coerce"))

    return pd.Series([value(text) for text in column], index=column.index, dtype=object)


def is_path(value: Any) -> bool:
    """Whether a ``dataset`` value names a file rather than a bundled data set: an ``os.PathLike``,
    or a string with a path separator or a file suffix.

    >>> is_path("ctg"), is_path("data/mine.csv"), is_path("mine.csv")
    (False, True, True)
    """
    if isinstance(value, os.PathLike):
        return True
    return isinstance(value, str) and (os.sep in value or "/" in value or Path(value).suffix != "")


def describe(table: Table) -> str:
    """One line on a table: its name, shape and rows per class.

    >>> describe(from_arrays([[0.0], [1.0], [2.0], [3.0]], [1, 2, 1, 2], name="t"))
    't: 4 rows, 1 features, classes 1: 2, 2: 2'
    """
    counts = ", ".join(f"{c}: {n}" for c, n in table.counts().items())
    return f"{table.name}: {len(table)} rows, {table.n_features} features, classes {counts}"


__all__ = ["CONSTANT", "MISSING", "Table", "describe", "from_arrays", "from_frame", "is_path", "read_csv"]
