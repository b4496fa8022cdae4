# Generated from formats/rocketmq_index_file.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ message index file: construct schema generated from formats/rocketmq_index_file.ksy.

``rocketmq_index_file`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "index_header",
    "hash_slot",
    "entry",
    "inferred_tables",
    "index_tables",
    "rocketmq_index_file",
]


# The 40-byte file header (`IndexHeader.INDEX_HEADER_SIZE`). The broker
# keeps it in memory and writes it through on every change.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexHeader.java
index_header = ka.Struct(
    # Store time (ms since the Unix epoch) of the first indexed message.
    # A new file first copies the previous file's `end_timestamp` (0 for
    # the first file) and replaces it when its first entry is written.
    # Entry times are seconds after this value.
    "begin_timestamp" / c.Int64sb,
    # Store time (ms since the Unix epoch) of the last indexed message.
    "end_timestamp" / c.Int64sb,
    # Commit-log offset of the first indexed message (first the previous
    # file's `ofs_end_physical`, replaced by the first entry's).
    "ofs_begin_physical" / c.Int64sb,
    # Commit-log offset of the last indexed message. Messages below it
    # are not indexed again when the commit log is replayed.
    "ofs_end_physical" / c.Int64sb,
    # Brokers 4.7.1 and later count the slots that have been used (it
    # grows when an entry goes into an empty slot). Brokers 4.0.0 to
    # 4.7.0 grew it on every entry, so there it equals the number of
    # entries. Nothing reads it back.
    "num_hash_slots_used" / c.Int32sb,
    # Number of the next entry to write: 1 in a new file (entry 0 is
    # never used), so the file holds `next_index - 1` entries. The
    # broker reads a value of 0 or less as 1. Lookups ignore slots and
    # chain links above it.
    "next_index" / c.Int32sb,
    # Number of entries written.
    "num_entries" / c.Computed(lambda this: this["next_index"] - 1 if this["next_index"] > 1 else 0),
)


# One hash slot: the head of the chain of entries whose keys fall in
# it.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
hash_slot = ka.Struct(
    # Number of the newest entry whose key falls in this slot; 0
    # (`invalidIndex`) for an empty slot. A value above
    # `header.next_index` or below 1 is treated as empty.
    "latest_index" / c.Int32sb,
)


# One index entry (`indexSize` = 20 bytes), written by
# `IndexFile.putKey` for one key of one message.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
entry = ka.Struct(
    # `indexKeyHashMethod` of the key `topic#key`: the Java
    # `String.hashCode` of the key (UTF-16 code units, 32-bit
    # wrap-around), made non-negative with `Math.abs`, and 0 for
    # `Integer.MIN_VALUE`.
    "key_hash" / c.Int32sb,
    # Commit-log offset of the message.
    "ofs_physical" / c.Int64sb,
    # Store time of the message in whole seconds after
    # `header.begin_timestamp` (rounded toward zero, negative values
    # written as 0, 0 while the header's begin time is 0 or less). The
    # first entry of a file is measured from the begin time the file
    # inherited from the previous one, before it is replaced. A lookup
    # takes the entry's time as `begin_timestamp + time_diff * 1000`
    # and stops at a negative value.
    "time_diff" / c.Int32sb,
    # Number of the previous entry in the same slot (the slot's value
    # before this entry was written); 0 ends the chain.
    "prev_index" / c.Int32sb,
)


# The hash slots and the entries, with the counts inferred from the
# file size (`num_hash_slots`, `num_index`). Starts at byte 40 of the
# file, right after the header. It takes no parameters, so that every
# Kaitai target reads it (the Perl target ignores parameters); for other
# counts, read `index_tables` at the same position.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
inferred_tables = ka.Struct(
    # Number of hash slots, inferred from the file size.
    "num_hash_slots" / c.Computed(lambda this: this["_root"]["num_hash_slots"]),
    # Number of entries, entry 0 included, inferred from the file size.
    "num_index" / c.Computed(lambda this: this["_root"]["num_index"]),
    # The hash table. The slot of a key is its `indexKeyHashMethod` hash
    # modulo `num_hash_slots`.
    "hash_slots" / c.Array(lambda this: this["num_hash_slots"], hash_slot),
    # Entries by number; entry 0 is never written.
    "entries" / c.Array(lambda this: this["num_index"], entry),
)


def index_tables(num_hash_slots, num_index):
    """The hash slots and the entries, for given counts: for a file whose
    broker used another ratio of entries to slots than the default (see
    `is_size_consistent`). Starts at byte 40 of the file, right after the
    header. Not read by the Perl target, which ignores parameters.

    :param num_hash_slots: Number of hash slots, the broker setting `maxHashSlotNum`.
    :param num_index: Number of entries, entry 0 included, the broker setting `maxIndexNum`.

    Each argument is a value, or a function of the context of the object that
    uses this type, called on every parse and build.
    """
    # See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
    return ka.Struct(
        # Number of hash slots, the broker setting `maxHashSlotNum`.
        "num_hash_slots" / c.Computed(ka.param(num_hash_slots)),
        # Number of entries, entry 0 included, the broker setting `maxIndexNum`.
        "num_index" / c.Computed(ka.param(num_index)),
        # The hash table. The slot of a key is its `indexKeyHashMethod` hash
        # modulo `num_hash_slots`.
        "hash_slots" / c.Array(lambda this: this["num_hash_slots"], hash_slot),
        # Entries by number; entry 0 is never written.
        "entries" / c.Array(lambda this: this["num_index"], entry),
    )


