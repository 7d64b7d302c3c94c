"""Incremental queries on table versions 8 and 9 (Hudi 1.x): begin and end are completion times; the records the
commits completed in (begin, end] wrote equal hudi-rs's incremental read, on tables of the test writer and on
tables written by Hudi's own Spark writer, and the files kept hold every matching record of the range."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive_bridge.layout.incremental import IncrementalQueryError
from hive_bridge.spark.reads import list_incremental
from hive_bridge.spark.sessions import SparkReadError
from hive_bridge.table.table import HudiTable
from tests.hive_bridge.layout.test_incremental_query import FILTERS, _rows
from tests.hive_bridge.layout.test_time_travel import History, write_history

_WRITES = ("commit", "deltacommit", "replacecommit")


@pytest.fixture(scope="module", params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def history(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> History:
    return write_history(tmp_path_factory.mktemp("incq8") / "t", 8, request.param, seed=31, commits=10)


def _times(table: HudiTable) -> list[str]:
    """Every requested and completion time of the table's completed writes, in order."""
    writes = [i for i in table.timeline.completed if i.action in _WRITES]
    return sorted({t for i in writes for t in (i.timestamp, str(i.completion_time))})


def _hudi_rs(path: Path, begin: str, end: str, key: tuple[str, ...]) -> Counter[tuple[object, ...]]:
    from hudi import HudiQueryType, HudiReadOptions
    from hudi import HudiTable as RsTable

    opts = (HudiReadOptions().with_query_type(HudiQueryType.Incremental).with_start_timestamp(begin)
            .with_end_timestamp(end))
    return Counter(tuple(r[k] for k in key) for b in RsTable(str(path)).read(opts) for r in b.to_pylist())


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_completion_time_ranges_equal_hudi_rs(history: History, data: st.DataObject) -> None:
    table = HudiTable.open(history.path)
    times = _times(table)
    a = data.draw(st.integers(0, len(times) - 1), label="begin")
    b = data.draw(st.integers(a, len(times) - 1), label="end")
    filt = data.draw(st.sampled_from(list(FILTERS)), label="filter")
    begin, end = times[a], times[b]
    table, result, row_filter = list_incremental(str(history.path), filt, begin=begin, end=end)
    assert result.commit_range == (begin, end)
    rng, every = table.incremental(begin, end)
    done = {i.timestamp: i.completion_time for i in table.timeline.completed_writes}
    assert rng.commits == tuple(ts for ts in sorted(done) if begin < str(done[ts]) <= end)
    assert rng.row_filter() in row_filter
    rows = _rows(table, every, rng.state_instant)
    kept = {(s.partition_path, s.file_id) for s in result.slices}
    match = FILTERS[filt]
    ours: Counter[tuple[object, ...]] = Counter()
    for key, rs in rows.items():
        for r in rs:
            if r["_hoodie_commit_time"] in rng.commits and match(r):
                assert key in kept, (filt, key)
                ours[(r["id"], r["name"], r["ts"])] += 1
    assert ours == Counter({k: v for k, v in _hudi_rs(history.path, begin, end, ("id", "name", "ts")).items()
                            if match({"id": k[0], "name": k[1], "ts": k[2], "p": f"p{k[0] % 3}"})})  # type: ignore[index, operator]


def test_a_requested_time_is_not_a_completion_time(history: History) -> None:
    """begin = a commit's requested time still reads that commit (it completed later); end = its requested time
    does not (it had not completed then)."""
    table = HudiTable.open(history.path)
    first = table.timeline.completed_writes[1]
    assert first.completion_time is not None and first.completion_time > first.timestamp
    assert first.timestamp in table.incremental(first.timestamp, first.completion_time)[0].commits
    assert first.timestamp not in table.incremental("earliest", first.timestamp)[0].commits


def test_earliest_default_end_and_errors(history: History) -> None:
    table = HudiTable.open(history.path)
    writes = table.timeline.completed_writes
    rng, slices = table.incremental("earliest")
    assert rng.begin == "0" and rng.end == max(str(i.completion_time) for i in writes)
    assert rng.commits == tuple(i.timestamp for i in writes)
    assert {(s.partition_path, s.file_id) for s in slices} == {
        (s.partition_path, s.file_id) for s in table.latest_file_slices()}
    with pytest.raises(SparkReadError, match=r"is after hoodie\.datasource\.read\.end\.instanttime") as exc:
        list_incremental(str(history.path), None, begin=str(writes[-1].completion_time), end=writes[0].timestamp)
    assert str(history.path) in str(exc.value)
    early = "20000101000000000"
    with pytest.raises(IncrementalQueryError, match="is before the first commit of the active timeline"):
        table.incremental(early, writes[2].timestamp, fallback=False)
    rng, slices = table.incremental(early, str(writes[2].completion_time), fallback=True)
    assert rng.full_scan and slices == table.latest_file_slices()
    # unsaid, the fallback is Hudi 1.x's default on versions 8 and 9: on
    assert table.incremental(early, str(writes[2].completion_time)) == (rng, slices)
    assert rng.row_filter().startswith(f"(`_hoodie_commit_time` > '{early}' AND `_hoodie_commit_time` < ")


