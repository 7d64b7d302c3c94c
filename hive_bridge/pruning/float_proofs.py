"""Float ranges proven: a float or double column's exact facts read from a file only where they change its verdict.

Parquet's min/max ignore NaN, and in Spark SQL NaN sorts above every number (``v > 90`` matches NaN rows), so a
float column whose NaN count is unknown keeps every file an ordered comparison would prune. The footers written by
the parquet-java versions Spark and Hudi ship carry no NaN count, and the metadata table's float and double bounds
are never trusted (apache/hudi#18754). So after a plan's statistics verdicts, the files that are kept only for
lack of such facts get them read, and are judged again:

- **which files** (:mod:`hive_bridge.pruning.float_verdicts` picks them and judges again): a base file kept by
  the verdict, or a part (base file, log file) of a merged slice kept by it, where a float column of the filter
  has (a) known bounds but an unknown NaN count, and the file would be skipped were it free of NaN; or (b)
  unknown bounds (the metadata table's, never trusted for floats) while it may hold values: the surest first,
  within the budget;
- **what is read**: that column's values only (a base file's column chunks, through the table's pyarrow file
  system: local or object storage; a log file's data blocks, the records the slice statistics count), giving the
  exact facts Spark's row truth needs: min and max of the numbers (NaN and null excluded; -0.0 equals 0.0, so it
  is kept as 0.0), the null count and the NaN count. A file whose facts cannot be read (damaged, missing, its
  row count not the one the statistics give) stays kept and is counted;
- **remembered**: in :class:`FloatFactsCache`, keyed by the table and the base file's path, size and instant (a
  Hudi base file is immutable under its name, which carries its write token and instant; a log file, which a
  version-6 writer may append to in place, by its path, size and its slice's instant), in memory and in
  ``<cache>/float-facts/<table>/`` (:func:`hive_bridge.config.settings`' cache folder: it works whatever the
  statistics' source — footers, the metadata table, the persisted index — and on read-only table folders);
- **bounded**: at most ``HIVE_BRIDGE_FLOAT_PROOFS`` file reads and ``HIVE_BRIDGE_FLOAT_PROOF_MB`` of column
  chunks and log files per plan (files past it are kept as before and counted), read on the index's I/O threads.

:class:`ProofReport` says what was done: files proven free of NaN, files found holding NaN (kept), files
skipped thanks to the proof, reads, cache hits, bytes read, seconds.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hive_bridge import config
from hive_bridge.redaction import redact
from hive_bridge.stats.contract import MAX, MAX_EXACT, MIN, MIN_EXACT, NAN_COUNT, NULL_COUNT, stat_name
from hive_bridge.stats.log_stats import read_log_stats
from hive_bridge.storage.core import Storage

#: persisted fact files of one table folded into one past this many
_COMPACT_AFTER = 32


class FloatFacts(NamedTuple):
    """One float column's exact facts in one file (``min``/``max``: of the numbers, None when it has none)."""

    num_rows: int
    null_count: int
    nan_count: int
    min: float | None
    max: float | None


class FileKey(NamedTuple):
    """A file's identity: path relative to the table, size, instant (a base file's own; a log file's slice's
    base instant: a log file may grow in place, its size then changes the key); and the column."""

    path: str
    size: int
    instant: str
    column: str


@dataclass
class ProofReport:
    """What proving float facts did in one plan."""

    #: files whose verdict depended on a float column's unknown facts
    candidates: int = 0
    #: of those, files whose facts are now known (read now or remembered): free of NaN / holding NaN
    proven_nan_free: int = 0
    holding_nan: int = 0
    #: files skipped because of the facts (also counted in ``dropped_by_statistics``)
    dropped: int = 0
    #: column reads done now (of them, log files read: every data block's values of the column), facts found in
    #: the cache, files left as they were (budget spent), reads that failed
    reads: int = 0
    log_reads: int = 0
    cache_hits: int = 0
    over_budget: int = 0
    unreadable: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    #: why reads failed (the first few)
    problems: list[str] = field(default_factory=list)

    def figures(self) -> dict[str, Any]:
        out = asdict(self)
        out["seconds"] = round(self.seconds, 4)
        return out

    def text(self) -> str:
        return (f"float facts: {self.candidates} files depended on them, {self.proven_nan_free} proven free of NaN, "
                f"{self.holding_nan} holding NaN (kept), {self.dropped} skipped thanks to them; {self.reads} column "
                f"reads{f' ({self.log_reads} of log files)' if self.log_reads else ''} ({self.bytes_read:,} bytes, {self.seconds * 1000:.1f} ms), {self.cache_hits} remembered, "
                f"{self.over_budget} past the budget, {self.unreadable} unreadable (kept)")


