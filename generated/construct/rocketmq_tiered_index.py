# Generated from formats/rocketmq_tiered_index.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ tiered-store index file: construct schema generated from formats/rocketmq_tiered_index.ksy.

``rocketmq_tiered_index`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "FileMagic",
    "index_header",
    "slot",
    "item",
    "compact_item",
    "rocketmq_tiered_index",
]


class FileMagic(enum.IntEnum):
    """Kaitai enum file_magic (enums/file_magic)."""

    # The file takes items (`0xCCDDEEFF ^ 1880681586 + 4`, 0xBCC50289 as
    # an unsigned value).
    begin_marker = -1127939447

    # The file is full, or compacted (`0xCCDDEEFF ^ 1880681586 + 8`,
    # 0xBCC50285 as an unsigned value).
    end_marker = -1127939451


# The header, rewritten by `flushNewMetadata` after each put.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexStoreFile.java
index_header = ka.Struct(
    # BEGIN while the file takes items, END once it is full or
    # compacted; signed, as RocketMQ's Java holds it (`int`).
    "magic" / ka.Valid(
        c.Enum(c.Int32sb, FileMagic),
        ("in-enum file_magic", lambda value, this: ka.in_enum(value, FileMagic)),
    ),
    # Store time (ms) the file was created for; also its name.
    "begin_timestamp" / c.Int64sb,
    # Newest store time (ms) of an item put.
    "end_timestamp" / c.Int64sb,
    # Slots that hold at least one item; in the 5.1.x compacted form,
    # the slot count (`maxHashSlotNum`), and 0 in its writing form.
    "num_used_slots" / c.Int32sb,
    # Items put; the newest item's number in the writing form.
    "num_items" / c.Int32sb,
)


# One slot (`HASH_SLOT_SIZE` = 8 bytes) of the table after the header;
# key hash modulo the slot count picks it.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexStoreFile.java
slot = ka.Struct(
    # Writing form: number of the newest item of this slot (0 or less:
    # none). Compacted form: byte position of the slot's run of items.
    "value" / c.Int32sb,
    # Writing form, 0 (unused). Compacted form, bytes of the slot's
    # run of items.
    "len_run" / c.Int32sb,
)


# An item of the writing form (`INDEX_ITEM_SIZE` = 32 bytes), item
# `n` at `28 + slots * 8 + n * 32`.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexItem.java
item = ka.Struct(
    # `String.hashCode` of `topic#key`, negated when negative
    # (`Integer.MIN_VALUE` stays negative).
    "key_hash" / c.Int32sb,
    # The topic's id in `config/tieredStoreMetadata.json`.
    "topic_id" / c.Int32sb,
    # Queue id.
    "queue_id" / c.Int32sb,
    # Offset of the message in the queue's tiered commit log.
    "ofs_commitlog" / c.Int64sb,
    # Size of the message record.
    "len_message" / c.Int32sb,
    # Seconds from `begin_timestamp` to the message's store time.
    "time_diff" / c.Int32sb,
    # Number of the slot's previous item (0 or less ends the chain).
    "prev_item" / c.Int32sb,
)


# An item of the compacted form (`COMPACT_INDEX_ITEM_SIZE` = 28
# bytes), without the chain link.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexItem.java
compact_item = ka.Struct(
    # As in `item`.
    "key_hash" / c.Int32sb,
    # As in `item`.
    "topic_id" / c.Int32sb,
    # As in `item`.
    "queue_id" / c.Int32sb,
    # As in `item`.
    "ofs_commitlog" / c.Int64sb,
    # As in `item`.
    "len_message" / c.Int32sb,
    # As in `item`.
    "time_diff" / c.Int32sb,
)


# An index file of the tiered-store plugin (`IndexStoreFile`): message keys
# and UNIQ_KEYs hashed into slots, each slot leading to the items of its
# keys. The file comes in two forms.
#
# The writing form, `<store>/tiered_index_file/<begin timestamp>`, is
# pre-allocated at `28 + maxHashSlots * 8 + maxItems * 32` bytes
# (`tieredStoreIndexFileMaxHashSlotNum`, 5,000,000, and
# `tieredStoreIndexFileMaxIndexNum`, 20,000,000, by default; neither is in
# the file). A slot's first 4 bytes hold the number of the newest item of
# its keys (0 for none); items are numbered from 1 and each names the
# previous item of its slot, so a slot leads to a chain. A lookup follows
# at most 512 items.
#
# The compacted form, written when the file is full to
# `tiered_index_file/compacting/<begin timestamp>` and uploaded as the
# tiered INDEX segment, has the same header and slot table, then every
# slot's items in one run of 28-byte items (no chain link); a slot holds
# the run's byte position and length. Its size is `28 + maxHashSlots * 8
# + itemCount * 28`. All integers are big-endian.
#
# The 5.1.x plugin (`TieredIndexFile`) used the same header, slot and item
# layouts with other conventions; 5.2.0 converts its files on start. Its
# writing form, `tiered_index_file/0000` (and `1111` while the previous one
# is compacted), is `40 + maxHashSlots * 8 + maxItems * 32` bytes: slots
# start at -1 (none), items are numbered from 0, a chain ends at -1,
# `time_diff` is in milliseconds, and the last 4 bytes are -1 until the
# file is full, then the END magic. Its compacted form (`2222`, uploaded as
# the INDEX segment) has the END magic, the slot count in
# `num_used_slots`, runs of 28-byte items and the BEGIN magic in the 4
# bytes after them. Its key hash is `Math.abs(hashCode)`, 0 for
# `Integer.MIN_VALUE`.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexStoreFile.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/index/IndexItem.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/tieredstore/src/main/java/org/apache/rocketmq/tieredstore/file/TieredIndexFile.java
rocketmq_tiered_index = ka.Struct(
    # The 28-byte header (`INDEX_HEADER_SIZE`), as `flushNewMetadata`
    # writes it.
    "header" / index_header,
    # The slot table (`slot`) and then the items (`item` or
    # `compact_item`); where one ends depends on the hash slot count
    # configured when the file was made, which is not in the file.
    "slots" / c.GreedyBytes,
)
