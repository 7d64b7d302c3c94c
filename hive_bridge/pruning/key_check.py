"""Whether Hudi's record index and secondary indexes hold for a table's current files, checked against the files.

Hudi's record index holds one location per record key, a secondary index one ``value$key`` entry per pair. A write
that does not look keys up first (INSERT, BULK_INSERT, INSERT_OVERWRITE: what Spark SQL's INSERT INTO does) can
write a key a second time, in another file group: the record index then names only the newer copy, and later
updates or deletes of that key, made where the index points, leave the older copy behind with entries that no
longer say where it is. The history cannot tell (it shows that a key *may* have been written twice, not whether
one was); the files can.

:func:`check_key_indexes` reads the record keys (``_hoodie_record_key``) and the secondary-indexed columns of
every latest slice's merged rows (:mod:`hive_bridge.pruning.slice_keys`: a base file's rows; on merge-on-read,
the base file's rows with the records and deletes of the slice's committed log blocks applied), and checks, for
every row, that the record index puts its key in the row's own file group and that each secondary index holds
the row's ``value$key`` pair. When every row passes, the indexes are exact for those slices: a value's keys are
all in the secondary index and every key is located where its row lives (a key written twice fails: one of its
two rows is elsewhere than the index says; a log update that moved a value fails unless the index moved it too;
a key inserted into a log file only must be in the record index). A secondary index whose column type has no
plain text form here (floating point, decimals, timestamps, nested types) is not checked and not used; a failed
check, or a base or log file that does not read, leaves the record index unused. Slices not checked
(``unchecked``: a base file that is not parquet; slices with log files of a table whose merge does not keep whole
records) are kept by every index answer.

At most :data:`MAX_BYTES` of base and log files are read. The answer is kept per table state (the table's path,
its latest completed instant and the slices' files), so a planner that opens the indexes again for the same
state does not read the files again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from hive_bridge.errors import MetadataTableError
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.layout.log_blocks import block_filter
from hive_bridge.mdt.keys import secondary_value_text
from hive_bridge.pruning.slice_keys import MergeRule, SliceUnreadable, merge_rule, slice_keys
from hive_bridge.table.table import HudiTable

__all__ = ["KeyCheck", "check_key_indexes"]

#: at most this many bytes of base and log files are read for a check (a larger table keeps its indexes unused
#: after a write that may have repeated a key)
MAX_BYTES = 2 << 30
_CACHE: OrderedDict[tuple[Any, ...], KeyCheck] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 16


@dataclass
class KeyCheck:
    """The outcome: whether the record index holds (``record_index``), the secondary indexes that hold
    (column -> partition), the slices not checked (``unchecked``: True where an index answer must keep the
    slice), and why anything failed."""

    record_index: bool
    secondary: dict[str, str] = field(default_factory=dict)
    unchecked: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    #: (key, value) rows checked, log blocks applied and bytes of log files read
    rows: int = 0
    log_blocks: int = 0
    log_bytes: int = 0
    problems: list[str] = field(default_factory=list)


def _plain(t: pa.DataType) -> bool:
    """Types whose values Hudi writes into a secondary index key as this module forms them."""
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)
                or pa.types.is_boolean(t) or pa.types.is_date32(t))


def _read(table: HudiTable, s: FileSlice, columns: list[str]) -> pa.Table:
    assert s.base_file is not None
    # one way locally and on object storage (every request counted, as the planner's other reads are); a column
    # the file lacks is left out, which the check then names
    fragment = table.storage.counted_parquet_fragment(s.base_file.full_path, s.base_file.size)
    names = set(fragment.physical_schema.names)
    return fragment.to_table(columns=[c for c in columns if c in names], use_threads=False)


def check_key_indexes(table: HudiTable, slices: Sequence[FileSlice], mdt: Any,
                      secondary: Mapping[str, str]) -> KeyCheck:
    """Check the record index and the secondary indexes (column -> index partition) against the merged rows of
    ``slices`` (see the module's docstring). Never raises: an unreadable file fails the check."""
    latest = table.timeline.completed_writes[-1].timestamp if table.timeline.completed_writes else ""
    key = (str(table.base_path), latest, tuple(sorted(secondary.items())),
           tuple((s.file_id, s.base_file.path if s.base_file else "", tuple(lf.path for lf in s.log_files))
                 for s in slices))
    with _CACHE_LOCK:   # two threads planning at once share the cache (and one check of a table state)
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
        out = _check(table, slices, mdt, secondary)
        _CACHE[key] = out
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
        return out


def _check(table: HudiTable, slices: Sequence[FileSlice], mdt: Any, secondary: Mapping[str, str]) -> KeyCheck:
    rule = merge_rule(table.properties)
    unchecked = np.array([(s.base_file is not None and not s.base_file.path.endswith(".parquet"))
                          or (s.base_file is None and not s.log_files)
                          or (bool(s.log_files) and isinstance(rule, str)) for s in slices], dtype=bool)
    out = KeyCheck(record_index=False, unchecked=unchecked)
    if isinstance(rule, str) and any(s.log_files for s in slices):
        out.problems.append(f"slices with log files kept by every index answer: {rule}")
    if not table.properties.populate_meta_fields:
        out.problems.append("the files hold no _hoodie_record_key (meta fields off): the indexes cannot be checked")
        return out
    size = sum((s.base_file.size if s.base_file is not None else 0) + sum(lf.size or 0 for lf in s.log_files)
               for s, u in zip(slices, unchecked, strict=True) if not u)
    if size > MAX_BYTES:
        out.problems.append(f"record index not used: its check would read more than {MAX_BYTES >> 20} MiB of "
                            "base and log files")
        return out
    columns = list(secondary)
    keys: list[str] = []
    groups: list[str] = []
    values: dict[str, list[Any]] = {c: [] for c in columns}
    usable = dict(secondary)
    ok = block_filter(table.timeline)
    for i, s in enumerate(slices):
        if unchecked[i]:
            continue
        try:
            got = slice_keys(table, s, columns, rule if isinstance(rule, MergeRule) else MergeRule("any"), ok,
                             lambda sl, cols: _read(table, sl, cols))
        except SliceUnreadable as exc:
            out.problems.append(f"record index not used: {exc}")
            return out
        except Exception as exc:  # pyarrow raises many types for a missing or damaged file
            out.problems.append(f"{s.base_file.path if s.base_file else s.file_id}: cannot be read to check the "
                                f"indexes ({type(exc).__name__}: {exc})")
            return out
        out.log_blocks += got.log_blocks
        out.log_bytes += got.log_bytes
        for c in list(usable):
            if c in got.absent or not all(_plain(t) for t in got.types.get(c, ())):
                out.problems.append(f"secondary index {usable[c]} not used: its column {c} "
                                    "cannot be checked against the files")
                del usable[c]
        keys += got.keys
        groups += [s.file_id] * len(got.keys)
        for c in columns:
            values[c] += got.values[c]
    out.rows = len(keys)
    try:
        located = mdt.record_index(keys)
    except MetadataTableError as exc:
        out.problems.append(f"record index not used: {exc}")
        return out
    for k, g in zip(keys, groups, strict=True):
        loc = located.get(k)
        if loc is None or loc.file_id != g:
            where = "has no entry for it" if loc is None else f"puts it in file group {loc.file_id}"
            out.problems.append(f"record index not used: record key {k!r} lives in file group {g}, the record "
                                f"index {where} (a key written twice, or an index out of step with the files)")
            return out
    out.record_index = True
    for c, index in usable.items():
        texts = [None if v is None else secondary_value_text(v) for v in values[c]]
        try:
            found = mdt.secondary_index(index, {t for t in texts if t is not None})
        except MetadataTableError as exc:
            out.problems.append(f"secondary index {index} not used: {exc}")
            continue
        missing = next(((t, k) for t, k in zip(texts, keys, strict=True)
                        if t is not None and k not in found.get(t, ())), None)
        if missing is not None:
            out.problems.append(f"secondary index {index} not used: it has no entry for {c} = {missing[0]!r} of "
                                f"record key {missing[1]!r}")
            continue
        out.secondary[c] = index
    return out
