"""Argument checks shared by the whole package, and the exception of bad input.

Each check returns the value in canonical form or raises an :class:`InputError` (a ``ValueError``)
that names the parameter and the allowed values, so that bad input is refused, clearly, before any
work starts. Every error the package raises for what a user gave it (an argument, a file, a name)
is an :class:`InputError`: the command line shows exactly these as one line with exit status 2
(``MLCB_TRACEBACK=1`` shows their traceback too); any other exception is a fault of mlcb, shown
with its traceback.
"""

from __future__ import annotations

import decimal
import math
import numbers
import os
import re
import stat
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple


class InputError(ValueError):
    """Bad input: a parameter, a file or a name given to mlcb, named in a one-line message with
    what is allowed. A ``ValueError``, so that code catching ``ValueError`` keeps working.

    Examples
    --------
    >>> try:
    ...     integer("horizon", 0)
    ... except ValueError as error:
    ...     print(type(error).__name__, error)
    InputError horizon must be an integer >= 1, got 0
    """


class InputTypeError(InputError, TypeError):
    """Bad input of the wrong kind (a dict where a setting is expected): an :class:`InputError`
    that is also a ``TypeError``."""


class InputNotFound(InputError, FileNotFoundError):
    """A path given to mlcb holds nothing it can read (no saved result, no such file): an
    :class:`InputError` that is also a ``FileNotFoundError``."""


def input_error(error: BaseException) -> InputError:
    """``error`` (a ``ValueError`` or ``TypeError`` raised by code that checks what a user gave,
    such as the constructor of a registered class) as an :class:`InputError` with the same message;
    an :class:`InputError` is returned as it is."""
    if isinstance(error, InputError):
        return error
    kind = InputTypeError if isinstance(error, TypeError) else InputError
    converted = kind(*error.args)
    converted.__cause__ = error
    return converted


#: Characters of a value that a message shows at most (:func:`shown`); the rest is counted.
SHOWN = 60
#: The largest size of a number mlcb takes from a user's table or stream (a feature, a
#: measurement, a regression target): learners square and sum such numbers (a scaler's variance,
#: a gradient), which overflows, or fills their state with infinities, well before the largest
#: float (1e308 is finite; its square is not).
LARGEST = 1e100


def printable(text: Any, keep: str = "") -> str:
    """``text`` with every control or format character (a terminal escape, a carriage return, a
    bidirectional override; a line break too, unless it is in ``keep``) written as its escape
    (``\\x1b``): text from a user's files or arguments is shown, never acted on by the terminal.

    Examples
    --------
    >>> printable("mlcb M=1\\x1b[2J\\nX")
    'mlcb M=1\\\\x1b[2J\\\\nX'
    """
    text = str(text)
    if text.isprintable() and not any(unicodedata.category(c)[0] == "C" for c in text):
        return text
    return "".join(
        c if c in keep or unicodedata.category(c)[0] != "C" else c.encode("unicode_escape").decode("ascii")
        for c in text
    )


def shown(value: Any, limit: int = SHOWN) -> str:
    """``value`` as a message shows it: its ``repr``, with every control or format character
    escaped (:func:`printable`) and at most about ``limit`` characters of it, the length of the
    rest counted. The one way a value a user gave (a cell of a file, an argument, a label) enters
    a message: a 10 MB cell or an escape sequence never reaches the terminal as it is.

    Examples
    --------
    >>> shown("19-Oct")
    "'19-Oct'"
    >>> shown("\\x1b[31mred")
    "'\\\\x1b[31mred'"
    >>> shown("9" * 1_000_000, limit=8)
    "'99999999'... (1,000,000 characters)"
    """
    if isinstance(value, str) and len(value) > limit:
        return f"{printable(repr(value[:limit]))}... ({len(value):,} characters)"
    try:
        text = printable(repr(value))
    except Exception:  # a value whose repr fails: its type
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit + 2 else f"{text[:limit]}... ({len(text):,} characters in all)"


