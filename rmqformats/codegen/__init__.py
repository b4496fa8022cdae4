"""Code generators that turn the Kaitai Struct specs in ``formats/`` into Python modules."""
