"""The package imported from a source checkout: its subpackages kept outside ``rmqformats/``.

In a checkout, ``generated/``, ``spark/`` and ``formats/`` sit beside the
``rmqformats/`` folder, and ``pyproject.toml`` (``package-dir``) maps them into
the package when it is installed. A Python started in the checkout root with
the root on ``sys.path`` (``python -c``, ``python -m``, Spark's Python workers,
which run ``python -m pyspark.daemon`` in the job's folder) imports
``rmqformats`` from the source folder instead of the installed package, and
would not find ``rmqformats.generated``. :func:`install` adds an import finder
that maps those three subpackages to the checkout's folders, as the install
does, so the source folder works there the same way. An installed package
(``rmqformats/generated/`` inside it) never needs it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

#: Subpackages whose folders are outside ``rmqformats/`` in a checkout: ``package-dir`` in pyproject.toml.
MAPPED = {"rmqformats.generated": "generated", "rmqformats.spark": "spark", "rmqformats.formats": "formats"}


class CheckoutFinder(importlib.abc.MetaPathFinder):
    """Finds the mapped subpackages in a checkout's folders (``rmqformats.generated`` → ``ROOT/generated``)."""

    def __init__(self, root: str) -> None:
        self.root = root

    def find_spec(self, fullname, path, target=None):
        folder = MAPPED.get(fullname)
        if folder is None:
            return None
        init = os.path.join(self.root, folder, "__init__.py")
        if not os.path.isfile(init):
            return None
        return importlib.util.spec_from_file_location(
            fullname, init, submodule_search_locations=[os.path.join(self.root, folder)])


def install(package_dir: str) -> None:
    """Add a :class:`CheckoutFinder` when ``package_dir`` (the ``rmqformats/`` folder) is a checkout's source folder."""
    if os.path.isdir(os.path.join(package_dir, "generated")):
        return  # an installed package: the subpackages are inside it
    root = os.path.dirname(package_dir)
    if not (os.path.isfile(os.path.join(root, "pyproject.toml"))
            and os.path.isfile(os.path.join(root, "generated", "__init__.py"))):
        return
    if any(isinstance(f, CheckoutFinder) for f in sys.meta_path):
        return
    # Last, so that an editable install's own finder (same folders) answers first.
    sys.meta_path.append(CheckoutFinder(root))
