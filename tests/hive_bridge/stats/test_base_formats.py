"""Base file formats other than parquet: LANCE tables list what hudi-rs lists, their files have unknown statistics
(so pruning keeps them all), and a format nobody knows is refused instead of reading as an empty table."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

import sarg
from hive_bridge.errors import HudiTableError
from hive_bridge.formats import parquet_footer
from hive_bridge.layout.fsview import FileSystemView
from hive_bridge.pruning.pruner import plan_slices
from hive_bridge.stats import reader as stats_reader
from hive_bridge.stats import segments
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.rows import FORMAT_KEY, FORMAT_VERSION, stats_schema
from hive_bridge.stats.segments import write_segment
from hive_bridge.table import table as table_mod
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter
from tests.hive_bridge.oracle import our_slices, reference_slices

LANCE_COW = "sample_table.cow.v9_lance_nonpartitioned"
LANCE_MOR = "sample_table.mor.avro.v9_lance_nonhivestyle"
#: name -> (latest slices, slices with log files, rows hudi-rs reads, a filter matching one row)
LANCE = {
    LANCE_COW: (2, 0, 9, "leaf-(EQUALS id 1)"),
    LANCE_MOR: (4, 1, 14, "leaf-(EQUALS event_id evt-001)"),
}
PARQUET_V8 = "sample_table.cow.v8_nonpartitioned"


def _hudi_rs_read_schema(path: Path) -> tuple[pa.Schema, int]:
    from hudi import HudiTableBuilder

    batches = HudiTableBuilder.from_base_uri(str(path)).build().read()
    data = pa.Table.from_batches(batches)
    return data.schema, data.num_rows


def _set_base_format(path: Path, value: str) -> None:
    props = path / ".hoodie" / "hoodie.properties"
    lines = [ln for ln in props.read_text(encoding="latin-1").splitlines()
             if not ln.startswith("hoodie.table.base.file.format")]
    props.write_text("\n".join([*lines, f"hoodie.table.base.file.format={value}"]) + "\n", encoding="latin-1")


# ------------------------------------------------------------------ listing
@pytest.mark.parametrize("name", sorted(LANCE))
def test_lance_tables_list_the_slices_of_hudi_rs(fixture_tables: dict[str, Path], name: str) -> None:
    path = fixture_tables[name]
    table = HudiTable.open(path)
    slices = table.latest_file_slices()
    n_slices, n_with_logs, _rows, _filter = LANCE[name]
    assert table.base_file_format == "LANCE" and table.base_files_are_parquet is False
    assert len(slices) == n_slices
    assert sum(s.has_log_files for s in slices) == n_with_logs
    assert all(s.base_file is not None and s.base_file.name.endswith(".lance") for s in slices)
    # file ids, instants, base file names and sizes, log file names
    assert our_slices(slices) == reference_slices(path)


def test_parquet_tables_say_so(fixture_tables: dict[str, Path]) -> None:
    table = HudiTable.open(fixture_tables[PARQUET_V8])
    assert table.base_file_format == "PARQUET" and table.base_files_are_parquet is True
    assert table.properties.base_file_extension == ".parquet"


@pytest.mark.parametrize("name", [LANCE_COW, PARQUET_V8])
def test_unknown_base_file_format_is_refused(fixture_copy: Callable[[str], Path], name: str) -> None:
    path = fixture_copy(name)
    table_name = HudiTable.open(path).name
    _set_base_format(path, "FOO")
    with pytest.raises(HudiTableError) as exc:
        HudiTable.open(path)
    message = str(exc.value)
    assert "'FOO'" in message and repr(table_name) in message and "hoodie.table.base.file.format" in message
    assert str(path) in message


def test_unknown_base_file_format_is_refused_by_the_listing_too(fixture_tables: dict[str, Path]) -> None:
    """A TableProperties built by hand (not through hoodie.properties) is checked when its files are listed."""
    table = HudiTable.open(fixture_tables[LANCE_COW])
    odd = dataclasses.replace(table.properties, base_file_format="FOO")
    with pytest.raises(HudiTableError, match="'FOO'"):
        FileSystemView(odd, table.timeline).latest_file_slices()


def test_base_file_format_is_read_case_insensitively(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy(LANCE_COW)
    _set_base_format(path, "lance")
    assert len(HudiTable.open(path).latest_file_slices()) == LANCE[LANCE_COW][0]


def test_the_writer_refuses_a_table_of_another_format(fixture_copy: Callable[[str], Path]) -> None:
    """Parquet files written into an ORC table would not be listed: rows written, never read."""
    path = fixture_copy(PARQUET_V8)
    _set_base_format(path, "ORC")
    with pytest.raises(HudiTableError, match="'ORC'"):
        HudiWriter(path)


# ------------------------------------------------------------------- schema
@pytest.mark.parametrize("name", sorted(LANCE))
def test_lance_schema_is_the_schema_hudi_rs_reads(fixture_tables: dict[str, Path], name: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    tried: list[str] = []

    def no_parquet(path: str) -> pa.Schema:  # the caller catches errors: record the attempt
        tried.append(path)
        raise AssertionError(f"read a parquet schema from {path}")

    monkeypatch.setattr(table_mod.pq, "read_schema", no_parquet)
    path = fixture_tables[name]
    table = HudiTable.open(path)
    ours = table.arrow_schema()
    assert tried == []  # a Lance file is not opened as parquet
    theirs, rows = _hudi_rs_read_schema(path)
    assert rows == LANCE[name][2]
    # same columns, types, order, the five _hoodie_* meta columns first (hudi-rs marks those not null)
    assert [(f.name, f.type) for f in ours] == [(f.name, f.type) for f in theirs]
    assert ours.names[:5] == list(table_mod.META_FIELDS)
    assert table.file_schema().names == ours.names
    assert table.arrow_schema(include_meta_fields=False).names == ours.names[5:]


# -------------------------------------------------------------------- index
def _lance_stats(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ColumnStatsIndex, pa.Table]:
    tried: list[str] = []

    def no_footer(path: str) -> parquet_footer.FooterStats:
        tried.append(path)
        return parquet_footer.FooterStats(None, [], [], f"{path}: read as parquet")

    monkeypatch.setattr(stats_reader, "read_footer_stats", no_footer)
    index = ColumnStatsIndex(HudiTable.open(path), max_workers=1)
    stats = index.load()
    assert tried == []  # no footer read attempted
    return index, stats


@pytest.mark.parametrize("name", sorted(LANCE))
def test_lance_files_have_unknown_statistics(fixture_copy: Callable[[str], Path], name: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = fixture_copy(name)
    index, stats = _lance_stats(path, monkeypatch)
    n = LANCE[name][0]
    assert stats.num_rows == n
    assert stats.column("path").to_pylist() == [s.base_file.path for s in index.hudi_table.latest_file_slices()
                                                if s.base_file is not None]
    assert stats.column("num_rows").null_count == n  # unknown, never 0 (which would read as an empty file)
    stat_columns = [c for c in stats.column_names if "::" in c]
    assert {c.split("::")[0] for c in stat_columns} >= {"_hoodie_record_key", LANCE[name][3].split()[1]}
    assert all(stats.column(c).null_count == n for c in stat_columns)
    assert index.last.files_without_statistics == n
    assert (index.last.files_from_footers, index.last.files_from_index, index.last.unreadable_footers) == (0, 0, 0)
    assert index.errors == []
    assert not index.directory.exists()  # nothing persisted
    again = ColumnStatsIndex(HudiTable.open(path))
    assert again.load().equals(stats) and again.counters.files_without_statistics == n


def _plant_empty_rows(index: ColumnStatsIndex) -> None:
    """A well-formed index segment claiming every latest base file is empty (num_rows 0): the kind of wrong row
    that must never be used for a file whose format has no statistics."""
    slices = [s for s in index.hudi_table.latest_file_slices() if s.base_file is not None]
    n = len(slices)
    schema = stats_schema(index.target_leaves(), with_has_log_files=False)
    columns: dict[str, pa.Array] = {
        "path": pa.array([s.base_file.path for s in slices if s.base_file is not None], pa.string()),
        "partition": pa.array([s.partition_path for s in slices], pa.string()),
        "file_size": pa.array([s.base_file.size for s in slices if s.base_file is not None], pa.int64()),
        "instant": pa.array([s.base_instant for s in slices], pa.string()),
        "num_rows": pa.array([0] * n, pa.int64()),
    }
    for f in schema:
        if f.name not in columns:
            columns[f.name] = pa.array([0] * n, pa.int64()) if f.name.endswith("::null_count") \
                else pa.nulls(n, f.type)
    segment = pa.Table.from_pydict(columns, schema=schema).replace_schema_metadata({FORMAT_KEY: FORMAT_VERSION})
    segments.validate_segment(segment, "planted")  # the index would accept it as its own
    index.directory.mkdir(parents=True)
    write_segment(segment, index.directory / "seg-20000101000000.000000000-000000000000.arrow")


@pytest.mark.parametrize("name", sorted(LANCE))
def test_a_stored_row_for_a_lance_file_is_never_used(fixture_copy: Callable[[str], Path], name: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = fixture_copy(name)
    _plant_empty_rows(ColumnStatsIndex(HudiTable.open(path)))
    index, stats = _lance_stats(path, monkeypatch)
    assert index.last.segments_read == 1 and index.last.corrupt_segments == 0
    assert stats.column("num_rows").null_count == stats.num_rows == LANCE[name][0]
    assert index.last.files_from_index == 0


# ------------------------------------------------------------------ pruning
@pytest.mark.parametrize("plant", [False, True], ids=["fresh", "wrong-rows-stored"])
@pytest.mark.parametrize("name", sorted(LANCE))
def test_pruning_keeps_every_lance_file(fixture_copy: Callable[[str], Path], name: str, plant: bool) -> None:
    path = fixture_copy(name)
    table = HudiTable.open(path)
    if plant:
        _plant_empty_rows(ColumnStatsIndex(table))
    n_slices, n_with_logs, _rows, text = LANCE[name]
    slices = table.latest_file_slices()
    result = plan_slices(table, ColumnStatsIndex(table), slices, sarg.read_filter(text, None),
                          explain=True)
    assert result.files_total == n_slices
    assert result.files_kept == n_slices and result.slices == slices
    assert result.dropped_by_partition == result.dropped_by_statistics == 0
    # kept because their statistics are unknown: a Lance base file's own; a merged slice's Lance base part is
    # unknown too (its log files may also keep the slice on their own statistics)
    assert n_slices - n_with_logs <= result.kept_unknown <= n_slices
    assert result.kept_log_files == n_with_logs
    # judged by statistics (a record index the files were checked against may join them; it keeps the Lance files)
    assert all(v.stage.startswith("statistics") for v in result.verdicts) and len(result.verdicts) == n_slices
    for v, s in zip(result.verdicts, slices, strict=True):
        assert v.unknown or s.log_files
        if s.log_files:
            assert any(p[0].startswith("base ") and "(no match)" not in p[1] for p in v.parts)


def test_planted_empty_rows_do_drop_parquet_files(fixture_copy: Callable[[str], Path]) -> None:
    """The control of the tests above: the same planted rows on a parquet table are trusted (the key matches)
    and drop every file, so a Lance file kept there is kept because of its format."""
    path = fixture_copy(PARQUET_V8)
    table = HudiTable.open(path)
    _plant_empty_rows(ColumnStatsIndex(table))
    slices = table.latest_file_slices()
    result = plan_slices(table, ColumnStatsIndex(table), slices, sarg.read_filter("leaf-(EQUALS id 1)", None))
    assert result.files_total == len(slices) > 0
    # an empty file is dropped by whichever stage sees its row count first
    assert result.files_kept == 0 and result.dropped_by_partition + result.dropped_by_statistics == len(slices)
