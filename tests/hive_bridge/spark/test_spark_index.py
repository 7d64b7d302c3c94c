"""The statistics index built on Spark executors (`hive_bridge.spark.index_build`) against the local build: the same
persisted rows, counters and errors on every shared fixture table and on generated tables (merge-on-read logs,
damaged files, schema evolution); the reader contract and the join of chunked footer rows without Spark."""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hive_bridge.app.cli import main
from hive_bridge.errors import HudiTableError
from hive_bridge.formats.logfile import BlockType, HeaderKey
from hive_bridge.formats.parquet_footer import StatsLeaf
from hive_bridge.spark.index_build import SparkIndexError, SparkStatsReader, build_index
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.reader import (
    FileToRead,
    LocalStatsReader,
    ReadRows,
    concat_footer_rows,
    footer_rows,
)
from hive_bridge.stats.segments import read_segment
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.logfile_writer import encode_block
from hive_bridge.testing.writer import HudiWriter
from tests.conftest import SHARED_TABLES

FIXTURE_NAMES = sorted(p.stem for p in SHARED_TABLES.glob("*.zip")) if SHARED_TABLES.is_dir() else []


# ------------------------------------------------------------------------------------------------- helpers
def _segments(root: Path) -> list[pa.Table]:
    """The persisted segments of a table's index, in the order written, each sorted by path."""
    paths = sorted((root / ".hoodie" / ".hive_bridge" / "column_stats").glob("seg-*.arrow"))
    return [read_segment(p).sort_by([("path", "ascending"), ("instant", "ascending")]) for p in paths]


def _build(root: Path, reader: Any, source: str = "footers") -> tuple[ColumnStatsIndex, pa.Table, pa.Table]:
    """Build the index of `root` (base files, then the latest slices' log files); (index, stats, log stats)."""
    index = ColumnStatsIndex(HudiTable.open(root), source=source, reader=reader)
    stats = index.load()
    logs = index.log_table(index.hudi_table.latest_file_slices())
    return index, stats, logs


def _assert_same_builds(local_root: Path, spark_root: Path, spark: Any, source: str = "footers",
                        files_per_task: int = 3) -> tuple[ColumnStatsIndex, ColumnStatsIndex]:
    """Build with local threads and with Spark (small partitions: the chunked join is exercised) and check
    that everything persisted and returned is the same."""
    local, local_stats, local_logs = _build(local_root, None, source)
    reader = SparkStatsReader(spark, files_per_task=files_per_task)
    remote, remote_stats, remote_logs = _build(spark_root, reader, source)
    read = local.counters.files_from_footers + local.counters.log_files_read
    assert (reader.jobs > 0) == (read > 0)  # Spark ran exactly when there was something to read
    assert remote.counters == local.counters
    assert remote.errors == [e.replace(str(local_root), str(spark_root)) for e in local.errors]
    assert remote.read_sources == local.read_sources
    # the statistics returned (path-relative, so the two copies compare) and every persisted segment
    assert remote_stats.equals(local_stats) and remote_logs.equals(local_logs)
    local_segments, remote_segments = _segments(local_root), _segments(spark_root)
    assert len(remote_segments) == len(local_segments)
    for a, b in zip(local_segments, remote_segments, strict=True):
        assert b.schema.equals(a.schema, check_metadata=True)
        assert b.equals(a)
    return local, remote


