"""`python -m sarg`: every output form, stdin, bad lines reported with position while the run goes on."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sarg.__main__ import main

TEXT = "leaf-0 = (LESS_THAN x 5), leaf-1 = (EQUALS y hi), expr = (and leaf-0 (not leaf-1))"


@pytest.mark.parametrize(("form", "expected"), [
    ("new", "(and leaf-(LESS_THAN x 5) (not leaf-(EQUALS y hi)))"),
    ("old", TEXT),
])
def test_forms(capsys: pytest.CaptureFixture[str], form: str, expected: str) -> None:
    assert main([TEXT, "--to", form]) == 0
    assert capsys.readouterr().out.strip() == expected


def test_json_and_tree_with_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([TEXT, "--to", "json", "--schema", "struct<x:double,y:string>"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["leaves"][0] == {"operator": "LESS_THAN", "type": "FLOAT", "column": "x", "literal": 5.0}
    assert doc["expression"] == {"and": [{"leaf": 0}, {"not": [{"leaf": 1}]}]}
    assert main([TEXT, "--to", "tree"]) == 0
    tree = capsys.readouterr().out.splitlines()
    assert tree[0] == "AND" and tree[2].strip() == "NOT"
    # HiveQL LIKE: Hive's SearchArgument drops it; its prefix is listed beside
    assert main(["x < 5 AND y LIKE 'a\\_b%'", "--to", "json", "--schema", "struct<x:double,y:string>"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["sarg"] == "leaf-(LESS_THAN x 5.0)"
    assert doc["prefixes"] == [{"column": "y", "prefix": "a_b", "negated": False}]


def test_bad_lines_report_position_and_continue() -> None:
    stdin = "leaf-(EQUALS a 1)\n(and leaf-(EQUALS a 1)\nleaf-(FOO a 1)\nYES_NO_NULL\n"
    proc = subprocess.run([sys.executable, "-m", "sarg"], input=stdin, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == ["leaf-(EQUALS a 1)", "YES_NO_NULL"]
    assert "stdin line 2" in proc.stderr and "line 1, column 23" in proc.stderr
    assert "stdin line 3" in proc.stderr and "unknown operator FOO" in proc.stderr
    assert "2 read, 2 failed" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_schema_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([TEXT, "--schema", "struct<x:int"]) == 2
    assert "error in --schema" in capsys.readouterr().err
