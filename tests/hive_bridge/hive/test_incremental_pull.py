"""Hive's incremental pulls (hoodie.<table>.consume.mode=INCREMENTAL): list_status lists the files Hudi's input
format lists for the JobConf (hudi-rs's incremental file slices for the same commits), then prunes them by the
filter without losing a file that holds a matching row; the pulled rows equal hudi-rs's incremental read."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive_bridge.hive.handler import HoodieParquetInputFormat, HoodieParquetRealtimeInputFormat, job_conf_for
from hive_bridge.hive.incremental import IncrementalError, incremental_pull, pulled_instants
from hive_bridge.table.table import HudiTable
from tests.hive_bridge.layout.test_time_travel import History, write_history


@pytest.fixture(scope="module", params=[6, 8], ids=["v6", "v8"])
def cow(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> History:
    return write_history(tmp_path_factory.mktemp("inc") / "t", request.param, "COPY_ON_WRITE", seed=21, commits=12)


def _rs_bounds(table: HudiTable, start: str, last: str) -> tuple[str, str]:
    """hudi-rs's (start, end] for the commits a pull reads: requested times on version 6, completion times on
    8+ (the test writer's commits complete in the order they were requested)."""
    done = {i.timestamp: i.completion_time for i in table.timeline.completed_writes}
    if table.properties.version < 8:
        return start, last
    before = [ts for ts in done if ts <= start]
    return (str(done[max(before)]) if before else start), str(done[last])


def _conf(table: HudiTable, start: str | None, max_commits: str | None, filt: str | None = None,
          mode: str = "incremental") -> dict[str, str]:
    conf = dict(job_conf_for(table, filt))
    name = table.properties.name
    conf[f"hoodie.{name}.consume.mode"] = mode
    if start is not None:
        conf[f"hoodie.{name}.consume.start.timestamp"] = start
    if max_commits is not None:
        conf[f"hoodie.{name}.consume.max.commits"] = max_commits
    return conf


def _hudi_rs(path: Path, start: str, end: str) -> tuple[set[str], Counter[tuple[int, str, int]]]:
    from hudi import HudiQueryType, HudiReadOptions
    from hudi import HudiTable as RsTable

    opts = (HudiReadOptions().with_query_type(HudiQueryType.Incremental).with_start_timestamp(start)
            .with_end_timestamp(end))
    rs = RsTable(str(path))
    files = {s.base_file_relative_path() for s in rs.get_file_slices(opts)}
    rows = Counter((r["id"], r["name"], r["ts"]) for b in rs.read(opts) for r in b.to_pylist())
    return files, rows


FILTERS = [None, "id < 10", "ts >= 5", "name = 'n3'", "p = 'p1' and id > 20"]


def _matches(text: str | None, row: dict[str, object]) -> bool:
    i, ts, name = int(row["id"]), int(row["ts"]), str(row["name"])  # type: ignore[call-overload]
    return {None: True, "id < 10": i < 10, "ts >= 5": ts >= 5, "name = 'n3'": name == "n3",
            "p = 'p1' and id > 20": i % 3 == 1 and i > 20}[text]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_incremental_list_status_is_hudis_then_pruned(cow: History, data: st.DataObject) -> None:
    table = HudiTable.open(cow.path)
    start = data.draw(st.sampled_from(["00000000000000000", *cow.instants[:-1]]), label="start")
    max_commits = data.draw(st.sampled_from([None, "-1", "0", "1", "2", "5"]), label="max.commits")
    filt = data.draw(st.sampled_from(FILTERS), label="filter")
    later = [i for i in cow.instants if i > start]
    n = {None: 1, "-1": len(later)}.get(max_commits, int(max_commits or 0))
    pulled = later[:n]
    conf = _conf(table, start, max_commits, filt)
    assert pulled_instants(table.timeline, incremental_pull(conf, table)) == pulled  # type: ignore[arg-type]
    listed = HoodieParquetInputFormat().list_status(_conf(table, start, max_commits))
    result = HoodieParquetInputFormat().list_status(conf)
    if not pulled:
        assert listed.files_total == 0 and result.files == []
        return
    files, rows = _hudi_rs(cow.path, *_rs_bounds(table, start, pulled[-1]))
    # unpruned: exactly the files Hudi lists for the pull
    assert {s.base_file.path for s in listed.slices if s.base_file} == files
    assert result.files_total == len(files)
    kept = {s.base_file.path for s in result.slices if s.base_file}
    ours: Counter[tuple[int, str, int]] = Counter()
    for s in listed.slices:
        assert s.base_file is not None
        for r in pq.read_table(s.base_file.full_path).to_pylist():
            in_range = start < r["_hoodie_commit_time"] <= pulled[-1]
            if _matches(filt, r):
                assert s.base_file.path in kept, (filt, s.base_file.path)   # kept ⊇ files holding a match
                if in_range:
                    ours[(r["id"], r["name"], r["ts"])] += 1
    assert ours == Counter({k: v for k, v in rows.items()
                            if _matches(filt, {"id": k[0], "name": k[1], "ts": k[2]})})


def test_snapshot_mode_and_other_tables_keys_are_a_snapshot_query(cow: History) -> None:
    table = HudiTable.open(cow.path)
    latest = HoodieParquetInputFormat().list_status(job_conf_for(table))
    for conf in (_conf(table, cow.instants[0], "1", mode="SNAPSHOT"),
                 {**job_conf_for(table), "hoodie.other_table.consume.mode": "INCREMENTAL",
                  "hoodie.other_table.consume.start.timestamp": cow.instants[0]}):
        assert HoodieParquetInputFormat().list_status(conf).files == latest.files
    # the mode is read case-insensitively, as Hudi's getIncrementalTableNames does
    pulled = HoodieParquetInputFormat().list_status(_conf(table, cow.instants[0], "1", mode=" Incremental "))
    assert {s.base_instant for s in pulled.slices} == {cow.instants[1]}


def test_use_database_names_the_table_with_its_database(cow: History) -> None:
    table = HudiTable.open(cow.path)
    db = table.properties.raw.get("hoodie.database.name", "")
    conf = {**job_conf_for(table), "hoodie.incremental.use.database": "true",
            f"hoodie.{db}.{table.properties.name}.consume.mode": "INCREMENTAL",
            f"hoodie.{db}.{table.properties.name}.consume.start.timestamp": cow.instants[0]}
    assert {s.base_instant for s in HoodieParquetInputFormat().list_status(conf).slices} == {cow.instants[1]}
    # without the database in the name, the keys are not this table's
    conf = {**_conf(table, cow.instants[0], "1"), "hoodie.incremental.use.database": "true"}
    assert HoodieParquetInputFormat().list_status(conf).files_total == len(table.latest_file_slices())


@pytest.mark.parametrize(("start", "max_commits", "says"), [
    (None, "1", "consume.start.timestamp is not set"),
    ("", "1", "consume.start.timestamp is not set"),
    ("yesterday", "1", "consume.start.timestamp='yesterday' is not a commit time"),
    ("20240101000000000", "all", "consume.max.commits='all' is not a number of commits (-1: all)"),
    ("20240101000000000", "-2", "consume.max.commits='-2': a number of commits is 0 or more"),
])
def test_bad_incremental_keys(cow: History, start: str | None, max_commits: str, says: str) -> None:
    table = HudiTable.open(cow.path)
    with pytest.raises(IncrementalError) as exc:
        HoodieParquetInputFormat().list_status(_conf(table, start, max_commits))
    assert says in str(exc.value) and str(cow.path) in str(exc.value)


def test_refused_where_not_emulated(tmp_path: Path) -> None:
    mor = write_history(tmp_path / "mor", 6, "MERGE_ON_READ", seed=1, commits=3)
    table = HudiTable.open(mor.path)
    with pytest.raises(Exception, match="realtime input format"):
        HoodieParquetRealtimeInputFormat().list_status(_conf(table, mor.instants[0], "1"))
    # the read-optimized input format pulls a merge-on-read table's base files
    ro = HoodieParquetInputFormat().list_status(_conf(table, "0", "-1"))
    assert all(not s.log_files for s in ro.slices) and ro.files_total >= 1


def test_a_pending_compaction_stops_the_pull(tmp_path: Path) -> None:
    mor = write_history(tmp_path / "mor", 6, "MERGE_ON_READ", seed=2, commits=4)
    # a compaction requested between two writes and still pending (as a slow compaction leaves it)
    k = next(k for k in range(len(mor.instants) - 1) if int(mor.instants[k + 1]) - int(mor.instants[k]) > 1)
    pending = str(int(mor.instants[k]) + 1)
    (mor.path / ".hoodie" / f"{pending}.compaction.requested").write_bytes(b"")
    table = HudiTable.open(mor.path)
    conf = _conf(table, "0", "-1")
    stops = pulled_instants(table.timeline, incremental_pull(conf, table))  # type: ignore[arg-type]
    assert stops == mor.instants[:k + 1]
    conf[f"hoodie.{table.properties.name}.ro.stop.at.compaction"] = "false"
    goes_on = pulled_instants(table.timeline, incremental_pull(conf, table))  # type: ignore[arg-type]
    assert goes_on == [i for i in mor.instants if i > "0"]


def test_consume_commit_reads_the_table_as_of_it(cow: History) -> None:
    from hive_bridge.hive.handler import HandlerError

    table = HudiTable.open(cow.path)
    key = f"hoodie.{table.properties.name}.consume.commit"
    for instant in (cow.instants[0], cow.instants[5]):
        listed = HoodieParquetInputFormat().list_status({**job_conf_for(table), key: instant})
        assert listed.as_of == instant
        assert {s.base_file.path for s in listed.slices if s.base_file} == {
            s.base_file.path for s in table.time_travel(instant)[1] if s.base_file}
    with pytest.raises(HandlerError) as exc:
        HoodieParquetInputFormat().list_status({**job_conf_for(table), key: "2000-01-01"})
    assert str(exc.value).startswith(f"{key}: ") and "before the first completed commit" in str(exc.value)