def shown_list(values: Any, most: int = 12, limit: int = 40) -> str:
    """``values`` as a comma-separated list of :func:`shown` items, at most ``most`` of them (the
    rest counted): the columns of a wide file, say.

    >>> shown_list(["a", "b", "c"], most=2)
    "'a', 'b' (and 1 more)"
    """
    items = list(values)
    listed = ", ".join(shown(v, limit) for v in items[:most])
    return listed + (f" (and {len(items) - most:,} more)" if len(items) > most else "")


def _is_bool(value: Any) -> bool:
    """Whether ``value`` is a bool or a NumPy bool (read from ``sys.modules``: a NumPy bool exists
    only once NumPy is imported, and the checks of the command line's arguments do not import it)."""
    if isinstance(value, bool):
        return True
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.bool_)


def is_real(value: Any) -> bool:
    """Whether ``value`` is a finite real number (bools excluded)."""
    real = isinstance(value, numbers.Real) and not _is_bool(value)
    return real and math.isfinite(value)


def not_a_number(value: Any) -> tuple:
    """``(entry,)``, the first entry of a (nested) sequence or array of numbers that is no
    number (a bool, a text, ``None``), or ``()`` when every entry is one: NumPy's conversion to
    floats reads ``True`` as 1.0, ``"0.5"`` as 0.5 and ``None`` as nan, so an array parameter
    checks its entries first.

    >>> not_a_number([[0.5, float("nan")], [0.2, 0.1]]), not_a_number([[0.5, True]]), not_a_number([None])
    ((), (True,), (None,))
    """
    stack = [value]
    while stack:
        item = stack.pop()
        kind = getattr(getattr(item, "dtype", None), "kind", None)
        if kind in ("i", "u", "f") or getattr(item, "size", 1) == 0:  # numbers, or no entries
            continue
        if isinstance(item, (list, tuple)) or kind == "O":
            stack.extend(reversed(list(item.ravel() if kind == "O" else item)))
        elif not isinstance(item, numbers.Real) or _is_bool(item):
            array = kind is not None and len(getattr(item, "shape", ())) > 0  # of bools or texts
            return (item.ravel()[0] if array else item,)
    return ()


#: The largest whole number a float holds exactly (2^53): past it, a float written as a whole
#: number may not be the number meant, and is refused.
EXACT_FLOAT = 2**53


def whole_number(value: Any) -> int | None:
    """``value`` as an int when it is a whole number however written, else ``None``: an int
    (NumPy's too), or a finite float equal to an integer of at most :data:`EXACT_FLOAT` in size
    (``1e6``, ``1000.0``: how TOML and the command line may write a horizon). Bools, fractions
    and text are not whole numbers here (:func:`parse_whole_number` reads text).

    The one rule for every whole-number parameter (horizons, replications, budgets, seeds, sizes
    of environments and pools): :func:`integer`, :func:`budget` and the seed's check apply it.

    Examples
    --------
    >>> whole_number(10_000), whole_number(1e4), whole_number(2.5), whole_number(True)
    (10000, 10000, None, None)
    """
    if _is_bool(value):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(value):
        number = float(value)
        if number.is_integer() and abs(number) <= EXACT_FLOAT:
            return int(number)
    return None


def parse_whole_number(text: str) -> int | None:
    """The whole number written in ``text`` (the command line's ``--horizon 1e6``): ``1000``,
    ``1_000``, ``1e6``, ``1000.0``; ``None`` for anything else (:func:`whole_number`'s rule).

    The text is read exactly, not through a float: ``9007199254740993.0`` is not rounded to its
    neighbour 2**53, and ``1.0000000000000001`` is not whole. Written with a decimal point or an
    exponent, a number is whole up to :data:`EXACT_FLOAT` in size, as :func:`whole_number` takes
    floats; an integer literal of any size is that integer.

    Examples
    --------
    >>> parse_whole_number("1e6"), parse_whole_number("250_000"), parse_whole_number("2.5")
    (1000000, 250000, None)
    >>> parse_whole_number("9007199254740993.0"), parse_whole_number("1.0000000000000001")
    (None, None)
    """
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    whole = _written_whole(text)
    return None if whole is None or whole.copy_abs() > EXACT_FLOAT else int(whole)


