"""SearchArguments a real Spark Thrift Server produced, recorded in ``data/hs2_sargs.jsonl``: no server needed.

The file is what the ``hs2_queries`` fixture writes (its path is printed with ``-s``); refresh it by copying a new
one over it after changing ``hs2_data``. Each line: server flavour, query name, WHERE clause, SearchArgument text,
the file schema it was logged with, and the ids of the rows HiveServer2 returned.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import sarg
from sarg import Operator, TreeOperator, Type
from tests.integration import hs2_data

RECORDED = Path(__file__).with_name("data") / "hs2_sargs.jsonl"


def records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDED.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("record", records(), ids=lambda r: str(r["query"]))
def test_recorded_sarg_parses_and_round_trips(record: dict[str, Any]) -> None:
    parsed = sarg.parse(record["sarg"], record["schema"])
    assert str(parsed) == record["sarg"]


def test_recording_matches_the_query_catalogue() -> None:
    recorded = {r["query"]: r["where"] for r in records()}
    assert recorded == {q.name: q.where for q in hs2_data.QUERIES}, "data/hs2_sargs.jsonl is stale: re-record it"
    table_ids = {row[0] for row in hs2_data.ROWS}
    for r in records():
        assert set(r["ids"]) <= table_ids


def test_recording_covers_every_operator_and_type() -> None:
    operators: set[Operator] = set()
    types: set[Type] = set()
    trees: set[TreeOperator] = set()
    for r in records():
        parsed = sarg.parse(r["sarg"], r["schema"])
        operators |= {leaf.operator for leaf in parsed.leaves}
        types |= {leaf.type for leaf in parsed.leaves}
        trees |= {node.operator for node in parsed.expression.walk()}
    assert operators == set(Operator)
    assert types == set(Type)
    assert trees >= {TreeOperator.AND, TreeOperator.OR, TreeOperator.NOT, TreeOperator.LEAF}
