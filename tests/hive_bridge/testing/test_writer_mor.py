"""The writer's merge-on-read tables: hudi-rs (the `hudi` package) sees the same latest file slices as our file-system
view and the same merged rows as a plain Python model of the table (key -> row), through deltacommits to log files
(Avro and parquet data blocks, delete blocks), log-only file groups, inflight writes, rollbacks and compactions, on
table versions 6 and 8."""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.logfile import (
    BlockType,
    HeaderKey,
    data_block_table,
    delete_block_keys,
    read_log_file,
)
from hive_bridge.layout.fsview import parse_log_file_name
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter, WriteResult

DATA_COLUMNS = ["id", "name", "p", "ts", "at", "amount", "day"]


def _data(ids: list[int], tag: str, ts: int) -> pa.Table:
    """Rows keyed by `id`; `ts` is the ordering (precombine) field: it grows with every write, so the event-time
    order hudi-rs merges by is the commit order the model applies. Timestamps are time-zone aware (hudi-rs
    panics on naive ones)."""
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": [f"{tag}{i}" for i in ids],
        "p": pa.array([i % 3 for i in ids], pa.int32()),
        "ts": pa.array([ts] * len(ids), pa.int64()),
        "at": pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=i, seconds=ts) for i in ids],
                       pa.timestamp("us", tz="UTC")),
        "amount": pa.array([Decimal(i * 100 + ts) / 4 for i in ids], pa.decimal128(10, 2)),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=(i + ts) % 60) for i in ids], pa.date32()),
    })


def _keys(ids: list[int]) -> pa.Table:
    return _data(ids, "", 0).select(["id", "p"])


class Model:
    """The table as a dict key -> row, with the data of every completed deltacommit applied in order."""

    def __init__(self) -> None:
        self.rows: dict[int, dict[str, Any]] = {}
        self.undo: list[tuple[str, dict[int, dict[str, Any]]]] = []  # deltacommits that can still be rolled back

    def apply(self, result: WriteResult, upserts: pa.Table | None = None, deletes: list[int] = ()) -> None:
        assert result.completed
        self.undo.append((result.instant, dict(self.rows)))
        for row in (upserts.to_pylist() if upserts is not None else []):
            self.rows[row["id"]] = row
        for i in deletes:
            self.rows.pop(i, None)

    def rolled_back(self, instant: str) -> None:
        last, before = self.undo.pop()
        assert last == instant
        self.rows = before

    def compacted(self) -> None:
        self.undo.clear()


def _rs_table(path: Path) -> Any:
    from hudi import HudiTableBuilder

    return HudiTableBuilder.from_base_uri(str(path.absolute())).build()


def _rs_slices(path: Path) -> list[tuple[str, str, str, str, tuple[str, ...]]]:
    out = []
    for s in _rs_table(path).get_file_slices():
        base = s.base_file_relative_path() if s.base_file_name else ""  # log-only: hudi-rs gives "<partition>/"
        out.append((s.partition_path, s.file_id, s.creation_instant_time, base, tuple(sorted(s.log_file_names))))
    return sorted(out)


def _our_slices(path: Path) -> list[tuple[str, str, str, str, tuple[str, ...]]]:
    return sorted(
        (s.partition_path, s.file_id, s.base_instant, s.base_file.path if s.base_file is not None else "",
         tuple(sorted(lf.name for lf in s.log_files)))
        for s in HudiTable.open(path).latest_file_slices()
    )


def _by_id(table: pa.Table | None) -> dict[int, dict[str, Any]]:
    if table is None or table.num_rows == 0:
        return {}
    rows = table.select(DATA_COLUMNS).to_pylist()
    out = {r["id"]: r for r in rows}
    assert len(out) == len(rows), "a key appears twice"
    return out


def _rs_rows(path: Path) -> dict[int, dict[str, Any]]:
    batches = _rs_table(path).read()
    return _by_id(pa.Table.from_batches(batches) if batches else None)


