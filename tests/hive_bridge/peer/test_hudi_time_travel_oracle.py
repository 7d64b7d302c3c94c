"""Time travel and incremental pulls against Hudi's own readers (``tools/hudi_peer.py``: Hudi 1.1's Spark 3.5
bundle in its own venv): tables written by Hudi's Spark writer with many commits, read by Hudi's Spark reader
(``as.of.instant``; ``hoodie.datasource.query.type=incremental`` with begin / end completion times) and listed by
Hudi's Hive input formats in incremental mode (``getSplits`` of a JobConf as Hive builds it), then by hive-bridge.

Two tables of table version 9: a copy-on-write table partitioned by ``region`` (inserts, updates, deletes, an
inline clustering, cleans keeping two commits, archival) and an unpartitioned merge-on-read one (log files of
updates and deletes, an inline compaction, inserts into new file groups, cleans, archival). Instants and ranges are
drawn at random (a fixed seed: the same draws each run, printed) from the tables' own timelines.

- time travel: hive-bridge's rows (``read_hudi(as_of=)``, and ``hudi-hive`` with ``as.of.instant`` on the
  copy-on-write table) equal Hudi's for every filter; the files kept hold every matching row; where one side
  refuses an instant the other's answer is printed, and hive-bridge never returns rows Hudi's reader does not;
- incremental: hive-bridge's rows (``read_hudi(begin_instant=, end_instant=)``) equal Hudi's; a begin before the
  active timeline falls back to a full scan by default on both sides (Hudi 1.x's default), and with the fallback
  off hive-bridge refuses it naming the instant;
- Hive: ``HoodieParquetInputFormat.list_status`` of a JobConf with ``hoodie.<table>.consume.*`` lists the base files
  Hudi's own input format lists for the same JobConf, and the pruned listing keeps every file holding a match.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
import hudi_peer

from tests.hive_bridge.peer import require_peer

pytestmark = [pytest.mark.spark, pytest.mark.peer, pytest.mark.filterwarnings("ignore:hive-bridge set:RuntimeWarning")]

SCHEMA = "id bigint, region string, v double, s string, ts bigint"
FILTERS = ["id < 20", "v > 100", "region = 'EU' AND id >= 40"]
#: the filters as Python predicates on a row (the pruned Hive listings are checked file by file with them)
PREDICATES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "id < 20": lambda r: r["id"] < 20, "v > 100": lambda r: r["v"] is not None and r["v"] > 100,
    "region = 'EU' AND id >= 40": lambda r: r["region"] == "EU" and r["id"] >= 40}
SEED = 37
INCREMENTAL = {"hoodie.datasource.query.type": "incremental"}
BEGIN, END = "hoodie.datasource.read.begin.instanttime", "hoodie.datasource.read.end.instanttime"
FALLBACK = "hoodie.datasource.read.incr.fallback.fulltablescan.enable"
INPUT_DIR = "mapreduce.input.fileinputformat.inputdir"
#: cleans keeping two commits, and archival of all but a few: instants that cannot be read any more
CLEAN = {"hoodie.clean.automatic": "true", "hoodie.cleaner.commits.retained": "2", "hoodie.keep.min.commits": "4",
         "hoodie.keep.max.commits": "5"}


def _row(i: int, ts: int = 0, bump: float = 0.0) -> list[Any]:
    return [i, "EU" if i % 2 == 0 else "US", i * 0.5 + bump, f"k{i:03d}", ts]


def _rows(ids: Any, ts: int = 0, bump: float = 0.0) -> list[list[Any]]:
    return [_row(i, ts, bump) for i in ids]


def _tables(root: Path) -> list[dict[str, Any]]:
    cow = {"path": str(root / "cow"), "name": "tt_cow", "type": "COPY_ON_WRITE", "key": "id", "ordering": "ts",
           "partition": "region", "schema": SCHEMA, "metadata": {"column_stats": False},
           "commits": [
               {"op": "bulk_insert", "rows": _rows(range(0, 40)), "files": 2},
               {"op": "upsert", "rows": _rows([1, 2, 3, 4], 1, 100)},
               {"op": "insert", "rows": _rows(range(40, 60))},
               {"op": "delete", "rows": _rows([5, 6, 41], 2)},
               {"op": "upsert", "rows": _rows([7, 8, 42], 3, 200),
                "options": {"hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": "1"}},
               {"op": "upsert", "rows": _rows([9, 10, 43], 4, 300), "options": CLEAN},
               {"op": "upsert", "rows": _rows([1, 11, 44], 5, 400), "options": CLEAN},
               {"op": "upsert", "rows": _rows([2, 12, 45], 6, 500), "options": CLEAN},
               {"op": "insert", "rows": _rows(range(60, 70), 7)}]}
    mor = {"path": str(root / "mor"), "name": "tt_mor", "type": "MERGE_ON_READ", "key": "id", "ordering": "ts",
           "partition": None, "schema": SCHEMA, "metadata": {"column_stats": False},
           "commits": [
               {"op": "bulk_insert", "rows": _rows(range(0, 40)), "files": 2},
               {"op": "upsert", "rows": _rows([1, 2, 30], 1, 100)},
               {"op": "delete", "rows": _rows([3, 31], 2)},
               {"op": "upsert", "rows": _rows([4, 32], 3, 200),
                "options": {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "1"}},
               {"op": "upsert", "rows": _rows([5, 33], 4, 300)},
               {"op": "insert", "rows": _rows(range(40, 50), 4)},
               {"op": "upsert", "rows": _rows([6, 34, 41], 5, 400), "options": CLEAN},
               {"op": "upsert", "rows": _rows([1, 35, 42], 6, 500), "options": CLEAN},
               {"op": "upsert", "rows": _rows([7, 36, 43], 7, 600)}]}
    return [cow, mor]


def _writes(path: str) -> list[tuple[str, str]]:
    """(requested, completion) time of every completed write on the active timeline, in order."""
    from hive_bridge.table.table import HudiTable

    return [(i.timestamp, str(i.completion_time)) for i in HudiTable.open(path).timeline.completed_writes]


def _millis_before(instant: str) -> str:
    """The instant time one millisecond before ``instant`` (a 17-digit time)."""
    t = datetime.strptime(instant[:14], "%Y%m%d%H%M%S") + timedelta(milliseconds=int(instant[14:17] or 0) - 1)
    return t.strftime("%Y%m%d%H%M%S") + f"{t.microsecond // 1000:03d}"


def _plan(kind: str, path: str, name: str, rnd: random.Random) -> dict[str, list[dict[str, Any]]]:
    """The queries asked of both sides for one table: as-of instants, incremental ranges, Hive pulls."""
    writes = _writes(path)
    requested = [r for r, _ in writes]
    done = [c for _, c in writes]
    as_of = sorted({*rnd.sample(requested, min(4, len(requested))), requested[-1], requested[0],
                    _millis_before(requested[0])})
    ranges: list[dict[str, Any]] = []
    for _ in range(3):
        a = rnd.randrange(0, len(done) - 1)
        b = rnd.randrange(a + 1, len(done))
        ranges.append({"begin": done[a], "end": done[b]})
    ranges += [{"begin": done[-3], "end": None}, {"begin": requested[-2], "end": done[-1]},
               {"begin": "earliest", "end": done[-2]},
               {"begin": _millis_before(requested[0]), "end": done[-1]},           # archived: the default fallback
               {"begin": _millis_before(requested[0]), "end": done[-1], "fallback": "false"}]
    hive = []
    base = {f"hoodie.{name}.consume.mode": "INCREMENTAL"}
    for start, most in [(requested[-4], "1"), (requested[-3], "2"), (requested[-4], "-1"), (requested[0], "-1")]:
        hive.append({**base, f"hoodie.{name}.consume.start.timestamp": start,
                     f"hoodie.{name}.consume.max.commits": most})
    return {"as_of": [{"instant": t} for t in as_of], "ranges": ranges, "hive": hive}


def _incremental_options(r: dict[str, Any]) -> dict[str, str]:
    opts = {**INCREMENTAL, BEGIN: r["begin"]}
    if r.get("end"):
        opts[END] = r["end"]
    if r.get("fallback"):
        opts[FALLBACK] = r["fallback"]
    return opts


def _partition_dirs(path: str) -> str:
    dirs = sorted(str(p) for p in Path(path).iterdir() if p.is_dir() and not p.name.startswith("."))
    return ",".join(dirs) or path


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The tables Hudi's writer wrote, the queries drawn from their timelines, and Hudi's answers to them."""
    require_peer()   # a no-op when set up (make test-peer ran make hudi-peer)
    return run_peer(tmp_path_factory.mktemp("ttpeer"))