def _written_whole(text: str) -> decimal.Decimal | None:
    """The whole number written in ``text`` in the syntax of ``float``, read exactly and of any
    size (kept a decimal: ``1e999999999`` as an int would fill the memory), or ``None``."""
    try:
        exact = decimal.Decimal(text.strip())
    except decimal.InvalidOperation:
        return None
    return exact if exact.is_finite() and exact == exact.to_integral_value() else None


def whole_beyond_exact(text: str) -> bool:
    """Whether ``text`` writes a whole number with a decimal point or an exponent that is too
    large for :func:`parse_whole_number` (``1e99``): a message can then say why it is refused.

    >>> whole_beyond_exact("1e99"), whole_beyond_exact("1e6"), whole_beyond_exact("2.5")
    (True, False, False)
    """
    whole = _written_whole(text)
    return whole is not None and whole.copy_abs() > EXACT_FLOAT


def integer(name: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an int, or a ``ValueError``: ``name must be an integer >= minimum`` (and
    ``<= maximum`` when one is given). A whole number written as a float (``1e4``) is that
    integer (:func:`whole_number`).

    Examples
    --------
    >>> integer("horizon", 1e4)
    10000
    >>> integer("horizon", 2.5)
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: horizon must be an integer >= 1, got 2.5
    """
    number = whole_number(value)
    if number is None or number < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {shown(value)}")
    if maximum is not None and number > maximum:
        raise InputError(f"{name} must be an integer in [{minimum}, {maximum:_}], got {shown(value)}")
    return number


def budget(value: Any, n_experts: Any) -> int:
    """The budget ``M`` as an int, checked against the pool's ``K``: an :class:`InputError`
    ``budget must be an integer in [1, n_experts=K], got M`` unless ``1 <= M <= K``.

    The one check of the rule ``1 <= M <= K``: settings, the policies' ``build``, the theory, the
    lower bound and the conformance checks all call it (the policy contract,
    :class:`mlcb.contracts.Policy`, says who checks what).

    Examples
    --------
    >>> budget(2, 10)
    2
    >>> budget(4, 3)
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: budget must be an integer in [1, n_experts=3], got 4
    """
    k = integer("n_experts", n_experts)
    number = whole_number(value)
    if number is None or not 1 <= number <= k:
        raise InputError(f"budget must be an integer in [1, n_experts={k}], got {shown(value)}")
    return number


def pair(name: str, value: Any, what: str, check: Any) -> tuple:
    """``value`` as a tuple of two items, each passed through ``check(item)`` (which returns the
    item converted, or ``None`` when it is not allowed); otherwise an :class:`InputError`:
    ``name must be a pair WHAT, got VALUE``.

    >>> pair("quadrature", [24, 48], "(n_radial, n_angular) of integers in [1, 2048]",
    ...      lambda q: int(q) if isinstance(q, int) and 1 <= q <= 2048 else None)
    (24, 48)
    """
    sequence = isinstance(value, (list, tuple)) or isinstance(value, _array_types())
    items: tuple[Any, ...] = tuple(value) if sequence else ()
    checked = tuple(check(item) for item in items) if len(items) == 2 else (None,)
    if any(item is None for item in checked):
        raise InputError(f"{name} must be a pair {what}, got {shown(value)}")
    return checked


def _array_types() -> tuple:
    """NumPy's array type when NumPy is imported (the checks of the command line do not import it)."""
    numpy = sys.modules.get("numpy")
    return (numpy.ndarray,) if numpy is not None else ()


def budgets(name: str, value: Any, n_experts: int | None = None) -> list[int]:
    """Budgets as a list of distinct ints: one int, or a non-empty list, tuple, range or 1-d NumPy
    array of them; otherwise an :class:`InputError` naming ``name``. Each is checked against
    ``n_experts`` with :func:`budget` where it is given; without it, the range is left to the
    settings built from the budgets (each checks its own with :func:`budget`, knowing ``K``).

    Examples
    --------
    >>> budgets("budget", [1, 2])
    [1, 2]
    >>> budgets("budget", [1, 1])
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: budget must be ... distinct integers >= 1, got [1, 1] (repeated: 1)
    """
    what = f"{name} must be an integer >= 1 or a non-empty list of distinct integers >= 1"
    several = isinstance(value, (list, tuple, range)) or (
        isinstance(value, _array_types()) and getattr(value, "ndim", 0) == 1
    )
    items = list(value) if several else [value]
    numbers_given = [whole_number(item) for item in items]
    if not items or any(number is None for number in numbers_given):
        raise InputError(f"{what}, got {shown(value)}")
    for item in items:
        if n_experts is not None:
            budget(item, n_experts)
    whole = [int(number) for number in numbers_given if number is not None]
    repeated = sorted({b for b in whole if whole.count(b) > 1})
    if repeated:
        raise InputError(f"{what}, got {shown(value)} (repeated: {', '.join(map(str, repeated))})")
    return whole


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}")


