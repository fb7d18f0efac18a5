"""The command line's values and options: the parser (one line for an error, an option that takes
a value given once) and the types of its arguments (whole numbers however written, several values
separated by spaces, paths)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mlcb.validation import EXACT_FLOAT, parse_whole_number, printable, shown, whole_beyond_exact


class Once(argparse._StoreAction):
    """An option that takes a value, refused when it is given twice: ``--budget 1 --budget 2``
    ran budget 2 alone, ``-T 100 ... -T 1e6`` the last horizon, the first dropped without a word."""

    #: The attribute of the parsed arguments that holds the options given so far.
    GIVEN = "_options_given"

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        given = namespace.__dict__.setdefault(self.GIVEN, set())
        if option_string is not None and self.dest in given:
            before = getattr(namespace, self.dest)
            if isinstance(before, list) and isinstance(values, list):  # several values: all at once
                both = " ".join(printable(str(value)) for value in [*before, *values])
                raise argparse.ArgumentError(
                    self, f"given twice; give it once with every value: {option_string} {both}"
                )
            raise argparse.ArgumentError(
                self, f"given twice ({as_given(before)} and {as_given(values)}); give it once"
            )
        given.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


def as_given(value: Any) -> str:
    """An option's value as a message shows it (a path as its text)."""
    return shown(str(value) if isinstance(value, Path) else value)


class Parser(argparse.ArgumentParser):
    """argparse with the command line's error format: one line ``mlcb: error: ...``, status 2
    (``--help`` still shows the usage); an option that takes a value may be given once
    (:class:`Once`)."""

    def add_argument(self, *args: Any, **kwargs: Any) -> Any:
        if "action" not in kwargs and args and str(args[0]).startswith("-"):
            kwargs["action"] = Once
        return super().add_argument(*args, **kwargs)

    def error(self, message: str):
        self.exit(2, f"mlcb: error: {message}\n")


def whole(text: str) -> int:
    """A whole-number argument however written, as in Python and TOML (1e6: ``parse_whole_number``)."""
    number = parse_whole_number(text)
    if number is None:
        # 1e99 is whole, but past 2**53 a float stands for many integers: say why it is refused.
        beyond = (
            f", at most 2**53 = {EXACT_FLOAT:_} when written with an exponent or a decimal point"
            if whole_beyond_exact(text)
            else ""
        )
        raise argparse.ArgumentTypeError(
            f"must be a whole number such as 1000, 1_000 or 1e6{beyond}, got {text!r}"
        )
    return number


def one_of_several(convert: Callable[[str], Any]) -> Callable[[str], Any]:
    """The type of an option that takes several values, separated by spaces: a value holding
    commas (``--budget 1,2``, ``--policies mlcb,limited-advice``) is refused with the spelling
    that works, before ``convert`` reads it."""

    def read(text: str) -> Any:
        if "," in text:
            parts = " ".join(part for part in (p.strip() for p in text.split(",")) if part)
            raise argparse.ArgumentTypeError(
                f"several values are separated by spaces, not commas: {parts or '...'} (got {text!r})"
            )
        return convert(text)

    read.__name__ = getattr(convert, "__name__", "value")  # argparse names the type in messages
    return read


def path(text: str) -> Path:
    """A path argument; an empty one is refused (it would mean the current directory)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path; give a directory or file name")
    return Path(text)