def _check(path: Path, w: HudiWriter, model: Model) -> None:
    """hudi-rs agrees with our view on the latest slices and with the model on the merged rows; so does the
    writer's own merge (what its compaction writes)."""
    assert _our_slices(path) == _rs_slices(path)
    assert _rs_rows(path) == model.rows
    assert _by_id(w.merged_rows()) == model.rows


def _mor(path: Path, version: int, parts: tuple[str, ...], **kw: Any) -> HudiWriter:
    return HudiWriter(path, version=version, table_type="MERGE_ON_READ", partition_fields=parts,
                      precombine_field="ts", **kw)


LAYOUTS = [
    pytest.param(6, (), id="v6-nonpartitioned"),
    pytest.param(6, ("p",), id="v6-partitioned"),
    pytest.param(8, (), id="v8-nonpartitioned"),
    pytest.param(8, ("p",), id="v8-partitioned"),
]


@pytest.mark.parametrize(("version", "parts"), LAYOUTS)
def test_hudi_rs_reads_the_merge_on_read_tables_we_write(tmp_path: Path, version: int, parts: tuple[str, ...]) -> None:
    path = tmp_path / "t"
    w = _mor(path, version, parts, rows_per_file=4)
    m = Model()
    first = _data(list(range(12)), "n", 1)
    m.apply(w.insert(first), first)
    assert all(s.base_file is not None and not s.log_files for s in w.table().latest_file_slices())
    _check(path, w, m)

    up = _data([1, 2, 5, 40], "a", 2)  # 40 is new: a new base file
    r = w.upsert(up)
    assert r.action == "deltacommit" and any(f.rsplit("/", 1)[-1].startswith(".") for f in r.files)
    assert any(f.endswith(".parquet") for f in r.files)
    m.apply(r, up)
    _check(path, w, m)

    up = _data([2, 3, 40], "b", 3)
    m.apply(w.upsert(up, block_format="parquet"), up)
    _check(path, w, m)

    m.apply(w.delete(_keys([3, 4, 99])), deletes=[3, 4])  # 99 is in no file group: ignored
    _check(path, w, m)

    up = _data([50, 51, 52, 53, 54], "c", 4)  # new keys into log-only file groups
    r = w.upsert(up, inserts_to_logs=True, rows_per_file=2)
    m.apply(r, up)
    log_only = [s for s in w.table().latest_file_slices() if s.base_file is None]
    assert log_only and sum(len(s.log_files) for s in log_only) == len(r.files)
    _check(path, w, m)

    up = _data([50, 6, 4], "d", 5)  # updates a log-only group and a base file group; 4 comes back after its delete
    m.apply(w.upsert(up), up)
    m.apply(w.delete(_keys([51])), deletes=[51])
    _check(path, w, m)

    # a failed write: files written, the deltacommit left inflight: invisible
    failed = w.upsert(_data([1, 7, 60], "x", 6), inflight=True)
    assert not failed.completed and failed.files
    assert [i.timestamp for i in w.table().timeline.inflight] == [failed.instant]
    _check(path, w, m)
    failed_delete = w.delete(_keys([8]), inflight=True)
    _check(path, w, m)

    # rollbacks: of the failed writes (as Hudi's eager cleaning does before the next write), then of a
    # completed deltacommit
    w.rollback(failed_delete)
    w.rollback(failed)
    _check(path, w, m)
    up = _data([7, 8, 70], "y", 7)
    r = w.upsert(up, inserts_to_logs=True)
    m.apply(r, up)
    _check(path, w, m)
    w.rollback(r)
    m.rolled_back(r.instant)
    _check(path, w, m)
    timeline = w.table().timeline
    assert timeline.get(r.instant) is None and r.instant in timeline.rolled_back_timestamps

    # compaction: every slice with logs gets a new base file (same file id) and no log files
    before = {(s.partition_path, s.file_id): s for s in w.table().latest_file_slices()}
    c = w.compact()
    assert c.completed and c.action == "commit" and c.files
    m.compacted()
    after = w.table().latest_file_slices()
    assert {(s.partition_path, s.file_id) for s in after} == set(before)
    for s in after:
        if before[(s.partition_path, s.file_id)].log_files:
            assert s.base_instant == c.instant and s.base_file is not None and not s.log_files
        else:
            assert s == before[(s.partition_path, s.file_id)]
    _check(path, w, m)
    assert w.compact().files == ()  # nothing left to compact: nothing written

    # and the table goes on after the compaction
    up = _data([1, 50, 80], "z", 8)
    m.apply(w.upsert(up, block_format="parquet"), up)
    m.apply(w.delete(_keys([2])), deletes=[2])
    _check(path, w, m)
    # reopening the table (a new writer) goes on where the last one stopped
    w2 = HudiWriter(path, table_type="MERGE_ON_READ")
    up = _data([2, 5], "r", 9)
    m.apply(w2.upsert(up), up)
    _check(path, w2, m)


