"""The format specs (Kaitai Struct ``.ksy`` and JSON Schema), shipped with the package."""
