"""The advisor against Hudi's own clustering: Hudi's Spark writer writes a table in random order, ``hive-bridge
advise`` recommends a layout for a workload of range filters, and the recommendation is applied as printed, both
ways: the Spark SQL run verbatim in Hudi's Spark session (``CALL run_clustering``) on the table, and on a copy the
printed writer options given to Hudi's next write (an upsert of one row, unchanged), after the printed ``SET``
statements. Then the workload's bytes read by hive-bridge's planner and by Hudi's reader (data skipping on) are
measured beside the prediction.

Rows: every filter's rows, read from the files hive-bridge's planner keeps and by Hudi's reader, are the truth
(the rows written; a clustering moves rows, it does not change them). Files: Hudi's clustering writes the number of
files the advice says (``ceil(table bytes / target)``). Bytes: the prediction is within 10 % of both readers'
measured bytes (the workload's total; see docs/advisor.md for what the model counts).
"""

from __future__ import annotations

import io
import json
import random
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
import hudi_peer

from tests.hive_bridge.peer import require_peer

pytestmark = [pytest.mark.peer]

ROWS, FILES_WRITTEN, FILES_CLUSTERED = 6_000, 8, 4
SCHEMA = "id bigint, a bigint, b bigint, c string, ts bigint"
WIDTH = 30_000


def _rows() -> list[list[Any]]:
    rng = random.Random(7)
    ids = list(range(ROWS))
    rng.shuffle(ids)
    return [[i, rng.randrange(1_000_000), rng.randrange(1_000_000), rng.choice(["Lima", "Oslo", "Rome"]), 0]
            for i in ids]


def _filters() -> list[str]:
    rng = random.Random(3)
    return [f"a >= {lo} and a < {lo + WIDTH}" for lo in (rng.randrange(1_000_000 - WIDTH) for _ in range(40))]


def _truth(rows: list[list[Any]], filt: str) -> list[int]:
    lo, hi = (int(x) for x in filt.replace("a >= ", "").split(" and a < "))
    return sorted(r[0] for r in rows if lo <= r[1] < hi)


def _advise(path: str, log: Path, *extra: str) -> tuple[str, dict[str, Any]]:
    from hive_bridge.app.cli import main

    text, doc = io.StringIO(), io.StringIO()
    args = ["--samples", "1", *extra, "--table", path, str(log)]
    assert main(["advise", *args], stdout=text, stderr=io.StringIO()) == 0
    assert main(["advise", "--json", *args], stdout=doc, stderr=io.StringIO()) == 0
    (advice,) = json.loads(doc.getvalue())["advice"]
    return text.getvalue(), advice


@pytest.fixture(scope="module")
def clustered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The table written by Hudi, the advice on it, then the advice's SQL run by Hudi and the workload read."""
    require_peer()   # a no-op when set up (make test-peer ran make hudi-peer)
    root = tmp_path_factory.mktemp("advisor-peer")
    path = str(root / "t")
    rows = _rows()
    table = {"path": path, "name": "advised", "type": "COPY_ON_WRITE", "key": "id", "ordering": "ts",
             "partition": None, "schema": SCHEMA, "metadata": {"column_stats": True},
             # Spark partitions by ranges of id: every file holds the whole range of a
             "commits": [{"op": "bulk_insert", "rows": rows, "files": FILES_WRITTEN}]}
    hudi_peer.run({"write": [table]})
    log = root / "filters.txt"
    log.write_text("".join(f + "\n" for f in _filters()))
    sizes = [p.stat().st_size for p in Path(path).glob("*.parquet")]
    default_text, default_advice = _advise(path, log)
    # files of a quarter of the table (ceil(total / target) = 4): the size a table this small is clustered to
    target = int(sum(sizes) / (FILES_CLUSTERED - 0.5))
    text, advice = _advise(path, log, "--target-file-bytes", str(target))
    rec = advice["recommended"]
    assert rec is not None, advice["notes"]
    copy = str(root / "copy")
    shutil.copytree(path, copy)
    next_write = {**table, "path": copy, "commits": [{"op": "upsert", "rows": rows[:1], "options": rec["settings"]}]}
    out = hudi_peer.run({"sql_first": [s for s in rec["sql"] if s.startswith("SET ")], "write": [next_write],
                         "sql": rec["sql"],
                         "read": [{"path": p, "filters": _filters(), "skipping": [True]} for p in (path, copy)]})
    hudi = {r["path"]: {x["filter"]: x for x in r["results"]} for r in out["reads"]}
    return {"paths": {"call": path, "next write": copy}, "rows": rows, "sizes": sizes, "target": target,
            "text": text, "advice": advice, "default_text": default_text, "default_advice": default_advice,
            "sql": out["sql"], "hudi": hudi}


