"""`hive-bridge`: replay (tables, JSON Lines, bad input, --verify), explain, index, read, demo's pieces."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from hive_bridge.cli import main
from hive_bridge.table.writer import HudiWriter


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20 files × 10 rows, clustered ids, two partitions."""
    root = tmp_path_factory.mktemp("cli") / "events"
    ids = list(range(200))
    data = pa.table({"id": pa.array(ids, pa.int64()),
                     "name": pa.array([f"n{i:03d}" for i in ids]),
                     "score": pa.array([None if i % 7 == 0 else i / 2 for i in ids], pa.float64()),
                     "region": pa.array(["eu" if i < 100 else "us" for i in ids])})
    HudiWriter(root, partition_fields=("region",), record_key_fields=("id",), rows_per_file=10).insert(data)
    return root


def run(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        old = sys.stdin
        sys.stdin = io.StringIO(stdin)
        try:
            code = main(list(argv), stdout=out, stderr=err)
        finally:
            sys.stdin = old
    else:
        code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


LOG = "\n".join([
    "24/11/22 06:40:01 DEBUG ReaderImpl: Reading ORC rows from file:/w/p0.orc with {include: [true], offset: 0, "
    "length: 9, sarg: leaf-(EQUALS id 5), schema: struct<id:bigint,name:string>, includeAcidColumns: true}",
    "24/11/22 06:40:01 DEBUG ReaderImpl: Reading ORC rows from file:/w/p1.orc with {include: [true], offset: 0, "
    "length: 9, sarg: leaf-(EQUALS id 5), schema: struct<id:bigint,name:string>, includeAcidColumns: true}",
    "2024-01-01T00:00:00,000 INFO OrcInputFormat: ORC pushdown predicate: leaf-0 = (EQUALS region us)",
    "leaf-1 = (LESS_THAN id 150)",
    "expr = (and leaf-0 leaf-1)",
    "      filterExpr: (name = 'n007') (type: boolean)",
    "x ORC pushdown predicate: (and leaf-(EQUALS id 1)",
    "(not leaf-(IS_NULL score))",
]) + "\n"


def test_replay_json_lines(table: Path, tmp_path: Path) -> None:
    log = tmp_path / "spark.log"
    log.write_text(LOG)
    code, out, err = run("replay", "--table", str(table), "--json", str(log))
    assert code == 1  # one filter does not parse
    docs = [json.loads(line) for line in out.splitlines()]
    assert [d["filter"] for d in docs] == [
        "leaf-(EQUALS id 5)",
        "leaf-0 = (EQUALS region us)\nleaf-1 = (LESS_THAN id 150)\nexpr = (and leaf-0 leaf-1)",
        "(name = 'n007')",
        "(not leaf-(IS_NULL score))",
    ]
    first = docs[0]
    assert first["occurrences"] == 2
    assert first["files_total"] == 20 and first["files_kept"] == 1
    assert first["kept"] == [k for k in first["kept"] if k.startswith("region=eu/")] and len(first["kept"]) == 1
    assert first["bytes_kept"] < first["bytes_total"]
    assert docs[1]["files_kept"] == 5 and docs[1]["dropped_by_partition"] == 10
    assert docs[2]["files_kept"] == 1
    assert docs[3]["files_kept"] == 20  # IS NOT NULL: every file has non-null scores
    assert "line 7, column" in err and "unexpected end of text" in err
    assert "Traceback" not in err


def test_replay_table_output_and_totals(table: Path) -> None:
    code, out, err = run("replay", "--table", str(table), "-", stdin="leaf-(EQUALS id 5)\nid < 20\n")
    assert code == 0, err
    assert "Filter replay against events" in out
    assert "1 / 20" in out and "2 / 20" in out
    assert "2 distinct filters (2 occurrences); files kept 3 / 40" in out


def test_replay_bad_table_is_exit_2(tmp_path: Path) -> None:
    code, _, err = run("replay", "--table", str(tmp_path / "missing"), "-", stdin="")
    assert code == 2
    assert "missing" in err and "Traceback" not in err


@pytest.mark.spark
def test_replay_verify_finds_no_difference(table: Path, spark) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run("replay", "--table", str(table), "--verify", "--json", "-",
                         stdin="(or leaf-(EQUALS id 5) leaf-(BETWEEN id 120 125))\nname = 'n199'\n")
    assert code == 0, err
    docs = [json.loads(line) for line in out.splitlines()]
    assert [d["verified"] for d in docs] == [True, True]
    assert [d["files_kept"] for d in docs] == [2, 1]


def test_explain_shows_forms_and_verdicts(table: Path) -> None:
    code, out, _ = run("explain", "--table", str(table), "leaf-0 = (LESS_THAN id 15), expr = leaf-0")
    assert code == 0
    assert "SearchArgument  leaf-(LESS_THAN id 15)" in out
    assert "old form        leaf-0 = (LESS_THAN id 15), expr = leaf-0" in out
    assert out.count("skip") == 18 and "files kept 2 / 20" in out


def test_explain_bad_filter(table: Path) -> None:
    code, _, err = run("explain", "--table", str(table), "leaf-(EQUALS id")
    assert code == 1 and "line 1, column" in err


def test_index_builds_then_reads_from_index(table: Path) -> None:
    code, out, _ = run("index", "--table", str(table))
    assert code == 0 and "20 files" in out
    code, out, _ = run("index", "--table", str(table))
    assert "0 footers read, 20 from the index" in out


def test_console_script_and_module_entry_points(table: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "hive_bridge", "explain", "--table", str(table),
                           "leaf-(EQUALS id 3)"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "files kept 1 / 20" in proc.stdout
