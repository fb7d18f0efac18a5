"""The package's version, in one place: ``mlcb.__version__``, the results' metadata and the
distribution's metadata (``pyproject.toml`` reads it) all take it from here."""

__version__ = "0.1.0"