# =========================================================================================== reading the facts
class Budget:
    """What one plan may still read: column reads and bytes (``HIVE_BRIDGE_FLOAT_PROOFS``,
    ``HIVE_BRIDGE_FLOAT_PROOF_MB``), shared by its groups of slices and their threads."""

    def __init__(self, reads: int, nbytes: int) -> None:
        self.reads, self.nbytes = reads, nbytes
        self._lock = threading.Lock()

    def take(self, nbytes: int) -> bool:
        with self._lock:
            if self.reads <= 0 or nbytes > self.nbytes:
                return False
            self.reads -= 1
            self.nbytes -= nbytes
            return True


class _Read(NamedTuple):
    facts: FloatFacts | None
    nbytes: int
    error: str | None
    over_budget: bool = False


def _leaf_index(md: Any, column: str) -> int | None:
    schema = md.schema
    for i in range(md.num_columns):
        if schema.column(i).path == column:
            return i
    return None


def read_float_facts(storage: Storage | None, location: str, column: str, size: int | None = None,
                     budget: Budget | None = None) -> _Read:
    """One float column's :class:`FloatFacts` in one parquet file, read from that column's chunks only (the
    footer, then the column; ``storage`` None: a local path). Never raises: an unreadable file is an error."""
    try:
        if storage is None:
            import pyarrow.dataset as ds
            import pyarrow.fs as pafs

            fragment = ds.ParquetFileFormat().make_fragment(location, filesystem=pafs.LocalFileSystem(),
                                                            file_size=size)
        else:
            fragment = storage.counted_parquet_fragment(location, size)
        md = fragment.metadata
        leaf = _leaf_index(md, column)
        if leaf is None:
            return _Read(None, 0, f"{location}: no column {column!r} in the file")
        nbytes = md.serialized_size + sum(md.row_group(g).column(leaf).total_compressed_size
                                          for g in range(md.num_row_groups))
        if budget is not None and not budget.take(nbytes):
            return _Read(None, 0, None, over_budget=True)
        table = fragment.to_table(columns=[column], use_threads=False)
        flat = table.flatten()
        while any(pa.types.is_struct(f.type) for f in flat.schema):
            flat = flat.flatten()
        values = flat.column(column)
        if not pa.types.is_floating(values.type):
            return _Read(None, nbytes, f"{location}: column {column!r} is {values.type}, not float")
        nulls = values.null_count
        is_nan = pc.fill_null(pc.is_nan(values), False)
        nans = int(pc.sum(is_nan).as_py() or 0)
        numbers = pc.filter(values, pc.and_(pc.is_valid(values), pc.invert(is_nan)))
        lo: float | None = None
        hi: float | None = None
        if len(numbers):
            mm = pc.min_max(numbers)
            lo, hi = float(mm["min"].as_py()), float(mm["max"].as_py())
            lo, hi = lo + 0.0, hi + 0.0          # -0.0 equals 0.0 in Spark SQL: kept as 0.0
        return _Read(FloatFacts(table.num_rows, nulls, nans, lo, hi), nbytes, None)
    except Exception as exc:  # a damaged, missing or changed file: unknown, kept
        return _Read(None, 0, redact(f"{location}: cannot read column {column!r} ({type(exc).__name__}: {exc})"))


def new_budget() -> Budget:
    """A plan's budget, from the settings."""
    s = config.settings()
    return Budget(s.float_proofs, s.float_proof_bytes)


