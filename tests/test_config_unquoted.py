"""Names without quotes in config JSON (fastjson 1's integer map keys), which 5.5.0's fastjson2 refused
(apache/rocketmq #10284): found in the real vectors' files, and across the bounded chunks a file is read in."""

from __future__ import annotations

import re
import shutil

from rmqformats.config import parse
from rmqformats.config.unquoted import _CHUNK, first_unquoted, unquoted_names

from conftest import store_path


def test_the_4_9_7_vector_has_unquoted_queue_ids_and_delay_levels():
    folder = store_path("rocketmq-4.9.7") / "config"
    found = {f.path.rsplit("/", 1)[-1]: f for f in unquoted_names(str(folder))}
    assert sorted(found) == ["consumerOffset.json", "delayOffset.json"]  # topics and groups: every name quoted
    offsets = found["consumerOffset.json"]
    assert (offsets.key, offsets.owner) == ("0", "%RETRY%GroupA@GroupA")
    data = (folder / "consumerOffset.json").read_bytes()
    assert data[offsets.offset - 1:offsets.offset + 2] == b"{0:"
    # The parser of fastjson 1's dialect reads the same key as an integer in the same object.
    assert 0 in parse(data.decode("utf-8")).value["offsetTable"]["%RETRY%GroupA@GroupA"]
    delay = found["delayOffset.json"]
    assert (delay.key, delay.owner) == ("1", "offsetTable")


def test_a_name_across_the_chunk_boundary_is_found_at_its_byte(tmp_path):
    """``{`` as the last byte of the first chunk and ``0:`` the first of the next: the name, its byte and
    the object holding it are still found; a .bak file is read too; a file whose names are all quoted has none."""
    data = (store_path("rocketmq-5.3.3") / "config" / "consumerOffset.json").read_bytes()
    m = re.search(rb'"TopicTest@GroupA":\{0:', data)
    brace = m.end() - 3
    padded = data[:m.start()] + b" " * (_CHUNK - 1 - brace) + data[m.start():]  # whitespace between tokens
    assert padded[_CHUNK - 1:_CHUNK + 2] == b"{0:"
    bak = tmp_path / "consumerOffset.json.bak"
    bak.write_bytes(padded)
    found = first_unquoted(str(bak))
    assert (found.offset, found.key, found.owner) == (_CHUNK, "0", "TopicTest@GroupA")
    (tmp_path / "topics.json").write_bytes(re.sub(rb"([{,])(\d+):", rb'\1"\2":', data))
    shutil.copy(store_path("rocketmq-5.3.3") / "config" / "topics.json", tmp_path / "notes.txt")
    assert [(f.path, f.offset) for f in unquoted_names(str(tmp_path))] == [(str(bak), _CHUNK)]