def plain_name(name: str, value: Any) -> str:
    """``value`` if it is a plain file name: 1 to 128 letters, digits, ``-``, ``_`` or ``.``, not
    starting with ``.`` (so never a path, ``..`` or a hidden file); else a ``ValueError``."""
    if not isinstance(value, str) or not _PLAIN_NAME.fullmatch(value):
        raise InputError(
            f"{name} must be a plain file name (1 to 128 letters, digits, '-', '_', '.', not starting "
            f"with '.'), got {shown(value)}"
        )
    return value


#: The longest label of a setting.
MAX_LABEL = 120


def label(name: str, value: Any) -> str:
    """``value`` if it is a setting's label: a string of 1 to :data:`MAX_LABEL` characters, none a
    control character (a line break, a tab, an escape code), not blank; else an :class:`InputError`.

    Examples
    --------
    >>> label("label", "my ridge pool")
    'my ridge pool'
    >>> label("label", "a\\x1b[31mred")
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: label must be 1 to 120 printable characters ..., got 'a\\x1b[31mred'
    """
    text = value if isinstance(value, str) else None
    if text is None or not text.strip() or len(text) > MAX_LABEL or not text.isprintable():
        raise InputError(
            f"{name} must be 1 to {MAX_LABEL} printable characters (no line breaks, tabs or control "
            f"codes), not blank, got {shown(value)}"
        )
    return str(text)


def path(name: str, value: Any) -> Path:
    """``value`` (a ``str`` or ``os.PathLike``) as a ``Path``, or a ``ValueError``; the empty string
    is refused, as ``Path("")`` would silently mean the current directory.

    Examples
    --------
    >>> path("out", "results")
    PosixPath('results')
    >>> path("out", "")
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: out must be a non-empty path (a directory or file name), got ''
    """
    if not isinstance(value, (str, os.PathLike)) or (isinstance(value, str) and not value):
        raise InputError(f"{name} must be a non-empty path (a directory or file name), got {shown(value)}")
    return Path(value)


def _kind(mode: int) -> str | None:
    """What a file of ``mode`` is when it is not a regular file: a folder, a named pipe, a device."""
    for test, kind in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "not a regular file"


