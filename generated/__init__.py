"""Parsers generated from the specs in formats/; do not edit, run `make generate`."""
