"""The IWPC warfarin dosing data, read from the user's own copy, as a 3-class table.

The International Warfarin Pharmacogenetics Consortium's subject file (distributed by PharmGKB:
the "Subject Data" sheet of its spreadsheet, or that sheet saved as CSV) cannot be shipped with the
package: its licence does not allow redistribution. :func:`read` builds the table the paper's
warfarin experiment streams from a path the user gives (``mlcb paper --warfarin PATH``,
``RealDataEnv(dataset=PATH, reader="iwpc")``):

* the patients with a therapeutic dose (5,528 in the released file);
* the label, the dose class: ``0`` below 21 mg/week, ``1`` from 21 to 49, ``2`` above 49 (the
  usual low / medium / high split; 1,495 / 3,382 / 651 patients);
* :data:`COVARIATES`, a reconstruction of Bastani and Bayati's covariates (demographics,
  diagnosis, medications, genotypes, categorical variables one-hot), built column by column as
  docs/real-data.md §8 lists. Their list is not published; this one has their count, 93: every
  column of the file that describes the patient before dosing, categorical ones one-hot, less
  Cerivastatin (Baycol), which no patient of the released file takes (it was withdrawn in 2001:
  a column of zeros).

Values damaged by spreadsheet programs are refused by name. A range such as the age bin
``"10 - 19"`` or the INR range ``"2-3"`` opened in a spreadsheet becomes a date (``"19-Oct"``,
``"3-Feb"``); such a file has lost information that cannot be recovered safely, so the reader
stops with the column, the row, the value and what it likely was. Any other value outside a
column's dictionary (an unknown genotype, a weight that is not a number) is refused the same way.

The file is never copied: the table lives in memory only, and nothing derived from it is written
by the package except aggregate results (losses, accuracies).

Examples
--------
>>> [c for c in COVARIATES][:4]
['age_decades', 'height_cm', 'weight_kg', 'age_missing']
>>> len(COVARIATES)
93
>>> dose_class(20.9), dose_class(21.0), dose_class(49.0), dose_class(49.5)
(0, 1, 1, 2)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from envs.tabular import Table
from mlcb.validation import LARGEST, InputError, printable, shown

# --- the columns of the IWPC subject file ------------------------------------------------------------
SUBJECT = "PharmGKB Subject ID"
DOSE = "Therapeutic Dose of Warfarin"
AGE = "Age"
HEIGHT = "Height (cm)"
WEIGHT = "Weight (kg)"
GENDER = "Gender"
RACE = "Race"
ETHNICITY = "Ethnicity"
INDICATION = "Indication for Warfarin Treatment"
DIAGNOSES = {
    "diabetes": "Diabetes",
    "heart_failure": "Congestive Heart Failure and/or Cardiomyopathy",
    "valve_replacement": "Valve Replacement",
}
MEDICATIONS = {
    "aspirin": "Aspirin",
    "acetaminophen": "Acetaminophen or Paracetamol (Tylenol)",
    "acetaminophen_over_1300mg": "Was Dose of Acetaminophen or Paracetamol (Tylenol) >1300mg/day",
    "simvastatin": "Simvastatin (Zocor)",
    "atorvastatin": "Atorvastatin (Lipitor)",
    "fluvastatin": "Fluvastatin (Lescol)",
    "lovastatin": "Lovastatin (Mevacor)",
    "pravastatin": "Pravastatin (Pravachol)",
    "rosuvastatin": "Rosuvastatin (Crestor)",
    "amiodarone": "Amiodarone (Cordarone)",
    "carbamazepine": "Carbamazepine (Tegretol)",
    "phenytoin": "Phenytoin (Dilantin)",
    "rifampin": "Rifampin or Rifampicin",
    "sulfonamide_antibiotics": "Sulfonamide Antibiotics",
    "macrolide_antibiotics": "Macrolide Antibiotics",
    "antifungal_azoles": "Anti-fungal Azoles",
    "herbal_supplements": "Herbal Medications, Vitamins, Supplements",
}
SMOKER = "Current Smoker"
TARGET_INR = "Target INR"
INR_RANGE = "Estimated Target INR Range Based on Indication"
CYP2C9 = "CYP2C9 consensus"
#: The VKORC1 SNPs (consensus columns) and their genotypes, as the file's dictionary lists them.
VKORC1 = {
    "VKORC1 -1639 consensus": ("A/A", "A/G", "G/G"),
    "VKORC1 497 consensus": ("G/G", "G/T", "T/T"),
    "VKORC1 1173 consensus": ("C/C", "C/T", "T/T"),
    "VKORC1 1542 consensus": ("C/C", "C/G", "G/G"),
    "VKORC1 3730 consensus": ("A/A", "A/G", "G/G"),
    "VKORC1 2255 consensus": ("C/C", "C/T", "T/T"),
    "VKORC1 -4451 consensus": ("A/A", "A/C", "C/C"),
}
AGE_BINS = (
    "0 - 9",
    "10 - 19",
    "20 - 29",
    "30 - 39",
    "40 - 49",
    "50 - 59",
    "60 - 69",
    "70 - 79",
    "80 - 89",
    "90+",
)
RACES = {"White": "white", "Asian": "asian", "Black or African American": "black"}
ETHNICITIES = {
    "not Hispanic or Latino": "not_hispanic",
    "Hispanic or Latino": "hispanic",
    "Unknown": "unknown",
}
INDICATIONS = (
    "dvt",
    "pe",
    "afib_flutter",
    "heart_valve",
    "cardiomyopathy",
    "stroke",
    "post_orthopedic",
    "other",
)
#: The estimated INR ranges, as written (``"3.0-4.0"`` is read as ``"3-4"``).
INR_RANGES = ("1.7-2.8", "1.7-3.3", "2-3", "2-3.5", "2.5-3.5", "3-4")
CYP2C9_TYPES = ("*1/*1", "*1/*2", "*1/*3", "*2/*2", "*2/*3", "*3/*3")
#: Every column :func:`read` needs.
REQUIRED = (SUBJECT, DOSE, AGE, HEIGHT, WEIGHT, GENDER, RACE, ETHNICITY, INDICATION, *DIAGNOSES.values(),
            *MEDICATIONS.values(), SMOKER, TARGET_INR, INR_RANGE, CYP2C9, *VKORC1)  # fmt: skip


def _snp(column: str) -> str:
    return column.split()[1].replace("-", "m")  # "VKORC1 -1639 consensus" -> "m1639"


def _covariates() -> list[str]:
    names = ["age_decades", "height_cm", "weight_kg", "age_missing", "height_missing", "weight_missing"]
    names += ["gender_male", "gender_female"]
    names += [f"race_{v}" for v in RACES.values()] + ["race_missing_or_mixed"]
    names += [f"ethnicity_{v}" for v in ETHNICITIES.values()]
    names += [f"indication_{v}" for v in INDICATIONS] + ["indication_missing"]
    for key in DIAGNOSES:
        names += [key, f"{key}_not_known"]
    names += list(MEDICATIONS)
    names += ["smoker", "smoker_not_known", "target_inr", "target_inr_missing"]
    names += [f"inr_range_{r}" for r in INR_RANGES]
    names += [f"cyp2c9_{t.replace('*', '').replace('/', '_')}" for t in CYP2C9_TYPES]
    names += ["cyp2c9_other", "cyp2c9_not_known"]
    for column, genotypes in VKORC1.items():
        names += [f"vkorc1_{_snp(column)}_{g.replace('/', '')}" for g in genotypes]
        names.append(f"vkorc1_{_snp(column)}_not_known")
    return names


#: The covariates of the table, in order (docs/real-data.md §8 describes each).
COVARIATES = tuple(_covariates())
#: The label's classes: the weekly dose's bins.
DOSE_CLASSES = {0: "< 21 mg/week", 1: "21 - 49 mg/week", 2: "> 49 mg/week"}

_MISSING = {"", "NA", "N/A", "na", "n/a"}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
#: A day and a month's name (``19-Oct``, ``3-Feb``, ``Oct-19``, ``3 Feb 2021``), as spreadsheets write dates.
_DATE = re.compile(
    r"^\s*(?:(\d{1,4})[-/ ]([A-Za-z]{3,9})|([A-Za-z]{3,9})[-/ ](\d{1,4}))(?:[-/ ]\d{2,4})?\s*$"
)


def dose_class(dose: float) -> int:
    """The dose class of a weekly dose in mg: 0 below 21, 1 from 21 to 49, 2 above 49."""
    return 0 if dose < 21 else (1 if dose <= 49 else 2)


class _Where:
    """Where a value is: the column and the row (1 = the first subject), for messages."""

    def __init__(self, name: str) -> None:
        self.name = printable(name)

    def refuse(self, column: str, row: int, value: Any, why: str) -> InputError:
        return InputError(f"{self.name}: column {column!r}, row {row}: {shown(value)} {why}")


def _damaged(value: str) -> str | None:
    """What a spreadsheet's date likely was (``"19-Oct"`` -> ``"10 - 19"``), or ``None``."""
    match = _DATE.match(value)
    if not match:
        return None
    day, month = (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
    month_number = next((i + 1 for i, m in enumerate(_MONTHS) if month.lower().startswith(m)), None)
    if month_number is None:
        return None
    return f"{month_number} - {int(day)}"


def _text(value: Any) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value).strip()