def run_peer(root: Path) -> dict[str, Any]:
    """Write the tables under ``root`` with Hudi's writer, draw the queries, and ask Hudi's readers them (two
    runs of the peer: the queries depend on the instants written)."""
    tables = _tables(root)
    written = hudi_peer.run({"write": tables})["written"]
    rnd = random.Random(SEED)
    plans, queries, splits = {}, [], []
    for t in tables:
        kind, path = t["type"], t["path"]
        plan = plans[kind] = _plan(kind, path, t["name"], rnd)
        for q in plan["as_of"]:
            q["hudi"] = len(queries)
            queries.append({"path": path, "options": {"as.of.instant": q["instant"]}, "filters": FILTERS})
        for r in plan["ranges"]:
            r["hudi"] = len(queries)
            queries.append({"path": path, "options": _incremental_options(r), "filters": FILTERS})
        formats = ["HoodieParquetInputFormat"] + (["HoodieParquetRealtimeInputFormat"]
                                                  if kind == "MERGE_ON_READ" else [])
        pulls = []
        for conf in plan["hive"]:
            for f in formats:
                job = {"format": f, "conf": {**conf, INPUT_DIR: _partition_dirs(path)}}
                pulls.append({**job, "hudi": len(splits)})
                splits.append(job)
        plan["hive"] = pulls
    out = hudi_peer.run({"query": queries, "splits": splits})
    for kind, plan in plans.items():
        print(f"\n{kind}: writes {_writes(next(t['path'] for t in tables if t['type'] == kind))}")
        print(f"  as-of {[q['instant'] for q in plan['as_of']]}\n  ranges {plan['ranges']}")
    return {"tables": {t["type"]: t for t in tables}, "written": written, "plans": plans,
            "queries": out["queries"], "splits": out["splits"]}


