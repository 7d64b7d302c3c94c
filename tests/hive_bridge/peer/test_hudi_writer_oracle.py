"""Tables written by Hudi's own Spark writer (``tools/hudi_peer.py``: Hudi 1.1's Spark 3.5 bundle in its own venv,
one JVM for the module), read by every hive-bridge route and by Hudi's own reader.

Two tables, written in the test run: a copy-on-write table partitioned by ``region`` with the metadata table's
column stats, partition stats and record index, and an unpartitioned merge-on-read table whose log files hold
updates (values moved out of their base file's range, NaN written over numbers) and deletes. Their values hold
the hazards: NaN, -0.0, NULLs, strings sharing a prefix.

Per filter: hive-bridge's rows (``hudi-hive`` through Spark) equal Spark's own reading of the latest files
(parquet pushdown off; merge-on-read slices merged by hudi-rs) and Hudi's reader's snapshot rows (data skipping
off); the planner (``list_files``) and ``hive-bridge explain`` keep every file group holding a matching row
(Hudi's ``_hoodie_file_name``), and the scan reads what the planner kept. Hudi's reader with data skipping on is
judged too: where it keeps fewer file groups than hive-bridge the groups are printed (exactness gaps), where it
returns fewer rows than the truth the loss is printed, and it never keeps a file group that hive-bridge drops
holding a match.
"""

from __future__ import annotations

import io
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
import hudi_peer

from tests.hive_bridge.peer import require_peer

pytestmark = [pytest.mark.spark, pytest.mark.peer, pytest.mark.filterwarnings("ignore:hive-bridge set:RuntimeWarning")]

SCHEMA = "id bigint, region string, v double, s string, n int, ts bigint"
FILTERS = ["id = 42", "id BETWEEN 100 AND 130", "id IN (3, 77, 250)", "v > 90", "v >= 1000", "v = 0.0", "v < 0",
           "s LIKE 'ab%'", "s = 'abz'", "s >= 'ab' AND s < 'ac'", "n IS NULL", "v IS NULL", "NOT (n > 3)",
           "region = 'EU' AND v > 50", "id > 300 OR s = 'ac'", "s LIKE 'k00%'"]
SPECIAL_S = {60: "ab", 61: "abz", 62: "ac", 63: "AB1", 64: "ab\u20ac", 65: "ab" + "z" * 80}


