"""Merge-on-read slices pruned by their parts: written by the test writer, checked against hudi-rs's merged rows.

Whole-record merges (the tables' payload / merge mode say each merged row is one record of one file) keep a
slice when any part may match; merges that may combine fields of several records use the union of the parts'
ranges. Updates that move values out of the base file's range, log-only file groups, deletes, rollbacks and
uncommitted logs are all covered."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import sarg
from hive_bridge.layout.properties import TableProperties
from hive_bridge.pruning import Pruner
from hive_bridge.pruning.pruner import plan_slices
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter

SCHEMA = {"id": "bigint", "amount": "double", "ts": "bigint"}


def _rows(ids: list[int], amounts: list[float], ts: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "amount": pa.array(amounts, pa.float64()),
                     "ts": pa.array([ts] * len(ids), pa.int64())})


def _table(root: Path, version: int = 8) -> HudiWriter:
    """Three file groups: ids 0-9, 10-19, 20-29 with amount = id / 2; then id 9's amount moves to -20 (a log
    record far below its base file's range [0, 4.5])."""
    w = HudiWriter(root, table_type="MERGE_ON_READ", version=version, record_key_fields=("id",),
                   precombine_field="ts", rows_per_file=10)
    w.insert(_rows(list(range(30)), [i / 2 for i in range(30)], 0))
    w.upsert(_rows([9], [-20.0], 1))
    return w


def _merged(root: Path, s) -> pa.Table:  # type: ignore[no-untyped-def]
    import hudi

    reader = hudi.HudiTableBuilder.from_base_uri(str(root)).build().create_file_group_reader_with_options()
    out = reader.read_file_slice_from_paths(s.base_file.path if s.base_file else "", [lf.path for lf in s.log_files])
    batches = out if isinstance(out, list) else [out]
    return pa.Table.from_batches(batches) if batches else pa.table({"id": pa.array([], pa.int64())})


def _kept(root: Path, text: str, query_type: str = "snapshot") -> set[str]:
    table = HudiTable.open(root)
    listing = plan_slices(table, ColumnStatsIndex(table), table.latest_file_slices(), sarg.parse(text, SCHEMA),
                           query_type=query_type)
    return {s.file_id for s in listing.slices}


def _group_of(root: Path, key: int) -> str:
    table = HudiTable.open(root)
    for s in table.latest_file_slices():
        if key in _merged(root, s).column("id").to_pylist():
            return s.file_id
    raise AssertionError(f"no slice holds {key}")


@pytest.mark.parametrize("version", [6, 8])
def test_an_update_moved_out_of_the_base_range_is_found(tmp_path: Path, version: int) -> None:
    root = tmp_path / "t"
    _table(root, version)
    g = _group_of(root, 9)
    assert _kept(root, "leaf-(EQUALS amount -20.0)") == {g}  # only the log holds it
    assert _kept(root, "leaf-(EQUALS amount -20.0)", "read_optimized") == set()  # base files alone: nothing
    assert _kept(root, "leaf-(EQUALS amount 4.5)") == {g}  # the base still holds id 9's old value (unmerged)
    assert _kept(root, "leaf-(EQUALS amount 4.5)", "read_optimized") == {g}


def test_whole_record_merge_drops_what_only_the_union_covers(tmp_path: Path) -> None:
    """amount BETWEEN -10 AND -5: the union of the slice's ranges [-20, 4.5] covers it, but neither the base
    file [0, 4.5] nor the log [-20, -20] does, and every merged row is one of their records: dropped, as hudi-rs
    confirms (no merged row in range)."""
    root = tmp_path / "t"
    _table(root)
    text = "leaf-(BETWEEN amount -10.0 -5.0)"
    table = HudiTable.open(root)
    assert table.properties.whole_record_merge
    assert _kept(root, text) == set()
    for s in table.latest_file_slices():
        amounts = _merged(root, s).column("amount").to_pylist()
        assert not any(-10.0 <= a <= -5.0 for a in amounts)
    listing = plan_slices(table, ColumnStatsIndex(table), table.latest_file_slices(), sarg.parse(text, SCHEMA),
                           explain=True)
    merged = [v for v in listing.verdicts if v.parts]
    assert merged and all("whole-record merge" in v.reason and "no part may match" in v.reason for v in merged)