def read_log_float_facts(storage: Storage | None, location: str, column: str, typ: pa.DataType, size: int,
                         budget: Budget | None = None) -> _Read:
    """One float column's :class:`FloatFacts` in one log file: the values of that column in the data blocks
    the slice statistics count (:func:`hive_bridge.stats.log_stats.read_log_stats`, the one definition of a log
    file's records: delete and rollback blocks and corrupt regions hold none, a block it cannot read makes the
    file unknown). The whole file is read (``size`` bytes, the listing's: a file of another size has changed
    since, unknown). Never raises."""
    if budget is not None and not budget.take(size):
        return _Read(None, 0, None, over_budget=True)
    try:
        stats = read_log_stats(location, [(column, typ)], storage)
    except Exception as exc:  # never an exception out of the plan: unknown, kept
        return _Read(None, 0, redact(f"{location}: cannot read log file ({type(exc).__name__}: {exc})"))
    if stats.error is not None:
        return _Read(None, 0, redact(stats.error))
    if stats.size != size:
        return _Read(None, 0, f"{location}: {stats.size} bytes read, the listing says {size}: changed, kept")
    lo, hi, nulls, nans = stats.columns.get(column, (None, None, None, None))
    if stats.num_rows is None or nulls is None or nans is None:
        return _Read(None, size, f"{location}: column {column!r}: counts unknown in its data blocks")
    a = None if lo is None else float(lo.as_py()) + 0.0     # -0.0 equals 0.0 in Spark SQL: kept as 0.0
    b = None if hi is None else float(hi.as_py()) + 0.0
    return _Read(FloatFacts(stats.num_rows, nulls, nans, a, b), size, None)


# ==================================================================================================== the cache
def _facts_to_json(key: FileKey, facts: FloatFacts) -> list[Any]:
    return [*key, *facts]


class FloatFactsCache:
    """Float facts by table (its storage's cache key) and :class:`FileKey`: in memory, and persisted in small JSON
    files under ``<cache>/float-facts/<table>/`` (each written whole, under a new name: several processes may add
    to one folder). A folder that cannot be written keeps the facts in memory only."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._facts: dict[str, dict[FileKey, FloatFacts]] = {}
        self._loaded: dict[str, set[str]] = {}

    def clear(self) -> None:
        with self._lock:
            self._facts.clear()
            self._loaded.clear()

    @staticmethod
    def folder(table_key: str) -> Path:
        return config.settings().cache_root / "float-facts" / table_key

    def _load(self, table_key: str) -> dict[FileKey, FloatFacts]:
        facts = self._facts.setdefault(table_key, {})
        seen = self._loaded.setdefault(table_key, set())
        folder = self.folder(table_key)
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".json") and n not in seen)
        except OSError:
            return facts
        for name in names:
            try:
                rows = json.loads((folder / name).read_text(encoding="utf-8"))
                for r in rows:
                    facts[FileKey(str(r[0]), int(r[1]), str(r[2]), str(r[3]))] = FloatFacts(
                        int(r[4]), int(r[5]), int(r[6]), None if r[7] is None else float(r[7]),
                        None if r[8] is None else float(r[8]))
            except (OSError, ValueError, TypeError, IndexError):
                continue                        # a damaged or vanished file: its facts are read again
            seen.add(name)
        return facts

    def get(self, table_key: str, keys: Iterable[FileKey]) -> dict[FileKey, FloatFacts]:
        with self._lock:
            facts = self._load(table_key)
            return {k: facts[k] for k in keys if k in facts}

    def put(self, table_key: str, new: dict[FileKey, FloatFacts]) -> None:
        if not new:
            return
        with self._lock:
            facts = self._load(table_key)
            facts.update(new)
            folder = self.folder(table_key)
            try:
                folder.mkdir(parents=True, exist_ok=True)
                name = self._write(folder, [_facts_to_json(k, f) for k, f in new.items()])
                self._loaded[table_key].add(name)
                if len(self._loaded[table_key]) > _COMPACT_AFTER:
                    old = set(self._loaded[table_key])
                    merged = self._write(folder, [_facts_to_json(k, f) for k, f in facts.items()])
                    for n in old:
                        with contextlib.suppress(OSError):
                            os.unlink(folder / n)
                    self._loaded[table_key] = {merged}
            except OSError:
                pass                            # memory only

    @staticmethod
    def _write(folder: Path, rows: list[list[Any]]) -> str:
        name = f"facts-{uuid.uuid4().hex}.json"
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(rows, f)
        os.replace(tmp, folder / name)
        return name


CACHE = FloatFactsCache()
config.register_cache("pruning.float_proofs: float facts read from files", CACHE.clear)


# ================================================================================================== the proof
def float_columns(types: dict[str, pa.DataType], columns: Iterable[str] | None) -> list[str]:
    """The float and double statistics columns among a filter's ``columns``."""
    return sorted({c for c in columns or () if c in types and pa.types.is_floating(types[c])})


