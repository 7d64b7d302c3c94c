"""Time travel on merge-on-read tables through the ``hudi-hive`` JVM file index: slices merged up to the as-of
instant (version-6 log files holding later delta commits' blocks are cut there), in the driver and by the
executor merge job, into merged-slice files keyed by the instant (never read for another instant or for the
latest state); rows equal ``read_hudi(as_of=)``'s and hudi-rs's time-travel read."""

from __future__ import annotations

import os
import threading
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from hive_bridge.formats.logfile import read_log_file
from hive_bridge.layout.asof import merge_bound
from hive_bridge.layout.fsview import parse_log_file_name
from hive_bridge.pruning.pruner import READ_OPTIMIZED
from hive_bridge.spark import merge_job, pin_of, read_hudi, register
from hive_bridge.spark.file_index import Pin, data_arrow_schema
from hive_bridge.spark.merge import hudi_reader, merge_with_hudi
from hive_bridge.spark.merged_cache import CACHE, SUFFIX, slice_key
from hive_bridge.table.table import HudiTable
from tests.hive_bridge.layout.test_time_travel import History, _data, hudi_rs_rows, write_history

pytestmark = pytest.mark.spark

Row = tuple[Any, ...]
FILTERS: list[tuple[str, Callable[[Row], bool]]] = [
    ("id < 20", lambda r: r[0] < 20),
    ("name like 'u%' or ts >= 5", lambda r: r[1].startswith("u") or r[2] >= 5),
]


def append_log_versions(root: Path) -> int:
    """Make each version-6 file slice's log files one log file, as Hudi 0.x appends every delta commit's blocks
    to the slice's open log file: the later versions' bytes (whole blocks) appended to the first, in order, and
    removed. How many log files now hold several commits' blocks."""
    groups: dict[tuple[Path, str, str], list[tuple[int, Path]]] = defaultdict(list)
    for p in root.rglob(".*.log.*"):
        parsed = parse_log_file_name(p.name)
        if ".hoodie" in p.relative_to(root).parts or parsed is None:
            continue
        fid, base, version, _ = parsed
        groups[(p.parent, fid, base)].append((int(version), p))
    appended = 0
    for files in groups.values():
        files.sort()
        if len(files) < 2:
            continue
        with files[0][1].open("ab") as out:
            for _, p in files[1:]:
                out.write(p.read_bytes())
                p.unlink()
        appended += 1
    return appended


@pytest.fixture(scope="module")
def hudi_hive(spark: Any) -> None:
    register(spark)


@pytest.fixture(scope="module")
def mor6(tmp_path_factory: pytest.TempPathFactory) -> History:
    h = write_history(tmp_path_factory.mktemp("ttmor6") / "t", 6, "MERGE_ON_READ", seed=21, commits=10)
    assert append_log_versions(h.path) >= 3
    return h


@pytest.fixture(scope="module")
def mor8(tmp_path_factory: pytest.TempPathFactory) -> History:
    return write_history(tmp_path_factory.mktemp("ttmor8") / "t", 8, "MERGE_ON_READ", seed=22, commits=10)


def _rows(df: Any, cols: tuple[str, ...] = ("id", "name", "ts")) -> Counter[Row]:
    return Counter(tuple(r[c] for c in cols) for r in df.select(*cols).collect())


def _hudi_hive(spark: Any, path: Path, as_of: str | None = None, **options: str) -> Any:
    reader = spark.read.format("hudi-hive")
    if as_of is not None:
        reader = reader.option("as.of.instant", as_of)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(str(path))


def _pin(df: Any) -> Pin:
    pin = pin_of(df)
    assert pin is not None
    return pin


def _merged_kept(pin: Pin) -> set[str]:
    return {p for p in pin.last_kept if p.endswith(SUFFIX) and not p.startswith(str(pin.path))}


def _expected_names(pin: Pin, bound: str | None) -> set[str]:
    """The merged-slice file names the pin's kept slices with log files have under the given merge bound."""
    table = pin.snapshot.table
    schema = data_arrow_schema(table, pin.path_cols)
    return {f"{slice_key(table, s, schema, bound)}{SUFFIX}" for s in pin.snapshot.slices if s.log_files}