def _hudi_rows(answer: dict[str, Any], i: int) -> list[str]:
    return sorted(r["j"] for r in answer["rows"] if r["m"][i])


def _answer(theirs: dict[str, Any], i: int) -> str:
    """Hudi's answer in a line: its error, or how many rows match filter ``i``."""
    return theirs["error"].splitlines()[0][:220] if "error" in theirs else f"{len(_hudi_rows(theirs, i))} rows"


def _hudi_groups(answer: dict[str, Any], i: int) -> set[tuple[str, str]]:
    return {(r["p"], r["f"].lstrip(".").split("_", 1)[0]) for r in answer["rows"] if r["m"][i]}


def _as_json(df: Any) -> list[str]:
    from pyspark.sql import functions as F

    cols = sorted(c for c in df.columns if not c.startswith("_hoodie"))
    return sorted(r[0] for r in df.select(F.to_json(F.struct(*[F.col(f"`{c}`") for c in cols]))).collect())


def _ours(fn: Callable[[], Any]) -> tuple[Any, str]:
    """(the read, "") or (None, the error's message) for hive-bridge's side."""
    from hive_bridge.errors import HiveBridgeError
    from hive_bridge.spark.sessions import SparkReadError

    try:
        return fn(), ""
    except (SparkReadError, HiveBridgeError) as exc:
        return None, str(exc)


def test_hudi_wrote_what_the_oracle_needs(peer: dict[str, Any]) -> None:
    """Version 9 tables with a clustering (copy-on-write), a compaction and log files (merge-on-read), cleans and
    an archived timeline: the instants the queries must handle."""
    for written in peer["written"]:
        assert written["table_version"] == "9", written
        timeline = Path(written["path"], ".hoodie", "timeline")
        names = [p.name for p in timeline.iterdir()]
        assert any(n.endswith(".clean") for n in names), names
        assert list((timeline / "history").glob("*.parquet")), "nothing archived"
    cow = Path(peer["tables"]["COPY_ON_WRITE"]["path"], ".hoodie", "timeline")
    mor = Path(peer["tables"]["MERGE_ON_READ"]["path"])
    assert any(n.name.endswith(".replacecommit") for n in cow.iterdir()) or list((cow / "history").iterdir())
    assert list(mor.glob(".*.log.*"))


def _kept(listing: Any) -> set[tuple[str, str]]:
    return {(s.partition_path, s.file_id) for s in listing.slices}


