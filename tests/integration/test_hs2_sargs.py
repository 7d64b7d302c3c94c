"""Real SearchArguments from a real HiveServer2: every operator and type, parsed and printed back byte for byte."""

from __future__ import annotations

from typing import Any

import pytest

import sarg
from sarg import ExpressionTree, Operator, SearchArgument, TreeOperator, Type
from tests.integration import hs2_data
from tests.integration.conftest import CollectedQuery, HS2Replay, HS2Table

pytestmark = pytest.mark.integration
QUERY_NAMES = [q.name for q in hs2_data.QUERIES]


def leaf_signatures(s: SearchArgument) -> set[str]:
    """``OP column`` for every leaf, ``~OP column`` for a leaf right under a NOT."""
    out: set[str] = set()

    def visit(node: ExpressionTree, negated: bool) -> None:
        if node.operator is TreeOperator.LEAF:
            assert node.leaf is not None
            out.add(("~" if negated else "") + f"{node.leaf.operator.value} {node.leaf.column}")
        for child in node.children:
            visit(child, node.operator is TreeOperator.NOT)

    visit(s.expression, False)
    return out


def test_the_query_catalogue_covers_every_operator_and_type() -> None:
    used = frozenset().union(*(q.sql_operators for q in hs2_data.QUERIES))
    assert used >= hs2_data.SQL_OPERATORS, hs2_data.SQL_OPERATORS - used
    assert len(set(QUERY_NAMES)) == len(QUERY_NAMES)


def test_table_holds_the_rows(hs2_cursor: Any, hs2_table: HS2Table) -> None:
    hs2_cursor.execute(f"SELECT * FROM {hs2_table.qualified_name}")
    got = sorted((hs2_data.normalize_row(r) for r in hs2_cursor.fetchall()), key=hs2_data.sort_key)
    assert got == sorted(hs2_table.rows, key=hs2_data.sort_key)


@pytest.mark.parametrize("name", QUERY_NAMES)
def test_sarg_parses_and_round_trips(hs2_queries: dict[str, CollectedQuery], name: str) -> None:
    collected = hs2_queries[name]
    assert collected.sargs, f"{collected.query.sql}: the server logged no SearchArgument"
    for text, schema in collected.sargs:
        parsed = sarg.parse(text, schema)
        assert str(parsed) == text
        # Every leaf got its type from the schema (nothing left to guessing).
        for leaf in parsed.leaves:
            assert leaf.type is not None


@pytest.mark.parametrize("name", QUERY_NAMES)
def test_sarg_holds_the_expected_leaves(hs2_queries: dict[str, CollectedQuery], name: str) -> None:
    collected = hs2_queries[name]
    assert collected.sargs
    for text, schema in collected.sargs:
        got = leaf_signatures(sarg.parse(text, schema))
        assert any(alt <= got for alt in collected.query.alternatives()), \
            f"{collected.query.where!r} gave {text!r}; expected one of {collected.query.leaves}"


def test_every_leaf_operator_tree_operator_and_type_was_produced(hs2_replay: HS2Replay) -> None:
    operators: set[Operator] = set()
    trees: set[TreeOperator] = set()
    types: set[Type] = set()
    columns: set[str] = set()
    for text, schema in hs2_replay.pairs:
        parsed = sarg.parse(text, schema)
        operators |= {leaf.operator for leaf in parsed.leaves}
        types |= {leaf.type for leaf in parsed.leaves}
        columns |= {leaf.column for leaf in parsed.leaves}
        trees |= {node.operator for node in parsed.expression.walk()}
    # Spark turns SQL BETWEEN into two comparisons, but pushes a timestamp equality as a BETWEEN leaf.
    assert operators == set(Operator), set(Operator) - operators
    assert trees >= {TreeOperator.AND, TreeOperator.OR, TreeOperator.NOT, TreeOperator.LEAF}
    assert types == set(Type)
    assert columns == {name for name, _ in hs2_replay.table.columns}


def test_rows_per_query_are_subsets_of_the_table(hs2_replay: HS2Replay) -> None:
    table = set(map(repr, hs2_replay.table.rows))
    for collected in hs2_replay.queries.values():
        assert {repr(r) for r in collected.rows} <= table, collected.query.where
    # The WHERE clauses select something and not everything (a replay then has something to prune).
    assert any(0 < len(q.rows) < len(hs2_replay.table.rows) for q in hs2_replay.queries.values())


def test_scans_read_several_files(hs2_replay: HS2Replay) -> None:
    if not hs2_replay.servers.local:
        pytest.skip("file names are logged only by the Spark Thrift Server's ORC reader")
    files = {f for q in hs2_replay.queries.values() for f in q.files}
    assert len(files) >= len(hs2_data.BATCHES)


def test_live_sargs_and_rows_match_the_recording(hs2_replay: HS2Replay) -> None:
    """The Spark Thrift Server still produces what ``data/hs2_sargs.jsonl`` holds (and returns the same rows)."""
    if not hs2_replay.servers.local:
        pytest.skip("the recording is of the local Spark Thrift Server")
    from tests.integration.test_recorded_sargs import records

    recorded: dict[str, list[dict[str, Any]]] = {}
    for r in records():
        recorded.setdefault(r["query"], []).append(r)
    for name, collected in hs2_replay.queries.items():
        assert [(r["sarg"], r["schema"]) for r in recorded[name]] == list(collected.sargs), name
        assert all(r["ids"] == [row[0] for row in collected.rows] for r in recorded[name]), name
