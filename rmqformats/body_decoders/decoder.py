"""A body decoder resolved from its spec: the value of a body, and that value's text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .values import as_text


class BodyDecoderError(ValueError):
    """A decoder spec that names no decoder (an unknown kind, encoding, module, function or file), a decoder
    whose package is not installed, or body fields a decoder cannot give."""


class BodyDecoder:
    """``value(body)`` decodes a body's bytes to a value (raising when it does not decode); ``text(value)`` is
    that value as ``bodyDecoded`` shows it. ``fields``: whether named fields can be picked out of the value
    (not for text decoders). Calling the decoder gives the text, as a function of the spec would."""

    def __init__(self, spec: str, value: Callable[[bytes], Any], text: Callable[[Any], str] = as_text, *,
                 fields: bool = True):
        self.spec = spec
        self.value = value
        self.text = text
        self.fields = fields

    def __call__(self, body: bytes) -> str:
        return self.text(self.value(body))

    def __repr__(self) -> str:
        return f"BodyDecoder({self.spec!r})"
