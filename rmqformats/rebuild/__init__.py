"""A store the broker starts on, rebuilt from its commit log: consume queues (file, batch, RocksDB),
index files and checkpoint written as the broker's dispatch writes them; see :mod:`.build`."""

from .build import PARTS, RebuildError, RebuildResult, rebuild_store
from .sizes import StoreSizes, store_sizes

__all__ = ["PARTS", "RebuildError", "RebuildResult", "StoreSizes", "rebuild_store", "store_sizes"]