@pytest.mark.parametrize("version", [6, 8])
def test_log_file_names_blocks_and_deltacommit_metadata(tmp_path: Path, version: int) -> None:
    path = tmp_path / "t"
    w = _mor(path, version, ("p",))
    w.insert(_data([0, 3, 6], "n", 1))  # all in partition p=0: one file group
    (s,) = w.table().latest_file_slices()
    base = s.base_instant
    r1 = w.upsert(_data([3], "a", 2))
    r2 = w.upsert(_data([6], "b", 3), block_format="parquet")
    r3 = w.delete(_keys([0]))
    names = [f.split("/")[-1] for r in (r1, r2, r3) for f in r.files]
    parsed = [parse_log_file_name(n) for n in names]
    assert all(p is not None and p[0] == s.file_id for p in parsed)
    if version == 6:
        # version 6: named after the slice's base instant, one new version per deltacommit
        assert [(p[1], p[2]) for p in parsed if p] == [(base, 1), (base, 2), (base, 3)]
    else:
        # version 8: named after the deltacommit's own instant, version 1
        assert [(p[1], p[2]) for p in parsed if p] == [(r1.instant, 1), (r2.instant, 1), (r3.instant, 1)]
    (s,) = w.table().latest_file_slices()
    assert [lf.name for lf in s.log_files] == names

    blocks = [read_log_file(lf.full_path).blocks for lf in s.log_files]
    assert [[b.block_type for b in bs] for bs in blocks] == [[BlockType.AVRO_DATA], [BlockType.PARQUET_DATA],
                                                            [BlockType.DELETE]]
    for (b,), r in zip(blocks, (r1, r2, r3), strict=True):
        assert b.instant == r.instant
        schema = json.loads(b.header[HeaderKey.SCHEMA])
        assert [f["name"] for f in schema["fields"]][:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno",
                                                              "_hoodie_record_key", "_hoodie_partition_path",
                                                              "_hoodie_file_name"]
    for (b,), r in zip(blocks[:2], (r1, r2), strict=True):
        rec = data_block_table(b).to_pylist()[0]
        assert rec["_hoodie_commit_time"] == r.instant and rec["_hoodie_file_name"] == s.file_id
        assert rec["_hoodie_partition_path"] == "p=0" and rec["_hoodie_commit_seqno"].startswith(r.instant + "_")
    assert delete_block_keys(blocks[2][0]) == [("0", "p=0")]

    timeline = w.table().timeline
    (i1,) = [i for i in timeline.completed if i.timestamp == r1.instant]
    assert i1.action == "deltacommit"
    raw = timeline.instant_path(i1).read_bytes()
    if version == 6:
        meta = json.loads(raw)
    else:
        assert i1.completion_time is not None and i1.completion_time > r1.instant
        (meta,) = list(fastavro.reader(__import__("io").BytesIO(raw)))
    (stat,) = meta["partitionToWriteStats"]["p=0"]
    assert stat["path"] == f"p=0/{names[0]}" and stat["fileId"] == s.file_id and stat["logVersion"] == 1
    assert stat["numUpdateWrites"] == 1 and stat["logOffset"] == 0 and stat["fileSizeInBytes"] > 0
    assert stat["logFiles"] == [names[0]]
    if version == 6:  # Hudi 0.x names the base file and the slice's base instant
        assert stat["baseFile"] == s.base_file.name and stat["prevCommit"] == base  # type: ignore[union-attr]
    else:  # Hudi 1.x: no base file name, prevCommit the deltacommit itself
        assert stat["baseFile"] == "" and stat["prevCommit"] == r1.instant
    meta3 = timeline.read_metadata(next(i for i in timeline.completed if i.timestamp == r3.instant))
    assert meta3["operationType"] == "DELETE" and meta3["partitionToWriteStats"]["p=0"][0]["numDeletes"] == 1