def _range_value(where: _Where, column: str, row: int, value: str, allowed: tuple) -> str | None:
    """A range column's value, one of ``allowed`` or missing (``None``); a date is refused with
    what it likely was, anything else with the allowed values."""
    if value in _MISSING:
        return None
    if value == "3.0-4.0":
        value = "3-4"
    if value in allowed:
        return value
    likely = _damaged(value)
    if likely is not None:
        raise where.refuse(
            column, row, value,
            f"is a date written by a spreadsheet program, likely from the range {likely!r}: this copy is "
            "damaged; use the file as downloaded (CSV, or the .xls opened without conversion)",
        )  # fmt: skip
    raise where.refuse(column, row, value, f"is not one of {', '.join(allowed)} or NA")


def _number(where: _Where, column: str, row: int, value: str) -> float | None:
    if value in _MISSING:
        return None
    try:
        number = float(value)
    except ValueError:
        likely = _damaged(value)
        hint = f", likely from {likely!r} (a spreadsheet made it a date)" if likely else ""
        raise where.refuse(column, row, value, f"is not a number{hint}") from None
    if not np.isfinite(number) or number < 0:
        raise where.refuse(column, row, value, "is not a finite number >= 0")
    if number > LARGEST:
        raise where.refuse(column, row, value, f"is larger than {LARGEST:g}: not a measurement")
    return number


