"""The whole loop with real servers: the SearchArguments HiveServer2 really produced (collected from the ORC
reader's log) are replayed with `hive-bridge replay --verify` against a Hudi table holding the same rows,
registered in the real metastore; pruned reads return exactly the rows HiveServer2 returned."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import sarg
from hive_bridge.app.cli import main as cli_main
from hive_bridge.hive import MetastoreClient
from hive_bridge.pruning import Pruner
from hive_bridge.spark import read_slices
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter
from tests.integration import hs2_data

pytestmark = [pytest.mark.integration, pytest.mark.spark]

ARROW_TYPES = {"bigint": pa.int64(), "int": pa.int32(), "double": pa.float64(), "string": pa.string(),
               "varchar(10)": pa.string(), "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"),
               "decimal(10,2)": pa.decimal128(10, 2), "boolean": pa.bool_()}


@pytest.fixture(scope="module")
def hudi_copy(hs2_replay: Any) -> Path:
    """The HiveServer2 table's rows as a Hudi table, one row per base file, registered in the metastore."""
    rows = hs2_replay.table.rows
    root = Path(hs2_replay.servers.data_dir) / "sarg_types_hudi"
    columns = {name: pa.array([r[i] for r in rows], ARROW_TYPES[typ])
               for i, (name, typ) in enumerate(hs2_data.COLUMNS)}
    columns["rk"] = pa.array([f"row-{i:02d}" for i in range(len(rows))])
    if not (root / ".hoodie").exists():
        HudiWriter(root, record_key_fields=("rk",), rows_per_file=1).insert(pa.table(columns))
    with MetastoreClient(hs2_replay.servers.metastore_uri) as metastore:
        metastore.sync_hudi_table(str(root), database=hs2_data.DATABASE, table="sarg_types_hudi", replace=True)
    return root


def _orc_log_line(text: str, schema: str, part: int) -> str:
    return (f"26/11/22 07:00:00 DEBUG ReaderImpl: Reading ORC rows from file:/warehouse/part-{part:05d}.orc with "
            f"{{include: [true], offset: 0, length: 100, sarg: {text}, schema: {schema}, "
            "includeAcidColumns: true, allowSARGToFilter: false, useSelected: false}")


def test_registered_table_resolves_through_the_metastore(hudi_copy: Path, metastore: Any) -> None:
    table = metastore.get_table(hs2_data.DATABASE, "sarg_types_hudi")
    assert Path(table.location) == hudi_copy
    assert table.input_format == "org.apache.hudi.hadoop.HoodieParquetInputFormat" and table.storage_handler is None


def test_replay_verify_real_sargs(hs2_replay: Any, hudi_copy: Path, spark: Any, tmp_path: Path) -> None:
    pairs = hs2_replay.pairs
    assert len(pairs) >= 20
    log = tmp_path / "orc.log"
    log.write_text("\n".join(_orc_log_line(t, s, i) for i, (t, s) in enumerate(pairs)) + "\n")
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["replay", "--table", str(hudi_copy), "--verify", "--json", str(log)], stdout=out, stderr=err)
    *docs, summary = [json.loads(line) for line in out.getvalue().splitlines()]
    assert code == 0, err.getvalue()
    assert summary["summary"] is True and summary["failed"] == 0
    assert docs and all(d["verified"] for d in docs)
    assert sum(d["files_total"] - d["files_kept"] for d in docs) > 0  # the replay pruned files
    assert len(docs) == len({t for t, _ in pairs})


def test_pruned_reads_return_hiveserver2_rows(hs2_replay: Any, hudi_copy: Path, spark: Any) -> None:
    table = HudiTable.open(hudi_copy)
    pruner = Pruner(table, ColumnStatsIndex(table), table.latest_file_slices())
    pruned_any = 0
    for name, q in hs2_replay.queries.items():
        expected = sorted((r[0] for r in q.rows), key=lambda v: (v is None, v or 0))
        for text, schema in q.sargs:
            listing = pruner.run(sarg.parse(text, schema))
            pruned_any += listing.files_total - listing.files_kept
            df = read_slices(spark, table, listing.slices).where(q.query.where)
            got = sorted((r[0] for r in df.select("id").collect()), key=lambda v: (v is None, v or 0))
            assert got == expected, (name, text, q.query.where)
    assert pruned_any > 0


def test_read_by_name_through_the_metastore(hs2_replay: Any, hudi_copy: Path, spark: Any) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["read", "--metastore", hs2_replay.servers.metastore_uri, "--table",
                     f"{hs2_data.DATABASE}.sarg_types_hudi", "--filter", "id = 3"], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert "read 1 of 12 files" in err.getvalue()
    assert "two words" in out.getvalue()
