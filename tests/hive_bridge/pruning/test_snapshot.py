"""The process's table snapshots are never stale: between queries a writer commits, upserts, replaces, deletes,
rolls back and compacts, and every planning through the cache keeps exactly what a planning from a fresh open
keeps; an unchanged table is re-used, a changed one is followed (only the new files' statistics read); two
threads querying at once get the same answers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

import sarg
from hive_bridge.pruning.pruner import READ_OPTIMIZED, SNAPSHOT, plan_slices
from hive_bridge.pruning.snapshot import SnapshotCache
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter

SCHEMA = {"id": "bigint", "name": "string", "part": "string"}
FILTERS = [
    None,
    "leaf-(BETWEEN id 10 25)",
    "leaf-(EQUALS name v-0007)",
    "leaf-(LESS_THAN id 5)",
    "(or leaf-(EQUALS id 42) leaf-(EQUALS id 400))",
    "(not leaf-(IS_NULL name))",
    "leaf-(EQUALS part p1)",
]


def _data(ids: list[int], tag: str = "v") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "name": pa.array([f"{tag}-{i:04d}" for i in ids], pa.string()),
                     "part": pa.array([f"p{i % 3}" for i in ids], pa.string())})


def _kept(result: object) -> list[tuple[str, str, str | None, tuple[str, ...]]]:
    return sorted((s.partition_path, s.file_id, s.base_file.path if s.base_file else None,  # type: ignore[attr-defined]
                   tuple(lf.path for lf in s.log_files)) for s in result.slices)  # type: ignore[attr-defined]


def _check(cache: SnapshotCache, root: Path, step: str) -> None:
    for query_type in (SNAPSHOT, READ_OPTIMIZED):
        snap = cache.get(str(root))
        fresh = HudiTable.open(root)
        assert snap.table.arrow_schema() == fresh.arrow_schema(), step
        index = ColumnStatsIndex(fresh, persist=False)
        for text in FILTERS:
            filt = sarg.parse(text, SCHEMA) if text else None
            got = snap.plan(filt, query_type=query_type)
            want = plan_slices(fresh, index, fresh.latest_file_slices(), filt, query_type=query_type)
            assert _kept(got) == _kept(want), (step, query_type, text)
            assert got.files_total == want.files_total, (step, query_type, text)


WRITES: list[tuple[str, Callable[[HudiWriter, dict[str, object]], None]]] = [
    ("insert", lambda w, s: s.update(first=w.insert(_data(list(range(0, 60)))))),
    ("upsert", lambda w, s: w.upsert(_data(list(range(10, 30)), "u"))),
    ("insert more", lambda w, s: w.insert(_data(list(range(400, 430))))),
    ("insert_overwrite", lambda w, s: w.insert_overwrite(_data(list(range(200, 215)), "o"))),
    ("inflight insert", lambda w, s: s.update(pending=w.insert(_data([500, 501, 502]), inflight=True))),
    ("rollback", lambda w, s: w.rollback(s["pending"])),  # type: ignore[arg-type]
    ("insert with a new column", lambda w, s: w.insert(_data([600, 601, 602]).append_column(
        "extra", pa.array([1.5, None, 2.5], pa.float64())))),
    ("upsert again", lambda w, s: s.update(last=w.upsert(_data([1, 2, 3, 42], "x")))),
    ("rollback completed", lambda w, s: w.rollback(s["last"])),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("table_type", "version", "partitioned"), [
    ("COPY_ON_WRITE", 8, True), ("MERGE_ON_READ", 8, True), ("COPY_ON_WRITE", 6, False), ("MERGE_ON_READ", 6, True)])
def test_never_stale_between_writes(tmp_path: Path, table_type: str, version: int, partitioned: bool) -> None:
    root = tmp_path / "t"
    kwargs = {"precombine_field": "id"} if table_type == "MERGE_ON_READ" else {}
    w = HudiWriter(root, version=version, table_type=table_type, partition_fields=["part"] if partitioned else [],
                   rows_per_file=7, **kwargs)
    cache = SnapshotCache()
    state: dict[str, object] = {}
    steps = list(WRITES)
    if table_type == "MERGE_ON_READ":
        steps.insert(4, ("delete", lambda w, s: w.delete(pa.table({"id": pa.array([11, 12], pa.int64()),
                                                                   "part": ["p2", "p0"]}))))
        steps.append(("upsert before compaction", lambda w, s: w.upsert(_data([201, 205, 210, 5], "y"))))
        steps.append(("compaction", lambda w, s: s.update(compaction=w.compact())))
        steps.append(("upsert after compaction", lambda w, s: w.upsert(_data([7, 8, 45], "z"))))
    timeline = root / ".hoodie" / "timeline" if version >= 8 else root / ".hoodie"
    reused = 0
    for name, write in steps:
        before = sorted(p.name for p in timeline.iterdir() if p.is_file()) if timeline.is_dir() else []
        write(w, state)
        changed = sorted(p.name for p in timeline.iterdir() if p.is_file()) != before
        assert changed, name                   # every step writes an instant
        _check(cache, root, name)
        reused += cache.get(str(root)).reused_rows
        assert cache.get(str(root)).origin == ("opened" if name == "insert" else "followed"), name
        _check(cache, root, name + " (unchanged)")
    if table_type == "MERGE_ON_READ":
        assert state["compaction"].files  # type: ignore[attr-defined]
    assert cache.stats.followed == len(steps) - 1
    assert cache.stats.opened == 1
    assert cache.stats.relisted_partitions > 0          # some follows listed only the partitions written to
    if table_type == "COPY_ON_WRITE" and partitioned:
        assert reused > 0                               # and kept the other partitions' prepared statistics


def test_unchanged_is_reused_and_changed_reads_only_new_files(tmp_path: Path) -> None:
    root = tmp_path / "t"
    w = HudiWriter(root, version=8, partition_fields=["part"], rows_per_file=5)
    w.insert(_data(list(range(0, 50))))
    cache = SnapshotCache()
    filt = sarg.parse("leaf-(BETWEEN id 10 12)", SCHEMA)
    first = cache.get(str(root))
    first.plan(filt)
    assert first.origin == "opened"
    assert cache.get(str(root)) is first
    w.insert(_data(list(range(100, 110))))
    second = cache.get(str(root))
    assert second is not first and second.origin == "followed"
    second.plan(filt)
    counters = second.index.last
    new_files = len(second.slices) - len(first.slices)
    assert new_files == 3
    assert counters.files_from_footers == new_files   # the new commit's files only
    assert counters.segments_read == 0                # nothing read again from disk
    assert counters.files_from_index == len(first.slices)


def test_two_threads_at_once(tmp_path: Path) -> None:
    root = tmp_path / "t"
    w = HudiWriter(root, version=8, partition_fields=["part"], rows_per_file=4)
    w.insert(_data(list(range(0, 80))))
    cache = SnapshotCache()
    fresh = HudiTable.open(root)
    index = ColumnStatsIndex(fresh, persist=False)
    filters = [sarg.parse(t, SCHEMA) if t else None for t in FILTERS]
    want = [_kept(plan_slices(fresh, index, fresh.latest_file_slices(), f)) for f in filters]
    errors: list[BaseException] = []

    def run() -> None:
        try:
            for _ in range(5):
                for f, expected in zip(filters, want, strict=True):
                    assert _kept(cache.get(str(root)).plan(f)) == expected
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert cache.stats.opened == 1


def test_a_new_column_in_one_partition_is_followed(tmp_path: Path) -> None:
    """A commit that adds a column and writes to one partition only: the other partitions' prepared statistics
    lack that column, so they are not re-used as they are; the planning equals a fresh open's."""
    root = tmp_path / "t"
    w = HudiWriter(root, version=8, partition_fields=["part"], rows_per_file=5)
    w.insert(_data(list(range(0, 60))))
    cache = SnapshotCache()
    _check(cache, root, "before")
    w.insert(_data([3, 6, 9]).append_column("extra", pa.array([1.5, None, 2.5], pa.float64())))  # p0 only
    assert cache.get(str(root)).touched == {"part=p0"}
    _check(cache, root, "after a new column in one partition")
