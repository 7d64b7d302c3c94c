"""Equality on record keys and secondary-indexed columns, answered by Hudi's indexes.

For a leaf ``key = v`` / ``key IN (...)`` (and their negations) on the table's record key, the metadata table's
`record_index` says which file group holds each key: every other file group holds none of them. For
``col = v`` / ``col IN (...)`` on a column with a secondary index (`.hoodie/.index_defs`), the index gives the
record keys holding those values, then the record index their file groups. Without a record index, the bloom
filter in each base parquet file's footer (Hudi writes one over the record keys) says which files definitely
lack a key — for slices without log files only (a log may hold the key).

Each answer is a per-slice mask the vectorized evaluator reads through the statistics contract
(`StatsTable.answering`, `StatsTable.may_contain`): True where the
slice may hold a matching row. An index is used only when it is complete: the metadata table's partition is
ready and the metadata table covers every completed instant of the data timeline. When a write on the timeline
may have written a key twice (an INSERT — Spark SQL's INSERT INTO — does not look keys up, while Hudi's record
index holds one location per key: pruning by it would lose the older copy), the record index and secondary indexes
are used only where the latest slices' merged rows (base files, and on merge-on-read their committed log blocks)
confirm them (:mod:`hive_bridge.pruning.key_check`); slices that check does not read (a base file that is not
parquet) are kept by every index answer. Keys are
compared as Hudi writes them (string and integer key columns of a single-field key generator); anything else
stays unknown.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from hive_bridge.errors import MetadataTableError
from hive_bridge.filters.expression import HudiExpression, Op, Predicate
from hive_bridge.formats.bloom import BloomFilter
from hive_bridge.layout.fsview import BaseFile, FileSlice
from hive_bridge.pruning.key_check import check_key_indexes
from hive_bridge.pruning.record_keys import (
    COMPLEX_KEYGENS,
    RECORD_KEY_COLUMN,
    encoding_matches,
    with_record_keys,
)
from hive_bridge.table.table import HudiTable

_EQUALITY = {Op.EQ, Op.NULL_SAFE_EQ, Op.IN, Op.NOT_EQ, Op.NOT_IN}
#: key generators whose record key is the key column's value as a string (one field)
_SIMPLE_KEYGENS = ("SimpleKeyGenerator", "NonpartitionedKeyGenerator", "TimestampBasedKeyGenerator",
                   "SimpleAvroKeyGenerator", "NonpartitionedAvroKeyGenerator", "TimestampBasedAvroKeyGenerator")
_SIMPLE_TYPES = ("SIMPLE", "NON_PARTITION", "TIMESTAMP")


def _key_text(value: Any) -> str | None:
    """A literal as Hudi writes it into a record key (strings and integers only)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    return None


@dataclass
class IndexAnswer:
    """One leaf's answer: the mask over slices, and which index gave it (for explain)."""

    mask: np.ndarray
    source: str


