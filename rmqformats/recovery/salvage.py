"""The salvage scan, part of the columnar walk: :mod:`rmqformats.columnar.salvage` (its names, importable from here)."""

from ..columnar.salvage import DamagedRange, SalvageScan, gaps, salvage_batches

__all__ = ["DamagedRange", "SalvageScan", "gaps", "salvage_batches"]
