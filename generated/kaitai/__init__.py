"""Kaitai Struct Python parsers, compiled from formats/ by kaitai-struct-compiler."""
