"""``messages`` and ``export``: the messages of the commit log, filtered, as a table, JSON Lines or files.

One module for both commands: they take the same filters, column lists and body options, and each
writes through the same two roads, the walk's batches and, where a store's inner batches are searched
message by message or one message is looked up by id, the message objects; kept together, the roads
cannot drift apart.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import sys
from collections.abc import Callable, Iterator

from tqdm import tqdm

from ..commitlog import Scan
from ..errors import RmqFormatError
from .. import properties
from ..message import Message, add_derived_json
from . import bodies, status, tables
from .common import (UsageError, iso, open_from_args, short, print_table, with_progress, add_message_filters, add_store_args,
                     add_verify_crc, add_commitlog_arg)
from .common import add_jobs, add_salvage, byte_stream, refuse_empty_filters, store_paths
from .common import batches_with_progress as _batches_with_progress
from .ends import report_end

#: Rows decoded at a time for the messages table.
_TABLE_BATCH = 8192
#: Bytes of commit log the messages command reads at a time (small: it prints as it reads).
_MESSAGES_WINDOW = 8 << 20

def message_filter(args: argparse.Namespace) -> Callable[[Message], bool]:
    """A predicate for the filters given on the command line (after :func:`prepare_filters`)."""
    checks: list[Callable[[Message], bool]] = []
    if args.topics is not None:
        topics = set(args.topics)
        checks.append(lambda m: m.topic in topics)
    if args.queue is not None:
        checks.append(lambda m: m.queue_id == args.queue)
    if args.key is not None:
        checks.append(lambda m: args.key in m.keys or m.uniq_key == args.key)
    if args.since is not None:
        checks.append(lambda m: m.store_timestamp >= args.since)
    if args.until is not None:
        checks.append(lambda m: m.store_timestamp < args.until)
    if args.from_offset is not None:
        checks.append(lambda m: m.commitlog_offset >= args.from_offset)
    if args.object_filter:
        checks.append(lambda m: args.object_filter.matches(m.topic, m.queue_id, m.queue_offset, m.properties))
    return lambda m: all(c(m) for c in checks)


def prepare_filters(args: argparse.Namespace, store) -> None:
    """The filters of the command line made ready for ``store``: ``args.topics`` (the topics asked, met with
    an ``--outstanding`` group's), ``args.batch_filter`` (what the columnar scan does not take itself) and
    ``args.object_filter`` (the same, tags included, for a walk message by message)."""
    from .filters import BatchFilter, outstanding, topics_of
    topics = topics_of(args.topic)
    group = None
    if getattr(args, "outstanding", None) is not None:
        group = outstanding(store, args.outstanding)
        if topics is None:
            topics = group.topics
        else:
            left = [t for t in topics if t in set(group.topics)]
            if not left:
                raise UsageError(f"--topic {','.join(topics)} names none of the topics group {group.group!r} has "
                                 f"offsets of ({', '.join(group.topics)}), so nothing can match")
            topics = left
    args.topics = topics
    tags = args.tag
    props = args.property or ()
    # A single tag is matched by the scan itself; a set of them on each batch.
    args.batch_filter = BatchFilter(tags=tags if tags is not None and len(tags) > 1 else None, properties=props,
                                    outstanding=group)
    args.object_filter = BatchFilter(tags=tags, properties=props, outstanding=group)


def filtered_batches(batches, args: argparse.Namespace, names: list[str]):
    """``batches`` cut down by ``args.batch_filter``, holding only the columns ``names`` (in that order);
    batches left empty are dropped."""
    import pyarrow as pa
    import pyarrow.compute as pc
    filt = args.batch_filter
    for batch in batches:
        if filt:
            batch = filt(batch)
            if batch.num_rows == 0:
                continue
        if batch.schema.names != names:
            arrays = [pc.binary_length(batch.column("body")) if n == BODY_BYTES else batch.column(n) for n in names]
            batch = pa.RecordBatch.from_arrays(
                arrays, schema=pa.schema([pa.field(n, a.type) if n == BODY_BYTES else batch.schema.field(n)
                                          for n, a in zip(names, arrays)]))
        yield batch


def scan_columns(names, args: argparse.Namespace) -> list[str]:
    """The columns a scan reads for the output columns ``names``: those and the filters' own, schema order."""
    from ..columnar import COLUMNS
    from ..walk.arrow import property_of
    need = set(names) | set(args.batch_filter.columns) | ({"body"} if BODY_BYTES in names else set())
    return [c for c in COLUMNS if c in need] + sorted(c for c in need if property_of(c) is not None)


def _message_row(m: Message) -> list:
    return [m.commitlog_offset, short(m.topic), m.queue_id, m.queue_offset, iso(m.store_timestamp),
            m.tags or "", " ".join(m.keys), m.msg_id, len(m.shown_body)]


#: The body's length in bytes (decompressed where it decompresses, as ``body`` shows it): a column of the
#: message table and of ``--columns``, the JSON key ``--body-limit`` gives it under.
BODY_BYTES = "bodyBytes"

#: The message table's header: the columnar names (as the JSON keys and --columns), bodyBytes the body's length.
_MESSAGE_HEADER = ["commitLogOffset", "topic", "queueId", "queueOffset", "storeTimestamp", "tags", "keys", "msgId",
                   "bodyBytes"]


def _scan_filters(args: argparse.Namespace) -> dict:
    """The columnar scan's filter options for the filters given on the command line."""
    tag = next(iter(args.tag)) if args.tag is not None and len(args.tag) == 1 else None
    return {"topic": args.topics, "queue_id": args.queue, "tag": tag, "key": args.key, "since": args.since,
            "until": args.until, "from_offset": args.from_offset, "to_offset": args.to_offset,
            "verify_crc": args.verify_crc, "force_verify_prop_crc": args.force_verify_prop_crc,
            "salvage": args.salvage, "live": args.live, "stop_at_corrupt_body": args.stop_at_corrupt_body}


def _binary_stdout():
    """``sys.stdout``'s byte stream (after what was written as text), or ``None`` if it has none."""
    sys.stdout.flush()
    return getattr(sys.stdout, "buffer", None)


def _object_messages(args: argparse.Namespace, log, from_offset: int | None) -> tuple[Iterator[Message], Scan]:
    """The selected messages through the object API's scan, from ``from_offset``."""
    start = None
    if from_offset is not None and log.segments:
        # Records are found from a segment start; earlier records are skipped by the filter.
        try:
            start = log.segments[log.segment_index(from_offset)].start_offset
        except RmqFormatError:
            start = None
    scan = log.scan(start=start, verify_crc=args.verify_crc, salvage=args.salvage, live=args.live,
                    force_verify_prop_crc=args.force_verify_prop_crc)
    keep = message_filter(argparse.Namespace(**{**vars(args), "from_offset": from_offset}))

    def selected() -> Iterator[Message]:
        for m in with_progress(scan, log.total_size, "scan"):
            if args.to_offset is not None and m.commitlog_offset >= args.to_offset:
                return
            if keep(m):
                yield m
    return selected(), scan


def _fitted(header, widths, cuttable, limit):
    layout = tables.fit_layout(header, widths, cuttable, limit)
    tables.note_left_out(header, layout, limit)
    return layout


def _inner_selected(args: argparse.Namespace, log) -> tuple[Iterator[Message | tuple], Scan]:
    """The selected messages with inner batches unwrapped: a ``(record, item)`` pair for an item of an
    inner-batch record (its queue offset is the record's plus the item's index), else the message."""
    inner_args = argparse.Namespace(**{**vars(args), "tag": None, "key": None, "object_filter": None})
    selected, scan = _object_messages(inner_args, log, args.from_offset)
    filt = args.object_filter

    def matches(m: Message, queue_offset: int, props: dict, uniq: str | None) -> bool:
        if not filt.matches(m.topic, m.queue_id, queue_offset, props):
            return False
        if args.key is not None:
            keys = [k for k in (props.get("KEYS") or "").split(" ") if k]
            return args.key in keys or uniq == args.key
        return True

    def unwrapped() -> Iterator[Message | tuple]:
        for m in selected:
            if m.has_flag("is_inner_batch"):
                for item in m.inner_messages():
                    p = item.properties
                    if matches(m, m.queue_offset + item.index, p, p.get("UNIQ_KEY")):
                        yield (m, item)
            elif matches(m, m.queue_offset, m.properties, m.uniq_key):
                yield m
    return unwrapped(), scan


def _inner_row(m: Message, item) -> list:
    p = item.properties
    return [m.commitlog_offset, short(m.topic), m.queue_id, m.queue_offset + item.index, iso(m.store_timestamp),
            p.get("TAGS") or "", " ".join(k for k in (p.get("KEYS") or "").split(" ") if k), m.msg_id,
            len(item.body)]


def _inner_json(m: Message, item) -> dict:
    d = m.to_json_dict()
    d.update(queueOffset=m.queue_offset + item.index, flag=item.flag, properties=item.properties)
    d.pop("body")
    d["innerIndex"] = item.index
    d["body"] = base64.b64encode(item.body).decode("ascii")
    return add_derived_json(d, item.properties)


def _note_empty(n: int, args: argparse.Namespace) -> None:
    """A note on stderr when the filters selected nothing (the exit status stays 0)."""
    if n == 0 and args.limit != 0:
        sys.stderr.write("rmqformats: no message matched\n")


def _with_body(row: list, data: bytes, args: argparse.Namespace, error: str | None = None) -> list:
    limit = bodies.TABLE_LIMIT if args.body_limit is None else args.body_limit
    shown = bodies.render(data, args.body, limit, table=True)
    # A body that does not decompress is shown as stored, after the reason.
    return [*row, shown if error is None else f"[not decompressed: {error}] {shown}"]


def _read_msg_id(store, msg_id: str) -> list[Message]:
    """The message of an offset message id; failing that, of a producer's message id (UNIQ_KEY), said on stderr."""
    from ..errors import MessageNotFoundError
    from ..index import describe_uniq_key, find_uniq_key, looks_like_uniq_key
    try:
        return [store.commitlog.read_msg_id(msg_id)]
    except RmqFormatError as exc:
        if not looks_like_uniq_key(msg_id):
            raise
        why = exc.reason
    msgs, how = find_uniq_key(store, msg_id)
    if not msgs:
        raise MessageNotFoundError(store.commitlog.path, None, f"{msg_id} is neither an offset message id of this "
                                   f"store ({why}) nor the producer's message id (UNIQ_KEY) of any message in it")
    sys.stderr.write(f"rmqformats: {msg_id} is not an offset message id of this store ({why}); it is the producer's "
                     f"message id (UNIQ_KEY, {describe_uniq_key(msg_id)}) of {len(msgs)} message(s), {how}\n")
    return msgs


def _decoded_json(d: dict, decoder, data: bytes | None) -> dict:
    """A message's JSON with ``bodyDecoded`` (or the body fields) and ``bodyDecodeError`` when a body decoder
    is given."""
    if decoder is None:
        return d
    d.update(zip(decoder.names, decoder.decode(data)))
    return d


def _decoded_row(row: list, decoder, data: bytes | None) -> list:
    """A table row with the decoded body or its fields (the first cell ``[why it did not decode]``) when a
    body decoder is given."""
    if decoder is None:
        return row
    *cells, error = decoder.decode(data)
    if error is not None:
        cells[0] = f"[{error}]"
    return [*row, *cells]


def _decoded_header(decoder) -> list[str]:
    """The table's decoded columns: ``decoded``, or the body fields' columns."""
    return [f.column for f in decoder.fields] if decoder.fields else ["decoded"]


def _refuse_combinations(args: argparse.Namespace) -> None:
    """Options of ``messages`` that cannot go together, refused with what to do."""
    if args.msg_id is not None or args.offset is not None:
        given = [f"--{k.replace('_', '-')}" for k in ("topic", "queue", "tag", "property", "outstanding", "key",
                                                        "since", "until", "from_offset", "to_offset")
                 if getattr(args, k) is not None]
        given += ["--count"] * (args.count is not None) + ["--follow"] * args.follow
        if given:
            raise UsageError(f"{'--msg-id' if args.msg_id is not None else '--offset'} reads one message; "
                             f"it cannot be combined with {', '.join(given)}")
    if args.follow and not args.live:
        raise UsageError("--follow polls a store its broker is writing: give --live with it")
    if args.interval is not None and not args.follow:
        raise UsageError("--interval is the time between reads of --follow: give --live --follow with it")
    if args.follow and args.salvage:
        raise UsageError("--follow reads the data a running broker has written, up to its end; --salvage reads "
                         "past damage in a store at rest: give one of them")
    if args.count is not None:
        for name, given in (("--limit", args.limit is not None), ("--columns", args.columns is not None),
                            ("--follow", args.follow), ("--body", args.body is not None)):
            if given:
                raise UsageError(f"--count counts every matching message; {name} does not go with it")


def _columns_json(d: dict, m: Message, columns: list[str] | None, props: dict | None = None,
                  data: bytes | None = None) -> dict:
    """A message's JSON object with only ``columns`` (any of the columnar schema's, or ``bodyBytes``: the
    length of ``data``, the body as shown, by default ``m``'s), in that order."""
    if columns is None:
        return d
    from ..export import OPTIONAL_JSON_KEYS
    from ..walk.arrow import PROPERTY_PREFIX as PROPERTY_COLUMN
    props = m.properties if props is None else props
    extra = {BODY_BYTES: len(m.shown_body if data is None else data),
             "tags": props.get("TAGS"), "keys": [k for k in (props.get("KEYS") or "").split(" ") if k],
             "uniqKey": props.get("UNIQ_KEY"), "priority": properties.priority_of(props),
             "liteTopic": properties.lite_topic_of(props), "propertiesString": None, "segment": None}
    out = {c: d[c] if c in d else props.get(c[len(PROPERTY_COLUMN):]) if c.startswith(PROPERTY_COLUMN)
           else extra.get(c) for c in columns}
    # As the columnar JSON Lines: an optional key (but the first) only where it has a value.
    return {c: v for i, (c, v) in enumerate(out.items()) if v is not None or i == 0 or c not in OPTIONAL_JSON_KEYS}


def _columns_row(d: dict, columns: list[str]) -> list:
    """Table cells of a message's JSON object restricted to ``columns``."""
    row = []
    for c in columns:
        v = d.get(c)
        if c in ("bornTimestamp", "storeTimestamp") and isinstance(v, int):
            v = iso(v)
        elif isinstance(v, list):
            v = " ".join(map(str, v))
        elif isinstance(v, dict):
            v = json.dumps(v, ensure_ascii=False)
        row.append("" if v is None else v)
    return row


def _column_cells(batch, names: list[str], args: argparse.Namespace, width: int | None) -> list:
    """Table cells (one string array per column) of the ``--columns`` of a batch."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..export import json_object, short_text, time_text
    cells = []
    for name in names:
        col = batch.column(name)
        t = col.type
        if pa.types.is_timestamp(t):
            cells.append(time_text(col))
        elif pa.types.is_integer(t):
            cells.append(pc.cast(col, pa.string()))
        elif pa.types.is_string(t):
            cells.append(short_text(pc.fill_null(col, ""), 48) if width is not None else col)
        elif pa.types.is_list(t):
            cells.append(pc.fill_null(pc.binary_join(col, " "), ""))
        elif pa.types.is_map(t):
            cells.append(pc.cast(json_object(col), pa.string()))
        else:  # the body, as --body shows it (text unless asked otherwise)
            view = args.body if args.body not in (None, "none") else "text"
            limit = bodies.TABLE_LIMIT if args.body_limit is None else args.body_limit
            cells.append(pc.cast(bodies.render_array(col, view, limit, table=True), pa.string()))
    return cells


def write_body_view_jsonl(batch, view: str | None, limit: int | None, stream) -> None:
    """The JSON Lines of a batch with a ``body`` column, the body as ``--body`` and ``--body-limit`` show it:
    what :func:`bodies.apply_json` makes of each line (the body's fields last), written to a byte stream."""
    import pyarrow as pa

    from ..export import OPTIONAL_JSON_KEYS, text_slices, write_jsonl
    for part in text_slices(batch):  # bounded in bytes of bodies: their text is made a slice at a time
        columns, optional = bodies.json_columns(dict(zip(part.schema.names, part.columns)), part.column("body"),
                                                view, limit)
        write_jsonl(pa.RecordBatch.from_arrays(list(columns.values()), names=list(columns)), stream,
                    OPTIONAL_JSON_KEYS | optional)


def _body_cells(batch, args: argparse.Namespace):
    """The ``body`` cells of the message table (``--body``): as :func:`_with_body` shows each body."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..frames import scalar
    limit = bodies.TABLE_LIMIT if args.body_limit is None else args.body_limit
    shown = pc.cast(bodies.render_array(batch.column("body"), args.body, limit, table=True), pa.string())
    error = batch.column("bodyError")
    if error.null_count == len(error):
        return shown
    # A body that does not decompress is shown as stored, after the reason.
    told = pc.binary_join_element_wise(scalar("[not decompressed: "), error, scalar("] "), shown, scalar(""))
    return pc.if_else(pc.is_null(error), shown, told)


class _Counts:
    """Matching messages counted in total, per topic or per topic queue (``--count``)."""

    def __init__(self, by: str):
        self.by = by
        self.total = 0
        self.groups: dict[tuple, int] = {}

    @property
    def keys(self) -> list[str]:
        return {"total": [], "topic": ["topic"], "queue": ["topic", "queueId"]}[self.by]

    def add_batch(self, batch) -> None:
        import pyarrow as pa
        self.total += batch.num_rows
        if self.keys:
            table = pa.Table.from_batches([batch]).group_by(self.keys).aggregate([("commitLogOffset", "count")])
            for row in table.to_pylist():
                key = tuple(row[k] for k in self.keys)
                self.groups[key] = self.groups.get(key, 0) + row["commitLogOffset_count"]

    def add(self, topic: str, queue_id: int) -> None:
        self.total += 1
        if self.keys:
            key = (topic,) if self.by == "topic" else (topic, queue_id)
            self.groups[key] = self.groups.get(key, 0) + 1

    def write(self, out, fmt: str) -> None:
        if not self.keys:
            if fmt == "jsonl":
                out.write(json.dumps({"messages": self.total}) + "\n")
            else:
                print_table([[self.total]], ["messages"], out)
            return
        rows = sorted(self.groups.items())
        if fmt == "jsonl":
            for key, n in rows:
                out.write(json.dumps({**dict(zip(self.keys, key)), "messages": n}, ensure_ascii=False) + "\n")
        else:
            print_table([[short(key[0]), *key[1:], n] for key, n in rows],
                        ["topic", "queueId"][:len(self.keys)] + ["messages"], out)


def cmd_messages(args: argparse.Namespace) -> int:
    _refuse_combinations(args)
    refuse_empty_filters(args)
    from .sql import body_decoding
    decoder = body_decoding(args)
    from .pending import system_decoding
    store = open_from_args(args)
    system = system_decoding(args, store.root) if args.count is None else None
    log = store.commitlog
    out = sys.stdout
    body = args.body not in (None, "none")
    columns = args.columns
    header = ((list(columns) if columns is not None else
               _MESSAGE_HEADER + (["body"] if body and args.format == "table" else []))
              + (_decoded_header(decoder) if decoder is not None and args.format == "table" else []))
    if system is not None and args.format == "table":
        header = header + list(_SYSTEM_TABLE)
    if args.msg_id is not None or args.offset is not None:
        msgs = [log.read(args.offset)] if args.msg_id is None else _read_msg_id(store, args.msg_id)
        msgs = msgs[:args.limit] if args.limit is not None else msgs
        if args.format == "jsonl":
            for msg in msgs:
                d = bodies.apply_json(msg.to_json_dict(), msg.shown_body, args.body, args.body_limit)
                d = _system_json(_columns_json(d, msg, columns), msg.to_json_dict(), system)
                d = _decoded_json(d, decoder, msg.shown_body)
                out.write(json.dumps(d, ensure_ascii=False) + "\n")
        elif columns is not None:
            print_table([_system_row(_decoded_row(_columns_row(_columns_json(msg.to_json_dict(), msg, columns),
                                                               columns), decoder, msg.shown_body),
                                     msg.to_json_dict(), system) for msg in msgs], header, out)
        else:
            rows = [_decoded_row(_message_row(msg), decoder, msg.shown_body) for msg in msgs]
            print_table([_system_row(_with_body(row, msg.shown_body, args, msg.body_error) if body else row,
                                     msg.to_json_dict(), system) for row, msg in zip(rows, msgs)], header, out)
        return 0
    prepare_filters(args, store)
    counts = _Counts(args.count) if args.count is not None else None
    batch_topics = {q.topic for q in store.batch_queues()} if store.root is not None else set()
    inner = batch_topics and (args.key is not None or args.tag is not None or args.property is not None
                              or (args.outstanding is not None and batch_topics & set(args.topics)))
    if inner and args.follow:
        raise UsageError(f"--follow reads new records a batch at a time; the inner batches of this store's batch "
                         f"consume queues ({', '.join(sorted(batch_topics))}) are searched message by message "
                         f"for --tag, --key, --property and --outstanding: give the commit-log folder "
                         f"({log.path}) as STORE to follow the records as stored")
    if inner:
        # Inner batches (batch consume queues) are searched item by item, through the object API.
        items, obj_scan = _inner_selected(args, log)
        if args.limit is not None:
            items = itertools.islice(items, args.limit)
        pairs = ((it, None) if isinstance(it, Message) else it for it in items)
        n = 0
        if counts is not None:
            for n, (m, _) in enumerate(pairs, 1):
                counts.add(m.topic, m.queue_id)
            counts.write(out, args.format)
        elif args.format == "jsonl":
            for n, (m, item) in enumerate(pairs, 1):
                data = item.body if item is not None else m.shown_body
                whole = d = _inner_json(m, item) if item is not None else m.to_json_dict()
                d = bodies.apply_json(d, data, args.body, args.body_limit)
                d = _columns_json(d, m, columns, item.properties if item is not None else None, data)
                d = _system_json(d, whole, system)
                d = _decoded_json(d, decoder, data)
                out.write(json.dumps(d, ensure_ascii=False) + "\n")
        else:
            def table_rows():
                for m, item in pairs:
                    data = item.body if item is not None else m.shown_body
                    d = _inner_json(m, item) if item is not None else m.to_json_dict()
                    if columns is not None:
                        yield _system_row(_decoded_row(_columns_row(_columns_json(d, m, columns, item.properties
                                                                                  if item is not None else None,
                                                                                  data), columns), decoder, data),
                                          d, system)
                    else:
                        row = _inner_row(m, item) if item is not None else _message_row(m)
                        yield _system_row(_decoded_row(_with_body(row, data, args) if body else row, decoder, data),
                                          d, system)
            n = tables.print_rows_streamed(table_rows(), header, out)
        _note_empty(n, args)
        return report_end(obj_scan, log)
    # The columnar decoder, a batch at a time: the output starts before the scan ends and memory stays flat.
    from ..columnar import DEFAULT_BATCH_SIZE
    from ..errors import DecompressionError
    from ..export import (JSONL_COLUMNS, MESSAGE_TABLE_SOURCE, TableStream, message_table_columns,
                         write_jsonl)
    jsonl = args.format == "jsonl"
    limit = args.limit
    # Smaller batches for the table: its rows are formatted a batch at a time.
    batch_size = DEFAULT_BATCH_SIZE if jsonl or counts is not None else _TABLE_BATCH
    if limit is not None:
        batch_size = min(batch_size, max(limit + 1, 1024))
    if counts is not None:
        names = ["commitLogOffset", "topic", "queueId"][:1 + len(counts.keys)]
    elif columns is not None:
        names = list(columns)
    else:
        names = list(JSONL_COLUMNS if jsonl else MESSAGE_TABLE_SOURCE + (("bodyError",) if body else ()))
    shows_body = "body" in names and counts is None
    # What the body decoder reads, where --columns leaves it out: read, decoded, then left out.
    body_read = decoder is not None and counts is None and "body" not in names
    if body_read:
        names.append("body")
    shown = names
    if system is not None:  # what the system columns are decoded from, read and then left out
        from ..systopics.batches import NEEDED
        names = names + [c for c in NEEDED if c not in names]
    # Every body shown or measured is decompressed: bodyBytes is the length of the body as shown.
    decompress = shows_body or body_read or BODY_BYTES in names
    reshape = jsonl and shows_body and (args.body not in (None, "base64") or args.body_limit is not None)
    raw = byte_stream(out) if jsonl and counts is None else None  # JSON Lines are written as bytes
    table = None
    width = tables.table_width(out)
    if not jsonl and counts is None:
        if columns is not None:
            import pyarrow as pa

            from ..walk.arrow import field
            cut = [i for i, c in enumerate(columns) if c != BODY_BYTES and pa.types.is_string(field(c).type)]
            table = TableStream(header, out, cut=cut, layout=lambda h, w, c: _fitted(h, w, c, width))
        else:
            end_offset = max((s.start_offset + s.size for s in log.segments), default=0)
            table = TableStream(header, out, min_widths={0: len(str(end_offset))}, cut=(1, 5, 6, 9),
                                layout=lambda h, w, c: _fitted(h, w, c, width))
    n = 0
    last = None
    start = None
    follow = _Follow(args) if args.follow else None
    try:
        while True:
            scan = log.batches(scan_columns(names, args), decompress=decompress, start=start,
                               batch_size=batch_size, window_size=_MESSAGES_WINDOW, **_scan_filters(args))
            more = False
            for batch in filtered_batches(_batches_with_progress(scan, log.total_size, "scan"), args, names):
                if limit is not None and n >= limit:
                    more = True
                    break
                more = limit is not None and batch.num_rows > limit - n
                if more:
                    batch = batch.slice(0, limit - n)
                n += batch.num_rows
                last = batch.column(0)[-1].as_py()
                if system is not None:
                    from ..systopics import with_system_columns
                    batch = with_system_columns(batch, shown, decoding=system)
                if decoder is not None and counts is None:
                    batch = decoder.batch(batch)
                    if body_read:
                        batch = batch.drop_columns(["body"])
                with follow.whole() if follow is not None else _nothing():
                    if counts is not None:
                        counts.add_batch(batch)
                    elif table is not None:
                        if columns is not None:
                            cells = _column_cells(batch, list(columns), args, width)
                        else:
                            cells = message_table_columns(batch, 48 if width is not None else 1 << 30)
                        if body and columns is None:
                            cells.append(_body_cells(batch, args))
                        if decoder is not None:
                            import pyarrow.compute as pc

                            from ..frames import scalar
                            first, *rest = decoder.names[:-1]
                            # Arrow scalars, not Python texts: turning those into Arrow values imports pandas.
                            cells.append(pc.coalesce(batch.column(first),
                                                     pc.binary_join_element_wise(scalar("["),
                                                                                 batch.column("bodyDecodeError"),
                                                                                 scalar("]"), scalar(""))))
                            cells.extend(batch.column(name) for name in rest)
                        if system is not None:
                            cells.extend(_system_cells(batch))
                        table.write(cells)
                    elif reshape:
                        write_body_view_jsonl(batch, args.body, args.body_limit, raw)
                    else:
                        write_jsonl(batch, raw)
                # Not held while the next batch is decoded: a batch can hold hundreds of MiB of bodies.
                batch = cells = None
                if more:
                    break
            if follow is None or more or (limit is not None and n >= limit):
                break
            if scan.end is None or not scan.end.reason.is_clean:
                break  # the data ends at damage (reported below) or at --to-offset
            with follow.whole():
                if table is not None:
                    table.close()  # the rows so far shown now, not after a first block fills
                elif raw is not None:
                    raw.flush()
                out.flush()
            start = scan.end.offset
            if args.to_offset is not None and start >= args.to_offset:
                break
            log = follow.wait(start)
    except DecompressionError:
        # A body that does not decompress: the object API prints the messages before it and fails there.
        if raw is not None:
            raw.flush()
        after = args.from_offset if last is None else max(last + 1, args.from_offset or 0)
        selected, obj_scan = _object_messages(args, log, after)
        for m in selected:
            if limit is not None and n >= limit:
                break
            n += 1
            m.body  # noqa: B018 - raises the typed error at the body that does not decompress
            d = bodies.apply_json(m.to_json_dict(), m.shown_body, args.body, args.body_limit)
            d = _system_json(_columns_json(d, m, columns), m.to_json_dict(), system)
            d = _decoded_json(d, decoder, m.shown_body)
            out.write(json.dumps(d, ensure_ascii=False) + "\n")
        return report_end(obj_scan, log)
    if counts is not None:
        counts.write(out, args.format)
    elif table is not None:
        table.close()
    elif raw is not None:
        raw.flush()
    if counts is None:
        _note_empty(n, args)
    if limit is not None and n >= limit and scan.end is None:
        return status.OK  # stopped by --limit before the data ended
    return report_end(scan, log)


#: The decoded system columns the message table shows with ``--decode-system`` (JSON Lines has all).
_SYSTEM_TABLE = ("kind", "realTopic", "dueTime")


def _system_json(d: dict, whole: dict, system) -> dict:
    """``d`` with the decoded system columns of the message ``whole`` (a ``to_json_dict``) appended."""
    if system is None:
        return d
    from ..systopics import system_rows
    return {**d, **system_rows([whole], decoding=system)[0]}


def _system_row(row: list, whole: dict, system) -> list:
    """A table row with the cells of :data:`_SYSTEM_TABLE` appended."""
    if system is None:
        return row
    from ..systopics import system_rows
    values = system_rows([whole], decoding=system)[0]
    due = values["dueTime"]
    return row + [values["kind"], short(values["realTopic"] or ""), iso(due) if due is not None else ""]


def _system_cells(batch) -> list:
    """The cells of :data:`_SYSTEM_TABLE` of a batch with the system columns."""
    import pyarrow.compute as pc

    from ..export import time_text
    from ..frames import scalar
    return [batch.column("kind"), pc.fill_null(batch.column("realTopic"), scalar("")),
            pc.fill_null(time_text(batch.column("dueTime")), scalar(""))]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Follow:
    """``--follow``: the store opened again every ``--interval`` seconds until its data goes past where the
    last read ended; output is written a whole batch at a time (a signal lands between batches)."""

    def __init__(self, args: argparse.Namespace):
        self.args = args

    @staticmethod
    def whole():
        from .. import interrupts
        return interrupts.deferred()

    def wait(self, offset: int):
        """The commit log, opened again once it holds data past ``offset`` (a new record may be there)."""
        import time
        while True:
            time.sleep(1.0 if self.args.interval is None else self.args.interval)
            log = open_from_args(self.args).commitlog
            if max((s.start_offset + s.size for s in log.segments), default=0) > offset and \
                    _has_byte_at(log, offset):
                return log


def _has_byte_at(log, offset: int) -> bool:
    """Whether the commit log holds a non-zero first byte of a record at ``offset`` (its total size's high
    byte is zero for any size under 16 MiB, so the size field's four bytes are read)."""
    for seg in log.segments:
        if seg.start_offset <= offset < seg.start_offset + seg.size:
            with open(seg.path, "rb") as f:
                f.seek(offset - seg.start_offset)
                return f.read(4) not in (b"", b"\0\0\0\0")
    return False


class _ExportHelp(argparse.RawDescriptionHelpFormatter):
    """Help text with the column names filled in only when it is shown (they come with the columnar decoder)."""

    def _fill_text(self, text, width, indent):
        if "{columns}" in text:
            import textwrap

            from ..columnar import COLUMNS
            text = text.replace("{columns}", textwrap.fill(", ".join(COLUMNS) + ",", width - len(indent)))
        return super()._fill_text(text, width, indent)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 3600 seconds, not {text}")
    return value


def _column_list(text: str, *, more: tuple[str, ...] = ()) -> list[str]:
    from ..columnar import COLUMNS
    from ..walk.arrow import PROPERTY_PREFIX as PROPERTY_COLUMN
    names = [c.strip() for c in text.split(",") if c.strip()]
    known = (*COLUMNS, *more)
    unknown = [c for c in names if c not in known and not (c.startswith(PROPERTY_COLUMN) and c != PROPERTY_COLUMN)]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown column(s) {', '.join(unknown) or '(none given)'}; "
                                         f"the columns are {', '.join(known)}, and {PROPERTY_COLUMN}NAME for the "
                                         "value of property NAME")
    return names


def _message_column_list(text: str) -> list[str]:
    """``messages --columns``: the columnar schema's columns and the table's ``bodyBytes``."""
    return _column_list(text, more=(BODY_BYTES,))



def cmd_export(args: argparse.Namespace) -> int:
    fmt, out_path = args.to
    if fmt not in ("parquet", "jsonl", "csv"):
        sys.stderr.write(f"rmqformats: error: --to takes parquet, jsonl or csv, then OUT; not {fmt!r}\n")
        return 2
    if args.partition_by is not None and fmt != "parquet":
        sys.stderr.write("rmqformats: error: --partition-by needs --to parquet\n")
        return 2
    if args.compression is not None and fmt != "parquet":
        sys.stderr.write("rmqformats: error: --compression needs --to parquet\n")
        return 2
    refuse_empty_filters(args)
    from .sql import body_decoding
    decoder = body_decoding(args)
    from ..columnar import COLUMNS
    from ..export import export_batches, export_columns, prepare_output
    store = open_from_args(args)
    log = store.commitlog
    reads = store_paths(store)
    prepare_output(out_path, fmt, args.force, reads)
    columns = export_columns(fmt, args.columns)
    need = set(columns)
    # What the body decoder reads, where --columns leaves it out: read, decoded, then left out.
    body_read = decoder is not None and "body" not in need
    if body_read:
        need.add("body")
    if fmt == "parquet":
        need.add("segment")
        if args.partition_by:
            need.add(args.partition_by)
    prepare_filters(args, store)
    names = [c for c in COLUMNS if c in need] + [c for c in columns if c not in COLUMNS]  # then property columns
    from .pending import system_decoding
    system = system_decoding(args, store.root)
    shown = names
    if system is not None:  # what the system columns are decoded from, read and then left out
        from ..systopics.batches import NEEDED
        names = names + [c for c in NEEDED if c not in names]
    scan = log.batches(scan_columns(names, args), decompress=args.decompress, **_scan_filters(args))
    target = out_path
    if out_path == "-":
        target = _binary_stdout()
        if target is None:
            sys.stderr.write("rmqformats: error: stdout takes no bytes here; give a file\n")
            return 2
    import pyarrow as pa
    schema = pa.schema([scan.schema.field(n) for n in names])
    batches = filtered_batches(_batches_with_progress(scan, log.total_size, "export"), args, names)
    if system is not None:
        from ..systopics import system_batches, system_schema
        schema = system_schema(pa.schema([scan.schema.field(n) for n in shown]))
        batches = system_batches(batches, shown, decoding=system)
    if decoder is not None:
        batches, schema = decoder.batches(batches), decoder.schema(schema)
        if body_read:
            batches, schema = _without_body(batches), schema.remove(schema.get_field_index("body"))
    elif system is None and fmt == "parquet" and getattr(scan, "parallel", False) and not args.batch_filter \
            and list(scan.schema.names) == names:
        batches = scan  # Parquet from a walk on several cores: its workers write the segments' files
    sink = export_batches(batches, fmt, target, schema,
                          partition_by=args.partition_by, keep_segment="segment" in columns, force=args.force,
                          reads=reads, compression=args.compression or "zstd")
    where = "stdout" if out_path == "-" else out_path
    files = len(sink.files) if out_path != "-" else 0
    what = f"{sink.rows} message{'s' if sink.rows != 1 else ''}"
    if fmt == "parquet":
        sys.stderr.write(f"rmqformats: exported {what} to {files} Parquet file{'s' if files != 1 else ''} "
                         f"in {where}\n")
    else:
        sys.stderr.write(f"rmqformats: exported {what} to {where}\n")
    return report_end(scan, log)




def _without_body(batches):
    """The batches without their ``body`` column, one at a time."""
    for batch in batches:
        yield batch.drop_columns(["body"])
        batch = None  # not held while the next one is read


def add_commands(sub) -> None:
    """Add ``messages`` and ``export`` to the ``rmqformats`` subcommands."""
    sp = sub.add_parser("messages", help="list messages, filtered",
                        description="List the messages of the commit log, in commit-log order, as they are "
                                    "read: the table's column widths are set by its first 1000 rows; a later, "
                                    "longer topic, tags or keys value is cut in the middle with '…'.")
    add_store_args(sp)
    add_verify_crc(sp, False)
    add_message_filters(sp)
    one = sp.add_mutually_exclusive_group()
    one.add_argument("--offset", type=bodies.non_negative, help="only the message at this commit-log offset")
    one.add_argument("--msg-id", help="only the message with this message id: the broker's offset message id "
                                      "(store host and commit-log offset), or else the producer's (UNIQ_KEY, "
                                      "what SendResult.getMsgId() returns), looked up by key in the index")
    sp.add_argument("--limit", type=bodies.non_negative, help="stop after this many messages")
    sp.add_argument("--columns", type=_message_column_list,
                    help="comma-separated column names, shown in that order (table and jsonl): any of the "
                         "columns of `export --columns` (commitLogOffset, topic, queueId, queueOffset, "
                         "storeTimestamp, tags, keys, uniqKey, priority, liteTopic, properties, msgId, body, …), "
                         "bodyBytes (the body's length, as the table shows it), and property.NAME (the value of "
                         "property NAME, empty where a message has none)")
    sp.add_argument("--count", nargs="?", const="total", choices=["total", "topic", "queue"],
                    help="print the number of matching messages instead of them: in total (the default), or "
                         "per topic or per topic queue (jsonl: one JSON line per count)")
    bodies.add_body_args(sp)
    add_salvage(sp)
    add_jobs(sp)
    from .sql import add_body_decoder
    add_body_decoder(sp)
    from .pending import add_system_args
    add_system_args(sp)
    sp.add_argument("--follow", action="store_true",
                    help="with --live, as tail -f: at the end of the data, keep reading the store for new "
                         "messages every --interval seconds until Ctrl-C (exit status 130, every line printed "
                         "whole)")
    sp.add_argument("--interval", type=_seconds, default=None, metavar="SECONDS",
                    help="with --follow, seconds between reads of the store (default: 1)")
    sp.set_defaults(func=cmd_messages)
    sp = sub.add_parser(
        "export", help="write the messages, filtered, to Parquet, JSON Lines or CSV",
        formatter_class=_ExportHelp,
        description="Write the messages of the commit log to files, streaming (memory stays bounded).\n\n"
                    "parquet  OUT is a folder: one Parquet file per commit-log segment, named after it\n"
                    "         (00000000000000000000.parquet; none for a segment without selected messages).\n"
                    "         --partition-by topic writes topic=<URL-escaped topic>/<segment>.parquet without\n"
                    "         the topic column (Hive-style; pyarrow.dataset and pq.read_table read it back).\n"
                    "         The folder is written under a temporary name and appears whole, ending with an\n"
                    "         empty _SUCCESS file, only when complete.\n"
                    "jsonl    OUT is a file or -: the lines of 'messages --format jsonl'.\n"
                    "csv      OUT is a file or -: a header, then one row per message; columns CSV cannot\n"
                    "         hold are text: properties a JSON object, keys joined by spaces, body base64;\n"
                    "         timestamps are written as 2026-11-21 09:53:00.123Z (UTC), null as an empty field.\n\n"
                    "Columns by default: jsonl those of 'messages --format jsonl' (priority and liteTopic\n"
                    "only on the 5.4+ priority and 5.5+ lite-topic messages that have them); parquet and csv\n"
                    "also tags, keys and uniqKey. --columns picks any of:\n{columns}\n"
                    "and property.NAME: the value of property NAME (null where a message has none), after\n"
                    "the others.\n\n"
                    "OUT is locked while it is written (a second export to it exits 2: target busy); on an\n"
                    "error or Ctrl-C nothing is left but what was there before.")
    sp.add_argument("store", nargs="?", help="store root, commitlog/ folder or one segment file")
    sp.add_argument("--sample", action="store_true", help="use the sample store bundled with the package")
    add_commitlog_arg(sp)
    sp.add_argument("--to", required=True, nargs=2, metavar=("{parquet,jsonl,csv}", "OUT"),
                    help="output format and where to write it (- for stdout with jsonl and csv)")
    add_verify_crc(sp, False)
    add_message_filters(sp)
    sp.add_argument("--columns", type=_column_list, help="comma-separated column names (written in schema order, "
                                                           "then the property.NAME columns in the order given)")
    sp.add_argument("--no-decompress", dest="decompress", action="store_false",
                    help="write compressed bodies as stored (default: decompressed by SYSFLAG)")
    sp.add_argument("--partition-by", choices=["topic"], help="parquet: one folder per topic")
    from ..export import PARQUET_CODECS
    sp.add_argument("--compression", choices=PARQUET_CODECS,
                    help="parquet: the files' codec (default: zstd, the smallest files). Writing Parquet costs more than "
                         "reading the store: snappy and lz4 take about a tenth less CPU for files 1.7 times as "
                         "large, none a third less for files 4 times as large")
    add_jobs(sp)
    sp.add_argument("--force", action="store_true",
                    help="overwrite a non-empty OUT file (a symbolic link is replaced, never followed), or "
                         "replace an earlier export in the OUT folder")
    add_salvage(sp)
    from .sql import add_body_decoder
    add_body_decoder(sp)
    from .pending import add_system_args
    add_system_args(sp)
    sp.set_defaults(func=cmd_export)