def test_a_merge_that_combines_fields_uses_the_union(tmp_path: Path) -> None:
    """With a payload that may merge fields of several records into one row (a partial update), a row may hold
    the base record's amount beside the log record's other fields: only the union bounds it, so the slice whose
    union covers the range is kept."""
    root = tmp_path / "t"
    _table(root)
    g = _group_of(root, 9)  # before the change: hudi-rs has no merger for a CUSTOM merge mode
    props = root / ".hoodie" / "hoodie.properties"
    text = props.read_text(encoding="latin-1")
    text = text.replace("hoodie.record.merge.mode=EVENT_TIME_ORDERING", "hoodie.record.merge.mode=CUSTOM")
    text = text.replace("DefaultHoodieRecordPayload", "PartialUpdateAvroPayload")
    text += "hoodie.record.merge.strategy.id=00000000-0000-0000-0000-000000000000\n"
    props.write_text(text, encoding="latin-1")
    table = HudiTable.open(root)
    assert not table.properties.whole_record_merge
    assert _kept(root, "leaf-(BETWEEN amount -10.0 -5.0)") == {g}
    listing = plan_slices(table, ColumnStatsIndex(table), table.latest_file_slices(),
                           sarg.parse("leaf-(BETWEEN amount -10.0 -5.0)", SCHEMA), explain=True)
    (v,) = [v for v in listing.verdicts if v.kept]
    assert "union of the parts' ranges" in v.reason


@pytest.mark.parametrize(("props", "whole"), [
    ({"hoodie.record.merge.mode": "EVENT_TIME_ORDERING"}, True),
    ({"hoodie.record.merge.mode": "COMMIT_TIME_ORDERING"}, True),
    ({"hoodie.record.merge.mode": "CUSTOM"}, False),
    ({"hoodie.record.merge.mode": "CUSTOM", "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000",
      "hoodie.compaction.payload.class": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"}, True),
    ({"hoodie.record.merge.mode": "EVENT_TIME_ORDERING", "hoodie.table.partial.update.mode": "KEEP_VALUES"}, False),
    ({"hoodie.compaction.payload.class": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
      "hoodie.compaction.record.merger.strategy": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"}, True),
    ({"hoodie.compaction.payload.class": "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload"},
     False),
    ({"hoodie.compaction.payload.class": "org.apache.hudi.common.model.debezium.PostgresDebeziumAvroPayload"},
     False),
    ({"hoodie.compaction.payload.class": "com.example.MyPayload"}, False),
    ({"hoodie.compaction.record.merger.strategy": "1897ef5f-18bc-4557-939c-9d6a8afd1519"}, False),
    ({}, True),  # 0.x defaults: OverwriteWithLatestAvroPayload
])
def test_whole_record_merge_from_table_properties(tmp_path: Path, props: dict[str, str], whole: bool) -> None:
    hoodie = tmp_path / ".hoodie"
    hoodie.mkdir()
    lines = ["hoodie.table.name=t", "hoodie.table.type=MERGE_ON_READ", "hoodie.table.version=6",
             "hoodie.table.recordkey.fields=id"] + [f"{k}={v}" for k, v in props.items()]
    (hoodie / "hoodie.properties").write_text("\n".join(lines) + "\n", encoding="latin-1")
    assert TableProperties.load(tmp_path).whole_record_merge is whole


def test_deleted_rollback_and_uncommitted_records(tmp_path: Path) -> None:
    """A deleted row, a rolled-back update and an uncommitted one never make a slice lose a row (they can only
    keep more); a log-only file group is judged by its logs, and absent from a read-optimized query."""
    root = tmp_path / "t"
    w = _table(root, version=6)
    w.delete(pa.table({"id": pa.array([15], pa.int64())}))
    bad = w.upsert(_rows([25], [-99.0], 2))
    w.rollback(bad)
    w.upsert(_rows([26], [-77.0], 3), inflight=True)
    w.upsert(_rows([100, 101], [500.0, 501.0], 4), inserts_to_logs=True)
    table = HudiTable.open(root)
    log_only = [s for s in table.latest_file_slices() if s.base_file is None]
    assert len(log_only) == 1
    assert _kept(root, "leaf-(EQUALS amount 500.0)") == {log_only[0].file_id}
    assert _kept(root, "leaf-(EQUALS amount 500.0)", "read_optimized") == set()
    # every filter: every slice with a matching merged row is kept
    pruner = Pruner(table, ColumnStatsIndex(table), table.latest_file_slices())
    merged = {s.file_id: _merged(root, s) for s in table.latest_file_slices()}
    for text, match in [("leaf-(EQUALS amount -99.0)", lambda a: a == -99.0),
                        ("leaf-(EQUALS amount -77.0)", lambda a: a == -77.0),
                        ("leaf-(EQUALS amount 7.5)", lambda a: a == 7.5),
                        ("leaf-(LESS_THAN amount 0.0)", lambda a: a < 0.0),
                        ("(not leaf-(LESS_THAN amount 100.0))", lambda a: a >= 100.0)]:
        kept = {s.file_id for s in pruner.run(sarg.parse(text, SCHEMA)).slices}
        for fid, rows in merged.items():
            if any(a is not None and match(a) for a in rows.column("amount").to_pylist()):
                assert fid in kept, (text, fid)