def _choice(
    where: _Where, column: str, row: int, value: str, allowed: tuple, fold: bool = False
) -> str | None:
    """``value`` if it is one of ``allowed`` (compared in lower case with ``fold``), ``None`` if it
    is missing; refused by name otherwise."""
    if value in _MISSING:
        return None
    if (value.lower() if fold else value) not in allowed:
        likely = _damaged(value)
        hint = f" (a spreadsheet's date, likely from {likely!r})" if likely else ""
        raise where.refuse(column, row, value, f"is not one of {', '.join(allowed)} or NA{hint}")
    return value.lower() if fold else value


def _yes_no(where: _Where, column: str, row: int, value: str) -> tuple[float, float]:
    """``(yes, not known)`` of a yes = 1 / no = 0 / NA column."""
    if value in _MISSING:
        return 0.0, 1.0
    if value in ("1", "1.0"):
        return 1.0, 0.0
    if value in ("0", "0.0"):
        return 0.0, 0.0
    raise where.refuse(column, row, value, "is not 1 (yes), 0 (no) or NA")


_INDICATION_SPLIT = re.compile(r"\s*(?:;|,|\bor\b)\s*")


def _indications(where: _Where, row: int, value: str) -> list[float]:
    """The eight indications (several may be listed: ``"3; 8"``, ``"1 or 2"``) and 'missing'."""
    out = [0.0] * (len(INDICATIONS) + 1)
    if value in _MISSING:
        out[-1] = 1.0
        return out
    for part in _INDICATION_SPLIT.split(value):
        if part == "":
            continue
        if not part.isdigit() or not 1 <= int(part) <= len(INDICATIONS):
            likely = _damaged(value)
            hint = f" (a spreadsheet's date, likely from {likely!r})" if likely else ""
            raise where.refuse(INDICATION, row, value, f"is not a list of indication codes 1 to 8{hint}")
        out[int(part) - 1] = 1.0
    return out