def test_the_default_advice_warns_on_a_small_table(clustered: dict[str, Any]) -> None:
    """Today's files are tiny (a few hundred KB): the default file size is Hudi's 120 MiB, not their mean, and the
    advice says so."""
    advice = clustered["default_advice"]
    assert advice["target_file_bytes"] == 125_829_120
    assert advice["target_file_bytes"] != round(sum(clustered["sizes"]) / len(clustered["sizes"]))
    assert any("below Hudi's small-file limit" in w for w in advice["warnings"])
    assert "warning: today's files average" in clustered["default_text"]


def test_the_printed_sql_is_what_ran(clustered: dict[str, Any]) -> None:
    rec = clustered["advice"]["recommended"]
    assert rec["layout"] == "linear(a)"
    for statement in rec["sql"]:
        assert f"  {statement};" in clustered["text"]
    (call,) = [s for s in clustered["sql"] if s["statement"].startswith("CALL")]
    assert call["rows"] and call["rows"][0][2] == "COMPLETED", call


@pytest.mark.parametrize("route", ["call", "next write"])
def test_rows_unchanged_and_prediction_against_both_readers(clustered: dict[str, Any], route: str) -> None:
    from hive_bridge.spark.reads import list_files
    from hive_bridge.table.table import HudiTable

    path, rows, advice = clustered["paths"][route], clustered["rows"], clustered["advice"]
    rec = advice["recommended"]
    latest = [s for s in HudiTable.open(path).latest_file_slices() if s.base_file is not None]
    assert len(latest) == rec["files"] == FILES_CLUSTERED
    predicted = next(c for c in advice["candidates"] if c["layout"] == rec["layout"])
    ours_bytes = ours_files = hudi_bytes = hudi_files = 0
    for f in _filters():
        truth = _truth(rows, f)
        _, listing, _ = list_files(path, f)
        ids: list[int] = []
        for s in listing.slices:
            assert s.base_file is not None
            t = pq.read_table(str(Path(path) / s.base_file.path), columns=["id", "a"])
            a = t.column("a").to_numpy()
            lo, hi = (int(x) for x in f.replace("a >= ", "").split(" and a < "))
            ids += t.column("id").to_numpy()[(a >= lo) & (a < hi)].tolist()
        assert sorted(ids) == truth, f
        theirs = clustered["hudi"][path][f]
        assert sorted(json.loads(r)["id"] for r in theirs["rows"]) == truth, f
        ours_bytes += listing.bytes_kept
        ours_files += listing.files_kept
        hudi_bytes += theirs["bytes"]
        hudi_files += theirs["files"]
    today = advice["candidates"][0]
    print(f"\ntoday predicted {today['files_read']:.1f} files, {today['bytes_read']:,.0f} B")
    print(f"{route}: advised {rec['layout']} (files of {clustered['target']:,} B): predicted {predicted['files_read']:.1f} "
          f"files, {predicted['bytes_read']:,.0f} B; hive-bridge {ours_files} files, {ours_bytes:,} B; Hudi's reader "
          f"{hudi_files} files, {hudi_bytes:,} B; runner-up {rec['runner_up']}")
    for measured in (ours_bytes, hudi_bytes):
        assert abs(predicted["bytes_read"] - measured) <= 0.1 * measured, (predicted["bytes_read"], measured)
    assert abs(predicted["files_read"] - ours_files) <= 0.1 * ours_files
    assert np.isfinite(rec["runner_up"]["bytes_vs_best"])
