"""Merge-on-read slices are judged as slices, not as base files: a slice's rows are its base file's rows merged
with its log files, so nothing known about the base file alone (its statistics, its row count, partition columns
stored in it) may drop a slice that has log files; the union of the base file's and the log files' ranges can.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.pruning.pruner import plan_slices
from hive_bridge.spark import list_files
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable

TRIPS_V6 = "quickstart_trips_table.mor.avro.v6_trips_8i1u"  # table version 6, Avro log blocks


@pytest.fixture()
def emptied_base(shared_tables: dict[str, Path], tmp_path: Path) -> tuple[Path, str]:
    """The v6 trips table with the base file of its one slice with logs rewritten with 0 rows (same schema)."""
    root = tmp_path / "trips"
    shutil.copytree(shared_tables[TRIPS_V6], root)
    table = HudiTable.open(root)
    with_logs = [s for s in table.latest_file_slices() if s.log_files]
    assert len(with_logs) == 1 and with_logs[0].base_file is not None
    base = Path(with_logs[0].base_file.full_path)
    pq.write_table(pq.read_table(base).slice(0, 0), base)
    return root, with_logs[0].file_id


# the slice's one log record is rider-D, fare 25.0, city san_francisco; its base file is emptied: the merged
# slice holds that record only. A float column may hold NaN its min/max do not show (NaN > 40 in Spark), but the
# log's values are all read (its NaN count is 0) and the emptied base file holds no row.
FILTERS = {
    "leaf-(EQUALS rider rider-G)": False,
    "leaf-(EQUALS rider rider-D)": True,
    "(not leaf-(LESS_THAN_EQUALS fare 40.0))": False,
    "leaf-(LESS_THAN fare 30.0)": True,
    "leaf-(LESS_THAN fare 20.0)": False,
    "leaf-(IS_NULL uuid)": False,
    "(and leaf-(EQUALS rider nobody) leaf-(LESS_THAN fare -1.0))": False,
    "leaf-(EQUALS city chennai)": False,  # city is stored in the files too: judged by the log's values
    "leaf-(EQUALS city san_francisco)": True,
}


@pytest.mark.parametrize("text", FILTERS)
def test_slice_with_logs_and_an_empty_base_file_is_judged_by_its_log(emptied_base: tuple[Path, str],
                                                                     text: str) -> None:
    root, file_id = emptied_base
    _, listing = list_files(str(root), text, explain=True)[:2]
    verdict = next(v for v in listing.verdicts if file_id in v.path)
    assert verdict.kept is FILTERS[text], (text, verdict)
    assert verdict.stage in ("statistics", "partition")  # city is a partition column stored in the files
    assert "empty file" not in verdict.reason
    assert [p[0].split(" ", 1)[0] for p in verdict.parts] == ["base", "log"]
    assert verdict.parts[0][1] == "NO (no match)"  # the empty base file alone holds nothing
    assert any(s.file_id == file_id for s in listing.slices) is FILTERS[text]
    assert listing.kept_log_files == int(FILTERS[text])
    assert listing.log_files_total == 1 and listing.log_files_unknown == 0


def test_read_optimized_ignores_the_logs(emptied_base: tuple[Path, str]) -> None:
    """A read-optimized query reads base files only: the emptied base file holds no row, whatever its logs."""
    root, file_id = emptied_base
    _, listing = list_files(str(root), "leaf-(EQUALS rider rider-D)", explain=True, query_type="read_optimized")[:2]
    assert listing.query_type == "read_optimized"
    assert not any(s.file_id == file_id for s in listing.slices)
    assert all(not s.log_files for s in listing.slices)
    _, everything = list_files(str(root), None, query_type="read_optimized")[:2]
    assert all(not s.log_files for s in everything.slices) and everything.files_total == 3


def test_slices_without_logs_are_still_pruned(emptied_base: tuple[Path, str]) -> None:
    root, file_id = emptied_base
    _, listing = list_files(str(root), "leaf-(EQUALS rider nobody)")[:2]
    assert listing.files_total == 3
    assert listing.files_kept == 0
    _, listing = list_files(str(root), "leaf-(EQUALS rider rider-D)")[:2]
    assert [s.file_id for s in listing.slices] == [file_id]


@st.composite
def _mor_filter(draw: st.DrawFn) -> str:
    col, lits = draw(st.sampled_from([
        ("rider", st.sampled_from(["rider-A", "rider-D", "rider-F", "rider-G", "zzz"])),
        ("fare", st.sampled_from(["-1.0", "20.0", "25.0", "34.15", "43.4", "1000.0"])),
        ("city", st.sampled_from(["chennai", "san_francisco", "sao_paulo"])),
        ("ts", st.sampled_from(["0", "1695046462179", "99999999999999"])),
    ]))
    op = draw(st.sampled_from(["EQUALS", "LESS_THAN", "LESS_THAN_EQUALS", "IS_NULL"]))
    leaf = f"leaf-({op} {col})" if op == "IS_NULL" else f"leaf-({op} {col} {draw(lits)})"
    return f"(not {leaf})" if draw(st.booleans()) else leaf


def _matches(rows: pa.Table, text: str) -> bool:
    """Whether some row satisfies a one-leaf filter of `_mor_filter` (SQL semantics: null is not true; these
    tables hold no NaN)."""
    negate = text.startswith("(not ")
    op, _, rest = text.removeprefix("(not ").removeprefix("leaf-(").rstrip(")").partition(" ")
    col, _, lit = rest.partition(" ")
    values = rows.column(col)
    if op == "IS_NULL":
        truth = pc.is_null(values)
    else:
        literal = pa.scalar(lit).cast(values.type) if not pa.types.is_string(values.type) else pa.scalar(lit)
        truth = {"EQUALS": pc.equal, "LESS_THAN": pc.less, "LESS_THAN_EQUALS": pc.less_equal}[op](values, literal)
    if negate:
        truth = pc.invert(truth)
    return bool(pc.any(pc.fill_null(truth, False)).as_py())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_mor_filter())
def test_no_slice_with_a_matching_merged_row_is_dropped(shared_tables: dict[str, Path], text: str) -> None:
    """On the real merge-on-read trips tables (v6 and v8, Avro log blocks), under random filters, every slice
    whose merged rows (hudi-rs's file-group reader) hold a match is kept, by the union of its parts' ranges."""
    import hudi

    for name, root in shared_tables.items():
        if ".mor." not in name or "trips" not in name:
            continue
        table = HudiTable.open(root)
        s = sarg.parse(text, table_sarg_schema(table))
        slices = table.latest_file_slices()
        listing = plan_slices(table, ColumnStatsIndex(table, persist=False), slices, s, explain=True)
        reader = hudi.HudiTableBuilder.from_base_uri(str(root)).build().create_file_group_reader_with_options()
        for v, sl in zip(listing.verdicts, slices, strict=True):
            base = sl.base_file.path if sl.base_file is not None else ""
            merged = reader.read_file_slice_from_paths(base, [lf.path for lf in sl.log_files])
            rows = pa.Table.from_batches(merged if isinstance(merged, list) else [merged])
            if _matches(rows, text):
                assert v.kept, (name, text, v)


def test_replay_judges_the_slice_by_its_log(emptied_base: tuple[Path, str], tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    from hive_bridge.app.cli import main

    root, file_id = emptied_base
    log = tmp_path / "filters.txt"
    log.write_text("\n".join(FILTERS) + "\n", encoding="utf-8")
    assert main(["replay", "--json", "--table", str(root), str(log)]) == 0
    *rows, summary = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert summary["summary"] is True
    assert len(rows) == len(FILTERS)
    for row in rows:
        expected = FILTERS[row["filter"]]
        assert any(file_id in kept for kept in row["kept"]) is expected, row
        assert row["kept_log_files"] == int(expected)
        assert row["query_type"] == "snapshot" and row["log_files_total"] == 1


@pytest.mark.spark
def test_reads_of_the_slice_with_logs_equal_unpruned_reads(spark, emptied_base: tuple[Path, str]) -> None:  # type: ignore[no-untyped-def]
    """read_hudi pruned equals unpruned and equals hudi-rs's merged rows; the data source reads the same rows."""
    import hudi

    from hive_bridge.spark import read_hudi, register

    root, _ = emptied_base
    merged = hudi.HudiTableBuilder.from_base_uri(str(root)).build().read()
    truth_keys = sorted(k for b in (merged if isinstance(merged, list) else [merged])
                        for k in b.column("_hoodie_record_key").to_pylist())
    register(spark)
    source = spark.read.format("hudi-hive").load(str(root))
    for text, where in [("leaf-(EQUALS rider rider-G)", "rider = 'rider-G'"),
                        ("(not leaf-(LESS_THAN_EQUALS fare 40.0))", "fare > 40.0"),
                        ("leaf-(EQUALS city chennai)", "city = 'chennai'")]:
        pruned = read_hudi(spark, str(root), text)
        full = read_hudi(spark, str(root), text, prune=False)
        got = sorted(r[0] for r in pruned.df.select("_hoodie_record_key").collect())
        assert got == sorted(r[0] for r in full.df.select("_hoodie_record_key").collect())
        assert sorted(r[0] for r in source.where(where).select("_hoodie_record_key").collect()) == got
    assert sorted(r[0] for r in read_hudi(spark, str(root), None).df.select("_hoodie_record_key").collect()) \
        == truth_keys


@pytest.mark.spark
def test_read_optimized_reads_base_files_only(spark, shared_tables: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    """read_hudi and the data source (option hoodie.datasource.query.type) read base files only in a
    read-optimized query: the log's update is not seen there, and is in a snapshot query."""
    from hive_bridge.spark import QUERY_TYPE_OPTION, SparkReadError, read_hudi, register

    root = str(shared_tables[TRIPS_V6])
    register(spark)
    update = "9909a8b1-2d15-4d3d-8ec9-efc48c536a00"  # the log record's key: fare 25.0 after the deltacommit

    def fares(df) -> list[float]:  # type: ignore[no-untyped-def]
        return [r[0] for r in df.where(f"uuid = '{update}'").select("fare").collect()]

    assert fares(read_hudi(spark, root, None).df) == [25.0]
    ro = read_hudi(spark, root, None, query_type="read_optimized")
    assert len(fares(ro.df)) == 1 and fares(ro.df) != [25.0]
    assert ro.listing.query_type == "read_optimized"
    source = spark.read.format("hudi-hive")
    assert fares(source.load(root)) == [25.0]
    assert fares(source.option(QUERY_TYPE_OPTION, "read_optimized").load(root)) == fares(ro.df)
    assert fares(spark.read.format("hudi-hive").option(QUERY_TYPE_OPTION, "snapshot").load(root)) == [25.0]
    with pytest.raises(SparkReadError, match="unknown query type"):
        read_hudi(spark, root, None, query_type="incremental")


@pytest.mark.spark
@pytest.mark.parametrize("query_type", ["snapshot", "read_optimized"])
def test_replay_verify_covers_merged_slices(spark, shared_tables: dict[str, Path], tmp_path: Path,  # type: ignore[no-untyped-def]
                                            capsys, query_type: str) -> None:
    """`replay --verify` reads every filter pruned and unpruned (merged slices through hudi-rs in a snapshot
    query, base files only in a read-optimized one): the rows are identical, and merged slices are pruned."""
    import json

    from hive_bridge.app.cli import main

    root = shared_tables["quickstart_trips_table.mor.avro.v8_trips_8i3u1d"]
    log = tmp_path / "filters.txt"
    texts = ["leaf-(EQUALS rider rider-Z)",
             "(or leaf-(LESS_THAN fare 0.0) (not leaf-(LESS_THAN_EQUALS fare 1000.0)))",
             "(and leaf-(EQUALS city san_francisco) (not leaf-(LESS_THAN rider rider-C)))",
             "(not leaf-(LESS_THAN_EQUALS _hoodie_commit_time 20251220210000000))"]
    log.write_text("\n".join(texts) + "\n", encoding="utf-8")
    code = main(["replay", "--json", "--verify", "--query-type", query_type, "--table", str(root), str(log)])
    *rows, summary = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert summary["summary"] is True
    assert code == 0 and len(rows) == len(texts)
    assert all(r["verified"] for r in rows), rows
    assert all(r["query_type"] == query_type for r in rows)
    if query_type == "snapshot":
        assert all(r["log_files_total"] > 0 for r in rows)
        assert rows[0]["files_kept"] == 0  # no rider-Z in any base file or log: merged slices dropped too
    else:
        assert all(r["log_files_total"] == 0 for r in rows)


MOR_WITH_LOGS = ["quickstart_trips_table.mor.avro.v6_trips_8i1u", "quickstart_trips_table.mor.avro.v8_trips_8i3u1d",
                 "sample_table.mor.parquet.v6_nonpartitioned", "sample_table.mor.parquet.v6_complexkeygen_hivestyle",
                 "sample_table.mor.parquet.v6_nonpartitioned_rollback",
                 "sample_table.mor.parquet.v6_simplekeygen_nonhivestyle"]


def _sql_literal(value: object) -> str:
    return f"'{value}'" if isinstance(value, str) else repr(value)


@pytest.mark.spark
@pytest.mark.parametrize("name", MOR_WITH_LOGS)
def test_pruned_reads_equal_full_merged_reads_on_every_mor_fixture(spark, shared_tables: dict[str, Path],  # type: ignore[no-untyped-def]
                                                                   name: str) -> None:
    """Filters aimed at what the logs wrote (the key of a log record, its commit): the pruned read equals the
    full merged read, row for row, and merged slices are judged (dropped where their parts cannot match)."""
    from hive_bridge.formats.logfile import BlockType, data_block_table, read_log_file
    from hive_bridge.spark import read_hudi

    root = str(shared_tables[name])
    table = HudiTable.open(root)
    merged = [s for s in table.latest_file_slices() if s.log_files]
    assert merged, name
    # the newest data block (an older one may have been rolled back)
    block = [b for s in merged for lf in s.log_files for b in read_log_file(lf.full_path).blocks
             if b.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA)][-1]
    record = data_block_table(block).to_pylist()[0]
    key = table.properties.record_key_fields[0]
    filters = [(f"{key} = {_sql_literal(record[key])}", True),
               (f"_hoodie_commit_time = '{record['_hoodie_commit_time']}'", True),
               (f"_hoodie_commit_time < '{record['_hoodie_commit_time']}'", len(table.latest_file_slices()) > 1),
               ("_hoodie_commit_time > '99999999999999999'", False)]
    judged = 0
    for text, matches in filters:
        pruned = read_hudi(spark, root, text)
        full = read_hudi(spark, root, text, prune=False)
        p = sorted(map(str, pruned.df.collect()))
        assert p == sorted(map(str, full.df.collect())), (name, text)
        if matches:
            assert p, (name, text)
        judged += pruned.listing.files_total - pruned.listing.files_kept
    assert judged > 0  # something was skipped (at least by the filter no commit matches)


@pytest.mark.spark
def test_data_source_lists_from_the_metadata_table_on_request(spark, shared_tables: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    """Option hoodie.metadata.enable=true (Hudi's own name) lists from the metadata table's files partition; the
    rows are the folder listing's; read_hudi takes listing= too."""
    from hive_bridge.spark import last_scan_report, read_hudi, register

    root = str(shared_tables["quickstart_trips_table.mor.avro.v8_trips_8i3u1d"])
    register(spark)
    plain = sorted(map(str, spark.read.format("hudi-hive").load(root).collect()))
    assert last_scan_report(root)["listing_source"] == "folders"
    with_mdt = sorted(map(str, spark.read.format("hudi-hive").option("hoodie.metadata.enable", "true")
                          .load(root).collect()))
    assert last_scan_report(root)["listing_source"] == "mdt"
    assert with_mdt == plain
    assert sorted(map(str, read_hudi(spark, root, None, listing="auto").df.collect())) == plain