def candidates(table: pa.Table, kept: np.ndarray, hypothetical_keep: np.ndarray,
               columns: Sequence[str]) -> list[tuple[int, str]]:
    """The (row, column) reads that may change a verdict, the surest first: rows kept that a NaN-free column
    would skip (its NaN count unknown, bounds known), then rows kept whose float column has unknown bounds (the
    metadata table's are not trusted) though it may hold values: what those bounds are is only known once read
    (so not only the rows kept "for lack of information": a range on a column without nulls is not counted so)."""
    first: list[tuple[int, str]] = []
    second: list[tuple[int, str]] = []
    num_rows = table.column("num_rows").to_numpy(zero_copy_only=False) if "num_rows" in table.column_names \
        else None
    flips = kept & ~hypothetical_keep
    for c in columns:
        lo = table.column(stat_name(c, MIN))
        nan_name = stat_name(c, NAN_COUNT)
        nan_unknown = (pc.is_null(table.column(nan_name)).to_numpy(zero_copy_only=False)
                       if nan_name in table.column_names else np.ones(table.num_rows, dtype=bool))
        bounds_unknown = pc.is_null(lo).to_numpy(zero_copy_only=False)
        nulls = table.column(stat_name(c, NULL_COUNT)).to_numpy(zero_copy_only=False)
        all_null = np.zeros(table.num_rows, dtype=bool)
        if num_rows is not None:
            with np.errstate(invalid="ignore"):
                all_null = np.nan_to_num(nulls.astype(float), nan=-1) == np.nan_to_num(num_rows.astype(float), nan=-2)
        first += [(int(i), c) for i in np.flatnonzero(flips & nan_unknown & ~bounds_unknown)]
        second += [(int(i), c) for i in np.flatnonzero(kept & bounds_unknown & ~all_null)]
    seen: set[tuple[int, str]] = set()
    return [x for x in first + second if not (x in seen or seen.add(x))]  # type: ignore[func-returns-value]


def with_nan_free(table: pa.Table, columns: Sequence[str]) -> pa.Table:
    """``table`` as it would be were every file free of NaN in ``columns`` (unknown NaN counts made 0)."""
    out = table
    for c in columns:
        name = stat_name(c, NAN_COUNT)
        if name in out.column_names:
            out = out.set_column(out.column_names.index(name), name, pc.fill_null(out.column(name), 0))
        else:
            out = out.append_column(name, pa.array(np.zeros(out.num_rows, dtype=np.int64)))
    return out