def regular_file(role: str, value: Any, what: str = "file") -> Path:
    """``value`` as the ``Path`` of a regular file that exists (a link to one is followed), or one
    line that names what it is instead: no such file, a folder, a named pipe, a device such as
    ``/dev/zero``, a socket, or a file that cannot be looked at. ``what`` names the kind of file
    expected (``"CSV file"``). Nothing is opened: a named pipe or a device is never read from.

    Examples
    --------
    >>> regular_file("data", "/dev/zero", "CSV file")
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: data: /dev/zero is a character device, not a CSV file
    """
    file = path(role, value)
    shown_path = printable(str(file))
    try:
        mode = file.stat().st_mode
    except FileNotFoundError:
        raise InputError(f"{role}: no such {what} {shown(str(file), 200)}") from None
    except OSError as error:  # a loop of links, a name too long, permission denied on a folder
        raise InputError(f"{role}: {shown_path} cannot be looked at ({error.strerror or error})") from None
    kind = _kind(mode)
    if kind is not None:
        hint = " (name the file inside it)" if kind == "a folder" else ""
        expected = "a regular file" if what == "file" else f"a {what}"
        raise InputError(f"{role}: {shown_path} is {kind}, not {expected}{hint}")
    return file


#: How a spreadsheet workbook's file begins, and what a message calls it: given where a CSV file
#: is read, it is named as what it is (it was 'not UTF-8 text').
WORKBOOKS = {
    b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1": "an Excel workbook (.xls)",
    b"PK\x03\x04": "a zip archive (an Excel .xlsx or OpenDocument workbook)",
}


def read_text(role: str, file: Path, what: str = "file") -> str:
    """The text of the regular file ``file`` (:func:`regular_file`), read as UTF-8 (a byte-order
    mark is allowed), or one line: empty, a spreadsheet workbook (:data:`WORKBOOKS`), not UTF-8
    (a spreadsheet's CSV in a legacy encoding), holding a NUL byte (binary data), unreadable."""
    name = printable(file.name)
    try:
        data = file.read_bytes()
    except OSError as error:
        raise InputError(f"{role}: {name} cannot be read ({error.strerror or error})") from None
    if not data:
        raise InputError(f"{role}: {name} is empty")
    for start, workbook in WORKBOOKS.items():
        if data.startswith(start):
            raise InputError(
                f"{role}: {name} is {workbook}, not a {what}: save its sheet as CSV (UTF-8, comma-separated)"
            )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{role}: {name} is not UTF-8 text ({error.reason} at byte {error.start}), which a {what} must "
            "be; save it as UTF-8 (a spreadsheet's 'CSV UTF-8')"
        ) from None
    nul = text.find("\x00")
    if nul >= 0:
        raise InputError(
            f"{role}: {name} holds a NUL byte (line {text.count(chr(10), 0, nul) + 1}): binary data, not a "
            f"{what}"
        )
    return text


def distinct_columns(header: list[str], what: str) -> None:
    """An :class:`InputError` naming the first column name that ``header`` holds twice (empty
    names aside: :func:`read_table` checks that their columns hold nothing), with its positions
    (counted from 0); a reader would otherwise read one of the two and ignore the other."""
    counts = Counter(name for name in header if name != "")
    repeated = [name for name in header if counts[name] > 1]
    if repeated:
        first = repeated[0]
        positions = [i for i, name in enumerate(header) if name == first]
        raise InputError(
            f"{printable(what)} has duplicate column name {shown(first)} (columns "
            f"{', '.join(map(str, positions))}); rename them so that each column has one name"
        )


class TextTable(NamedTuple):
    """A text table read by :func:`read_table`: its file, its text, its header (each name
    stripped of spaces), its rows of text cells (blank lines left out), and the file's line of
    each row (from 1: the header is line 1 of most files)."""

    file: Path
    text: str
    header: list[str]
    rows: list[list[str]]
    lines: list[int]


#: The longest cell :func:`read_table` reads, in characters (Python's ``csv`` module's limit).
LONGEST_CELL = 131_072


#: Separators other than the comma that a table's header may be split by, as a message names them.
OTHER_SEPARATORS = {";": "semicolons", "\t": "tabs", "|": "vertical bars"}