@dataclass
class KeyIndexes:
    """The key indexes of one table, for one set of slices."""

    table: HudiTable
    slices: Sequence[FileSlice]
    record_key: str | None = None
    #: the key fields of a complex key generator whose ``field:value,...`` keys the table's files confirm
    complex_fields: list[str] | None = None
    secondary: dict[str, str] = field(default_factory=dict)  # column -> secondary index partition
    problems: list[str] = field(default_factory=list)
    #: after a write that may have repeated a key: the slices the check of the indexes against the files did not
    #: read, which every index answer keeps; None when the timeline shows no such write
    unchecked: np.ndarray | None = None
    #: the rows that check read, and the log blocks among them
    checked_rows: int = 0
    checked_log_blocks: int = 0
    _mdt: Any = None
    _blooms: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def open(cls, table: HudiTable, slices: Sequence[FileSlice], *, latest_state: bool = True) -> KeyIndexes:
        """``latest_state=False``: the slices are an earlier state of the table (time travel): the record index
        and secondary indexes, which map keys to the file groups of the latest state, are not used; the bloom
        filters in base files' footers (of the very files read) are."""
        out = cls(table, slices)
        props = table.properties
        fields = props.record_key_fields
        keygen = props.raw.get("hoodie.table.keygenerator.class", "") or ""
        keygen_type = props.raw.get("hoodie.table.keygenerator.type", "") or ""
        if len(fields) == 1 and (keygen.endswith(_SIMPLE_KEYGENS) or keygen_type.upper() in _SIMPLE_TYPES
                                 or (not keygen and not keygen_type)):
            out.record_key = fields[0]
        elif len(fields) > 1 and (keygen.endswith(COMPLEX_KEYGENS) or keygen_type.upper() == "COMPLEX"):
            sample = _sample_key(table, slices)
            if sample is not None and encoding_matches(sample, fields):
                out.complex_fields = list(fields)
            else:
                out.problems.append(f"complex record keys not formed: no base file confirms the "
                                    f"'field:value,...' keys of {', '.join(fields)}" +
                                    (f" (a key reads {sample[:80]!r})" if sample is not None else ""))
        ready = set(props.metadata_partitions)
        if "record_index" in ready and not latest_state:
            out.problems.append("record index not used: it locates keys in the latest state, not in an earlier one")
        elif "record_index" in ready:
            mdt = table.metadata_table()
            if "record_index" not in mdt.status.partitions:
                out.problems.append("record index not usable: " + "; ".join(mdt.status.problems))
            elif mdt.status.lagging_instants:
                out.problems.append(f"record index not used: the metadata table lags the data timeline "
                                    f"({len(mdt.status.lagging_instants)} instants)")
            else:
                secondary = {column: name for name, column in _secondary_indexes(table).items()
                             if name in mdt.status.partitions}
                duplicates = _duplicate_keys_possible(table)
                if duplicates is None:
                    out._mdt = mdt
                    out.secondary = secondary
                else:
                    # a key may have been written twice: the indexes are used only where the files confirm them
                    check = check_key_indexes(table, slices, mdt, secondary)
                    if check.record_index:
                        out._mdt = mdt
                        out.secondary = check.secondary
                        out.unchecked = check.unchecked
                        out.checked_rows = check.rows
                        out.checked_log_blocks = check.log_blocks
                    else:
                        out.problems.append(f"record index not used: {duplicates}")
                    out.problems += check.problems
        return out

    def with_derived_keys(self, expression: HudiExpression) -> HudiExpression:
        """``expression`` with the record keys its conjunctions fix on a complex-key table
        (:func:`hive_bridge.pruning.record_keys.with_record_keys`); unchanged on any other table."""
        if not self.complex_fields:
            return expression
        return with_record_keys(expression, self.complex_fields)

    def may_answer(self, expression: HudiExpression) -> bool:
        """Whether some leaf of ``expression`` is an equality an index could answer (cheap: no index read)."""
        return any(isinstance(node, Predicate) and node.op in _EQUALITY and node.literals and node.exact_values
                   and (node.column == self.record_key or node.column in self.secondary or node.derived)
                   for node in expression.walk())

    def answer(self, leaf: Predicate, candidates: np.ndarray | None = None) -> IndexAnswer | None:
        """The mask for one leaf, None when no index answers it. ``candidates``: the slices still in question
        (those the statistics keep); bloom filters are read for those only, the others stay "may match"."""
        if leaf.op not in _EQUALITY or not leaf.literals or None in leaf.literals or not leaf.exact_values:
            return None  # (a literal that may be a double matches more values than itself)
        column = leaf.column
        if leaf.derived and column == RECORD_KEY_COLUMN:
            return self._by_keys([str(v) for v in leaf.literals], "record index", candidates)
        if column == self.record_key:
            texts = [_key_text(v) for v in leaf.literals]
            keys = [k for k in texts if k is not None]
            if len(keys) != len(texts):
                return None
            return self._by_keys(keys, "record index", candidates)
        index = self.secondary.get(column)
        if index is not None and self._mdt is not None:
            try:
                found = self._mdt.secondary_index(index, list(leaf.literals))
            except MetadataTableError as exc:
                self.problems.append(str(exc))
                return None
            record_keys = sorted({str(k) for ks in found.values() for k in ks if k is not None})
            return self._by_keys(record_keys, f"secondary index {index} + record index", candidates)
        return None

    def _by_keys(self, keys: list[str], source: str, candidates: np.ndarray | None) -> IndexAnswer | None:
        if self._mdt is not None:
            try:
                located = self._mdt.record_index(keys)
            except MetadataTableError as exc:
                self.problems.append(str(exc))
                return None
            groups = {loc.file_id for loc in located.values()}
            mask = np.array([s.file_id in groups for s in self.slices], dtype=bool)
            if self.unchecked is not None:
                checked = f"checked against {self.checked_rows} rows of the files" + \
                    (f" ({self.checked_log_blocks} log blocks merged)" if self.checked_log_blocks else "")
                if self.unchecked.any():
                    mask |= self.unchecked
                    checked += f"; {int(self.unchecked.sum())} slices not checked kept"
                source += f" ({checked})"
            return IndexAnswer(mask, source)
        if source != "record index":
            return None
        return self._by_bloom(keys, candidates)

    def _by_bloom(self, keys: list[str], candidates: np.ndarray | None) -> IndexAnswer | None:
        """Base files' own bloom filters, for slices without log files; every other slice may match. Keys of a
        complex key generator are looked up only in files whose own keys (``hoodie_min_record_key``) have the
        ``field:value,...`` form (a file written with another encoding says nothing of these keys)."""
        mask = np.ones(len(self.slices), dtype=bool)
        used = 0
        positions = range(len(self.slices)) if candidates is None else np.flatnonzero(candidates).tolist()
        for i in positions:
            s = self.slices[i]
            if s.log_files or s.base_file is None or not s.base_file.path.endswith(".parquet"):
                continue
            path = s.base_file.full_path
            bloom = self._blooms.get(path, False)
            if bloom is False:
                try:
                    footer = _footer_entries(self.table, s.base_file)
                    bloom = BloomFilter.from_parquet_metadata(footer)
                    if bloom is not None and self.complex_fields:
                        own = footer.get(b"hoodie_min_record_key")
                        if own is None or not encoding_matches(own.decode("utf-8", "replace"), self.complex_fields):
                            bloom = None
                except Exception:  # an unreadable footer or filter: no answer for this file
                    bloom = None
                self._blooms[path] = bloom
            if bloom is None:
                continue
            used += 1
            if not any(bloom.might_contain(k) for k in keys):
                mask[i] = False
        return IndexAnswer(mask, "bloom filters") if used else None

    def masks(self, expression: HudiExpression,
              candidates: np.ndarray | None = None) -> dict[Predicate, IndexAnswer]:
        out: dict[Predicate, IndexAnswer] = {}
        for node in expression.walk():
            if isinstance(node, Predicate) and node not in out:
                a = self.answer(node, candidates)
                if a is not None:
                    out[node] = a
        return out


