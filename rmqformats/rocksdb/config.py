"""RocksDB config databases, read into the same models as the ``config/`` JSON files.

Two layouts (see ``formats/rocketmq_rocksdb_config_key.ksy``):

* v1 (5.1.4+, ``storeType=defaultRocksDB``): one database per table,
  ``config/topics/``, ``config/subscriptionGroups/``, ``config/consumerOffsets/``;
  key = the UTF-8 name (``topic@group`` for offsets), value = the bean's
  fastjson text; from 5.3.1 the ``kvDataVersion`` column family holds the
  ``DataVersion`` and ``forbidden`` the forbidden maps of groups.
* single (5.3.4+, ``useSingleRocksDBForAllConfigs=true``, apache/rocketmq
  PR #9774): one database ``config/metadata/`` holding the three v1 tables in
  column families of their own (``topic``, ``subscriptionGroup``,
  ``consumerOffset``, keys and values as in v1), each with its data version
  in ``<table>Version`` and the groups' forbidden maps in ``forbidden``
  (``formats/releases.yaml``, kind ``rocksdb_config_metadata``). The key of
  the data version in the ``*Version`` column families was not read in the
  source; it is taken to be v1's ``kvDataVersionKey``.
* v2 (5.3.2+, ``configManagerVersion=v2``): one database ``config/rdb/`` whose
  binary keys name a table and a record; values are a serialization type and
  JSON, three longs (data version) or one long (offset).

Each database becomes a :class:`~rmqformats.config.ConfigFile` whose ``data``
is the document the equivalent JSON file would hold (``topicConfigTable``,
``subscriptionGroupTable`` + ``forbiddenTable``, ``offsetTable``,
``dataVersion``), validated against the same JSON Schema and modelled by
the same classes, so ``TopicsFile``, ``SubscriptionGroupsFile`` and
``ConsumerOffsetsFile`` compare equal to those of the JSON files.
"""

from __future__ import annotations

import os
from typing import Any, Iterator

import construct
import numpy as np

from ..config import ConfigFile
from ..config.fastjson import FastjsonSyntaxError, format_path, parse
from ..config.models import model_for
from ..config.schema import check
from ..errors import RocksDBError
from ..generated.construct import rocketmq_rocksdb_config_key as _key_spec
from ..generated.construct import rocketmq_rocksdb_config_record as _record_spec
from ..generated.layouts import rocketmq_rocksdb_config_data_version as _dv_layout
from ..generated.layouts import rocketmq_rocksdb_config_offset as _offset_layout
from ..units import unit_dtype
from .db import ReadOnlyDB, is_rocksdb

#: Column families of a v1 database (5.3.1+).
CF_DATA_VERSION = "kvDataVersion"
CF_FORBIDDEN = "forbidden"
DATA_VERSION_KEY = b"kvDataVersionKey"
#: v1 database folder under ``config/`` → (schema, table key of the JSON document).
V1_TABLES = {"topics": ("topics", "topicConfigTable"),
             "subscriptionGroups": ("subscriptionGroup", "subscriptionGroupTable"),
             "consumerOffsets": ("consumerOffset", "offsetTable")}
#: v2 table ids → (schema, table key of the JSON document).
V2_TABLES = {"topic": ("topics", "topicConfigTable"),
             "subscription_group": ("subscriptionGroup", "subscriptionGroupTable"),
             "consumer_offset": ("consumerOffset", "offsetTable")}
V2_FOLDER = "rdb"
#: The single database of useSingleRocksDBForAllConfigs: record column family → (schema, table key,
#: data-version column family, forbidden column family).
METADATA_FOLDER = "metadata"
METADATA_TABLES = {"topic": ("topics", "topicConfigTable", "topicVersion", None),
                   "subscriptionGroup": ("subscriptionGroup", "subscriptionGroupTable", "subscriptionGroupVersion",
                                         CF_FORBIDDEN),
                   "consumerOffset": ("consumerOffset", "offsetTable", "consumerOffsetVersion", None)}