def _check_separator(role: str, name: str, header: list[str], what: str) -> None:
    """A header whose names hold more of another separator than there are commas between them:
    the file is split by it, not by commas (read as commas, its columns would be one name or a
    few, and a decimal comma would split its values)."""
    commas = len(header) - 1
    found = [words for mark, words in OTHER_SEPARATORS.items() if sum(c.count(mark) for c in header) > commas]
    if found:
        shape = "one column" if len(header) == 1 else f"{len(header)} columns"  # as commas split it
        raise InputError(
            f"{role}: {name} is separated by {found[0]}, not commas (its header line reads as {shape}, "
            f"{shown(','.join(header), 60)}); a {what} separates values by commas, with a point as the "
            "decimal mark: export it again as comma-separated CSV"
        )


def read_table(role: str, value: Any, what: str = "CSV file") -> TextTable:
    """The comma-separated table in the file ``value``, checked as every table mlcb reads is
    (``mlcb run --data``, the Warfarin subject file, ``mlcb.envs.tabular.read_csv``), or one line
    naming what is wrong (``role`` names the argument, then the file):

    * the file is no regular file (:func:`regular_file`), is empty, is not UTF-8 text or holds a
      NUL byte (:func:`read_text`);
    * a cell is longer than :data:`LONGEST_CELL` characters, a quote is never closed, or a quoted
      value runs on after its closing quote;
    * there is no header line, a column name appears twice (:func:`distinct_columns`), or a
      column without a name holds values;
    * the header holds more semicolons, tabs or vertical bars than commas between its names: the
      file is separated by them, not by commas (a spreadsheet's export in a locale with a decimal
      comma);
    * a row has more or fewer fields than the header has names (a row cut short, or a value
      with an unquoted comma): such a row would otherwise be read as missing values, or shifted.

    A blank line, or a line of empty fields only (a spreadsheet's trailing line), is no row. Every
    value the message shows is shown by :func:`shown`. Nothing in the file is run.
    """
    import csv
    import io

    file = regular_file(role, value)
    name = printable(file.name)
    text = read_text(role, file, what)
    reader = csv.reader(io.StringIO(text, newline=""), skipinitialspace=True, strict=True)
    header: list[str] | None = None
    rows: list[list[str]] = []
    lines: list[int] = []
    try:
        for cells in reader:
            if header is None:
                if not cells:
                    continue  # blank lines before the header
                header = [cell.strip() for cell in cells]
                if not any(header):
                    raise InputError(f"{role}: {name} has no header line (the column names)")
                _check_separator(role, name, header, what)
                distinct_columns(header, f"{role}: {name}")
                continue
            if not cells or all(not cell.strip() for cell in cells):
                continue  # a blank line
            if len(cells) != len(header):
                how = "cut short" if len(cells) < len(header) else "with more fields than the header names"
                raise InputError(
                    f"{role}: {name}, line {reader.line_num}: {len(cells)} field(s), the header has "
                    f"{len(header)}: a row {how} (or a value with an unquoted comma); the file is damaged"
                )
            rows.append(cells)
            lines.append(reader.line_num)
    except csv.Error as error:
        problem = str(error)
        if "field larger than field limit" in problem:
            problem = f"a cell longer than {LONGEST_CELL:,} characters"
        elif "unexpected end of data" in problem:
            problem = "a quote that is never closed"
        elif "expected after" in problem:
            problem = "a quoted value followed by more text before the next comma"
        raise InputError(
            f"{role}: {name}, line {reader.line_num}: {printable(problem)}; not a {what}"
        ) from None
    if header is None:
        raise InputError(f"{role}: {name} has no header line (the column names)")
    for j, column in enumerate(header):
        if column == "":
            full = next((i for i, row in enumerate(rows) if row[j].strip()), None)
            if full is not None:
                raise InputError(
                    f"{role}: {name}, line {lines[full]}: column {j} has no name but holds "
                    f"{shown(rows[full][j].strip())}; name it in the header line or delete the column"
                )
    return TextTable(file, text, header, rows, lines)