#: write operations that never give a key a second location: upserts and deletes look keys up in the index,
#: compaction and clustering rewrite the records they have
_KEY_PRESERVING = frozenset({"UPSERT", "UPSERT_PREPPED", "DELETE", "DELETE_PREPPED", "COMPACT", "LOG_COMPACT",
                             "CLUSTER", "DELETE_PARTITION"})


def _duplicate_keys_possible(table: HudiTable) -> str | None:
    """Why a key may live in more than one file group (None when every write kept keys unique).

    Hudi's record index holds one location per key. An INSERT or BULK_INSERT (what Spark SQL's INSERT INTO
    does by default), an INSERT_OVERWRITE or an unknown operation writes records without looking their keys up,
    so the same key can be written twice (both fixture tables written with INSERT INTO hold such a key: the
    record index names only the newer copy, and pruning by it would lose the older row). Instants archived
    out of the active timeline cannot be checked."""
    timeline = table.timeline
    storage = table.storage
    history = [storage.join(table.base_path, ".hoodie", "archived"),
               storage.join(table.base_path, ".hoodie", "timeline", "history")]
    for folder in history:
        if storage.has_files(folder):
            return f"instants were archived ({folder}): their write operations cannot be checked"
    for instant in timeline.completed_writes:
        try:
            op = timeline.read_metadata(instant).get("operationType")
        except Exception:  # unreadable metadata: cannot tell
            op = None
        if op not in _KEY_PRESERVING:
            return (f"instant {instant.timestamp} wrote with operation {op or 'unknown'}, which does not keep keys "
                    f"unique (the record index holds one location per key)")
    return None


def _footer(table: HudiTable, base: BaseFile) -> Any:
    storage = table.storage
    return pq.read_metadata(base.full_path) if storage.is_local else \
        storage.parquet_metadata(base.full_path, base.size)


def _footer_entries(table: HudiTable, base: BaseFile) -> dict[bytes, bytes]:
    """The key-value entries of a parquet base file's footer (Hudi's bloom filter and key range among them), read
    through the table's storage. Raises what the read raises."""
    return dict(_footer(table, base).metadata or {})


def _sample_key(table: HudiTable, slices: Sequence[FileSlice]) -> str | None:
    """A record key the table holds: the first parquet base file's ``hoodie_min_record_key`` footer entry
    (Hudi writes it beside the bloom filter), or else the least ``_hoodie_record_key`` of its first row group's
    statistics; None when neither is there or the footer cannot be read."""
    for s in slices:
        base = s.base_file
        if base is None or not base.path.endswith(".parquet"):
            continue
        try:
            md = _footer(table, base)
            raw = (md.metadata or {}).get(b"hoodie_min_record_key")
            if raw:
                return str(raw.decode("utf-8", "replace"))
            names = md.schema.names
            if RECORD_KEY_COLUMN not in names or not md.num_row_groups:
                return None
            stats = md.row_group(0).column(names.index(RECORD_KEY_COLUMN)).statistics
            low = stats.min if stats is not None and stats.has_min_max else None
        except Exception:  # an unreadable footer: try no other file, the keys stay unformed
            return None
        return low if isinstance(low, str) else None
    return None


def _secondary_indexes(table: HudiTable) -> dict[str, str]:
    """Secondary index partition -> the one column it indexes (from the table's index definitions)."""
    rel = table.properties.raw.get("hoodie.table.index.defs.path") or ".hoodie/.index_defs/index.json"
    path = table.storage.join(table.base_path, rel)
    try:
        defs = json.loads(table.storage.read_bytes(path).decode("utf-8")).get("indexDefinitions", {})
    except (OSError, ValueError, AttributeError):
        return {}
    out: dict[str, str] = {}
    for name, d in defs.items() if isinstance(defs, dict) else []:
        if not isinstance(d, dict) or d.get("indexType") != "secondary_index":
            continue
        fields = d.get("sourceFields") or []
        if len(fields) == 1 and (d.get("indexFunction") in (None, "identity")):
            out[name] = fields[0]
    return out


__all__ = ["IndexAnswer", "KeyIndexes"]
