"""A filter that names a column the table does not have keeps every file for that condition, and says so: explain
(text and JSON) and replay's per-filter record name the column. HiveQL text loses such a condition when it is read
(it becomes YES_NO_NULL), so the reading records it (``SearchArgument.unknown_columns``); SearchArgument text keeps
the leaf, whose column the listing checks against the table's schema."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sarg
from hive_bridge.pruning.pruner import unknown_column_note, unknown_columns
from hive_bridge.testing.writer import HudiWriter
from tests.hive_bridge.app.test_cli import run

NOTE = "column nosuchcol is not in the table's schema: its conditions are unknown, files kept"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20 files × 10 rows, clustered ids."""
    root = tmp_path_factory.mktemp("unknown-columns") / "events"
    ids = list(range(200))
    data = pa.table({"id": pa.array(ids, pa.int64()), "name": pa.array([f"n{i:03d}" for i in ids])})
    HudiWriter(root, partition_fields=(), record_key_fields=("id",), rows_per_file=10).insert(data)
    return root


@pytest.mark.parametrize("text", ["nosuchcol = 1", "leaf-(EQUALS nosuchcol 1)", "t.nosuchcol between 1 and 3"])
def test_explain_names_a_column_the_table_does_not_have(table: Path, text: str) -> None:
    code, out, err = run("explain", "--table", str(table), "--files", "0", text)
    assert code == 0, err
    shown = NOTE.replace("nosuchcol", "t.nosuchcol") if text.startswith("t.") else NOTE
    assert f"unknown column {shown}" in " ".join(out.split())  # however the console wraps it
    code, out, err = run("explain", "--table", str(table), "--json", text)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["unknown_columns"] == ["t.nosuchcol" if text.startswith("t.") else "nosuchcol"]
    assert doc["notes"] == [shown]
    assert doc["files_kept"] == doc["files_total"] == 20


def test_explain_names_it_beside_conditions_that_prune(table: Path) -> None:
    code, out, _ = run("explain", "--table", str(table), "--json", "nosuchcol = 1 and id < 15 and NAME <> 'x'")
    assert code == 0
    doc = json.loads(out)
    assert doc["unknown_columns"] == ["nosuchcol"] and doc["notes"] == [NOTE]  # NAME is name: known
    assert doc["files_kept"] == 2  # id < 15 still prunes
    code, out, _ = run("explain", "--table", str(table), "--json", "ID < 15")
    assert json.loads(out)["unknown_columns"] == [] and json.loads(out)["notes"] == []
    code, out, _ = run("explain", "--table", str(table), "--files", "0", "id < 15")
    assert "unknown column" not in out


def test_replay_records_name_unknown_columns(table: Path, tmp_path: Path) -> None:
    log = tmp_path / "hive.log"
    log.write_text("      filterExpr: (nosuchcol = 1) (type: boolean)\n"
                   "x ORC pushdown predicate: (and leaf-(EQUALS other 2) leaf-(LESS_THAN id 15))\n"
                   "      filterExpr: (id < 15) (type: boolean)\n")
    code, out, err = run("replay", "--table", str(table), "--json", str(log))
    assert code == 0, err
    *docs, summary = [json.loads(line) for line in out.splitlines()]
    assert summary["summary"] is True and summary["failed"] == 0
    assert [d["unknown_columns"] for d in docs] == [["nosuchcol"], ["other"], []]
    assert [d["files_kept"] for d in docs] == [20, 2, 2]


def test_workload_records_name_unknown_columns(table: Path, tmp_path: Path) -> None:
    log = tmp_path / "explain.log"
    log.write_text("      filterExpr: (nosuchcol = 1) (type: boolean)\n      filterExpr: (id < 15) (type: boolean)\n")
    code, out, err = run("replay", "--table", str(table), "--json", "--html", str(tmp_path / "r.html"), str(log))
    assert code == 0, err
    docs = [json.loads(line) for line in out.splitlines() if '"summary": true' not in line]
    # one record shape for both replays: unknown_columns always there, empty when every column is known
    assert [(d["filter"], d["unknown_columns"]) for d in docs] == [("(nosuchcol = 1)", ["nosuchcol"]),
                                                                  ("(id < 15)", [])]


def test_hiveql_reading_records_columns_not_in_the_schema() -> None:
    schema = {"id": "int", "s": "struct<a:int>", "Name": "string"}
    filt = sarg.parse_hiveql("nosuchcol = 1 and t.id > 3 and s.a = 2 and name like 'a%' and other in (1, 2) "
                             "and nosuchcol is null", schema)
    # t.id: a table alias in front of id; s.a: a field of the struct column s; name: Name
    assert filt.unknown_columns == ("nosuchcol", "other")
    assert sarg.parse_hiveql("nosuchcol = 1").unknown_columns == ()  # no schema: nothing is unknown
    assert filt == sarg.parse_hiveql("t.id > 3 and name like 'a%'", schema)  # not part of the filter's identity


NAMES = ["id", "ID", "name", "s", "s.a", "nosuchcol", "x.y", "other"]


@given(st.lists(st.sampled_from(NAMES), min_size=1, max_size=6))
def test_unknown_columns_are_exactly_the_names_of_no_column(names: list[str]) -> None:
    schema = {"id": "bigint", "name": "string", "s": "struct<a:int>"}
    b = sarg.builder().start_and()
    for n in names:
        b = b.equals(n, sarg.Type.LONG, 1)
    filt = b.end().build()
    want = [n for n in dict.fromkeys(names) if n.split(".")[0].lower() not in schema]
    assert unknown_columns(filt, schema) == want
    assert all(unknown_column_note(n).startswith(f"column {n} is not in the table's schema") for n in want)