def with_facts(table: pa.Table, facts: dict[tuple[int, str], FloatFacts]) -> pa.Table:
    """``table`` with the facts read put in their rows (bounds exact, null and NaN counts known)."""
    by_column: dict[str, dict[int, FloatFacts]] = {}
    for (row, c), f in facts.items():
        by_column.setdefault(c, {})[row] = f
    out = table
    n = table.num_rows
    for c, rows in by_column.items():
        idx = np.fromiter(rows, dtype=np.int64, count=len(rows))
        mask = np.zeros(n, dtype=bool)
        mask[idx] = True
        mask_arr = pa.array(mask)
        order = [rows[int(i)] for i in idx]

        def spread(values: list[Any], typ: pa.DataType, rows_idx: np.ndarray = idx) -> pa.Array:
            full: list[Any] = [None] * n
            for i, v in zip(rows_idx.tolist(), values, strict=True):
                full[i] = v
            return pa.array(full, typ)

        typ = table.schema.field(stat_name(c, MIN)).type
        updates = {
            MIN: spread([f.min for f in order], typ), MAX: spread([f.max for f in order], typ),
            NULL_COUNT: spread([f.null_count for f in order], pa.int64()),
            NAN_COUNT: spread([f.nan_count for f in order], pa.int64()),
            MIN_EXACT: spread([f.min is not None for f in order], pa.bool_()),
            MAX_EXACT: spread([f.max is not None for f in order], pa.bool_()),
        }
        for stat, new in updates.items():
            name = stat_name(c, stat)
            if name in out.column_names:
                old = out.column(name).combine_chunks()
                if stat in (MIN_EXACT, MAX_EXACT):
                    # a number-free file (all null or NaN): no bound, nothing exact
                    merged = pc.if_else(mask_arr, new, old)
                else:
                    merged = pc.if_else(mask_arr, new, old.cast(new.type) if old.type != new.type else old)
                out = out.set_column(out.column_names.index(name), name, merged)
            else:
                out = out.append_column(name, pc.if_else(mask_arr, new, pa.nulls(n, new.type)))
    return out


class Wanted(NamedTuple):
    """A file whose facts are wanted: its key, its location, and for a log file the column's arrow type (None:
    a parquet base file)."""

    key: FileKey
    location: str
    log_type: pa.DataType | None = None


def obtain(storage: Storage, table_key: str, wanted: list[Wanted], max_workers: int,
           report: ProofReport, budget: Budget | None = None) -> dict[FileKey, FloatFacts]:
    """The facts of ``wanted``: remembered ones, then the others read within ``budget`` (default: a new one from
    the settings) on ``max_workers`` threads (and remembered). ``report`` counts reads, hits, bytes, budget,
    failures."""
    start = time.perf_counter()
    known = CACHE.get(table_key, (w.key for w in wanted))
    report.cache_hits += len(known)
    todo = [w for w in wanted if w.key not in known]
    budget = budget if budget is not None else new_budget()

    def read(w: Wanted) -> _Read:
        if w.log_type is not None:
            return read_log_float_facts(storage, w.location, w.key.column, w.log_type, w.key.size, budget)
        return read_float_facts(storage, w.location, w.key.column, w.key.size, budget)

    if len(todo) > 1 and max_workers > 1:
        with ThreadPoolExecutor(max_workers=min(max_workers, len(todo))) as pool:
            results = list(pool.map(read, todo))
    else:
        results = [read(x) for x in todo]
    fresh: dict[FileKey, FloatFacts] = {}
    for w, r in zip(todo, results, strict=True):
        key = w.key
        if r.over_budget:
            report.over_budget += 1
        elif r.facts is None:
            report.unreadable += 1
            if r.error and len(report.problems) < 20:
                report.problems.append(r.error)
        else:
            report.reads += 1
            report.log_reads += w.log_type is not None
            report.bytes_read += r.nbytes
            fresh[key] = r.facts
    CACHE.put(table_key, fresh)
    report.seconds += time.perf_counter() - start
    return {**known, **fresh}


def facts_consistent(facts: FloatFacts, num_rows: int | None) -> bool:
    """Whether facts read describe the file the statistics describe (same row count where it is known)."""
    if num_rows is not None and facts.num_rows != num_rows:
        return False
    return facts.null_count + facts.nan_count <= facts.num_rows and \
        (facts.min is None or not math.isnan(facts.min))


__all__ = [
    "CACHE",
    "Budget",
    "FileKey",
    "FloatFacts",
    "FloatFactsCache",
    "ProofReport",
    "Wanted",
    "candidates",
    "facts_consistent",
    "float_columns",
    "new_budget",
    "obtain",
    "read_float_facts",
    "read_log_float_facts",
    "with_facts",
    "with_nan_free",
]