def read_toml(role: str, value: Any) -> tuple[Path, dict]:
    """The TOML file ``value`` (a setting, a grid) as ``(path, table)``, or one line saying what is
    wrong: no such file (``role`` names what it was given as), a folder, not UTF-8 text, not
    valid TOML (the parser's line and column), or unreadable. Nothing in the file is run.

    Examples
    --------
    >>> read_toml("grid", "no-such-grid.toml")
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: grid: no such TOML file 'no-such-grid.toml'
    """
    import tomllib

    file = regular_file(role, value, "TOML file")
    name = printable(file.name)
    try:
        text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{name}: not UTF-8 text, which a TOML file must be (byte {error.start} is "
            f"{error.object[error.start : error.start + 1]!r})"
        ) from None
    except OSError as error:
        raise InputError(f"{printable(str(file))}: cannot be read ({error.strerror})") from None
    try:
        return file, tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"{name}: not valid TOML: {printable(error)}") from None


def positive(name: str, value: Any) -> float:
    """``value`` as a float, or a ``ValueError``: ``name must be a finite number > 0``."""
    if not (is_real(value) and value > 0):
        raise InputError(f"{name} must be a finite number > 0, got {shown(value)}")
    return float(value)


def non_negative(name: str, value: Any) -> float:
    """``value`` as a float, or a ``ValueError``: ``name must be a finite number >= 0``."""
    if not (is_real(value) and value >= 0):
        raise InputError(f"{name} must be a finite number >= 0, got {shown(value)}")
    return float(value)


def open_unit(name: str, value: Any) -> float:
    """``value`` as a float, or a ``ValueError``: ``name must be a number in (0, 1)``."""
    if not (is_real(value) and 0 < value < 1):
        raise InputError(f"{name} must be a number in (0, 1), got {shown(value)}")
    return float(value)


def within(name: str, value: Any, low: float, high: float = math.inf, closed_low: bool = False) -> float:
    """``value`` as a float in ``(low, high)`` (``[low, high)`` with ``closed_low``), or a
    ``ValueError`` naming the interval."""
    ok = is_real(value) and (value >= low if closed_low else value > low) and value < high
    if not ok:
        lower = f"[{low}" if closed_low else f"({low}"
        upper = "inf)" if high == math.inf else f"{high})"
        raise InputError(f"{name} must be a finite number in {lower}, {upper}, got {shown(value)}")
    return float(value)


def did_you_mean(value: Any, names: Any) -> str:
    """`` (did you mean 'NAME'?)`` for the one of ``names`` closest to the mistyped ``value`` (case
    aside, by :func:`difflib.get_close_matches`), or ``""`` when none is close. What every name
    and ``value`` share at their start and end (``mlcb/`` and ``-v0``) is left out of the
    comparison, so that ``mlcb/Nope-v0`` is near none of ``mlcb/Trap-v0``, ``mlcb/GLM-v0``.

    Examples
    --------
    >>> did_you_mean("tarp", ["glm", "trap"]), did_you_mean("GLM", ["glm", "trap"])
    (" (did you mean 'trap'?)", " (did you mean 'glm'?)")
    >>> did_you_mean("x", ["glm"]), did_you_mean("mlcb/Nope-v0", ["mlcb/GLM-v0", "mlcb/Trap-v0"])
    ('', '')
    >>> did_you_mean("mlcb/trap-v0", ["mlcb/GLM-v0", "mlcb/Trap-v0"])
    " (did you mean 'mlcb/Trap-v0'?)"
    """
    import difflib
    import os.path

    if not isinstance(value, str) or not value:
        return ""
    known = {name.casefold(): name for name in names if isinstance(name, str)}
    given = value.casefold()
    everything = [*known, given]
    start = len(os.path.commonprefix(everything))
    end = len(os.path.commonprefix([text[::-1] for text in everything]))
    cores = {name[start : len(name) - end]: name for name in known}
    close = difflib.get_close_matches(given[start : len(given) - end], list(cores), n=1, cutoff=0.75)
    return f" (did you mean {known[cores[close[0]]]!r}?)" if close else ""


