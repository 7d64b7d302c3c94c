"""Merge-on-read slices are judged as slices, not as base files: a slice's rows are its base file's rows merged
with its log files, so nothing known about the base file alone (its statistics, its row count, partition columns
stored in it) may drop a slice that has log files. Only partition values that live in the path alone can.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.hive_types import table_sarg_schema
from hive_bridge.pruning import prune_slices
from hive_bridge.spark import list_files
from hive_bridge.table import HudiTable
from hive_bridge.table.stats import ColumnStatsIndex

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


FILTERS = [
    "leaf-(EQUALS rider rider-G)",
    "(not leaf-(LESS_THAN_EQUALS fare 40.0))",
    "leaf-(IS_NULL uuid)",
    "(and leaf-(EQUALS rider nobody) leaf-(LESS_THAN fare -1.0))",
    "leaf-(EQUALS city chennai)",  # city is stored in the files too: the path is not the value's proof
]


@pytest.mark.parametrize("text", FILTERS)
def test_slice_with_logs_and_an_empty_base_file_is_kept(emptied_base: tuple[Path, str], text: str) -> None:
    root, file_id = emptied_base
    _, listing = list_files(str(root), text, explain=True)[:2]
    verdict = next(v for v in listing.verdicts if file_id in v.path)
    assert verdict.kept, (text, verdict)
    assert verdict.stage == "log-files"
    assert "empty file" not in verdict.reason
    assert any(s.file_id == file_id for s in listing.slices)
    assert listing.kept_log_files == 1


def test_slices_without_logs_are_still_pruned(emptied_base: tuple[Path, str]) -> None:
    root, _ = emptied_base
    _, listing = list_files(str(root), "leaf-(EQUALS rider nobody)")[:2]
    assert listing.files_total == 3
    assert listing.files_kept == 1  # only the slice with logs


@st.composite
def _mor_filter(draw: st.DrawFn) -> str:
    col, lits = draw(st.sampled_from([
        ("rider", st.sampled_from(["rider-A", "rider-F", "rider-G", "zzz"])),
        ("fare", st.sampled_from(["-1.0", "20.0", "34.15", "43.4", "1000.0"])),
        ("city", st.sampled_from(["chennai", "san_francisco", "sao_paulo"])),
        ("ts", st.sampled_from(["0", "1695046462179", "99999999999999"])),
    ]))
    op = draw(st.sampled_from(["EQUALS", "LESS_THAN", "LESS_THAN_EQUALS", "IS_NULL"]))
    leaf = f"leaf-({op} {col})" if op == "IS_NULL" else f"leaf-({op} {col} {draw(lits)})"
    return f"(not {leaf})" if draw(st.booleans()) else leaf


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_mor_filter())
def test_no_verdict_on_a_base_file_drops_a_slice_with_logs(shared_tables: dict[str, Path], text: str) -> None:
    """On every real merge-on-read table, under random filters, a slice with log files (or none but logs) is
    dropped only by a partition column that lives in the path alone."""
    for name, root in shared_tables.items():
        if ".mor." not in name or "trips" not in name:
            continue
        table = HudiTable.open(root)
        s = sarg.parse(text, table_sarg_schema(table))
        slices = table.latest_file_slices()
        listing = prune_slices(table, ColumnStatsIndex(table, persist=False), slices, s, None, explain=True)
        in_files = set(table.file_schema().names)
        path_only = [f for f in table.properties.partition_fields if f not in in_files]
        for v, sl in zip(listing.verdicts, slices, strict=True):
            if sl.log_files or sl.base_file is None:
                assert v.kept or (v.stage == "partition" and path_only), (name, text, v)


def test_replay_keeps_the_slice_with_logs(emptied_base: tuple[Path, str], tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    from hive_bridge.cli import main

    root, file_id = emptied_base
    log = tmp_path / "filters.txt"
    log.write_text("\n".join(FILTERS) + "\n", encoding="utf-8")
    assert main(["replay", "--json", "--table", str(root), str(log)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert len(rows) == len(FILTERS)
    for row in rows:
        assert any(file_id in kept for kept in row["kept"]), row
        assert row["kept_log_files"] == 1


@pytest.mark.spark
def test_reads_keep_the_slice_with_logs(spark, emptied_base: tuple[Path, str]) -> None:  # type: ignore[no-untyped-def]
    """read_hudi pruned equals unpruned and equals hudi-rs's merged rows; the data source reads the same rows."""
    import hudi

    from hive_bridge.spark import read_hudi, register

    root, file_id = emptied_base
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
        assert any(s.file_id == file_id for s in pruned.listing.slices)
        got = sorted(r[0] for r in pruned.df.select("_hoodie_record_key").collect())
        assert got == sorted(r[0] for r in full.df.select("_hoodie_record_key").collect())
        assert sorted(r[0] for r in source.where(where).select("_hoodie_record_key").collect()) == got
    assert sorted(r[0] for r in read_hudi(spark, str(root), None).df.select("_hoodie_record_key").collect()) \
        == truth_keys