def _genotype(where: _Where, column: str, row: int, value: str, allowed: tuple) -> list[float]:
    out = [0.0] * (len(allowed) + 1)
    chosen = _choice(where, column, row, value, allowed)
    out[allowed.index(chosen) if chosen is not None else -1] = 1.0
    return out


_CYP2C9 = re.compile(r"^\*\d{1,2}/\*\d{1,2}$")


def _row(where: _Where, row: int, record: dict[str, str]) -> list[float]:
    """The covariates of one subject."""
    values: list[float] = []
    age = _range_value(where, AGE, row, record[AGE], AGE_BINS)
    height = _number(where, HEIGHT, row, record[HEIGHT])
    weight = _number(where, WEIGHT, row, record[WEIGHT])
    values += [AGE_BINS.index(age) if age is not None else 0.0, height or 0.0, weight or 0.0]
    values += [float(age is None), float(height is None), float(weight is None)]
    gender = _choice(where, GENDER, row, record[GENDER], ("male", "female"), fold=True)
    values += [float(gender == "male"), float(gender == "female")]
    race = _choice(where, RACE, row, record[RACE], (*RACES, "Unknown"))
    values += [float(race == r) for r in RACES] + [float(race not in RACES)]
    ethnicity = _choice(where, ETHNICITY, row, record[ETHNICITY], tuple(ETHNICITIES))
    values += [float(ethnicity == e) for e in ETHNICITIES if e != "Unknown"] + [
        float(ethnicity in (None, "Unknown"))
    ]
    values += _indications(where, row, record[INDICATION])
    for column in DIAGNOSES.values():
        values += _yes_no(where, column, row, record[column])
    values += [_yes_no(where, column, row, record[column])[0] for column in MEDICATIONS.values()]
    values += _yes_no(where, SMOKER, row, record[SMOKER])
    target = _number(where, TARGET_INR, row, record[TARGET_INR])
    values += [target or 0.0, float(target is None)]
    inr_range = _range_value(where, INR_RANGE, row, record[INR_RANGE], INR_RANGES)
    values += [float(inr_range == r) for r in INR_RANGES]
    cyp = record[CYP2C9]
    if cyp not in _MISSING and not _CYP2C9.match(cyp):
        raise where.refuse(CYP2C9, row, cyp, "is not a CYP2C9 diplotype such as *1/*3, or NA")
    values += [float(cyp == t) for t in CYP2C9_TYPES]
    values += [float(cyp not in _MISSING and cyp not in CYP2C9_TYPES), float(cyp in _MISSING)]
    for column, genotypes in VKORC1.items():
        values += _genotype(where, column, row, record[column], genotypes)
    return values