def _instants(h: History) -> list[str]:
    """The first write, a middle one, the one before the last compaction or the rollback, the last."""
    picks = [h.instants[0], h.instants[len(h.instants) // 2], h.instants[-2], h.instants[-1]]
    return list(dict.fromkeys(picks))


# ----------------------------------------------------------------------------- rows, by table and instant

@pytest.mark.parametrize("which", ["mor6", "mor8"])
def test_rows_as_of_equal_read_hudi_and_hudi_rs(spark: Any, hudi_hive: None, which: str,
                                                request: pytest.FixtureRequest) -> None:
    h: History = request.getfixturevalue(which)
    for instant in _instants(h):
        oracle = hudi_rs_rows(h.path, instant)
        df = _hudi_hive(spark, h.path, instant)
        assert _rows(df) == Counter(oracle), instant
        pin = _pin(df)
        assert pin.snapshot.as_of is not None and pin.snapshot.as_of.instant == instant
        # every slice with log files read merged as of the instant: the keys say so
        assert {Path(p).name for p in _merged_kept(pin)} == _expected_names(pin, merge_bound(instant))
        for text, matches in FILTERS:
            expected = Counter(r for r in oracle if matches(r))
            assert _rows(df.where(text)) == expected, (instant, text)
            assert _rows(read_hudi(spark, str(h.path), text, as_of=instant).df) == expected, (instant, text)


def test_a_v6_log_file_holds_later_blocks_and_is_cut_at_the_instant(mor6: History) -> None:
    table = HudiTable.open(mor6.path)
    first = mor6.instants[0]
    _, slices = table.time_travel(first)
    # the first write's state already lists log files (named after their slice's base instant), whose blocks are
    # all later delta commits': only a merge stopped at the instant gives the first write's rows
    assert any(s.log_files for s in slices)
    assert any(len(read_log_file(lf.full_path).blocks) > 1 for s in slices for lf in s.log_files)
    oracle = hudi_rs_rows(mor6.path, first)
    assert len(oracle) == 24
    uncut, cut = hudi_reader(str(mor6.path)), hudi_reader(str(mor6.path), None, merge_bound(first))
    rows: dict[str | None, list[Row]] = {}
    for bound, reader in (("cut", cut), (None, uncut)):
        rows[bound] = sorted((r["id"], r["name"], r["ts"]) for s in slices
                             for b in merge_with_hudi(reader, s.base_file.path if s.base_file else "",
                                                      [lf.path for lf in s.log_files]) for r in b.to_pylist())
    assert rows["cut"] == oracle and rows[None] != oracle


def test_statistics_of_the_state_keep_rows_gone_since(spark: Any, hudi_hive: None, mor6: History) -> None:
    """A name only the earlier state has (updated or deleted since): kept as of then, not in the latest."""
    latest = {r[1] for r in hudi_rs_rows(mor6.path, mor6.instants[-1])}
    for instant in (mor6.instants[1], mor6.instants[len(mor6.instants) // 2]):
        gone = sorted({r[1] for r in hudi_rs_rows(mor6.path, instant)} - latest)
        assert gone, instant
        where = f"name in ({', '.join(repr(n) for n in gone[:4])})"
        df = _hudi_hive(spark, mor6.path, instant).where(where)
        assert {r[1] for r in _rows(df)} == set(gone[:4]), instant
        assert _rows(_hudi_hive(spark, mor6.path).where(where)) == Counter()


@pytest.mark.parametrize("name", ["quickstart_trips_table.mor.avro.v6_trips_8i1u",
                                  "quickstart_trips_table.mor.avro.v8_trips_8i3u1d",
                                  "sample_table.mor.avro.v9_txns_simple_meta"])
def test_shared_tables_every_instant(spark: Any, hudi_hive: None, shared_tables: dict[str, Path],
                                     name: str) -> None:
    from hudi import HudiReadOptions
    from hudi import HudiTable as RsTable

    path = shared_tables[name]
    table = HudiTable.open(path)
    cols = ("uuid", "rider", "fare") if "trips" in name else ("txn_id", "amount", "currency", "merchant_name")
    merged_somewhere = False
    for w in table.timeline.completed_writes:
        batches = RsTable(str(path)).read(HudiReadOptions().with_as_of_timestamp(w.timestamp))
        oracle = Counter(tuple(r[c] for c in cols) for b in batches for r in b.to_pylist())
        df = _hudi_hive(spark, path, w.timestamp)
        assert _rows(df, cols) == oracle, w.timestamp
        assert _rows(read_hudi(spark, str(path), None, as_of=w.timestamp).df, cols) == oracle, w.timestamp
        merged_somewhere = merged_somewhere or bool(_merged_kept(_pin(df)))
    assert merged_somewhere


def test_read_optimized_as_of_reads_the_states_base_files(spark: Any, hudi_hive: None, mor6: History,
                                                          mor8: History) -> None:
    for h in (mor6, mor8):
        table = HudiTable.open(h.path)
        for instant in _instants(h):
            _, slices = table.time_travel(instant)
            base = Counter((r["id"], r["name"], r["ts"]) for s in slices if s.base_file is not None
                           for r in pq.read_table(s.base_file.full_path, columns=["id", "name", "ts"]).to_pylist())
            df = _hudi_hive(spark, h.path, instant, **{"hoodie.datasource.query.type": "read_optimized"})
            assert _rows(df) == base, instant
            assert not _merged_kept(_pin(df))
            ro = read_hudi(spark, str(h.path), None, as_of=instant, query_type=READ_OPTIMIZED)
            assert _rows(ro.df) == base, instant


# ----------------------------------------------------------------------------- one session, many relations

def test_relations_of_two_instants_and_the_latest_queried_alternately(spark: Any, hudi_hive: None,
                                                                     mor6: History) -> None:
    t1, t2, last = mor6.instants[1], mor6.instants[len(mor6.instants) // 2], mor6.instants[-1]
    oracle = {t: hudi_rs_rows(mor6.path, t) for t in (t1, t2, last)}
    assert oracle[t1] != oracle[last] and oracle[t2] != oracle[last]
    frames = {t1: _hudi_hive(spark, mor6.path, t1), t2: _hudi_hive(spark, mor6.path, t2),
              last: _hudi_hive(spark, mor6.path)}
    for _ in range(2):
        for t in (t1, last, t2, last, t1):
            for text, matches in FILTERS:
                assert _rows(frames[t].where(text)) == Counter(r for r in oracle[t] if matches(r)), (t, text)
            assert _rows(frames[t]) == Counter(oracle[t]), t
    merged = {t: _merged_kept(_pin(df)) for t, df in frames.items()}
    assert all(merged.values())
    # a slice merged as of T1 is another file than as of T2 or the latest, by name: no file is shared
    assert not merged[t1] & merged[last] and not merged[t2] & merged[last] and not merged[t1] & merged[t2]
    assert {Path(p).name for p in merged[last]} == _expected_names(_pin(frames[last]), None)
    assert {Path(p).name for p in merged[t1]} == _expected_names(_pin(frames[t1]), merge_bound(t1))

    # SQL temp views of both, in one statement: the rows whose name changed since T1
    frames[t1].createOrReplaceTempView("tt_mor_then")
    frames[last].createOrReplaceTempView("tt_mor_now")
    changed = spark.sql("SELECT a.id, a.name, b.name AS now FROM tt_mor_then a JOIN tt_mor_now b ON a.id = b.id "
                        "WHERE a.name <> b.name").collect()
    now = {r[0]: r[1] for r in oracle[last]}
    assert sorted((r["id"], r["name"], r["now"]) for r in changed) == \
        sorted((i, n, now[i]) for i, n, _ in oracle[t1] if i in now and now[i] != n)
    assert changed
    assert spark.sql("SELECT count(*) FROM tt_mor_then WHERE id < 20").collect()[0][0] == \
        sum(1 for r in oracle[t1] if r[0] < 20)


def test_two_threads_read_two_states_at_once(spark: Any, hudi_hive: None, mor8: History) -> None:
    then, last = mor8.instants[2], mor8.instants[-1]
    oracle = {then: hudi_rs_rows(mor8.path, then), last: hudi_rs_rows(mor8.path, last)}
    assert oracle[then] != oracle[last]
    frames = {then: _hudi_hive(spark, mor8.path, then), last: _hudi_hive(spark, mor8.path)}
    failures: list[str] = []

    def run(t: str) -> None:
        try:
            for _ in range(3):
                for text, matches in FILTERS:
                    got = _rows(frames[t].where(text))
                    if got != Counter(r for r in oracle[t] if matches(r)):
                        failures.append(f"{t} {text}: {sorted(got)}")
        except Exception as exc:  # reported below, with the state it read
            failures.append(f"{t}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(t,)) for t in (then, last)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert failures == []


def test_the_executor_merge_job_merges_as_of_the_instant(spark: Any, mor6: History, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    CACHE.clear()
    spark.conf.set(merge_job.DRIVER_MAX_CONF, "0")
    try:
        register(spark)
        assert merge_job.store().driver_max == 0
        then, last = mor6.instants[1], mor6.instants[-1]
        jobs = merge_job.STATS["jobs"]
        df_then, df_now = _hudi_hive(spark, mor6.path, then), _hudi_hive(spark, mor6.path)
        assert _rows(df_then) == Counter(hudi_rs_rows(mor6.path, then))
        assert merge_job.STATS["jobs"] == jobs + 1
        assert _rows(df_now) == Counter(hudi_rs_rows(mor6.path, last))
        assert merge_job.STATS["jobs"] == jobs + 2
        files = {t: _merged_kept(_pin(df)) for t, df in ((then, df_then), (last, df_now))}
        assert files[then] and files[last] and not files[then] & files[last]
        for path in files[then] | files[last]:
            assert Path(path).is_relative_to(tmp_path / "cache" / "merged")
            writer = (pq.read_metadata(path).metadata or {})[merge_job.MERGED_BY_KEY.encode()].decode()
            assert int(writer.rsplit(":", 1)[1]) != os.getpid()   # a Python worker of the local session
        # read again: the files are there, no job
        assert _rows(df_then.where("id < 20")) == Counter(r for r in hudi_rs_rows(mor6.path, then) if r[0] < 20)
        assert merge_job.STATS["jobs"] == jobs + 2
    finally:
        spark.conf.unset(merge_job.DRIVER_MAX_CONF)
        register(spark)
        CACHE.clear()
    assert merge_job.store().driver_max == merge_job.DRIVER_MAX_DEFAULT


# ----------------------------------------------------------------------------- what cannot be read

def test_instants_that_cannot_be_read_are_refused(spark: Any, hudi_hive: None, tmp_path: Path) -> None:
    h = write_history(tmp_path / "t", 6, "MERGE_ON_READ", seed=23, commits=6)
    unknown = str(int(h.instants[1]) + 1)
    assert unknown not in h.instants
    pending = h.writer.upsert(_data([1], "x", 9), inflight=True)
    cases = [(unknown, f"as of {unknown}: no such instant on the timeline"),
             ("2000-01-01", "before the first completed commit"),
             ("2999-01-01", "it is in the future"),
             (pending.instant, f"as of {pending.instant}: the instant is not completed (deltacommit inflight)"),
             ("soon", "option as.of.instant: unsupported as-of time format: 'soon'")]
    for value, says in cases:
        with pytest.raises(Exception) as exc:
            _hudi_hive(spark, h.path, value).collect()
        assert says in str(exc.value) and str(h.path) in str(exc.value), value
    # the state before the pending write is read, merged up to it
    assert _rows(_hudi_hive(spark, h.path, h.instants[-1])) == Counter(hudi_rs_rows(h.path, h.instants[-1]))


def test_a_cleaned_instant_is_refused(spark: Any, hudi_hive: None, tmp_path: Path) -> None:
    h = write_history(tmp_path / "t", 6, "MERGE_ON_READ", seed=25, commits=8)   # two compactions
    clean = h.writer.clean(3)
    assert clean.deleted
    with pytest.raises(Exception, match=f"cleaned: the clean {clean.instant}") as exc:
        _hudi_hive(spark, h.path, h.instants[0]).collect()
    assert str(h.path) in str(exc.value)
    assert _rows(_hudi_hive(spark, h.path, h.instants[-1])) == Counter(hudi_rs_rows(h.path, h.instants[-1]))