def choice(name: str, value: Any, allowed: tuple) -> Any:
    """``value`` if it is one of ``allowed``, else a ``ValueError`` listing them (and the one
    meant, when ``value`` is a near miss: :func:`did_you_mean`)."""
    if value not in allowed:
        raise InputError(f"{name} must be one of {allowed}, got {shown(value)}{did_you_mean(value, allowed)}")
    return value


def flag(name: str, value: Any) -> bool:
    """``value`` if it is a bool, else a ``ValueError``: ``name must be True or False``."""
    if not _is_bool(value):
        raise InputError(f"{name} must be True or False, got {shown(value)}")
    return bool(value)


# --- decisions: what an agent gives an environment or a session in a round ----------------------
def index(name: str, value: Any, size: int) -> int:
    """``value`` as an index in ``[0, size)``: a Python or NumPy integer (or a 0-d integer array),
    never a bool, a string or a fraction; else an :class:`InputError` naming ``name``.

    Examples
    --------
    >>> index("deploy", 2, 3)
    2
    >>> index("deploy", True, 3)
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: deploy must be an integer in [0, 3), got True
    """
    item = value
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(item, numpy.ndarray) and item.ndim == 0:
        item = item[()]
    if _is_bool(item) or not isinstance(item, numbers.Integral) or not 0 <= int(item) < size:
        raise InputError(f"{name} must be an integer in [0, {size}), got {shown(value)}")
    return int(item)


def indices(name: str, value: Any, size: int, most: int | None = None) -> list[int]:
    """``value`` as a list of indices in ``[0, size)`` (:func:`index` each): a list, tuple or
    one-dimensional integer array of at most ``most`` of them; else an :class:`InputError`.

    >>> indices("train", (0, 2), 3, most=2)
    [0, 2]
    """
    numpy = sys.modules.get("numpy")
    array = numpy is not None and isinstance(value, numpy.ndarray)
    if not (isinstance(value, (list, tuple)) or (array and value.ndim == 1)):
        what = f"at most {most} " if most is not None else ""
        raise InputError(f"{name} must be a list of {what}integers in [0, {size}), got {shown(value)}")
    items = list(value)
    if most is not None and len(items) > most:
        raise InputError(f"{name} must list at most {most} experts, got {len(items)}: {shown(value)}")
    return [index(f"{name}[{j}]", item, size) for j, item in enumerate(items)]


def decision(train: Any, deploy: Any, n_experts: int, most: int) -> tuple[list[int], int]:
    """A round's decision as the engine takes one: ``train``, at most ``most`` distinct experts
    (indices in ``[0, n_experts)``, trained in that order), and ``deploy``, one expert; else an
    :class:`InputError` naming what is wrong. The one check of a decision given from outside: a
    round session's (:meth:`mlcb.engine.session.Session.choose`) and, through it, the selection
    environment's (:mod:`mlcb.selection_env`).

    Examples
    --------
    >>> decision([2, 0], 1, n_experts=3, most=2)
    ([2, 0], 1)
    >>> decision([0, 0], 1, n_experts=3, most=2)
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: train lists expert 0 twice; an expert trains at most once in a round
    """
    chosen = indices("train", train, n_experts, most)
    repeated = sorted({k for k in chosen if chosen.count(k) > 1})
    if repeated:
        raise InputError(f"train lists expert {repeated[0]} twice; an expert trains at most once in a round")
    return chosen, index("deploy", deploy, n_experts)


def point(name: str, value: Any, size: int) -> list[float]:
    """``value`` as ``size`` finite real numbers (a number when ``size`` is 1, else a list, tuple
    or array of them; never bools or strings); else an :class:`InputError` naming ``name``.

    >>> point("action", [0.5, -1], 2)
    [0.5, -1.0]
    """
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.ndarray):
        items = value.reshape(-1).tolist() if value.dtype.kind in "iuf" else None
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = [value]
    if items is None or len(items) != size or not all(is_real(item) for item in items):
        what = "a finite number" if size == 1 else f"{size} finite numbers"
        raise InputError(f"{name} must be {what}, got {shown(value)}")
    return [float(item) for item in items]
