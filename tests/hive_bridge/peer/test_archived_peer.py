"""The archived timeline against Hudi's own Spark writer and reader, in the test run: four small tables
(copy-on-write and merge-on-read, table versions 9 and 6) written with eight commits each and
``hoodie.keep.min.commits=2`` / ``hoodie.keep.max.commits=3``, so that Hudi's archiver moves most of their commits to
the archived timeline (the LSM timeline, archive log files) while the cleaner is off and every file stays. Then Hudi's
reader's rows for ``as.of.instant`` at archived instants and for incremental queries from archived begins (with
and without the fallback to a full table scan) equal hive-bridge's (``tests/hive_bridge/layout/
test_archived_timeline.py`` does the same on two committed tables without the peer)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from hive_bridge.layout.archived import with_archived
from hive_bridge.table.table import HudiTable
from tests.conftest import REPO
from tests.hive_bridge.layout.test_archived_timeline import assert_hudi_rows, incremental_rows, slice_rows
from tests.hive_bridge.peer import require_peer

sys.path.insert(0, str(REPO / "tools"))
import hudi_peer

pytestmark = [pytest.mark.spark, pytest.mark.peer]

SCHEMA = "id bigint, region string, v double, ts bigint"
KINDS = [("cow9", "COPY_ON_WRITE", None), ("mor9", "MERGE_ON_READ", None), ("cow6", "COPY_ON_WRITE", 6),
         ("mor6", "MERGE_ON_READ", 6)]


def _rows(lo: int, hi: int, ts: int) -> list[list[Any]]:
    return [[i, "EU" if i % 2 else "US", i * 1.5 + ts, ts] for i in range(lo, hi)]


def table_specs(root: Path) -> list[dict[str, Any]]:
    """Eight commits a table: an insert, then upserts that update some keys and insert others."""
    commits = [{"op": "insert", "rows": _rows(0, 20, 0)}]
    commits += [{"op": "upsert", "rows": _rows(k * 3, k * 3 + 6, k) + _rows(100 + k * 5, 105 + k * 5, k)}
                for k in range(1, 8)]
    out = []
    for name, kind, version in KINDS:
        options = {"hoodie.metadata.enable": "false", "hoodie.keep.min.commits": "2",
                   "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
        if version:
            options["hoodie.write.table.version"] = str(version)
        if kind == "MERGE_ON_READ":
            options |= {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3"}
        out.append({"path": str(root / name), "name": name, "type": kind, "key": "id", "ordering": "ts",
                    "partition": "region", "schema": SCHEMA, "metadata": {"column_stats": False},
                    "options": options, "commits": commits})
    return out


def queries(path: str) -> list[dict[str, Any]]:
    """Hudi reads of a table: as of its first three archived writes, incremental from its first two archived
    writes (without the fallback) and from the second (with it), to the first active write."""
    table = HudiTable.open(path)
    writes = with_archived(table.timeline).completed_writes
    first_active = table.timeline.completed_writes[0].timestamp
    archived = [w for w in writes if w.timestamp < first_active]
    assert len(archived) >= 3, f"{path}: Hudi archived {len(archived)} writes"
    by_completion = table.properties.timeline_layout_version >= 2

    def at(w: Any) -> str:
        return str(w.completion_time) if by_completion else w.timestamp

    out: list[dict[str, Any]] = [{"kind": "asof", "instant": w.timestamp} for w in archived[:3]]
    end = at(writes[len(archived)])
    out += [{"kind": "incremental", "begin": at(w), "end": end, "fallback": fb}
            for w, fb in ((archived[0], False), (archived[1], False), (archived[1], True))]
    return out


def _read_job(path: str, q: dict[str, Any]) -> dict[str, Any]:
    if q["kind"] == "asof":
        options = {"as.of.instant": q["instant"]}
    else:
        options = {"hoodie.datasource.query.type": "incremental",
                   "hoodie.datasource.read.begin.instanttime": q["begin"],
                   "hoodie.datasource.read.end.instanttime": q["end"],
                   "hoodie.datasource.read.incr.fallback.fulltablescan.enable": str(q["fallback"]).lower()}
    return {"path": path, "filters": ["true"], "skipping": [False], "rows": True, "options": options}


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    require_peer()   # a no-op when set up (make test-peer ran make hudi-peer)
    root = tmp_path_factory.mktemp("archived-peer")
    written = hudi_peer.run({"write": table_specs(root)})["written"]
    assert [w["table_version"] for w in written] == ["9", "9", "6", "6"]
    plan = [(str(root / name), q) for name, _, _ in KINDS for q in queries(str(root / name))]
    reads = hudi_peer.run({"read": [_read_job(path, q) for path, q in plan]})["reads"]
    return {"root": root, "results": [(path, q, r["results"][0]["rows"]) for (path, q), r in zip(plan, reads,
                                                                                                  strict=True)]}


def test_time_travel_to_archived_instants_equals_hudi(peer: dict[str, Any]) -> None:
    checked = 0
    for path, q, rows in peer["results"]:
        if q["kind"] != "asof":
            continue
        table = HudiTable.open(path)
        state, slices = table.time_travel(q["instant"])
        assert slice_rows(table, slices, state.instant) == sorted(rows), (path, q)
        checked += 1
    assert checked == 12


def test_incremental_from_archived_begins_equals_hudi(peer: dict[str, Any]) -> None:
    checked = 0
    for path, q, rows in peer["results"]:
        if q["kind"] != "incremental":
            continue
        table = HudiTable.open(path)
        rng, ours = incremental_rows(table, q["begin"], q["end"], q["fallback"])
        assert rng.archived == (not q["fallback"]) and rng.full_scan == q["fallback"]
        assert_hudi_rows(table, rng, ours, rows)
        checked += 1
    assert checked == 12