@pytest.mark.parametrize("version", [6, 8])
def test_rollback_command_block_on_v6_deletion_on_v8(tmp_path: Path, version: int) -> None:
    path = tmp_path / "t"
    w = _mor(path, version, ())
    w.insert(_data([1, 2], "n", 1))
    (s,) = w.table().latest_file_slices()
    target = w.upsert(_data([1, 9], "a", 2), inserts_to_logs=True)  # an update log + a new log-only group
    update_log, new_group_log = sorted(target.files, key=lambda f: parse_log_file_name(f)[0] != s.file_id)  # type: ignore[index]
    rb = w.rollback(target.instant)
    assert rb.action == "rollback" and rb.completed
    d = w.table().properties.timeline_dir
    assert not [p for p in d.iterdir() if p.name.startswith(target.instant)]  # its instant files are gone
    (done,) = [i for i in w.table().timeline.completed if i.action == "rollback"]
    meta = w.table().timeline.read_metadata(done)
    assert meta["commitsRollback"] == [target.instant]
    assert meta["instantsRollback"] == [{"commitTime": target.instant, "action": "deltacommit"}]
    with (d / f"{rb.instant}.rollback.requested").open("rb") as f:
        (plan,) = list(fastavro.reader(f))
    assert plan["instantToRollback"] == {"commitTime": target.instant, "action": "deltacommit"}
    assert (d / f"{rb.instant}.rollback.inflight").read_bytes() == b""
    assert not (path / new_group_log).exists()  # the log-only group it created is deleted either way
    if version == 6:
        # Hudi 0.x keeps the appended log file and appends a rollback command block in a new log version
        assert (path / update_log).exists() and rb.deleted == (new_group_log,)
        (cmd_file,) = rb.files
        fid, base_ts, ver, _ = parse_log_file_name(cmd_file)  # type: ignore[misc]
        assert (fid, base_ts, ver) == (s.file_id, s.base_instant, 2)
        (block,) = read_log_file(path / cmd_file).blocks
        assert block.is_rollback and block.instant == rb.instant and block.target_instant == target.instant
        part = meta["partitionMetadata"][""]
        assert list(part["rollbackLogFiles"]) == [f"file:{path / cmd_file}"]
        assert f"file:{path / update_log}" in part["logFilesFromFailedCommit"]
        (s_after,) = [x for x in w.table().latest_file_slices() if x.file_id == s.file_id]
        assert [lf.name for lf in s_after.log_files] == [Path(update_log).name, Path(cmd_file).name]
        assert any(r["logBlocksToBeDeleted"] for r in plan["RollbackRequests"])
    else:
        # Hudi 1.x deletes the instant's log files: no rollback block
        assert rb.files == () and set(rb.deleted) == {update_log, new_group_log}
        assert not (path / update_log).exists()
        assert not any(r["logBlocksToBeDeleted"] for r in plan["RollbackRequests"])
    assert _our_slices(path) == _rs_slices(path)
    assert set(_rs_rows(path)) == {1, 2} and _rs_rows(path)[1]["name"] == "n1"
    # a completed deltacommit goes only when it is the latest
    a = w.upsert(_data([1], "b", 3))
    w.upsert(_data([2], "c", 4))
    with pytest.raises(HudiTableError, match="later instants first"):
        w.rollback(a)