@pytest.mark.parametrize("kind", ["COPY_ON_WRITE", "MERGE_ON_READ"], ids=["cow", "mor"])
def test_time_travel_keeps_hudis_matches_and_refuses_what_it_cannot_read(peer: dict[str, Any], kind: str) -> None:
    """Per as-of instant and filter: the planner (``list_files(as_of=)``) keeps every file group holding a row
    Hudi's reader returns for the filter, or refuses the instant naming it; a refusal is printed beside Hudi's
    answer (the disagreements are the report's)."""
    from hive_bridge.spark.reads import list_files

    path = peer["tables"][kind]["path"]
    compared, refused = 0, []
    for q in peer["plans"][kind]["as_of"]:
        theirs = peer["queries"][q["hudi"]]
        for i, filt in enumerate(FILTERS):
            got, err = _ours(lambda: list_files(path, filt, as_of=q["instant"])[1])  # noqa: B023
            if err:
                assert q["instant"] in err and path in err, err
                # what hive-bridge refuses (cleaned, archived), Hudi's reader refuses too
                assert "Cleaner cleaned up" in theirs.get("error", ""), (q["instant"], err, _answer(theirs, i))
                refused.append((q["instant"], err.splitlines()[0][:220],
                                _answer(theirs, i)))
                continue
            assert "error" not in theirs, (q["instant"], theirs["error"])
            assert _hudi_groups(theirs, i) <= _kept(got), (q["instant"], filt)
            compared += 1
    print(f"\n{kind}: {compared} as-of listings keep Hudi's matches; refused by hive-bridge:")
    for instant, ours, hudi in sorted(set(refused)):
        print(f"  {instant}: hive-bridge: {ours}\n      Hudi: {hudi}")
    assert compared >= 2 * len(FILTERS)


@pytest.mark.parametrize("kind", ["COPY_ON_WRITE", "MERGE_ON_READ"], ids=["cow", "mor"])
def test_time_travel_rows_are_hudis(spark: Any, peer: dict[str, Any], kind: str) -> None:
    """Per readable as-of instant, a filter in turn: ``read_hudi(as_of=)`` (and ``hudi-hive`` with
    ``as.of.instant`` on the copy-on-write table) returns Hudi's reader's rows."""
    from hive_bridge.spark import read_hudi, register

    register(spark)
    path = peer["tables"][kind]["path"]
    compared = 0
    for n, q in enumerate(peer["plans"][kind]["as_of"]):
        theirs, i = peer["queries"][q["hudi"]], n % len(FILTERS)
        got, err = _ours(lambda: read_hudi(spark, path, FILTERS[i], as_of=q["instant"]))  # noqa: B023
        if err:
            continue                       # refused: judged (and printed) by the listing test
        assert _as_json(got.df) == _hudi_rows(theirs, i), (q["instant"], FILTERS[i])
        if kind == "COPY_ON_WRITE":
            hh = spark.read.format("hudi-hive").option("as.of.instant", q["instant"]).load(path).where(FILTERS[i])
            assert _as_json(hh) == _hudi_rows(theirs, i), (q["instant"], FILTERS[i], "hudi-hive")
        compared += 1
    assert compared >= 2


@pytest.mark.parametrize("kind", ["COPY_ON_WRITE", "MERGE_ON_READ"], ids=["cow", "mor"])
def test_incremental_keeps_hudis_matches(peer: dict[str, Any], kind: str) -> None:
    """Per range and filter: the planner (``list_incremental``) keeps every file group holding a row Hudi's
    incremental query returns; a begin before the active timeline falls back to the full scan by default (Hudi
    1.x's default) and is refused naming it with the fallback off."""
    from hive_bridge.spark.reads import list_incremental
    from hive_bridge.table.table import HudiTable

    path = peer["tables"][kind]["path"]
    latest = len(HudiTable.open(path).latest_file_slices())
    compared, refused, hudi_failed = 0, [], []
    for r in peer["plans"][kind]["ranges"]:
        theirs = peer["queries"][r["hudi"]]
        fallback = None if r.get("fallback") is None else r["fallback"] == "true"
        for i, filt in enumerate(FILTERS):
            got, err = _ours(lambda: list_incremental(path, filt, begin=r["begin"], end=r["end"],  # noqa: B023
                                                      fallback=fallback)[1])  # noqa: B023
            if err:
                assert r["begin"] in err or (r["end"] or "") in err, err
                refused.append((json.dumps({k: v for k, v in r.items() if k != "hudi"}), err.splitlines()[0][:220],
                                _answer(theirs, i)))
                continue
            if "error" in theirs:
                # Hudi 1.1.1 fails `earliest` on a table whose timeline was archived (a NullPointerException in
                # its incremental relation); hive-bridge reads it as a begin before the active timeline
                assert r["begin"] == "earliest" and "NullPointerException" in theirs["error"], (r, theirs["error"])
                assert got.commit_range[0] == "0" and got.files_total == latest, (r, got.files_total)  # full scan
                hudi_failed.append((r["begin"], r["end"], _answer(theirs, i)))
                continue
            assert _hudi_groups(theirs, i) <= _kept(got), (r, filt)
            compared += 1
    print(f"\n{kind}: {compared} incremental listings keep Hudi's matches; refused by hive-bridge:")
    for rng, ours, hudi in sorted(set(refused)):
        print(f"  {rng}: hive-bridge: {ours}\n      Hudi: {hudi}")
    for begin, end, hudi in sorted(set(hudi_failed)):
        print(f"  ({begin}, {end}]: Hudi fails ({hudi}); hive-bridge reads the latest state filtered by commit time")
    assert compared >= 4 * len(FILTERS)
    # refused only with the fallback off (a begin before the active timeline reads the archived commits then; a
    # file they wrote that a clean deleted is the error naming it)
    assert all(json.loads(x[0]).get("fallback") == "false" for x in refused), refused


