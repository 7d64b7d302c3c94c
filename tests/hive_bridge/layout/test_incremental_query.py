"""Incremental queries (Hudi's begin / end instant options): the records the commits in (begin, end] wrote equal
hudi-rs's incremental read, and the files kept hold every matching record of the range."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive_bridge.layout.asof import merge_bound
from hive_bridge.spark.merge import hudi_reader, merge_with_hudi
from hive_bridge.spark.reads import list_incremental
from hive_bridge.spark.sessions import SparkReadError
from hive_bridge.table.table import HudiTable
from tests.hive_bridge.layout.test_time_travel import History, write_history

Row = tuple[int, str, int]


@pytest.fixture(scope="module", params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def history(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> History:
    return write_history(tmp_path_factory.mktemp("incq") / "t", 6, request.param, seed=31, commits=12)


def hudi_rs_incremental(path: Path, begin: str, end: str) -> Counter[Row]:
    from hudi import HudiQueryType, HudiReadOptions
    from hudi import HudiTable as RsTable

    opts = (HudiReadOptions().with_query_type(HudiQueryType.Incremental).with_start_timestamp(begin)
            .with_end_timestamp(end))
    return Counter((r["id"], r["name"], r["ts"]) for b in RsTable(str(path)).read(opts) for r in b.to_pylist())


def _rows(table: HudiTable, slices: list, end: str) -> dict[tuple[str, str], list[dict]]:  # type: ignore[type-arg]
    reader = hudi_reader(str(table.base_path), None, merge_bound(end))
    out = {}
    for s in slices:
        if s.log_files or s.base_file is None:
            rows = [r for b in merge_with_hudi(reader, s.base_file.path if s.base_file else "",
                                               [lf.path for lf in s.log_files]) for r in b.to_pylist()]
        else:
            rows = pq.read_table(s.base_file.full_path).to_pylist()
        out[(s.partition_path, s.file_id)] = rows
    return out


FILTERS = {None: lambda r: True, "id < 12": lambda r: r["id"] < 12, "ts >= 6": lambda r: r["ts"] >= 6,
           "p = 'p2'": lambda r: r["p"] == "p2"}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_incremental_rows_equal_hudi_rs(history: History, data: st.DataObject) -> None:
    n = len(history.instants)
    a = data.draw(st.integers(0, n - 1), label="begin")
    b = data.draw(st.integers(a, n - 1), label="end")
    filt = data.draw(st.sampled_from(list(FILTERS)), label="filter")
    begin, end = history.instants[a], history.instants[b]
    table, result, row_filter = list_incremental(str(history.path), filt, begin=begin, end=end)
    assert result.commit_range == (begin, end)
    assert row_filter.startswith(f"(`_hoodie_commit_time` > '{begin}' AND `_hoodie_commit_time` <= '{end}')") \
        if filt else row_filter == f"`_hoodie_commit_time` > '{begin}' AND `_hoodie_commit_time` <= '{end}'"
    _, every = table.incremental(begin, end)
    rows = _rows(table, every, end)
    kept = {(s.partition_path, s.file_id) for s in result.slices}
    match = FILTERS[filt]
    ours: Counter[Row] = Counter()
    for key, rs in rows.items():
        for r in rs:
            if begin < r["_hoodie_commit_time"] <= end and match(r):
                assert key in kept, (filt, key)
                ours[(r["id"], r["name"], r["ts"])] += 1
    assert ours == Counter({k: v for k, v in hudi_rs_incremental(history.path, begin, end).items()
                            if match({"id": k[0], "name": k[1], "ts": k[2], "p": f"p{k[0] % 3}"})})


def test_earliest_and_default_end(history: History) -> None:
    table = HudiTable.open(history.path)
    rng, slices = table.incremental("earliest")
    assert rng.begin == "0" and rng.end == history.instants[-1] and rng.commits[0] == history.instants[0]
    assert {(s.partition_path, s.file_id) for s in slices} == {
        (s.partition_path, s.file_id) for s in table.latest_file_slices()}


@pytest.mark.parametrize(("begin", "end", "says"), [
    (None, None, "an incremental query needs hoodie.datasource.read.begin.instanttime"),
    ("yesterday", None, "hoodie.datasource.read.begin.instanttime='yesterday' is not an instant time"),
    ("20240101000000000", "soon", "hoodie.datasource.read.end.instanttime='soon' is not an instant time"),
    ("29990101000000000", "20240101000000000", "is after hoodie.datasource.read.end.instanttime"),
])
def test_bad_ranges(history: History, begin: str | None, end: str | None, says: str) -> None:
    with pytest.raises(SparkReadError) as exc:
        list_incremental(str(history.path), None, begin=begin, end=end)
    assert says in str(exc.value) and str(history.path) in str(exc.value)


def test_archived_begin_fails_or_falls_back(history: History) -> None:
    early = "20000101000000000"
    with pytest.raises(SparkReadError, match="is before the first commit of the active timeline"):
        list_incremental(str(history.path), None, begin=early, end=history.instants[2])
    table = HudiTable.open(history.path)
    rng, slices = table.incremental(early, history.instants[2], fallback=True)
    assert rng.full_scan and "archived" in rng.why_full_scan and slices == table.latest_file_slices()


def test_cleaned_files_fail_or_fall_back(tmp_path: Path) -> None:
    h = write_history(tmp_path / "t", 6, "COPY_ON_WRITE", seed=7, commits=8)
    h.writer.clean(2, record_retained=False)
    table = HudiTable.open(h.path)
    refused = fell_back = 0
    for k in range(len(h.instants) - 2):
        try:
            table.incremental(h.instants[k], h.instants[k + 1])
        except Exception as exc:
            refused += 1
            assert "cleaned" in str(exc) and "fulltablescan.enable=true" in str(exc)
            rng, _ = table.incremental(h.instants[k], h.instants[k + 1], fallback=True)
            fell_back += rng.full_scan
    assert refused >= 1 and fell_back == refused