def _two_copies(src: Path, tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "local" / src.name, tmp_path / "spark" / src.name
    shutil.copytree(src, a)
    shutil.copytree(src, b)
    for root in (a, b):  # a fixture may ship an index of its own: both builds start from nothing
        shutil.rmtree(root / ".hoodie" / ".hive_bridge", ignore_errors=True)
    return a, b


# ------------------------------------------------------------------------------------- without Spark
def _write(path: Path, table: pa.Table) -> FileToRead:
    pq.write_table(table, path)
    return (path.name, "p", path.stat().st_size, "001", str(path))


def test_chunked_footer_rows_join_to_the_whole_lists_rows(tmp_path: Path) -> None:
    """Footer rows of consecutive chunks, joined, equal the rows of the whole list, at every split: leaves
    beyond the target appear in first-seen order with the first file's type, a chunk without one gets
    null count = row count, a chunk with another type is cast (or unknown when the cast is not order-keeping),
    a damaged file stays unknown."""
    files = [
        _write(tmp_path / "a.parquet", pa.table({"id": pa.array([1, 2], pa.int64()), "b": ["x", "y"]})),
        _write(tmp_path / "b.parquet", pa.table({"id": pa.array([3, None], pa.int64()),
                                                  "c": pa.array([5, 6], pa.int32())})),
        _write(tmp_path / "c.parquet", pa.table({"id": pa.array([7], pa.int32()), "c": pa.array([9], pa.int64()),
                                                  "d": pa.array([1.5], pa.float64())})),
        _write(tmp_path / "d.parquet", pa.table({"id": pa.array([8], pa.int64()), "b": pa.array([4], pa.int64())})),
        _write(tmp_path / "e.parquet", pa.table({"id": pa.array([10, 11], pa.int64())})),
    ]
    damaged = tmp_path / "f.parquet"
    damaged.write_bytes(b"PAR1 not a parquet file PAR1")
    files.append(("f.parquet", "p", damaged.stat().st_size, "001", str(damaged)))
    target = [StatsLeaf("id", pa.int64())]
    whole = footer_rows(files, target)
    assert whole.errors[:5] == [None] * 5 and whole.errors[5] is not None and "f.parquet" in whole.errors[5]
    assert [c for c in whole.rows.column_names if c.endswith("::min")] == ["id::min", "b::min", "c::min", "d::min"]
    # a float leaf's NaN count: unknown where the footer gives none (counting is off), 0 where the file lacks it
    assert whole.rows.column("d::nan_count").to_pylist() == [0, 0, None, 0, 0, None]
    assert whole.rows.column("c::min").to_pylist() == [None, 5, 9, None, None, None]
    assert whole.rows.column("d::null_count").to_pylist() == [2, 2, 0, 1, 2, None]
    assert whole.rows.column("b::min").to_pylist() == ["x", None, None, None, None, None]
    splits = 0
    for k in range(1, len(files)):
        for cuts in itertools.combinations(range(1, len(files)), k):
            bounds = [0, *cuts, len(files)]
            chunks = [footer_rows(files[i:j], target) for i, j in itertools.pairwise(bounds)]
            joined = concat_footer_rows([c.rows for c in chunks], target)
            assert joined.schema.equals(whole.rows.schema, check_metadata=True), cuts
            assert joined.equals(whole.rows), cuts
            assert [e for c in chunks for e in c.errors] == whole.errors
            splits += 1
    assert splits == 2 ** (len(files) - 1) - 1


def test_local_reader_is_the_default(tmp_path: Path) -> None:
    w = _writer_table(tmp_path)
    default = ColumnStatsIndex(w.table(), persist=False).load()
    explicit = ColumnStatsIndex(w.table(), persist=False, reader=LocalStatsReader(max_workers=3)).load()
    assert default.num_rows == 12 and default.equals(explicit)


class _LosesAFile(LocalStatsReader):
    """A reader that breaks the contract: one file's row and error go missing."""

    def read_footers(self, files: Sequence[FileToRead], target: Sequence[StatsLeaf]) -> ReadRows:
        read = super().read_footers(files, target)
        return ReadRows(read.rows.slice(0, read.rows.num_rows - 1), read.errors[:-1])


def test_a_reader_that_loses_a_file_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    w = _writer_table(tmp_path)
    index = ColumnStatsIndex(w.table(), reader=_LosesAFile())
    with pytest.raises(HudiTableError, match="returned 11 rows and 11 errors for 12 files"):
        index.load()
    assert not list(w.base_path.glob(".hoodie/.hive_bridge/column_stats/seg-*"))


def _writer_table(tmp_path: Path) -> HudiWriter:
    w = HudiWriter(tmp_path / "t", partition_fields=["part"], rows_per_file=2)
    w.insert(pa.table({"id": pa.array(range(24), pa.int64()), "part": [i % 3 for i in range(24)],
                       "name": [f"n{i:03d}" for i in range(24)]}))
    return w


# ------------------------------------------------------------------------------------------ with Spark
@pytest.mark.spark
@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_tables_spark_build_equals_the_local_build(name: str, shared_tables: dict[str, Path],
                                                           tmp_path: Path, spark: Any) -> None:
    local, spark_root = _two_copies(shared_tables[name], tmp_path)
    built, _ = _assert_same_builds(local, spark_root, spark)
    table = built.hudi_table
    if table.base_files_are_parquet and table.latest_file_slices():
        assert built.counters.files_from_footers > 0
    if any(s.log_files for s in table.latest_file_slices()):
        assert built.counters.log_files_read > 0  # merge-on-read tables with logs: logs read by Spark too


@pytest.mark.spark
@pytest.mark.parametrize("name", ["quickstart_trips_table.mor.avro.v8_trips_8i3u1d",
                                  "sample_table.mor.avro.v9_txns_simple_meta"])
def test_metadata_table_first_then_spark(name: str, shared_tables: dict[str, Path], tmp_path: Path,
                                         spark: Any) -> None:
    """source=auto: what the metadata table describes is taken from it, Spark reads only the rest."""
    if name not in shared_tables:
        pytest.skip(f"{name} is not among the shared tables")
    local, spark_root = _two_copies(shared_tables[name], tmp_path)
    built, _ = _assert_same_builds(local, spark_root, spark, source="auto")
    assert built.counters.files_from_mdt > 0


def _mor_table(root: Path) -> HudiWriter:
    """A merge-on-read table: base files, log files of upserts and deletes, a column dropped from the schema
    by the last commit (its files keep statistics of a leaf beyond the table schema)."""
    w = HudiWriter(root, table_type="MERGE_ON_READ", partition_fields=["part"], rows_per_file=3,
                   precombine_field="ts")
    n = 90
    w.insert(pa.table({"id": pa.array(range(n), pa.int64()), "part": [i % 3 for i in range(n)],
                       "ts": pa.array([1] * n, pa.int64()), "name": [f"n{i:03d}" for i in range(n)],
                       "old": pa.array([i * 0.5 for i in range(n)], pa.float64())}))
    ups = list(range(0, n, 7))
    w.upsert(pa.table({"id": pa.array(ups, pa.int64()), "part": [i % 3 for i in ups],
                       "ts": pa.array([2] * len(ups), pa.int64()), "name": [f"u{i:03d}" for i in ups],
                       "old": pa.array([-1.0] * len(ups), pa.float64())}))
    w.delete(pa.table({"id": pa.array([5, 11], pa.int64()), "part": [2, 2]}))
    w.insert(pa.table({"id": pa.array(range(n, n + 9), pa.int64()), "part": [i % 3 for i in range(n, n + 9)],
                       "ts": pa.array([3] * 9, pa.int64()), "name": [f"m{i:03d}" for i in range(n, n + 9)]}))
    return w


@pytest.mark.spark
def test_generated_mor_table_with_damage(tmp_path: Path, spark: Any) -> None:
    """A generated merge-on-read table, one footer and one log file damaged: the same rows, counters and error
    texts; both files are unknown (kept in memory, not persisted) in both builds."""
    w = _mor_table(tmp_path / "gen" / "t")
    slices = w.table().latest_file_slices()
    assert sum(len(s.log_files) for s in slices) >= 10
    local, remote = _two_copies(w.base_path, tmp_path)
    base_victim = next(s.base_file for s in slices if s.base_file is not None and not s.log_files)
    log_victim = next(lf for s in slices for lf in s.log_files)
    assert base_victim is not None
    for root in (local, remote):
        victim = root / base_victim.path
        victim.write_bytes(victim.read_bytes()[:40])  # a size the listing sees: the footer cannot be read
        with open(root / log_victim.path, "ab") as fh:  # a block this reader cannot decode: the log is unknown
            fh.write(encode_block(BlockType.HFILE_DATA, {HeaderKey.INSTANT_TIME: log_victim.instant}, b"\x00" * 64))
    built, by_spark = _assert_same_builds(local, remote, spark, files_per_task=4)
    for idx in (built, by_spark):
        assert idx.counters.unreadable_footers == 1 and idx.counters.unreadable_log_files == 1
        stats = idx.table()
        row = stats.filter(pc.equal(stats.column("path"), base_victim.path)).to_pylist()[0]
        assert row["num_rows"] is None and row["id::min"] is None and row["id::null_count"] is None
        logs = idx.log_table(idx.hudi_table.latest_file_slices())
        log_row = logs.filter(pc.equal(logs.column("path"), log_victim.path)).to_pylist()[0]
        assert log_row["num_rows"] is None and log_row["id::max"] is None
        persisted = pa.concat_tables([s.select(["path"]) for s in _segments(Path(idx.hudi_table.base_path))])
        assert base_victim.path not in persisted.column("path").to_pylist()
        assert log_victim.path not in persisted.column("path").to_pylist()
    assert any("old::min" in s.column_names for s in _segments(local))  # the leaf beyond the table schema


@pytest.mark.spark
def test_incremental_build_reads_only_new_files_on_spark(tmp_path: Path, spark: Any) -> None:
    w = _writer_table(tmp_path)
    reader = SparkStatsReader(spark)
    first = build_index(w.base_path, spark)
    assert first.counters.files_from_footers == 12
    w.insert(pa.table({"id": pa.array([100, 101], pa.int64()), "part": [0, 1], "name": ["x", "y"]}))
    again = ColumnStatsIndex(w.table(), reader=reader)
    again.load()
    assert (again.last.files_from_index, again.last.files_from_footers, reader.jobs) == (12, 2, 1)
    up_to_date = SparkStatsReader(lambda: pytest.fail("Spark started with nothing to read"))
    assert ColumnStatsIndex(w.table(), reader=up_to_date).load().num_rows == 14


@pytest.mark.spark
def test_partitions_follow_the_files_per_task(spark: Any) -> None:
    parallelism = spark.sparkContext.defaultParallelism
    reader = SparkStatsReader(spark, files_per_task=100)
    assert [reader.partitions(n) for n in (0, 1, 2, 50)] == [0, 1, min(2, parallelism), parallelism]
    assert reader.partitions(10_000) == 100
    with pytest.raises(SparkIndexError, match="at least 1"):
        SparkStatsReader(spark, files_per_task=0)


def _boom(index: int, items: Iterable[tuple[str, int]]) -> Iterator[tuple[int, bytes, list[str | None]]]:
    raise ValueError(f"boom in partition {index}")


@pytest.mark.spark
def test_a_failed_spark_job_is_one_clear_error(spark: Any) -> None:
    reader = SparkStatsReader(spark)
    with pytest.raises(SparkIndexError) as caught:
        reader._run([("a", "", 1, "", "/nowhere/a")], _boom, "parquet footers of 1 files")
    message = str(caught.value)
    assert message.startswith("Spark could not read the parquet footers of 1 files: ")
    assert "ValueError: boom in partition 0" in message and "\n" not in message


@pytest.mark.spark
def test_cli_index_with_spark(tmp_path: Path, spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    w = _mor_table(tmp_path / "gen" / "t")
    local, remote = _two_copies(w.base_path, tmp_path)
    assert main(["index", "--table", str(local), "--source", "footers"]) == 0
    assert main(["index", "--table", str(remote), "--source", "footers", "--spark"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "read by Spark local[2]" in out
    assert out.count("footers read") == 2 and out.count(" 0 unknown") == 2
    local_segments, remote_segments = _segments(local), _segments(remote)
    assert len(local_segments) == len(remote_segments) == 2
    assert all(a.equals(b) for a, b in zip(local_segments, remote_segments, strict=True))
    assert main(["index", "--table", str(remote), "--master", "local[2]"]) == 0  # up to date: nothing read
    assert " 0 footers read" in " ".join(capsys.readouterr().out.split())
