"""Secondary indexes on tables keyed on two fields (``txn_id,account_id``: Hudi's complex key generator), written by
Hudi's own Spark writer the way Spark SQL writes them: INSERTs (which do not look keys up, so the record index
alone cannot be trusted), then updates and deletes, then ``CREATE INDEX`` on ``merchant`` and one more update.

Three tables: copy-on-write and merge-on-read (its updates, which move secondary values, and its deletes in log
files, before and after the index exists), and a copy-on-write table whose second INSERT writes a key a second
time (the record index then names only the newer copy). Per filter (equality and IN on the secondary-indexed
column, equality on both key fields), against Hudi's reader with data skipping off (its rows and the file groups
holding them: ``_hoodie_file_name``) and on (the file groups its record and secondary indexes keep):

- the rows hive-bridge reads from the slices it keeps (merged by hudi-rs) are Hudi's rows;
- every file group holding a match is kept;
- where the indexes were checked against the files (no key repeated; on merge-on-read, each slice's base file
  merged with its committed log blocks), the kept file groups are exactly those holding a match, and exactly those
  Hudi's data skipping keeps; on the table with the repeated key the indexes are not used and the problem names
  the key.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
import hudi_peer

from tests.hive_bridge.peer import require_peer

pytestmark = [pytest.mark.peer]

SCHEMA = "txn_id string, account_id string, merchant string, amount double, region string, ts bigint"
REGIONS = ("us", "eu", "apac")


def _row(i: int, ts: int = 0, merchant: str | None = None) -> list[Any]:
    txn = "TXN$7" if i == 7 else f"TXN-{i:03d}"          # the secondary index's separator inside a key
    account = "A:1" if i == 8 else f"ACC-{i % 5}"          # the key's own field separator inside a value
    m = merchant if merchant is not None else (None if i % 11 == 4 else f"M{i % 7}")
    return [txn, account, m, i * 1.5, REGIONS[i % 3], ts]


def _rows(lo: int, hi: int) -> list[list[Any]]:
    return [_row(i) for i in range(lo, hi)]


#: (filter, the same in Python over a row dict; None = NULL)
FILTERS: list[tuple[str, Callable[[dict[str, Any]], bool]]] = [
    ("merchant = 'M3'", lambda r: r["merchant"] == "M3"),
    ("merchant = 'M9'", lambda r: r["merchant"] == "M9"),
    ("merchant = 'M$'", lambda r: r["merchant"] == "M$"),
    ("merchant IN ('M1', 'M9', 'none')", lambda r: r["merchant"] in ("M1", "M9", "none")),
    ("merchant = 'none'", lambda r: r["merchant"] == "none"),
    ("txn_id = 'TXN-010' AND account_id = 'ACC-0'", lambda r: (r["txn_id"], r["account_id"]) == ("TXN-010", "ACC-0")),
    ("txn_id = 'TXN$7' AND account_id = 'ACC-2'", lambda r: (r["txn_id"], r["account_id"]) == ("TXN$7", "ACC-2")),
    ("txn_id = 'TXN-008' AND account_id = 'A:1'", lambda r: (r["txn_id"], r["account_id"]) == ("TXN-008", "A:1")),
    ("txn_id IN ('TXN-020', 'TXN-041') AND account_id IN ('ACC-0', 'ACC-1')",
     lambda r: r["txn_id"] in ("TXN-020", "TXN-041") and r["account_id"] in ("ACC-0", "ACC-1")),
]
TEXTS = [f for f, _ in FILTERS]


def _table(root: Path, name: str, kind: str, duplicate: bool = False) -> dict[str, Any]:
    second = _rows(30, 60)
    if duplicate:                                          # TXN-012/ACC-2 again, in a new file group
        second.append(_row(12, 1, "M3"))
    commits: list[dict[str, Any]] = [
        {"op": "insert", "rows": _rows(0, 30)},
        {"op": "insert", "rows": second},
        {"op": "upsert", "rows": [_row(i, 2, "M9") for i in (1, 2, 40)] + [_row(15, 2, "M$")]},
        {"op": "delete", "rows": [_row(i, 3) for i in (3, 50)]},
        {"op": "sql", "statements": ["CREATE INDEX merchant_idx ON {name} (merchant)"]},
        {"op": "upsert", "rows": [_row(i, 4, "M9") for i in (20, 33)] + [_row(61, 4, "M3")]},
        {"op": "delete", "rows": [_row(33, 5)]},
    ]
    return {"path": str(root / name), "name": name, "type": kind, "key": "txn_id,account_id", "ordering": "ts",
            "partition": "region", "schema": SCHEMA, "metadata": {"column_stats": True, "record_index": True},
            "options": {"hoodie.compact.inline": "false"}, "commits": commits}


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    require_peer()   # a no-op when set up (make test-peer ran make hudi-peer)
    root = tmp_path_factory.mktemp("peer-si")
    tables = [_table(root, "si_cow", "COPY_ON_WRITE"), _table(root, "si_mor", "MERGE_ON_READ"),
              _table(root, "si_dup", "COPY_ON_WRITE", duplicate=True)]
    out = hudi_peer.run({"write": tables, "read": [{"path": t["path"], "filters": TEXTS, "skipping": [False, True]}
                                                   for t in tables]})
    reads = {(r["path"], r["skipping"]): {x["filter"]: x for x in r["results"]} for r in out["reads"]}
    return {"paths": {t["name"]: t["path"] for t in tables}, "reads": reads}


def _slice_rows(root: str) -> dict[str, list[dict[str, Any]]]:
    """Every latest slice's rows (hudi-rs merges base and log files), by file group id."""
    import hudi
    import pyarrow as pa

    from hive_bridge.table.table import HudiTable

    reader = hudi.HudiTableBuilder.from_base_uri(root).build().create_file_group_reader_with_options()
    out = {}
    for s in HudiTable.open(root).latest_file_slices():
        got = reader.read_file_slice_from_paths(s.base_file.path if s.base_file else "", [lf.path for lf in s.log_files])
        batches = got if isinstance(got, list) else [got]
        out[s.file_id] = pa.Table.from_batches(batches).to_pylist() if batches else []
    return out


