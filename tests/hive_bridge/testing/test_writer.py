"""The small Hudi writer: hudi-rs reads what it writes with the same latest slices and the same rows."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hive_bridge.errors import HudiTableError
from hive_bridge.table.table import META_FIELDS, HudiTable
from hive_bridge.testing.writer import HudiWriter, write_hudi_table
from tests.hive_bridge.oracle import our_slices, reference_slices


def _data(ids: list[int], tag: str = "n") -> pa.Table:
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": [f"{tag}{i}" for i in ids],
        "p": pa.array([i % 3 for i in ids], pa.int32()),
        "q": [f"x{i % 2}" for i in ids],
        "ts": pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=i) for i in ids],
                       pa.timestamp("us", tz="UTC")),
        "amount": pa.array([Decimal(i) / 4 for i in ids], pa.decimal128(10, 2)),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 30) for i in ids], pa.date32()),
    })


def _hudi_rs_rows(path: Path) -> dict[int, str]:
    from hudi import HudiTable as RsTable

    batches = RsTable(str(path)).read()
    table = pa.Table.from_batches(batches) if batches else pa.table({"id": [], "name": []})
    return dict(zip(table.column("id").to_pylist(), table.column("name").to_pylist(), strict=True))


LAYOUTS = [
    pytest.param(6, (), True, id="v6-nonpartitioned"),
    pytest.param(6, ("p",), True, id="v6-hive"),
    pytest.param(6, ("p",), False, id="v6-plain"),
    pytest.param(6, ("p", "q"), True, id="v6-hive-2-levels"),
    pytest.param(8, (), True, id="v8-nonpartitioned"),
    pytest.param(8, ("p",), True, id="v8-hive"),
    pytest.param(8, ("p", "q"), False, id="v8-plain-2-levels"),
]


@pytest.mark.parametrize(("version", "parts", "hive"), LAYOUTS)
def test_hudi_rs_reads_what_we_write(tmp_path: Path, version: int, parts: tuple[str, ...], hive: bool) -> None:
    path = tmp_path / "t"
    w = write_hudi_table(path, _data(list(range(30))), version=version, partition_fields=parts, hive_style=hive,
                         rows_per_file=4)
    first = w.table()
    assert first.properties.version == version and first.properties.partition_fields == list(parts)
    assert our_slices(first.latest_file_slices()) == reference_slices(path)
    upsert = w.upsert(_data([0, 1, 2, 100], tag="u"))
    assert upsert.completed and upsert.action == "commit"
    inflight = w.insert(_data([200, 201]), inflight=True)
    assert not inflight.completed and inflight.files
    table = w.table()
    assert [i.timestamp for i in table.timeline.inflight] == [inflight.instant]
    assert our_slices(table.latest_file_slices()) == reference_slices(path)
    rows = _hudi_rs_rows(path)
    expected = {i: f"n{i}" for i in range(30)} | {0: "u0", 1: "u1", 2: "u2", 100: "u100"}
    assert rows == expected
    # the upsert wrote new slices of existing file groups, with the same file ids
    touched = {s.file_id for s in table.latest_file_slices() if s.base_instant == upsert.instant}
    before = {s.file_id for s in first.latest_file_slices()}
    assert len(touched & before) >= 1 and len(touched - before) == 1
    # time travel to the first commit gives the first slices back
    first_instant = table.timeline.completed_writes[0].timestamp
    assert our_slices(table.latest_file_slices(as_of=first_instant)) == our_slices(first.latest_file_slices())
    assert our_slices(table.latest_file_slices(as_of=first_instant)) == reference_slices(path, first_instant)


@pytest.mark.parametrize("version", [6, 8])
def test_insert_overwrite_replaces_file_groups(tmp_path: Path, version: int) -> None:
    path = tmp_path / "t"
    w = write_hudi_table(path, _data(list(range(12))), version=version, partition_fields=["p"], rows_per_file=2)
    before = w.table().latest_file_slices()
    result = w.insert_overwrite(_data([0, 3]))  # both rows in partition p=0
    assert result.action == "replacecommit" and result.completed
    replaced_partition = "p=0"
    assert {p for p, _ in result.replaced} == {replaced_partition}
    table = w.table()
    after = table.latest_file_slices()
    assert our_slices(after) == reference_slices(path)
    in_p0 = [s for s in after if s.partition_path == replaced_partition]
    assert len(in_p0) == 1 and in_p0[0].base_instant == result.instant
    assert {s.file_id for s in after if s.partition_path != replaced_partition} == {
        s.file_id for s in before if s.partition_path != replaced_partition}
    assert _hudi_rs_rows(path) == {i: f"n{i}" for i in range(12) if i % 3 != 0} | {0: "n0", 3: "n3"}
    whole = w.insert_overwrite(_data([7]), whole_table=True)
    assert len(w.table().latest_file_slices()) == 1
    assert our_slices(w.table().latest_file_slices()) == reference_slices(path)
    assert len(whole.replaced) == len(after)


def test_meta_columns(tmp_path: Path) -> None:
    w = write_hudi_table(tmp_path / "t", _data(list(range(6))), partition_fields=["p", "q"],
                         record_key_fields=["id", "q"], rows_per_file=10)
    table = w.table()
    for s in table.latest_file_slices():
        assert s.base_file is not None
        data = pq.read_table(s.base_file.full_path)
        assert data.column_names[:5] == list(META_FIELDS)
        assert set(data.column("_hoodie_commit_time").to_pylist()) == {s.base_instant}
        assert set(data.column("_hoodie_file_name").to_pylist()) == {s.base_file.name}
        assert set(data.column("_hoodie_partition_path").to_pylist()) == {s.partition_path}
        for key, i, q in zip(data.column("_hoodie_record_key").to_pylist(), data.column("id").to_pylist(),
                             data.column("q").to_pylist(), strict=True):
            assert key == f"id:{i},q:{q}"
        seqnos = data.column("_hoodie_commit_seqno").to_pylist()
        assert len(set(seqnos)) == len(seqnos) and all(x.startswith(s.base_instant + "_") for x in seqnos)
        assert s.partition_values == {"p": str(data.column("p")[0].as_py()), "q": data.column("q")[0].as_py()}
        assert (Path(s.base_file.full_path).parent / ".hoodie_partition_metadata").is_file()


def test_commit_metadata_formats(tmp_path: Path) -> None:
    v6 = write_hudi_table(tmp_path / "v6", _data([1, 2]), version=6)
    (commit,) = (tmp_path / "v6" / ".hoodie").glob("*.commit")
    meta = json.loads(commit.read_text())
    stats = meta["partitionToWriteStats"][""]
    assert stats[0]["path"] == v6.table().latest_file_slices()[0].base_file.path  # type: ignore[union-attr]
    assert json.loads(meta["extraMetadata"]["schema"])["type"] == "record"
    write_hudi_table(tmp_path / "v8", _data([1, 2]), version=8)
    (commit8,) = (tmp_path / "v8" / ".hoodie" / "timeline").glob("*_*.commit")
    with commit8.open("rb") as f:
        (record,) = list(fastavro.reader(f))
    assert record["operationType"] == "INSERT" and record["partitionToWriteStats"][""][0]["numWrites"] == 2
    requested, completion = commit8.name.split(".")[0].split("_")
    assert completion > requested


def test_thousands_of_files_quickly(tmp_path: Path) -> None:
    w = HudiWriter(tmp_path / "t", partition_fields=["p"], rows_per_file=1)
    result = w.insert(_data(list(range(1200))))
    assert len(result.files) == 1200
    assert len(w.table().latest_file_slices()) == 1200


def test_instants_and_errors(tmp_path: Path) -> None:
    w = HudiWriter(tmp_path / "t", version=8)
    a, b = w.new_instant(), w.new_instant()
    assert len(a) == 17 and b > a
    w.insert(_data([1]), instant="29990101000000000")
    with pytest.raises(HudiTableError, match="not later"):
        w.insert(_data([2]), instant="29980101000000000")
    with pytest.raises(HudiTableError, match="17-digit"):
        w.insert(_data([2]), instant="2999")
    with pytest.raises(HudiTableError, match="record key"):
        w.insert(pa.table({"other": [1]}))
    reopened = HudiWriter(tmp_path / "t")
    assert reopened.new_instant() > "29990101000000000"
    with pytest.raises(HudiTableError, match="versions 6 and 8"):
        HudiWriter(tmp_path / "v9", version=9)
    mor = tmp_path / "mor"
    (mor / ".hoodie").mkdir(parents=True)
    (mor / ".hoodie" / "hoodie.properties").write_text(
        "hoodie.table.name=m\nhoodie.table.version=6\nhoodie.table.type=MERGE_ON_READ\n")
    with pytest.raises(HudiTableError, match="COPY_ON_WRITE"):
        HudiWriter(mor)


def test_reads_back_with_our_own_view(tmp_path: Path) -> None:
    w = write_hudi_table(tmp_path / "t", _data(list(range(10))), partition_fields=["p"], rows_per_file=3)
    w.upsert(_data([4], tag="u"))
    table = HudiTable.open(tmp_path / "t")
    rows: dict[int, str] = {}
    for s in table.latest_file_slices():
        assert s.base_file is not None
        t = pq.read_table(s.base_file.full_path, columns=["id", "name"])
        rows.update(zip(t.column("id").to_pylist(), t.column("name").to_pylist(), strict=True))
    assert rows == {i: ("u4" if i == 4 else f"n{i}") for i in range(10)}
    schema = table.arrow_schema(include_meta_fields=False)
    assert schema.names == ["id", "name", "p", "q", "ts", "amount", "day"]


def test_table_without_meta_fields(tmp_path: Path) -> None:
    path = tmp_path / "t"
    w = HudiWriter(path, partition_fields=["p"], populate_meta_fields=False, rows_per_file=3)
    w.insert(_data(list(range(9))))
    w.upsert(_data([1, 50], tag="u"))
    table = w.table()
    assert table.properties.populate_meta_fields is False
    for s in table.latest_file_slices():
        assert s.base_file is not None
        assert not set(META_FIELDS) & set(pq.read_schema(s.base_file.full_path).names)
    assert our_slices(table.latest_file_slices()) == reference_slices(path)
    assert _hudi_rs_rows(path) == {i: f"n{i}" for i in range(9)} | {1: "u1", 50: "u50"}


def test_upserts_find_keys_of_earlier_upserts(tmp_path: Path) -> None:
    """One writer's upserts remember the keys of the base files they read: keys an earlier upsert inserted or
    moved to a new slice are updated in place by the next, never duplicated (hudi-rs reads one row per key)."""
    path = tmp_path / "t"
    w = HudiWriter(path, partition_fields=("p",), rows_per_file=4)
    w.insert(_data(list(range(12))))
    w.upsert(_data([3, 100], "a"))
    w.upsert(_data([100, 3, 7], "b"))
    w.upsert(_data([7, 100], "c"))
    rows = _hudi_rs_rows(path)
    assert rows == {**{i: f"n{i}" for i in range(12)}, 3: "b3", 7: "c7", 100: "c100"}
    assert our_slices(w.table().latest_file_slices()) == reference_slices(path)
