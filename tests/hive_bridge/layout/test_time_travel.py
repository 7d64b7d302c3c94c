"""Time travel: the state of a table as of an instant or time, checked by Hudi's rules, pruned with the statistics
of the files of that state; rows equal hudi-rs's time-travel read of the same instant."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.layout.asof import AsOf, TimeTravelError, merge_bound, query_instant
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.pruning.snapshot import TableSnapshot
from hive_bridge.spark.merge import hudi_reader, merge_with_hudi
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter

Row = tuple[int, str, int]


def _data(ids: list[int], tag: str, ts: int) -> pa.Table:
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": [f"{tag}{i}" for i in ids],
        "ts": pa.array([ts] * len(ids), pa.int64()),
        "p": [f"p{i % 3}" for i in ids],
    })


def _keys(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": [f"p{i % 3}" for i in ids]})


@dataclass
class History:
    path: Path
    writer: HudiWriter
    #: completed writes, in order
    instants: list[str]


def write_history(path: Path, version: int, table_type: str, seed: int, commits: int = 12) -> History:
    """A table with many commits: inserts, upserts; copy-on-write tables an insert_overwrite, merge-on-read tables
    deletes, compactions and a rolled-back delta commit."""
    rng = random.Random(seed)
    w = HudiWriter(path, version=version, table_type=table_type, partition_fields=("p",),
                   precombine_field="ts", rows_per_file=4)
    w.insert(_data(list(range(24)), "n", 1))
    next_id = 24
    for k in range(2, commits + 1):
        op = {4: "special", 6: "delete"}.get(k) or rng.choice(["upsert", "upsert", "delete", "insert", "special"])
        if op == "upsert" or (op == "delete" and not w.is_mor):
            ids = [*sorted(rng.sample(range(next_id), 5)), next_id]
            next_id += 1
            w.upsert(_data(ids, f"u{k}_", k))
        elif op == "delete" and w.is_mor:           # the writer deletes on merge-on-read tables only
            w.delete(_keys(sorted(rng.sample(range(next_id), 3))))
        elif op == "insert":
            w.insert(_data(list(range(next_id, next_id + 4)), f"i{k}_", k))
            next_id += 4
        elif w.is_mor:
            w.compact()
        else:
            w.insert_overwrite(_data([0, 3, 6], f"o{k}_", k))
    if w.is_mor:
        undone = w.upsert(_data([1, 2], "rolled", commits + 1))
        w.rollback(undone)
    table = w.table()
    return History(path, w, [i.timestamp for i in table.timeline.completed_writes])


TABLES = [
    pytest.param((6, "COPY_ON_WRITE"), id="cow-v6"),
    pytest.param((8, "COPY_ON_WRITE"), id="cow-v8"),
    pytest.param((6, "MERGE_ON_READ"), id="mor-v6"),
    pytest.param((8, "MERGE_ON_READ"), id="mor-v8"),
]


@pytest.fixture(scope="module", params=TABLES)
def history(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> History:
    version, table_type = request.param
    return write_history(tmp_path_factory.mktemp(f"tt{version}{table_type[:3]}") / "t", version, table_type,
                         seed=version * 7 + len(table_type))


def hudi_rs_rows(path: Path, as_of: str) -> list[Row]:
    from hudi import HudiReadOptions
    from hudi import HudiTable as RsTable

    batches = RsTable(str(path)).read(HudiReadOptions().with_as_of_timestamp(as_of))
    return sorted((r["id"], r["name"], r["ts"]) for b in batches for r in b.to_pylist())


def slice_rows(table: HudiTable, slices: list[FileSlice], as_of: str) -> dict[tuple[str, str], list[Row]]:
    """The rows of each slice of a state: a base file alone read as it is, a slice with log files merged by
    hudi-rs's file-group reader up to the state's instant."""
    reader = hudi_reader(str(table.base_path), None, merge_bound(as_of))
    out: dict[tuple[str, str], list[Row]] = {}
    for s in slices:
        if s.log_files or s.base_file is None:
            batches = merge_with_hudi(reader, s.base_file.path if s.base_file else "", [lf.path for lf in s.log_files])
            rows = [r for b in batches for r in b.to_pylist()]
        else:
            rows = pq.read_table(s.base_file.full_path, columns=["id", "name", "ts"]).to_pylist()
        out[(s.partition_path, s.file_id)] = [(r["id"], r["name"], r["ts"]) for r in rows]
    return out


def test_every_instant_equals_hudi_rs(history: History) -> None:
    table = HudiTable.open(history.path)
    assert len(history.instants) >= 10
    actions = {i.action for i in table.timeline.completed}
    assert actions >= ({"deltacommit", "commit", "rollback"} if table.properties.is_mor else {"commit", "replacecommit"})
    for instant in history.instants:
        checked, slices = table.time_travel(instant)
        assert checked.instant == instant
        ours = sorted(r for rows in slice_rows(table, slices, instant).values() for r in rows)
        assert ours == hudi_rs_rows(history.path, instant), instant
        # nothing written after the instant is in the state
        assert all(s.base_instant <= instant for s in slices)
        assert all(lf.instant <= instant for s in slices for lf in s.log_files)


def test_the_latest_instant_is_the_latest_state(history: History) -> None:
    table = HudiTable.open(history.path)
    _, slices = table.time_travel(history.instants[-1])
    assert slices == table.latest_file_slices()


def _filters() -> st.SearchStrategy[tuple[str, Callable[[Row], bool]]]:
    def between(a: int, b: int) -> tuple[str, Callable[[Row], bool]]:
        lo, hi = min(a, b), max(a, b)
        return f"id >= {lo} and id <= {hi}", lambda r: lo <= r[0] <= hi

    def name_is(i: int, tag: str) -> tuple[str, Callable[[Row], bool]]:
        return f"name = '{tag}{i}'", lambda r: r[1] == f"{tag}{i}"

    def ts_at_least(t: int) -> tuple[str, Callable[[Row], bool]]:
        return f"ts >= {t}", lambda r: r[2] >= t

    def partition(n: int, t: int) -> tuple[str, Callable[[Row], bool]]:
        return f"p = 'p{n}' and ts <= {t}", lambda r: r[0] % 3 == n and r[2] <= t

    ids = st.integers(-2, 60)
    return st.one_of(st.builds(between, ids, ids), st.builds(name_is, ids, st.sampled_from(["n", "u3_", "i5_"])),
                     st.builds(ts_at_least, st.integers(0, 14)),
                     st.builds(partition, st.integers(0, 2), st.integers(0, 14)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_instant_and_filter_keeps_every_matching_row(history: History, data: st.DataObject) -> None:
    table = HudiTable.open(history.path)
    instant = data.draw(st.sampled_from(history.instants), label="as_of")
    text, matches = data.draw(_filters(), label="filter")
    # the instant written as a time of day too (yyyy-MM-dd HH:mm:ss.SSS): the same state
    given = data.draw(st.sampled_from([instant, f"{instant[:4]}-{instant[4:6]}-{instant[6:8]} "
                                                f"{instant[8:10]}:{instant[10:12]}:{instant[12:14]}.{instant[14:]}"]))
    snap = TableSnapshot.of(table, ColumnStatsIndex(table, persist=False), as_of=given)
    assert snap.as_of is not None and snap.as_of.instant == instant
    result = snap.plan(sarg.read_filter(text, table_sarg_schema(table)))
    assert result.as_of == instant
    by_slice = slice_rows(table, snap.slices, instant)
    kept = {(s.partition_path, s.file_id) for s in result.slices}
    # files kept ⊇ files holding a matching row
    holding = {key for key, rows in by_slice.items() if any(map(matches, rows))}
    assert holding <= kept, (text, instant)
    ours = Counter(r for key in kept for r in by_slice[key] if matches(r))
    assert ours == Counter(r for r in hudi_rs_rows(history.path, instant) if matches(r))


# ----------------------------------------------------------------------------------------------- formats

@pytest.mark.parametrize(("text", "instant"), [
    ("20240707001302376", "20240707001302376"),
    ("20240707001302", "20240707001302"),
    ("2024-07-07 00:13:02.376", "20240707001302376"),
    ("2024-07-07 00:13:02", "20240707001302000"),
    ("2024-07-07", "20240707000000000"),
    (" 2024-07-07 ", "20240707000000000"),
])
def test_query_instant_formats(text: str, instant: str) -> None:
    assert query_instant(text) == instant


@pytest.mark.parametrize(("text", "says"), [
    ("yesterday", "unsupported as-of time format: 'yesterday'"),
    ("2024/07/07", "unsupported as-of time format"),
    ("2024-13-01", "unsupported as-of time format: '2024-13-01'"),
    ("20241301000000000", "not an instant time: '20241301000000000' (no such date or time)"),
    ("202407070013023", "unsupported as-of time format"),
    ("", "unsupported as-of time format"),
])
def test_query_instant_refuses_other_text(text: str, says: str) -> None:
    with pytest.raises(TimeTravelError, match=r"option as\.of\.instant: ") as exc:
        query_instant(text, "option as.of.instant")
    assert says in str(exc.value)


def test_a_seconds_instant_bounds_merges_at_the_millisecond_before() -> None:
    assert AsOf("20240707001302", "20240707001302").millis == "20240707001301999"
    assert merge_bound("20240707001302376") == "20240707001302376" and merge_bound(None) is None


# ------------------------------------------------------------------------------------------------ errors

@pytest.fixture()
def small(tmp_path: Path) -> History:
    return write_history(tmp_path / "t", 6, "COPY_ON_WRITE", seed=3, commits=5)


def _refused(table: HudiTable, value: str) -> str:
    with pytest.raises(TimeTravelError) as exc:
        table.time_travel(value)
    message = str(exc.value)
    assert str(table.base_path) in message
    return message


def test_future_time_is_refused(small: History) -> None:
    message = _refused(HudiTable.open(small.path), "2999-01-01")
    assert "as of '2999-01-01' (instant 29990101000000000): it is in the future" in message


def test_unknown_instant_is_refused(small: History) -> None:
    unknown = str(int(small.instants[1]) + 1)
    assert unknown not in small.instants
    message = _refused(HudiTable.open(small.path), unknown)
    assert f"as of {unknown}: no such instant on the timeline" in message
    # the same time as a point in time is the state as of the instant before it
    checked, slices = HudiTable.open(small.path).time_travel(
        f"{unknown[:4]}-{unknown[4:6]}-{unknown[6:8]} {unknown[8:10]}:{unknown[10:12]}:{unknown[12:14]}."
        f"{unknown[14:]}")
    assert checked.instant == unknown
    assert slices == HudiTable.open(small.path).time_travel(small.instants[1])[1]


def test_time_before_the_first_commit_is_refused(small: History) -> None:
    message = _refused(HudiTable.open(small.path), "2000-01-01")
    assert f"before the first completed commit of the active timeline ({small.instants[0]})" in message


def test_pending_instant_and_times_after_it_are_refused(small: History) -> None:
    pending = small.writer.upsert(_data([1], "x", 9), inflight=True)
    after = small.writer.upsert(_data([2], "y", 9))
    table = HudiTable.open(small.path)
    assert f"as of {pending.instant}: the instant is not completed (commit inflight)" in \
        _refused(table, pending.instant)
    message = _refused(table, after.instant)
    assert f"must be earlier than the first incomplete commit {pending.instant} (commit inflight)" in message
    # before it: fine
    assert table.time_travel(small.instants[-1])[0].instant == small.instants[-1]


def test_cleaned_instants_are_refused_and_retained_ones_read(tmp_path: Path) -> None:
    h = write_history(tmp_path / "t", 6, "COPY_ON_WRITE", seed=5, commits=8)
    clean = h.writer.clean(3)
    assert clean.deleted
    table = HudiTable.open(h.path)
    retained = h.instants[-3]
    message = _refused(table, h.instants[-4])
    assert f"cleaned: the clean {clean.instant} kept the commits from {retained} on" in message
    for instant in h.instants[-3:]:
        _, slices = table.time_travel(instant)
        ours = sorted(r for rows in slice_rows(table, slices, instant).values() for r in rows)
        assert ours == hudi_rs_rows(h.path, instant)


def test_a_clean_without_retained_commit_is_checked_file_by_file(tmp_path: Path) -> None:
    h = write_history(tmp_path / "t", 8, "COPY_ON_WRITE", seed=5, commits=8)
    clean = h.writer.clean(2, record_retained=False)
    table = HudiTable.open(h.path)
    deleted = {name.rsplit("/", 1)[-1] for name in clean.deleted}
    refused = 0
    for instant in h.instants[:-2]:
        try:
            table.time_travel(instant)
        except TimeTravelError as exc:
            refused += 1
            assert f"cleaned: the clean {clean.instant} deleted " in str(exc)
            assert any(name in str(exc) for name in deleted)
            assert f"{clean.instant}_" in str(exc)            # the clean's own timeline file
    assert refused >= 1
    for instant in h.instants[-2:]:
        _, slices = table.time_travel(instant)
        ours = sorted(r for rows in slice_rows(table, slices, instant).values() for r in rows)
        assert ours == hudi_rs_rows(h.path, instant)


def test_snapshot_of_takes_slices_or_as_of_not_both(small: History) -> None:
    table = HudiTable.open(small.path)
    with pytest.raises(ValueError, match="give slices or as_of, not both"):
        TableSnapshot.of(table, ColumnStatsIndex(table, persist=False), table.latest_file_slices(),
                         as_of=small.instants[0])


def test_list_files_as_of(small: History) -> None:
    from hive_bridge.spark.reads import list_files
    from hive_bridge.spark.sessions import SparkReadError

    _, result, residual = list_files(str(small.path), "id < 5", as_of=small.instants[0])
    assert result.as_of == small.instants[0] and residual == "id < 5"
    assert {s.base_instant for s in result.slices} == {small.instants[0]}
    assert result.figures()["as_of"] == small.instants[0]
    latest = list_files(str(small.path), "id < 5")[1]
    assert latest.as_of is None and "as_of" not in latest.figures()
    with pytest.raises(SparkReadError) as exc:
        list_files(str(small.path), "id < 5", as_of="2000-01-01 00:00:00")
    assert str(small.path) in str(exc.value) and "'2000-01-01 00:00:00' (instant 20000101000000000)" in str(exc.value)
    with pytest.raises(SparkReadError, match="as_of: unsupported as-of time format: 'soon'"):
        list_files(str(small.path), None, as_of="soon")