@pytest.mark.parametrize("version", [6, 8])
def test_compaction_plan_commit_and_pending_compaction(tmp_path: Path, version: int) -> None:
    path = tmp_path / "t"
    w = _mor(path, version, ("p",), rows_per_file=2)
    m = Model()
    up = _data(list(range(6)), "n", 1)
    m.apply(w.insert(up), up)
    up = _data([0, 1, 20], "a", 2)
    m.apply(w.upsert(up, inserts_to_logs=True), up)
    m.apply(w.delete(_keys([4])), deletes=[4])
    (emptied,) = {s.file_id for s in w.table().latest_file_slices() if s.partition_path == "p=2" and s.base_file}
    m.apply(w.delete(_keys([2, 5])), deletes=[2, 5])  # every row of that file group: it compacts to 0 rows
    with_logs = {(s.partition_path, s.file_id): s for s in w.table().latest_file_slices() if s.log_files}
    c = w.compact()
    d = w.table().properties.timeline_dir
    with (d / f"{c.instant}.compaction.requested").open("rb") as f:
        (plan,) = list(fastavro.reader(f))
    ops = {(o["partitionPath"], o["fileId"]): o for o in plan["operations"]}
    assert set(ops) == set(with_logs)
    for key, s in with_logs.items():
        assert ops[key]["baseInstantTime"] == s.base_instant
        assert ops[key]["deltaFilePaths"] == [lf.name for lf in s.log_files]
        assert ops[key]["dataFilePath"] == (s.base_file.name if s.base_file is not None else None)
    assert (d / f"{c.instant}.compaction.inflight").read_bytes() == b""
    (done,) = [i for i in w.table().timeline.completed if i.timestamp == c.instant]
    assert done.action == "commit"
    meta = w.table().timeline.read_metadata(done)
    assert meta["compacted"] is True and meta["operationType"] == "COMPACT"
    stats = [st for sts in meta["partitionToWriteStats"].values() for st in sts]
    assert {(st["partitionPath"], st["fileId"]) for st in stats} == set(with_logs)
    assert sum(st["totalLogFilesCompacted"] for st in stats) == sum(len(s.log_files) for s in with_logs.values())
    rows = {}
    for s in w.table().latest_file_slices():
        assert s.base_file is not None
        data = pq.read_table(s.base_file.full_path)
        assert set(data.column("_hoodie_file_name").to_pylist()) <= {s.base_file.name}
        rows[s.file_id] = data.num_rows
    assert rows[emptied] == 0
    m.compacted()
    _check(path, w, m)

    # a compaction left inflight: its base files are not committed, the slices keep their logs
    up = _data([0, 2], "b", 3)
    m.apply(w.upsert(up), up)
    slices = _our_slices(path)
    pending = w.compact(inflight=True)
    assert not pending.completed and pending.files
    assert _our_slices(path) == slices == _rs_slices(path)
    assert _rs_rows(path) == m.rows
    with pytest.raises(HudiTableError, match="pending"):
        w.upsert(_data([1], "c", 4))


@pytest.mark.parametrize("version", [6, 8])
def test_log_only_slices_read_by_the_file_group_reader(tmp_path: Path, version: int) -> None:
    path = tmp_path / "t"
    w = _mor(path, version, ())
    w.insert(_data([1], "n", 1), inserts_to_logs=True, block_format="parquet")
    w.upsert(_data([1, 2], "a", 2), inserts_to_logs=True)
    slices = w.table().latest_file_slices()
    assert len(slices) == 2 and all(s.base_file is None for s in slices)
    reader = _rs_table(path).create_file_group_reader_with_options()
    got = {}
    for s in slices:
        batch = reader.read_file_slice_from_paths("", [lf.path for lf in s.log_files])
        got.update(_by_id(pa.Table.from_batches([batch])))
    assert {k: v["name"] for k, v in got.items()} == {1: "a1", 2: "a2"}
    assert _our_slices(path) == _rs_slices(path)


