"""The small real store bundled with the package (see ``samples/README.md``)."""

from __future__ import annotations

from importlib import resources


def sample_store_path() -> str:
    """Path of the bundled RocketMQ 5.1.4 store root."""
    return str(resources.files("rmqformats") / "samples" / "rocketmq-5.1.4" / "store")
