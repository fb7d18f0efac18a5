"""Derive the cardiotocography table shipped with the package (envs/data/cardiotocography.csv) from
the UCI workbook CTG.xls, once; kept so that the shipped file can be rebuilt and checked.

    python benchmarks/derive_ctg.py PATH/TO/CTG.xls            # writes envs/data/cardiotocography.csv
    python benchmarks/derive_ctg.py PATH/TO/CTG.xls --check    # compares instead of writing

Reading an .xls workbook needs xlrd (``pip install xlrd``); the package itself never reads the
workbook, only the CSV this script writes.

The workbook has three sheets; two hold the 2,126 records, in the same order:

* ``Data``: the 21 features the UCI page lists (LB, AC, FM, UC, DL, DS, DP, ASTV, MSTV, ALTV, MLTV,
  Width, Min, Max, Nmax, Nzeros, Mode, Mean, Median, Variance, Tendency; AC, FM, UC, DL, DS and DP
  as rates per second, full precision), the labels CLASS and NSP, and further columns;
* ``Raw Data``: the same records with the recording's columns: the segment's start and end
  instants ``b`` and ``e``, the baseline as the experts read it ``LBE``, the repetitive
  decelerations ``DR`` (0 in every record), the morphologic pattern indicators ``A``, ``B``,
  ``C``, ``D``, ``E``, ``AD``, ``DE``, ``LD``, ``FS``, ``SUSP`` (0 or 1) and again CLASS and NSP.

The shipped CSV holds, in this order, the 21 features from ``Data``, then ``LBE``, ``DR``, ``b``,
``e`` and the 10 indicators from ``Raw Data`` (the 35-feature reading: 21 + 14), then ``CLASS``
and ``NSP``. Numbers are written in their shortest exact form (``repr`` of the double, a whole
number without ``.0``). The script checks that the two sheets agree on every record (b, e, CLASS,
NSP) before writing, and prints the SHA-256 of the workbook and of the CSV written, which
envs/data/cardiotocography.md records.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "envs" / "data" / "cardiotocography.csv"

CLEAN = ("LB", "AC", "FM", "UC", "DL", "DS", "DP", "ASTV", "MSTV", "ALTV", "MLTV", "Width", "Min", "Max",
         "Nmax", "Nzeros", "Mode", "Mean", "Median", "Variance", "Tendency")  # fmt: skip
RECORDING = ("LBE", "DR", "b", "e")
PATTERNS = ("A", "B", "C", "D", "E", "AD", "DE", "LD", "FS", "SUSP")
LABELS = ("CLASS", "NSP")
ROWS = 2126


def _number(value: float) -> str:
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def _sheet(book, name: str, header_row: int) -> tuple[list[str], list[list]]:
    sheet = book.sheet_by_name(name)
    header = [str(sheet.cell_value(header_row, c)).strip() for c in range(sheet.ncols)]
    rows = []
    for r in range(header_row + 1, sheet.nrows):
        row = [sheet.cell_value(r, c) for c in range(sheet.ncols)]
        if isinstance(row[header.index("NSP")], float):  # a record (the sheets end with totals)
            rows.append(row)
    return header, rows


def derive(workbook: Path) -> str:
    """The CSV text of the shipped table, from the workbook at ``workbook``."""
    try:
        import xlrd
    except ImportError:
        sys.exit("reading CTG.xls needs xlrd: pip install xlrd")
    book = xlrd.open_workbook(str(workbook))
    data_header, data = _sheet(book, "Data", 1)
    raw_header, raw = _sheet(book, "Raw Data", 0)
    if len(data) != ROWS or len(raw) != ROWS:
        sys.exit(f"expected {ROWS} records in both sheets, got {len(data)} and {len(raw)}")

    def first(header: list[str], name: str) -> int:  # Data repeats AC .. DP: the rates come second
        positions = [i for i, h in enumerate(header) if h == name]
        return positions[-1] if name in CLEAN[1:7] else positions[0]

    for i, (d, r) in enumerate(zip(data, raw)):
        for name in ("b", "e", "CLASS", "NSP"):
            if d[first(data_header, name)] != r[raw_header.index(name)]:
                sys.exit(f"record {i}: the sheets disagree on {name}")
    lines = [",".join((*CLEAN, *RECORDING, *PATTERNS, *LABELS))]
    for d, r in zip(data, raw):
        values = [d[first(data_header, name)] for name in CLEAN]
        values += [r[raw_header.index(name)] for name in (*RECORDING, *PATTERNS, *LABELS)]
        lines.append(",".join(_number(v) for v in values))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workbook", type=Path, help="the UCI workbook CTG.xls")
    parser.add_argument("--check", action="store_true", help="compare with the shipped CSV, do not write")
    parser.add_argument("--out", type=Path, default=TARGET, help=f"the CSV to write (default {TARGET})")
    args = parser.parse_args(argv)
    text = derive(args.workbook)
    print(f"workbook sha256 {hashlib.sha256(args.workbook.read_bytes()).hexdigest()}")
    print(f"csv sha256      {hashlib.sha256(text.encode()).hexdigest()}")
    if args.check:
        same = args.out.is_file() and args.out.read_text() == text
        print(
            "the shipped CSV is the workbook's" if same else f"{args.out} differs from the workbook's table"
        )
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