_DV_DTYPE = unit_dtype(_dv_layout.DATA_VERSION_VALUE_RUNS, _dv_layout.DATA_VERSION_VALUE_SEQ)
_OFFSET_DTYPE = unit_dtype(_offset_layout.OFFSET_VALUE_RUNS, _offset_layout.OFFSET_VALUE_SEQ)
_KEY = _key_spec.rocketmq_rocksdb_config_key
_RECORD = _record_spec.rocketmq_rocksdb_config_record


def _json(db: ReadOnlyDB, cf: str, key: bytes, value: bytes) -> Any:
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RocksDBError(db.path, f"value is not UTF-8 at byte {exc.start}", column_family=cf, key=key,
                           key_text=key.decode("utf-8", "replace")) from None
    try:
        return parse(text).value
    except FastjsonSyntaxError as exc:
        raise RocksDBError(db.path, f"value is not JSON: {exc.reason} at character {exc.pos}"
                           f" ({format_path(exc.path)})", column_family=cf, key=key,
                           key_text=key.decode("utf-8", "replace")) from None


def _name(db: ReadOnlyDB, cf: str, key: bytes) -> str:
    try:
        return key.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RocksDBError(db.path, f"key is not UTF-8 at byte {exc.start}", column_family=cf, key=key) from None


def _modelled(db: ReadOnlyDB, label: str, schema: str, doc: dict, keys: dict[str, tuple[str, bytes]],
              source: str, warnings: list[str]) -> ConfigFile:
    """Validate the assembled document and model it; problems name the database, column family and key."""
    problems, unknown = check(schema, doc)
    if problems:
        first = problems[0]
        record = first.path[1] if len(first.path) > 1 else None
        cf, key = keys.get(record, ("default", None)) if isinstance(record, str) else ("default", None)
        raise RocksDBError(db.path, f"{first.reason} ({format_path(first.path)})", column_family=cf, key=key,
                           key_text=record if key is not None else None)
    unknown_paths = tuple(format_path(p) for p in unknown)
    if unknown_paths:
        warnings.append(f"{len(unknown_paths)} key(s) unknown to the {schema} schema kept")
    return ConfigFile(label, db.path, source, schema, "utf-8", doc, model_for(schema, doc), b"",
                      unknown_paths, tuple(warnings))


def read_v1(path: str | os.PathLike[str]) -> ConfigFile:
    """One v1 database (``config/topics``, ``config/subscriptionGroups`` or ``config/consumerOffsets``)."""
    path = os.fspath(path)
    folder = os.path.basename(os.path.normpath(path))
    if folder not in V1_TABLES:
        raise RocksDBError(path, f"not a v1 config database (one of {', '.join(V1_TABLES)})")
    schema, table_key = V1_TABLES[folder]
    with ReadOnlyDB(path) as db:
        forbidden_cf = CF_FORBIDDEN if schema == "subscriptionGroup" else None
        return _read_table(db, f"{folder} (RocksDB v1)", "rocksdb-v1", schema, table_key, "default",
                           CF_DATA_VERSION, forbidden_cf)


def _read_table(db: ReadOnlyDB, label: str, source: str, schema: str, table_key: str, record_cf: str,
                version_cf: str, forbidden_cf: str | None) -> ConfigFile:
    """One table kept as v1 keeps it: a name → bean JSON per record in ``record_cf``, the data version in
    ``version_cf``, the groups' forbidden maps in ``forbidden_cf``."""
    table: dict[str, Any] = {}
    keys: dict[str, tuple[str, bytes]] = {}
    doc: dict[str, Any] = {}
    for key, value in db.iterate(record_cf):
        name = _name(db, record_cf, key)
        body = _json(db, record_cf, key, value)
        keys[name] = (record_cf, key)
        if table_key == "offsetTable":
            if not isinstance(body, dict) or not isinstance(body.get("offsetTable"), dict):
                raise RocksDBError(db.path, "value has no offsetTable object", column_family=record_cf,
                                   key=key, key_text=name)
            body = body["offsetTable"]
        table[name] = body
    doc[table_key] = table
    if db.has_column_family(version_cf):
        stamp = db.get(version_cf, DATA_VERSION_KEY)
        if stamp:
            doc["dataVersion"] = _json(db, version_cf, DATA_VERSION_KEY, stamp)
    if forbidden_cf is not None and db.has_column_family(forbidden_cf):
        forbidden = {}
        for key, value in db.iterate(forbidden_cf):
            name = _name(db, forbidden_cf, key)
            forbidden[name] = _json(db, forbidden_cf, key, value)
            keys.setdefault(name, (forbidden_cf, key))
        doc["forbiddenTable"] = forbidden  # the manager's (possibly empty) map, as its JSON shows it
    return _modelled(db, label, schema, dict(sorted(doc.items())), keys, source, [])