def _records(path: Path) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the subject file, every cell as text (CSV or .xls), checked as every
    table mlcb reads is (:func:`mlcb.validation.read_table`: a column name twice, a row cut short
    or run on, a cell beyond any table's, not UTF-8 text, binary data: each refused in one line)."""
    from mlcb import validation

    name = printable(path.name)
    suffix = path.suffix.lower()
    if suffix not in (".xls", ".xlsx"):
        table = validation.read_table("warfarin", path, "CSV file")
        return table.header, [[cell.strip() for cell in row] for row in table.rows]
    try:
        import xlrd
    except ImportError:
        raise InputError(
            f"warfarin: reading {name} needs xlrd (pip install xlrd), or save its 'Subject Data' "
            "sheet as CSV and give that file"
        ) from None
    if suffix == ".xlsx":
        raise InputError(f"warfarin: {name} is .xlsx; save its 'Subject Data' sheet as CSV")
    try:
        book = xlrd.open_workbook(str(path))
    except Exception as error:  # xlrd raises its own errors for a file that is not a workbook
        raise InputError(
            f"warfarin: {name} is not a readable .xls workbook: {shown(str(error), 120)}"
        ) from None
    names = book.sheet_names()
    sheet = book.sheet_by_name("Subject Data") if "Subject Data" in names else book.sheet_by_index(0)
    rows = []
    for r in range(sheet.nrows):
        cells = []
        for c in range(sheet.ncols):
            cell = sheet.cell(r, c)
            if cell.ctype == xlrd.XL_CELL_DATE:  # a range the spreadsheet turned into a date
                year, month, day, *_ = xlrd.xldate_as_tuple(cell.value, book.datemode)
                cells.append(f"{day}-{_MONTHS[month - 1].capitalize()}" if month else str(cell.value))
            else:
                cells.append(_text(cell.value))
        rows.append(cells)
    header = [h.strip() for h in rows[0]] if rows else []
    validation.distinct_columns(header, name)
    return header, [row for row in rows[1:] if any(row)]


_READ: dict[tuple, Table] = {}


def read(path: Any) -> Table:
    """The warfarin table from the IWPC subject file at ``path`` (CSV, or PharmGKB's ``.xls`` when
    xlrd is installed): one row per patient with a therapeutic dose, :data:`COVARIATES` as
    features, the dose class as label (:data:`DOSE_CLASSES`). Read once per process (again when
    the file changes).

    An :class:`~mlcb.validation.InputError` names what is wrong in one line: a missing or special
    file, a damaged table (a row cut short, a column name twice: the checks of every table mlcb
    reads, :func:`mlcb.validation.read_table`), a missing column, a damaged or unknown value
    (column, row, the value shown bounded and escaped and, for a spreadsheet's date, what it
    likely was).
    """
    from mlcb import validation

    file = validation.regular_file("warfarin", path)
    stat = file.stat()
    key = (str(file.resolve()), stat.st_size, stat.st_mtime_ns)
    if key in _READ:
        return _READ[key]
    if stat.st_size == 0:
        raise InputError(f"warfarin: {printable(file.name)} is empty")
    header, rows = _records(file)
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(
            f"warfarin: {printable(file.name)} has no column {missing[0]!r}"
            + (f" (and {len(missing) - 1} more required columns)" if len(missing) > 1 else "")
            + "; is it the IWPC subject file (PharmGKB's 'Subject Data' sheet)?"
        )
    index = {name: header.index(name) for name in REQUIRED}
    where = _Where(file.name)
    features, labels = [], []
    for number, cells in enumerate(rows, start=1):
        record = {name: cells[i] for name, i in index.items()}
        if all(v in _MISSING for v in record.values()):
            continue  # an empty line
        dose = _number(where, DOSE, number, record[DOSE])
        if dose is None:
            continue  # no therapeutic dose: not one of the paper's patients
        features.append(_row(where, number, record))
        labels.append(dose_class(dose))
    if len(set(labels)) < 2:
        raise InputError(
            f"warfarin: {printable(file.name)} has {len(labels)} patients with a dose in fewer than 2 classes"
        )
    x = np.array(features, dtype=np.float64)
    notes = (
        "patients without a therapeutic dose left out",
        "label: dose class 0 < 21, 1 21-49, 2 > 49 mg/week",
    )
    table = Table("warfarin", COVARIATES, x, tuple(labels), source=f"{file} (IWPC subject file)", notes=notes)
    if len(_READ) > 8:
        _READ.clear()
    _READ[key] = table
    return table
