"""The check of Hudi's record index and secondary indexes on merge-on-read slices with log files: each slice's
merged rows (base file, then its committed log blocks: updates, inserts into log files, deletes) are what the
indexes must hold. Tables written by the test writer with complex keys (``txn_id,account_id``), an INSERT first
(so the indexes are used only where the files confirm them), then log files; the metadata table written over the
merged rows (what Hudi's writers keep it at), or over the base files only (an index that missed the log update
moving a secondary value: trusting it would lose the moved row)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.pruning import Pruner
from hive_bridge.pruning.key_check import check_key_indexes
from hive_bridge.pruning.key_index import KeyIndexes
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.mdt_writer import write_metadata_table
from hive_bridge.testing.writer import HudiWriter
from sarg import hiveql
from tests.hive_bridge.pruning.test_key_index import _groups_of_rows

KEYS = ["txn_id", "account_id"]


def _rows(ids: list[int], merchant: dict[int, str] | None = None, ts: int = 0) -> pa.Table:
    merchant = merchant or {}
    return pa.table({
        "txn_id": [f"TXN-{i:03d}" for i in ids],
        "account_id": [f"ACC-{i % 3}" for i in ids],
        "merchant": [merchant.get(i, f"M{i % 4}") for i in ids],
        "ts": pa.array([ts] * len(ids), pa.int64()),
        "region": ["us" if i % 2 else "eu" for i in ids],
    })


def _keys(ids: list[int]) -> pa.Table:
    return _rows(ids).select(["txn_id", "account_id", "region"])


def _kept(table: HudiTable, text: str) -> tuple[set[str], list[str]]:
    pruner = Pruner(table, ColumnStatsIndex(table, persist=False), table.latest_file_slices())
    listing = pruner.run(hiveql.parse_hiveql(text, table_sarg_schema(table)), explain=True)
    return {s.file_id for s in listing.slices}, listing.index_sources


def _holders(root: Path, column: str) -> dict[Any, set[str]]:
    out: dict[Any, set[str]] = {}
    for fid, rows in _groups_of_rows(root).items():
        for r in rows.to_pylist():
            out.setdefault(r[column], set()).add(fid)
    return out


def _mor(root: Path, precombine: str | None = None) -> HudiWriter:
    w = HudiWriter(root, version=8, table_type="MERGE_ON_READ", partition_fields=["region"],
                   record_key_fields=KEYS, rows_per_file=4, precombine_field=precombine)
    w.insert(_rows(list(range(16))))                   # INSERT: the indexes are checked against the files
    return w


def test_log_updates_inserts_and_deletes_are_checked_and_the_indexes_exact(tmp_path: Path) -> None:
    root = tmp_path / "t"
    w = _mor(root)
    w.upsert(_rows([1, 6, 9], {1: "M9", 6: "M9", 9: "M$"}))           # updates moving merchant, in log files
    w.upsert(_rows([20, 21], {20: "M9"}), inserts_to_logs=True)       # keys only in log-only file groups
    w.delete(_keys([2, 9]))                                          # delete blocks
    write_metadata_table(root, secondary_indexes={"merchant_idx": "merchant"}, key_index_logs="merged")
    table = HudiTable.open(root)
    slices = table.latest_file_slices()
    with_logs = {s.file_id for s in slices if s.log_files}
    assert len(with_logs) >= 4 and any(s.base_file is None for s in slices)
    indexes = KeyIndexes.open(table, slices)
    assert indexes._mdt is not None and indexes.unchecked is not None, indexes.problems
    assert not indexes.unchecked.any(), indexes.problems
    assert indexes.secondary == {"merchant": "secondary_index_merchant_idx"}, indexes.problems
    assert indexes.checked_log_blocks >= 5 and indexes.checked_rows == 16 + 2 - 2
    merchants = _holders(root, "merchant")
    assert merchants["M9"] and "M$" not in merchants                  # 9 moved to M$, then deleted
    for value, fids in merchants.items():
        kept, sources = _kept(table, f"merchant = '{value}'")
        assert kept == fids, (value, kept ^ fids)
        assert sources and "log blocks merged" in sources[0], sources
    assert _kept(table, "merchant = 'M$'")[0] == set()
    for fid, rows in _groups_of_rows(root).items():
        for r in rows.to_pylist():
            text = f"txn_id = '{r['txn_id']}' AND account_id = '{r['account_id']}'"
            assert _kept(table, text)[0] == {fid}, text


def test_a_stale_secondary_index_is_caught_and_the_moved_row_kept(tmp_path: Path) -> None:
    """The index misses a log update that moved merchant 'M0' -> 'M9' for TXN-004: trusted, it would drop that
    slice for ``merchant = 'M9'``; the check finds the merged row's pair missing and leaves it unused."""
    root = tmp_path / "t"
    w = _mor(root)
    w.upsert(_rows([4], {4: "M9"}))
    write_metadata_table(root, secondary_indexes={"merchant_idx": "merchant"}, key_index_logs="base")
    table = HudiTable.open(root)
    slices = table.latest_file_slices()
    moved = next(s for s in slices if s.log_files)
    mdt = table.metadata_table()
    stale = mdt.secondary_index("merchant_idx", ["M9"])
    assert not any("TXN-004" in k for ks in stale.values() for k in ks)   # the index lost the moved row
    check = check_key_indexes(table, slices, mdt, {"merchant": "secondary_index_merchant_idx"})
    assert check.record_index and check.secondary == {}, check.problems
    assert any("merchant = 'M9'" in p and "TXN-004" in p for p in check.problems), check.problems
    kept, sources = _kept(table, "merchant = 'M9'")
    assert moved.file_id in kept and kept == _holders(root, "merchant")["M9"] | kept
    assert not any("secondary index" in s for s in sources), sources
    # the record index still holds (keys stayed in their groups) and answers key equality exactly
    assert _kept(table, "txn_id = 'TXN-004' AND account_id = 'ACC-1'")[0] == {moved.file_id}