# One file of the broker's message-key index, `<store>/index/<name>`, where
# the name is the file's creation time as `yyyyMMddHHmmssSSS` (broker local
# time). The broker answers "find messages by key" (`queryMessage`) from
# these files: for every dispatched message it indexes `topic#UNIQ_KEY` and
# `topic#key` for each non-empty key of the `KEYS` property (split on
# spaces), except for transaction ROLLBACK records.
#
# The file is a fixed-size hash table with chaining:
#
# * a 40-byte header;
# * `num_hash_slots` hash slots of 4 bytes; the slot of a key is
#   `indexKeyHashMethod(key) % num_hash_slots` and holds the number of the
#   newest entry whose key falls in it (0 = empty);
# * `num_index` entries of 20 bytes, numbered from 0; entry 0 is never
#   written, so entry numbers start at 1 and 0 can mean "none". Each entry
#   holds the key hash, the commit-log offset of the message, its store
#   time in seconds after the header's begin time, and the number of the
#   previous entry of the same slot, so a lookup walks newest to oldest.
#   The key itself is not stored: different keys with equal hashes, and
#   keys of other topics, come back from a lookup too, and a reader must
#   compare each message's keys.
#
# Entries are appended in order; `header.next_index` is the next entry
# number to write. Unwritten slots and entries are zero (the file is
# created at full size, sparse). A file is full when `next_index` reaches
# `num_index`; the broker then starts a new file.
#
# Counts. `num_hash_slots` and `num_index` are not stored in the file: they
# are the broker settings `maxHashSlotNum` (default 5,000,000) and
# `maxIndexNum` (default 20,000,000) at the time the file was made, and
# the file size is `40 + 4 * num_hash_slots + 20 * num_index` (420,000,040
# bytes with the defaults). The size alone does not give both counts. The
# top-level type assumes the default ratio of four entries per slot, which
# the defaults themselves have: `num_hash_slots = (size - 40) / 84`. For a
# broker configured with another ratio, read `tables` at position 40 with
# the counts from the broker configuration: `tables(num_hash_slots,
# num_index)`. `is_size_consistent` tells whether the default ratio fits
# the file at all.
#
# Slot and entry tables are instances, read only when used, so a
# full-size file opens without parsing 25 million items. All integers are
# big-endian and signed, as Java writes them.
#
# The layout is the same in every release from 4.0.0 to 5.3.x; only the
# meaning of `header.num_hash_slots_used` changed (in 4.7.1, see there).
# The 5.x tiered-store plugin keeps a different index format
# (`tiered_index_file/`), not described here.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexHeader.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/index/IndexService.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.7/store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java
rocketmq_index_file = ka.Struct(
    # Time and commit-log ranges covered by the file, and its fill level.
    "header" / index_header,
    # Number of hash slots (`maxHashSlotNum`), inferred from the file size
    # assuming four entries per slot, as with the default settings
    # (5,000,000 slots for a 420,000,040-byte file). Wrong when the broker
    # used another ratio; see `is_size_consistent`.
    "num_hash_slots" / c.Computed(lambda this: (ka.io_size(this) - 40) // 84),
    # Number of entries the file has room for (`maxIndexNum`), entry 0
    # included, under the same four-entries-per-slot assumption.
    "num_index" / c.Computed(lambda this: this["num_hash_slots"] * 4),
    # True when the file size fits four entries per slot. When false, the
    # inferred counts are wrong: read the type `index_tables` at position 40
    # with the counts from the broker configuration.
    "is_size_consistent" / c.Computed(lambda this: (
        ka.io_size(this) > 40
        and (ka.io_size(this) - 40) % 84 == 0
    )),
    # The hash slots and the entries, with the inferred counts. Reading it
    # parses every slot and entry of the file.
    "tables" / c.Pointer(lambda this: (40) + this["_io"].tell() - ka.io_pos(this), inferred_tables),
    # The most recently written entry, number `header.next_index - 1`.
    "last_entry" / ka.If(
        lambda this: (
            this["header"]["next_index"] > 1
            and this["header"]["next_index"] <= this["num_index"]
        ),
        c.Pointer(
            lambda this: (
                (40 + this["num_hash_slots"] * 4 + (this["header"]["next_index"] - 1) * 20)
                + this["_io"].tell() - ka.io_pos(this)
            ),
            entry,
        ),
    ),
)