def _row(i: int, ts: int = 0) -> list[Any]:
    v: float | None = i * 0.5
    if i % 37 == 5:
        v = math.nan
    elif i == 44:
        v = -0.0
    elif i % 41 == 7:
        v = None
    s: str | None = SPECIAL_S.get(i, f"ab{i}" if i % 13 == 0 else f"k{i:04d}")
    if i % 29 == 3:
        s = None
    return [i, "EU" if (i // 10) % 2 == 0 else "US", v, s, None if i % 11 == 0 else i % 7, ts]


def _rows(lo: int, hi: int) -> list[list[Any]]:
    return [_row(i) for i in range(lo, hi)]


UPDATES = [[5, "EU", 1500.0, "ab-upd", 2, 1], [50, "US", math.nan, "k0050", 1, 1], [100, "EU", -0.0, "ac", 3, 1],
           [150, "US", 1000.0, None, None, 1], [200, "EU", -7.5, "abz", 4, 1]]
DELETES = [_row(i, 2) for i in (10, 11, 130, 131)]


def _tables(root: Path) -> list[dict[str, Any]]:
    cow = {"path": str(root / "cow"), "name": "peer_cow", "type": "COPY_ON_WRITE", "key": "id", "ordering": "ts",
           "partition": "region", "schema": SCHEMA,
           "metadata": {"column_stats": True, "partition_stats": True, "record_index": True},
           "commits": [{"op": "bulk_insert", "rows": _rows(0, 360), "files": 6}]}
    mor = {"path": str(root / "mor"), "name": "peer_mor", "type": "MERGE_ON_READ", "key": "id", "ordering": "ts",
           "partition": None, "schema": SCHEMA, "metadata": {"column_stats": True, "record_index": True},
           "commits": [{"op": "bulk_insert", "rows": _rows(0, 240), "files": 6}, {"op": "upsert", "rows": UPDATES},
                       {"op": "delete", "rows": DELETES}]}
    return [cow, mor]


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The tables written by Hudi's writer and every filter read by Hudi's reader, skipping on and off."""
    require_peer()   # a no-op when set up (make test-peer ran make hudi-peer)
    tables = _tables(tmp_path_factory.mktemp("peer"))
    out = hudi_peer.run({"write": tables, "read": [{"path": t["path"], "filters": FILTERS} for t in tables]})
    reads = {(r["path"], r["skipping"]): {x["filter"]: x for x in r["results"]} for r in out["reads"]}
    return {"tables": {t["type"]: t["path"] for t in tables}, "written": out["written"], "reads": reads}


@pytest.fixture(scope="module")
def product(spark: Any, peer: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """hive-bridge's answers per table and filter: the planner's kept file groups, ``hudi-hive``'s rows and files
    read, explain's kept file groups, and the truth."""
    from hive_bridge.app.cli import main
    from hive_bridge.spark import read_hudi, register
    from hive_bridge.spark.jar import JVM_PACKAGE
    from hive_bridge.spark.reads import list_files
    from hive_bridge.table.table import HudiTable

    register(spark)
    before = spark.conf.get("spark.sql.parquet.filterPushdown")
    out: dict[str, Any] = {}
    try:
        for kind, path in peer["tables"].items():
            if kind == "COPY_ON_WRITE":
                latest = HudiTable.open(path).latest_file_slices()
                truth_df = spark.read.parquet(*[str(Path(path) / s.base_file.path) for s in latest
                                                if s.base_file is not None])
            else:
                truth_df = read_hudi(spark, path, None, prune=False).df
            truth = _truth(spark, truth_df)
            spark.conf.set("spark.sql.parquet.filterPushdown", before)
            hh = spark.read.format("hudi-hive").load(path)
            for f in FILTERS:
                q = _as_json(hh.where(f))
                rows = sorted(r[0] for r in q.collect())
                files_read = int(getattr(spark._jvm, JVM_PACKAGE).Planner.filesRead(
                    q._jdf.queryExecution().executedPlan()))
                _, listing, _ = list_files(path, f)
                err, stdout = io.StringIO(), io.StringIO()
                code = main(["explain", "--table", path, f, "--json"], stdout=stdout, stderr=err)
                assert code == 0, (f, err.getvalue())
                doc = json.loads(stdout.getvalue())
                out[(kind, f)] = {
                    "truth": truth[f], "rows": rows, "files_read": files_read,
                    "kept": sorted({s.file_id for s in listing.slices}), "files_total": listing.files_total,
                    "explain_kept": sorted({_file_id(Path(x["path"]).name) for x in doc["files"] if x["kept"]}),
                    "explain_counts": (doc["files_total"], doc["files_kept"])}
        yield out
    finally:
        spark.conf.set("spark.sql.parquet.filterPushdown", before)


def _as_json(df: Any) -> Any:
    from pyspark.sql import functions as F

    cols = sorted(c for c in df.columns if not c.startswith("_hoodie"))
    return df.select(F.to_json(F.struct(*[F.col(f"`{c}`") for c in cols])))


def _truth(spark: Any, df: Any) -> dict[str, list[str]]:
    """Each filter's rows of ``df`` (one Spark job: a column per filter, true where the row matches; parquet
    pushdown off, so no row is dropped by a footer's statistics)."""
    from pyspark.sql import functions as F

    spark.conf.set("spark.sql.parquet.filterPushdown", "false")
    cols = sorted(c for c in df.columns if not c.startswith("_hoodie"))
    j = F.to_json(F.struct(*[F.col(f"`{c}`") for c in cols]))
    got = df.select(j.alias("j"), *[F.coalesce(F.expr(f), F.lit(False)).alias(f"m{i}")
                                    for i, f in enumerate(FILTERS)]).collect()
    return {f: sorted(r["j"] for r in got if r[f"m{i}"]) for i, f in enumerate(FILTERS)}


def _file_id(name: str) -> str:
    return name.lstrip(".").split("_", 1)[0]


def _groups(names: list[str]) -> set[str]:
    return {n.rsplit("/", 1)[-1] for n in names}


CASES = [(kind, f) for kind in ("COPY_ON_WRITE", "MERGE_ON_READ") for f in FILTERS]
IDS = [f"{'cow' if k == 'COPY_ON_WRITE' else 'mor'}-{f}" for k, f in CASES]


def test_hudi_wrote_the_tables_asked_for(peer: dict[str, Any]) -> None:
    for written in peer["written"]:
        assert written["table_version"] == "9", written
        root = Path(written["path"])
        assert (root / ".hoodie" / "metadata" / "column_stats").is_dir()
    cow, mor = Path(peer["tables"]["COPY_ON_WRITE"]), Path(peer["tables"]["MERGE_ON_READ"])
    assert (cow / ".hoodie" / "metadata" / "partition_stats").is_dir()
    assert (cow / ".hoodie" / "metadata" / "record_index").is_dir()
    assert {p.name for p in cow.iterdir() if p.is_dir()} >= {"region=EU", "region=US"}
    assert len([p for p in cow.rglob("*.parquet") if ".hoodie" not in p.parts]) >= 6
    logs = [p for p in mor.glob(".*.log.*")]
    assert logs, "the merge-on-read table has no log file"


@pytest.mark.parametrize(("kind", "filt"), CASES, ids=IDS)
def test_rows_are_the_truth_and_hudis_snapshot(peer: dict[str, Any], product: dict[str, Any], kind: str,
                                               filt: str) -> None:
    got = product[(kind, filt)]
    hudi_off = peer["reads"][(peer["tables"][kind], False)][filt]
    assert got["rows"] == got["truth"], filt
    assert hudi_off["rows"] == got["truth"], filt
    # the scan read exactly what the planner kept (one file or slice per kept file group)
    assert got["files_read"] == len(got["kept"]), filt


@pytest.mark.parametrize(("kind", "filt"), CASES, ids=IDS)
def test_planner_and_explain_keep_every_file_group_holding_a_match(peer: dict[str, Any], product: dict[str, Any],
                                                                   kind: str, filt: str) -> None:
    got = product[(kind, filt)]
    matches = _groups(peer["reads"][(peer["tables"][kind], False)][filt]["match_groups"])
    assert matches <= set(got["kept"]), (filt, sorted(matches - set(got["kept"])))
    assert got["explain_kept"] == got["kept"], filt
    assert got["explain_counts"] == (got["files_total"], len(got["kept"])), filt
    if not got["truth"]:
        assert not matches


@pytest.mark.parametrize("kind", ["COPY_ON_WRITE", "MERGE_ON_READ"], ids=["cow", "mor"])
def test_against_hudis_data_skipping(peer: dict[str, Any], product: dict[str, Any], kind: str) -> None:
    """Hudi's reader with data skipping on: the file groups it keeps that hive-bridge does not hold no match; where
    it keeps fewer, the gap is printed; where it returns fewer rows than the truth, the loss is printed."""
    path = peer["tables"][kind]
    gaps, losses = [], []
    for f in FILTERS:
        got = product[(kind, f)]
        on = peer["reads"][(path, True)][f]
        off = peer["reads"][(path, False)][f]
        matches, kept, hudi_kept = _groups(off["match_groups"]), set(got["kept"]), _groups(on["file_groups"])
        assert not (hudi_kept - kept) & matches, f
        if len(hudi_kept) < len(kept):
            gaps.append((f, len(kept), len(hudi_kept), sorted(kept - hudi_kept)))
        if on["count"] < len(got["truth"]):
            lost = sorted(set(got["truth"]) - set(on["rows"]))
            losses.append((f, len(got["truth"]), on["count"], lost[:3]))
        assert off["file_groups"] and len(_groups(off["file_groups"])) >= len(hudi_kept)
    print(f"\n{kind}: {len(gaps)} filters where Hudi's data skipping keeps fewer file groups than hive-bridge")
    for f, ours, theirs, groups in gaps:
        print(f"  gap  {f!r}: hive-bridge {ours}, Hudi {theirs}; kept by hive-bridge only: {groups}")
    print(f"{kind}: {len(losses)} filters where Hudi's data skipping returns fewer rows than the truth")
    for f, truth, theirs, lost in losses:
        print(f"  loss {f!r}: truth {truth} rows, Hudi {theirs}; e.g. {lost}")