@pytest.mark.parametrize("older", [True, False])
def test_event_time_ordering_decides_which_log_record_is_merged(tmp_path: Path, older: bool) -> None:
    """With an ordering field, a log record older than the current one (smaller ``ts``) does not replace it: the
    merged row keeps its merchant, which is what the index holds; the check agrees (a check that took the log
    record would find its pair missing). A delete with Hudi's default ordering value removes a newer record
    (a check that kept it would find no record index entry)."""
    root = tmp_path / "t"
    w = _mor(root, precombine="ts")
    w.upsert(_rows([3], {3: "M9"}, ts=5))
    w.upsert(_rows([3], {3: "M7"}, ts=1 if older else 9))
    w.upsert(_rows([5], {5: "M9"}, ts=7))
    w.delete(_keys([5]))            # Hudi's default ordering value (an int 0): the delete wins over ts 7
    write_metadata_table(root, secondary_indexes={"merchant_idx": "merchant"}, key_index_logs="merged")
    table = HudiTable.open(root)
    indexes = KeyIndexes.open(table, table.latest_file_slices())
    assert indexes.secondary == {"merchant": "secondary_index_merchant_idx"}, indexes.problems
    assert indexes.checked_rows == 15
    merchants = _holders(root, "merchant")
    assert ("M9" in merchants) == older and ("M7" in merchants) != older
    for value, fids in merchants.items():
        assert _kept(table, f"merchant = '{value}'")[0] == fids, value


def test_delete_ordering_values_read_as_hudi_orders_them() -> None:
    """An ``IntWrapper`` 0 (what Hudi's own deletes carry) is the natural order, read as None like no value; a
    ``LongWrapper`` 0 or any other value is an ordering value the record's is compared with."""
    from hive_bridge.formats.logfile import BlockType, HeaderKey, delete_block_records, read_log_file
    from hive_bridge.testing.logfile_writer import delete_block_content, encode_block

    triples = [("a", "p", 0), ("b", "p", None), ("c", "p", ("LongWrapper", 0)), ("d", "p", ("LongWrapper", 7)),
               ("e", "p", "x")]
    block = encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: "1"}, delete_block_content(triples))
    got = delete_block_records(read_log_file("mem", block).blocks[0])
    assert got == [("a", "p", None), ("b", "p", None), ("c", "p", 0), ("d", "p", 7), ("e", "p", "x")]
