"""One rule tells a printed SearchArgument from HiveQL filter text (sarg.detect.looks_like_sarg), and every reader
of mixed input uses it: sarg.read_filter and the log miner (hive_bridge.workload.logscan) must agree on every text."""

from __future__ import annotations

import pytest

import sarg
from hive_bridge.workload.logscan import scan_lines
from sarg import hiveql
from sarg.detect import looks_like_sarg

TEXTS = [  # (text, is a printed SearchArgument)
    ("(not (a = 1))", False),  # HiveQL: what follows a SARG's "(not" is a SARG tree
    ("(not leaf-(IS_NULL a))", True),
    ("leaf-0 = (EQUALS a 1), expr = leaf-0", True),
    ("YES_NO_NULL", True),
    ("expr = leaf-0", True),
    ("a = 1", False),
    ("(a = 1) and (b = 2)", False),
    ("(and leaf-(EQUALS a 1) (not leaf-(EQUALS b 2)))", True),
    ("(or leaf-(EQUALS a 1) YES_NO_NULL)", True),
    ("(not (not leaf-(IS_NULL a)))", True),
    ("(not (and leaf-(IS_NULL a) leaf-(IS_NULL b)))", True),
    ("(not YES_NULL)", True),
    ("expr = (not leaf-0)", True),
    ("expr = YES_NO_NULL", True),
    ("NO_NULL", True),
    ("expr = 5", False),
    ("YES = 1", False),  # a column named YES: a constant starts a SearchArgument only as the whole text
    ("NULL_COUNT > 3", False),
    ("(not (a = 1 and b = 2))", False),
    ("not a = 1", False),
    ("(name) IN ('a', 'b')", False),
    ("leaf = 1", False),
    ("android = 1", False),
    ("(nothing = 1)", False),
    ("(order_id = 1) or (x = 2)", False),
]


@pytest.mark.parametrize(("text", "is_sarg"), TEXTS)
def test_looks_like_sarg(text: str, is_sarg: bool) -> None:
    assert looks_like_sarg(text) is is_sarg
    assert sarg.looks_like_sarg is looks_like_sarg is hiveql.looks_like_sarg


@pytest.mark.parametrize(("text", "is_sarg"), TEXTS)
def test_read_filter_and_the_log_miner_agree(text: str, is_sarg: bool) -> None:
    [found] = scan_lines([text])
    assert found.kind == ("sarg" if is_sarg else "hiveql")
    try:
        read = sarg.read_filter(text)
    except sarg.SargSyntaxError as exc:  # "expr = leaf-0" has no leaf-0: the SARG reader says so
        error = exc
    else:
        error = None
    if is_sarg:
        assert error is None or "leaf-0 is not defined" in str(error)
        if error is None:
            assert read == sarg.parse(text)
    else:
        assert error is None and read == sarg.parse_hiveql(text)