def _group(name: str) -> str:
    return name.rsplit("/", 1)[-1]


@pytest.mark.parametrize("name", ["si_cow", "si_mor", "si_dup"])
def test_secondary_and_key_equality_keep_exactly_the_groups_holding_a_match(peer: dict[str, Any],
                                                                             name: str) -> None:
    from hive_bridge.filters.typemap import table_sarg_schema
    from hive_bridge.pruning import Pruner
    from hive_bridge.pruning.key_index import KeyIndexes
    from hive_bridge.stats.index import ColumnStatsIndex
    from hive_bridge.table.table import HudiTable
    from sarg import hiveql

    path = peer["paths"][name]
    table = HudiTable.open(path)
    slices = table.latest_file_slices()
    assert table.properties.record_key_fields == ["txn_id", "account_id"]
    indexes = KeyIndexes.open(table, slices)
    with_logs = {s.file_id for s in slices if s.log_files}
    if name == "si_dup":
        assert indexes._mdt is None, indexes.problems
        assert any("TXN-012" in p for p in indexes.problems), indexes.problems
    else:
        assert indexes.complex_fields == ["txn_id", "account_id"], indexes.problems
        assert indexes._mdt is not None and indexes.secondary == {"merchant": "secondary_index_merchant_idx"}, \
            indexes.problems
        assert indexes.unchecked is not None       # INSERTs on the timeline: the indexes were checked
        assert not indexes.unchecked.any()           # slices with log files too: their merged rows
        assert (indexes.checked_log_blocks > 0) == bool(with_logs), indexes.checked_log_blocks
    if name == "si_mor":
        assert with_logs, "the merge-on-read table has no log file"
    rows = _slice_rows(path)
    pruner = Pruner(table, ColumnStatsIndex(table, persist=False), slices)
    off, on = peer["reads"][(path, False)], peer["reads"][(path, True)]
    narrower = 0
    for text, pred in FILTERS:
        listing = pruner.run(hiveql.parse_hiveql(text, table_sarg_schema(table)), explain=True)
        kept = {s.file_id for s in listing.slices}
        truth = off[text]
        holders = {_group(g) for g in truth["match_groups"]}
        assert holders <= kept, (name, text, holders - kept)
        got = sorted(r["txn_id"] + "/" + r["account_id"] for fid in kept for r in rows[fid] if pred(r))
        want = sorted(r["txn_id"] + "/" + r["account_id"] for rs in rows.values() for r in rs if pred(r))
        assert got == want and len(got) == truth["count"], (name, text)
        hudi_kept = {_group(g) for g in on[text]["file_groups"]}
        if name != "si_dup":
            # exact: the groups holding a match, as Hudi's own data skipping keeps (log files merged)
            assert kept == holders, (name, text, sorted(kept - holders))
            assert kept == hudi_kept, (name, text, sorted(kept ^ hudi_kept))
            assert listing.index_sources, (name, text)
        narrower += len(hudi_kept) - len(kept)
        print(f"{name} {text!r}: holders {len(holders)}, hive-bridge {len(kept)}, Hudi's data skipping "
              f"{len(hudi_kept)} ({listing.index_sources})")
    if name != "si_dup":
        assert narrower == 0    # Hudi's own skipping keeps as many file groups as hive-bridge
