"""The check the ``to_pandas()`` methods make first: pandas is the ``[pandas]`` extra, not a core dependency."""

from __future__ import annotations

#: What to install for ``to_pandas()``.
PANDAS_HINT = "pip install 'rmqformats[pandas]'"


def require_pandas() -> None:
    """Raise ``ModuleNotFoundError`` naming the extra to install when pandas is missing."""
    try:
        import pandas  # noqa: F401
    except ImportError as exc:
        raise ModuleNotFoundError(f"to_pandas() needs pandas, which rmqformats installs with its "
                                  f"[pandas] extra: {PANDAS_HINT}", name="pandas") from exc