def test_properties_and_errors(tmp_path: Path) -> None:
    v6 = _mor(tmp_path / "v6", 6, ("p",)).table().properties
    assert v6.table_type == "MERGE_ON_READ" and v6.timeline_layout_version == 1 and v6.precombine_field == "ts"
    assert v6.raw["hoodie.compaction.payload.class"] == "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    assert v6.raw["hoodie.compaction.record.merger.strategy"] == "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
    v8 = HudiWriter(tmp_path / "v8", version=8, table_type="MERGE_ON_READ").table().properties
    assert v8.table_type == "MERGE_ON_READ" and v8.raw["hoodie.record.merge.mode"] == "COMMIT_TIME_ORDERING"
    assert v8.raw["hoodie.record.merge.strategy.id"] == "ce9acb64-bde0-424c-9b91-f6ebba25356d"
    assert v8.raw["hoodie.compaction.payload.class"] == "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"

    with pytest.raises(HudiTableError, match="MERGE_ON_READ"):
        HudiWriter(tmp_path / "v6")  # a copy-on-write writer for a merge-on-read table
    with pytest.raises(HudiTableError, match="meta fields"):
        HudiWriter(tmp_path / "nometa", table_type="MERGE_ON_READ", populate_meta_fields=False)
    with pytest.raises(HudiTableError, match="unknown table type"):
        HudiWriter(tmp_path / "x", table_type="BOTH")
    cow = HudiWriter(tmp_path / "cow")
    cow.insert(_data([1], "n", 1))
    with pytest.raises(HudiTableError, match="MERGE_ON_READ"):
        cow.delete(_keys([1]))
    with pytest.raises(HudiTableError, match="MERGE_ON_READ"):
        cow.compact()
    with pytest.raises(HudiTableError, match="MERGE_ON_READ"):
        cow.upsert(_data([2], "a", 2), inserts_to_logs=True)
    mor = _mor(tmp_path / "mor", 6, ())
    with pytest.raises(HudiTableError, match="block format"):
        mor.upsert(_data([2], "a", 2), block_format="orc")
    with pytest.raises(HudiTableError, match="no instant"):
        mor.rollback("20200101000000000")
    # a copy-on-write commit rolls back too: its base files go
    before = _our_slices(tmp_path / "cow")
    r = cow.upsert(_data([1, 2], "u", 2))
    cow.rollback(r)
    assert _our_slices(tmp_path / "cow") == before == _rs_slices(tmp_path / "cow")
    assert _rs_rows(tmp_path / "cow") == _by_id(_data([1], "n", 1))


# ---------------------------------------------------------------- random operation sequences
_IDS = st.lists(st.integers(0, 24), min_size=1, max_size=6, unique=True)
_OP = st.one_of(
    st.tuples(st.just("upsert"), _IDS, st.sampled_from(["avro", "parquet"]), st.booleans()),
    st.tuples(st.just("delete"), _IDS),
    # writes left inflight, rolled back before the next write
    st.tuples(st.just("failed"), _IDS, st.sampled_from(["avro", "parquet"]), st.booleans()),
    st.tuples(st.just("failed_delete"), _IDS),
    st.tuples(st.just("rollback")),      # of the latest completed deltacommit
    st.tuples(st.just("compact")),
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(version=st.sampled_from([6, 8]), partitioned=st.booleans(), ops=st.lists(_OP, min_size=1, max_size=7))
def test_random_operation_sequences_match_the_model(version: int, partitioned: bool, ops: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t"
        w = _mor(path, version, ("p",) if partitioned else (), rows_per_file=3)
        m = Model()
        first = _data(list(range(0, 12, 2)), "n", 1)
        m.apply(w.insert(first), first)
        failed: WriteResult | None = None
        for step, op in enumerate(ops, start=2):
            if failed is not None:  # Hudi's eager cleaning: the next writer rolls the failed write back first
                w.rollback(failed)
                failed = None
            kind = op[0]
            if kind == "upsert":
                up = _data(op[1], f"s{step}_", step)
                m.apply(w.upsert(up, block_format=op[2], inserts_to_logs=op[3]), up)
            elif kind == "delete":
                m.apply(w.delete(_keys(op[1])), deletes=op[1])
            elif kind == "failed":
                failed = w.upsert(_data(op[1], f"f{step}_", step), inflight=True, block_format=op[2],
                                  inserts_to_logs=op[3])
            elif kind == "failed_delete":
                failed = w.delete(_keys(op[1]), inflight=True)
            elif kind == "rollback" and m.undo:
                instant = m.undo[-1][0]
                w.rollback(instant)
                m.rolled_back(instant)
            elif kind == "compact":
                w.compact()
                m.compacted()
            _check(path, w, m)