def read_metadata(path: str | os.PathLike[str], *, schemas: tuple[str, ...] | None = None) -> list[ConfigFile]:
    """The tables of the single database ``config/metadata`` (useSingleRocksDBForAllConfigs, 5.3.4+) whose
    record column family exists: topics, subscription groups, consumer offsets."""
    path = os.fspath(path)
    out = []
    with ReadOnlyDB(path) as db:
        for cf, (schema, table_key, version_cf, forbidden_cf) in METADATA_TABLES.items():
            if (schemas is not None and schema not in schemas) or not db.has_column_family(cf):
                continue
            out.append(_read_table(db, f"metadata {cf} (RocksDB single)", "rocksdb-metadata", schema, table_key,
                                   cf, version_cf, forbidden_cf))
    return out


def read_v2(path: str | os.PathLike[str]) -> list[ConfigFile]:
    """The tables of a v2 database ``config/rdb``: topics, subscription groups, consumer offsets.

    Pull offsets (the broker's own) have no JSON file and are counted in a warning.
    """
    path = os.fspath(path)
    with ReadOnlyDB(path) as db:
        docs: dict[str, dict[str, Any]] = {t: {} for t in V2_TABLES}
        keys: dict[str, dict[str, tuple[str, bytes]]] = {t: {} for t in V2_TABLES}
        pulls = 0
        for key, value in db.iterate("default"):
            try:
                k = _KEY.parse(key)
            except (construct.ConstructError, UnicodeDecodeError) as exc:
                raise RocksDBError(db.path, f"not a config key: {str(exc).splitlines()[-1]}",
                                   column_family="default", key=key) from None
            table = str(k.table_id)
            if table == "pull_offset":
                pulls += 1
                continue
            if table not in V2_TABLES:
                raise RocksDBError(db.path, f"unknown table id {int(k.table_id)}", column_family="default", key=key)
            if str(k.record_prefix) == "data_version":
                if len(value) == _DV_DTYPE.itemsize:  # other lengths are ignored by the broker too
                    row = np.frombuffer(value, _DV_DTYPE)[0]
                    docs[table]["dataVersion"] = {"counter": int(row["counter"]),
                                                  "stateVersion": int(row["state_version"]),
                                                  "timestamp": int(row["timestamp"])}
                continue
            if str(k.record_prefix) != "data":
                raise RocksDBError(db.path, f"unknown record prefix {int(k.record_prefix)}",
                                   column_family="default", key=key)
            if table == "consumer_offset":
                o = k.offset
                if len(value) != _OFFSET_DTYPE.itemsize:
                    raise RocksDBError(db.path, f"value is {len(value)} bytes, expected {_OFFSET_DTYPE.itemsize}",
                                       column_family="default", key=key,
                                       key_text=f"{o.topic}@{o.group}/{o.queue_id}")
                name = f"{o.topic}@{o.group}"
                docs[table].setdefault("offsetTable", {}).setdefault(name, {})[o.queue_id] = \
                    int(np.frombuffer(value, _OFFSET_DTYPE)[0][0])
                keys[table].setdefault(name, ("default", key))
                continue
            name = k.named.name
            try:
                rec = _RECORD.parse(value)
            except construct.ConstructError as exc:
                raise RocksDBError(db.path, f"value: {str(exc).splitlines()[-1]}", column_family="default",
                                   key=key, key_text=name) from None
            if str(rec.serialization_type) != "json":
                raise RocksDBError(db.path, f"serialization type {int(rec.serialization_type)} is not JSON",
                                   column_family="default", key=key, key_text=name)
            table_key = V2_TABLES[table][1]
            docs[table].setdefault(table_key, {})[name] = _json(db, "default", key, rec.payload)
            keys[table][name] = ("default", key)
        out = []
        for table, doc in docs.items():
            if not doc:
                continue
            schema, table_key = V2_TABLES[table]
            doc.setdefault(table_key, {})
            warnings = [f"{pulls} pull offset(s) not shown"] if pulls and table == "consumer_offset" else []
            out.append(_modelled(db, f"rdb {table} (RocksDB v2)", schema, dict(sorted(doc.items())),
                                 keys[table], "rocksdb-v2", warnings))
        return out