@pytest.mark.parametrize("kind", ["COPY_ON_WRITE", "MERGE_ON_READ"], ids=["cow", "mor"])
def test_incremental_rows_are_hudis(spark: Any, peer: dict[str, Any], kind: str) -> None:
    """Per range (the fallback's full scan included), a filter in turn: ``read_hudi(begin_instant=,
    end_instant=)`` returns Hudi's incremental query's rows."""
    from hive_bridge.spark import read_hudi

    path = peer["tables"][kind]["path"]
    compared = 0
    for n, r in enumerate(peer["plans"][kind]["ranges"]):
        theirs, i = peer["queries"][r["hudi"]], n % len(FILTERS)
        if r.get("fallback") == "false" or "error" in theirs:
            continue        # refused by hive-bridge / failed in Hudi: judged by the listing test
        got = read_hudi(spark, path, FILTERS[i], begin_instant=r["begin"], end_instant=r["end"])
        assert _as_json(got.df) == _hudi_rows(theirs, i), (r, FILTERS[i])
        compared += 1
    assert compared >= 5


def _file_rows(path: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows


@pytest.mark.parametrize("kind", ["COPY_ON_WRITE", "MERGE_ON_READ"], ids=["cow", "mor"])
def test_hive_incremental_listing_is_hudis_input_format(peer: dict[str, Any], kind: str) -> None:
    from hive_bridge.hive.handler import (
        HoodieParquetInputFormat,
        HoodieParquetRealtimeInputFormat,
        job_conf_for,
    )
    from hive_bridge.table.table import HudiTable

    path = peer["tables"][kind]["path"]
    table = HudiTable.open(path)
    compared = 0
    for h in peer["plans"][kind]["hive"]:
        theirs = peer["splits"][h["hudi"]]
        fmt = HoodieParquetRealtimeInputFormat() if "Realtime" in h["format"] else HoodieParquetInputFormat()
        conf = {**job_conf_for(table), **h["conf"]}
        got, err = _ours(lambda: fmt.list_status(conf))  # noqa: B023
        if "Realtime" in h["format"]:
            assert "not emulated" in err, err       # refused by name; Hudi's answer printed
            print(f"\nrealtime {json.dumps(h['conf'])}: hive-bridge refuses; Hudi lists "
                  f"{theirs.get('files') or theirs.get('error')}")
            continue
        assert not err, err
        assert "error" not in theirs, theirs["error"]
        hudi_files = {Path(f.removeprefix("file:")).name for f in theirs["files"]}
        ours = {Path(f.path).name for f in got.files}
        assert ours == hudi_files, (h["conf"], sorted(ours - hudi_files), sorted(hudi_files - ours))
        for filt, pred in PREDICATES.items():
            pruned = fmt.list_status({**conf, "hive.io.filter.text": filt})
            kept = {f.path for f in pruned.files}
            assert kept <= {f.path for f in got.files}
            for f in got.files:
                if f.path not in kept:
                    assert not any(pred(r) for r in _file_rows(f.path)), (filt, f.path)
        compared += 1
    assert compared == 4