REAL_TABLES = [
    "sample_table.cow.v8_nonpartitioned",
    "sample_table.cow.v9_txns_simple_nometa",
    "sample_table.cow.v9_txns_simple_overwrite",
    "sample_table.mor.avro.v9_txns_simple_meta",
    "sample_table.mor.avro.v9_txns_simple_overwrite",
    "sample_table.mor.avro.v9_nonpartitioned_rollback",
    "quickstart_trips_table.mor.avro.v8_trips_8i3u1d",
]


@pytest.mark.parametrize("name", REAL_TABLES)
def test_real_tables_ranges_equal_hudi_rs(fixture_tables: dict[str, Path], name: str) -> None:
    """Tables of Hudi's own Spark writer (1.0, 1.1): 8 random completion-time ranges each."""
    root = fixture_tables[name]
    table = HudiTable.open(root)
    times = _times(table)
    rnd = random.Random(name)
    key = ("_hoodie_record_key", "_hoodie_commit_time")
    nonempty = 0
    for _ in range(8):
        begin, end = sorted(rnd.sample(times, 2))
        rng, slices = table.incremental(begin, end)
        _, result, _ = list_incremental(str(root), None, begin=begin, end=end)
        assert {(s.partition_path, s.file_id) for s in result.slices} == {
            (s.partition_path, s.file_id) for s in slices}
        ours = Counter(tuple(r[k] for k in key) for rs in _rows(table, slices, rng.state_instant).values()
                       for r in rs if r["_hoodie_commit_time"] in rng.commits)
        assert ours == _hudi_rs(root, begin, end, key), (begin, end)
        nonempty += bool(ours)
    assert nonempty >= 1


def test_writers_completing_out_of_order_are_refused(tmp_path: Path) -> None:
    """A write requested before another but completed after it (concurrent writers): the state as of the
    other's completion time is not a state by requested time, so a range ending there is refused."""
    h = write_history(tmp_path / "t", 8, "COPY_ON_WRITE", seed=5, commits=4)
    table = HudiTable.open(h.path)
    first, second = table.timeline.completed_writes[1:3]
    late = str(int(str(second.completion_time)) + 1)
    old = table.timeline.instant_path(first)
    old.rename(old.with_name(old.name.replace(f"_{first.completion_time}.", f"_{late}.")))
    table = HudiTable.open(h.path)
    with pytest.raises(IncrementalQueryError, match=f"{first.timestamp} was requested before {second.timestamp} "
                       f"but completed after"):
        table.incremental("earliest", str(second.completion_time))
    # a range ending after both completed is a state by requested time again
    rng, _ = table.incremental(second.timestamp, late)
    assert rng.commits == (first.timestamp, second.timestamp)


@pytest.mark.parametrize("version", [6, 8])
def test_earliest_on_an_archived_timeline_is_an_archived_begin(tmp_path: Path, version: int) -> None:
    """Once instants are archived, ``earliest`` starts before the active timeline: never only the active commits'
    rows; a full scan where the fallback is on (by default on versions 8 and 9, as Hudi 1.x), else an error."""
    h = write_history(tmp_path / "t", version, "COPY_ON_WRITE", seed=5, commits=5)
    hoodie = h.path / ".hoodie"
    timeline = hoodie / "timeline" if version >= 8 else hoodie
    first = h.instants[0]
    active = HudiTable.open(h.path)
    assert not active.timeline.has_archive
    assert not active.incremental("earliest")[0].full_scan
    # archive the first write as Hudi's archiver does: its instant files leave the active timeline
    archive = timeline / ("history" if version >= 8 else "archived")
    archive.mkdir(exist_ok=True)
    for f in timeline.iterdir():
        if f.is_file() and f.name.startswith(first):
            f.rename(archive / f.name)
    table = HudiTable.open(h.path)
    assert table.timeline.has_archive and table.timeline.completed_writes[0].timestamp > first
    with pytest.raises(IncrementalQueryError, match=r"begin\.instanttime=earliest is before the first commit"):
        table.incremental("earliest", fallback=False)
    rng, slices = table.incremental("earliest", fallback=True)
    assert rng.full_scan and slices == table.latest_file_slices()
    if version >= 8:
        assert table.incremental("earliest") == (rng, slices)
    else:
        with pytest.raises(IncrementalQueryError, match="earliest is before the first commit"):
            table.incremental("earliest")