def metadata_records(path: str | os.PathLike[str]) -> Iterator[tuple[str, str, Any]]:
    """``(column family, key, value)`` of every record of ``config/metadata``: the tables, their data versions
    and the forbidden maps, keys as text, values as the JSON they hold (for ``dump``)."""
    cfs = [name for cf, (_, _, version_cf, _) in METADATA_TABLES.items() for name in (cf, version_cf)]
    with ReadOnlyDB(os.fspath(path)) as db:
        for cf in [*cfs, CF_FORBIDDEN]:
            if db.has_column_family(cf):
                for key, value in db.iterate(cf):
                    yield cf, _name(db, cf, key), _json(db, cf, key, value)


def read_rocksdb_configs(config_dir: str | os.PathLike[str], *,
                         schemas: tuple[str, ...] | None = None) -> list[ConfigFile]:
    """Every RocksDB config database under ``config_dir``: v1 tables, then the v2 ``rdb`` tables.

    ``schemas`` keeps only the tables of those schemas (``consumerOffset`` …);
    the v1 databases of other tables are then not opened.
    """
    config_dir = os.fspath(config_dir)
    out = []
    for folder, (schema, _) in V1_TABLES.items():
        path = os.path.join(config_dir, folder)
        if (schemas is None or schema in schemas) and is_rocksdb(path):
            out.append(read_v1(path))
    path = os.path.join(config_dir, METADATA_FOLDER)
    if is_rocksdb(path):
        out += read_metadata(path, schemas=schemas)
    path = os.path.join(config_dir, V2_FOLDER)
    if is_rocksdb(path):
        out += [f for f in read_v2(path) if schemas is None or f.schema in schemas]
    return out


def effective_committed(config_dir: str | os.PathLike[str],
                        json_offsets: dict[tuple[str, str, int], int]) -> tuple[dict[tuple[str, str, int], int], str]:
    """The committed offsets a broker would load, and where from.

    ``json_offsets`` are those of ``consumerOffset.json`` ((topic, group,
    queue id) → offset). ``config/rdb`` (v2) wins when it holds offsets; else
    the single ``config/metadata`` database (useSingleRocksDBForAllConfigs,
    into which the broker migrates the v1 tables), else the v1
    ``consumerOffsets`` database, unless ``consumerOffset.json`` has the
    larger data-version counter (the v1 manager's ``merge`` then loads the
    JSON file); else the JSON file.
    """
    rocks = read_rocksdb_configs(config_dir, schemas=("consumerOffset",))
    for source in ("rocksdb-v2", "rocksdb-metadata", "rocksdb-v1"):
        found = [f for f in rocks if f.source == source and f.model is not None]
        if not found:
            continue
        kv = found[0].model
        if source in ("rocksdb-v1", "rocksdb-metadata") and json_offsets:
            from ..config import read_config_file  # only here: the data version of the JSON file
            model = read_config_file(os.path.join(os.fspath(config_dir), "consumerOffset.json")).model
            def counter(m: Any) -> int:
                return m.data_version.counter if m is not None and m.data_version is not None else 0
            if counter(model) > counter(kv):
                return json_offsets, "consumerOffset.json"
        return kv.offsets, found[0].name
    return json_offsets, "consumerOffset.json"


def config_databases(config_dir: str | os.PathLike[str]) -> list[dict]:
    """The RocksDB config databases under ``config_dir`` (not opened): folder, path and layout."""
    config_dir = os.fspath(config_dir)
    out = []
    for folder, layout in [*((f, "v1") for f in V1_TABLES), (METADATA_FOLDER, "single"), (V2_FOLDER, "v2")]:
        path = os.path.join(config_dir, folder)
        if is_rocksdb(path):
            out.append({"folder": folder, "path": path, "layout": layout})
    return out
