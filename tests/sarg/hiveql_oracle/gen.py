"""Seeded random filters for the HiveQL oracle tests: one generated filter renders as HiveQL text (three styles),
as Hive expression JSON for ``HiveQlOracle.java hive`` and as Spark filter JSON for ``HiveQlOracle.java spark``,
and can be evaluated on a row with SQL's three-valued logic.

Literals are drawn per column from kinds whose conversion Hive 2.3.10's ``ConvertAstToSearchArg`` and
``sarg.hiveql`` agree on; the known differences are tested one by one in ``test_hiveql_oracle.py``.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sarg import Literal, Operator, PredicateLeaf, SearchArgument, Timestamp, TruthValue
from sarg.hiveql import HqlLiteral, LiteralKind, box_literal
from sarg.literals import decimal_str, java_double_str
from sarg.schema import resolve_schema

SCHEMA: dict[str, str] = {
    "i": "int", "l": "bigint", "sm": "smallint", "ti": "tinyint", "d": "double", "f": "float",
    "s": "string", "vc": "varchar(10)", "ch": "char(5)", "dt": "date", "ts": "timestamp",
    "dec": "decimal(10,2)", "b": "boolean", "bin": "binary",
}
UNKNOWN = "zz"  # a column the schema does not have
SPARK_DDL = ("i INT, l BIGINT, sm SMALLINT, ti TINYINT, d DOUBLE, f FLOAT, s STRING, vc STRING, ch STRING, "
             "dt DATE, ts TIMESTAMP, dec DECIMAL(10,2), b BOOLEAN, bin BINARY")
SPARK_KIND = {"i": "int", "l": "bigint", "sm": "smallint", "ti": "tinyint", "d": "double", "f": "float",
              "s": "string", "vc": "string", "ch": "string", "dt": "date", "ts": "timestamp",
              "dec": "decimal", "b": "boolean"}
COLUMNS = resolve_schema(SCHEMA)
STYLES = ("hive3", "hive2", "user")

TRICKY_STRINGS = ["a", "b", "abc", "", " ", "a b", "x y z", "(p)", "a,b", "null", "NULL", "tab\there", "é", "日本",
                  "trailing ", " lead", "UPPER", "it's", 'say "hi"', "back\\slash", "new\nline", "%_", "'", "x)"]
PLAIN_STRINGS = [s for s in TRICKY_STRINGS if not any(c in s for c in "'\\\n\"")]


@dataclass(frozen=True)
class Lit:
    kind: LiteralKind
    value: Any  # Python value of the literal as written (None for null)


@dataclass
class Node:
    op: str  # and or not cmp in between isnull bool opaque
    args: list[Any] = field(default_factory=list)
    cmp: str = ""
    negated: bool = False
    col_right: bool = False


# -- literals ------------------------------------------------------------------------------------------------

def _ts(rng: random.Random, nanos: bool = True) -> Timestamp:
    moment = dt.datetime(rng.choice([1969, 1970, 2000, 2020, 2023, 2038]), rng.randint(1, 12), rng.randint(1, 28),
                         rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))
    frac = rng.choice([0, 0, 500_000_000, 123_000_000, 1, 999_999_999, 123_456_789]) if nanos else 0
    return Timestamp.from_datetime(moment, frac)


def _date(rng: random.Random) -> dt.date:
    return dt.date(rng.choice([1, 1969, 1970, 2000, 2020, 2024, 9999]), rng.randint(1, 12), rng.randint(1, 28))


def literal_for(rng: random.Random, column: str) -> Lit:
    """A literal for a comparison with ``column`` (sometimes null)."""
    if rng.random() < 0.04:
        return Lit(LiteralKind.NULL, None)
    hive = SCHEMA.get(column, "int")
    r = rng.random()
    if hive in ("int", "bigint", "smallint", "tinyint"):
        bound = {"int": 2**31 - 1, "bigint": 2**63 - 1, "smallint": 2**15 - 1, "tinyint": 127}[hive]
        v = rng.choice([0, 1, -1, 5, 42, -7, 100, bound, -bound - 1, rng.randint(-1000, 1000)])
        if r < 0.1:
            return Lit(LiteralKind.DOUBLE, float(rng.randint(-50, 50)))
        if r < 0.2:
            return Lit(LiteralKind.DECIMAL, Decimal(rng.randint(-50, 50)))
        if abs(v) < 2**31 and hive != "bigint":
            kind = {"int": LiteralKind.INT, "smallint": LiteralKind.SMALLINT, "tinyint": LiteralKind.TINYINT}[hive]
            fits = -bound - 1 <= v <= bound
            return Lit(kind if r < 0.6 and fits else LiteralKind.INT, v)
        return Lit(LiteralKind.BIGINT if (r < 0.7 or abs(v) >= 2**31) else LiteralKind.INT, v)
    if hive == "double":
        if r < 0.2:
            return Lit(LiteralKind.INT, rng.randint(-100, 100))
        if r < 0.3:
            return Lit(LiteralKind.BIGINT, rng.choice([2**40, -(2**53) - 1, 2**63 - 1]))
        return Lit(LiteralKind.DOUBLE, rng.choice([0.0, -0.0, 1.5, -2.25, 0.1, 1e-7, 1.0e7, 123.456, -2.5e10, 3.0,
                                            1e300, 2.5e-308, rng.uniform(-1e6, 1e6)]))
    if hive == "float":
        if r < 0.3:
            return Lit(LiteralKind.INT, rng.randint(-100, 100))
        return Lit(LiteralKind.DOUBLE, rng.choice([0.0, 0.5, -2.25, 3.0, 1.0e7, 0.125, -1024.0]))
    if hive in ("string", "varchar(10)"):
        return Lit(LiteralKind.STRING, rng.choice(TRICKY_STRINGS))
    if hive == "char(5)":
        return Lit(LiteralKind.STRING, rng.choice([s for s in TRICKY_STRINGS if len(s) <= 5]))
    if hive == "date":
        d = _date(rng)
        return Lit(LiteralKind.STRING, d.isoformat()) if r < 0.3 else Lit(LiteralKind.DATE, d)
    if hive == "timestamp":
        t = _ts(rng)
        return Lit(LiteralKind.STRING, str(t)) if r < 0.2 else Lit(LiteralKind.TIMESTAMP, t)
    if hive == "decimal(10,2)":
        if r < 0.2:
            return Lit(LiteralKind.INT, rng.randint(-1000, 1000))
        if r < 0.35:
            return Lit(LiteralKind.DOUBLE, rng.choice([0.1, 1.25, -3.5, 100.0, 1e-7]))
        if r < 0.45:
            return Lit(LiteralKind.STRING, rng.choice(["1.5", "-0.25", "42"]))
        return Lit(LiteralKind.DECIMAL, rng.choice([Decimal("0"), Decimal("12.50"), Decimal("-7.25"),
                                                    Decimal("99999999.99"), Decimal("0.01"), Decimal("123.456"),
                                                    Decimal(rng.randint(-999, 999))]))
    if hive == "boolean":
        return Lit(LiteralKind.BOOLEAN, rng.random() < 0.5)
    return Lit(LiteralKind.STRING, "x")  # binary


# -- trees ---------------------------------------------------------------------------------------------------

def predicate(rng: random.Random) -> Node:
    column = rng.choice([*SCHEMA, UNKNOWN] if rng.random() < 0.1 else [c for c in SCHEMA if c != "bin"])
    r = rng.random()
    if r < 0.40:
        lit = literal_for(rng, column)
        cmp = rng.choice(["=", "<=>", "<>", "<", "<=", ">", ">="])
        if cmp == "<=>" and lit.kind is LiteralKind.NULL:  # read as IS NULL: a documented difference
            cmp = "="
        return Node("cmp", [column, lit], cmp=cmp, col_right=rng.random() < 0.25)
    if r < 0.55:
        lits = [literal_for(rng, column) for _ in range(rng.randint(1, 4))]
        return Node("in", [column, *lits], negated=rng.random() < 0.3)
    if r < 0.68:
        return Node("between", [column, literal_for(rng, column), literal_for(rng, column)], negated=rng.random() < 0.3)
    if r < 0.80:
        return Node("isnull", [column], negated=rng.random() < 0.5)
    if r < 0.90:
        return Node("bool", [rng.choice(["b", "b", "i"])])
    if r < 0.95:
        return Node("opaque", ["upper", "s", Lit(LiteralKind.STRING, "X")])
    return Node("opaque", ["cols", "i", "l"])


def tree(rng: random.Random, depth: int = 0) -> Node:
    r = rng.random()
    if depth >= 3 or r < 0.35:
        return predicate(rng)
    if r < 0.45:
        return Node("not", [tree(rng, depth + 1)])
    return Node(rng.choice(["and", "or"]), [tree(rng, depth + 1) for _ in range(rng.randint(2, 4))])


# -- HiveQL text ---------------------------------------------------------------------------------------------

def _kw(rng: random.Random, style: str, word: str) -> str:
    if style != "user":
        return word
    return rng.choice([word.lower(), word.upper(), word.capitalize()])


def _quote(rng: random.Random, style: str, text: str) -> str:
    if style != "user":
        return "'" + text + "'"
    q = rng.choice(["'", '"'])
    out = text.replace("\\", "\\\\").replace(q, "\\" + q).replace("\n", "\\n").replace("\t", rng.choice(["\t", "\\t"]))
    return q + out + q


def _hive3_ts(t: Timestamp) -> str:
    text = str(t)
    return text[:-2] if text.endswith(".0") else text


def render_literal(rng: random.Random, style: str, lit: Lit) -> str:
    k, v = lit.kind, lit.value
    if k is LiteralKind.NULL:
        return _kw(rng, style, "null")
    if k is LiteralKind.BOOLEAN:
        return _kw(rng, style, "true" if v else "false")
    if k in (LiteralKind.INT, LiteralKind.BIGINT, LiteralKind.SMALLINT, LiteralKind.TINYINT):
        suffix = {LiteralKind.INT: "", LiteralKind.BIGINT: "L", LiteralKind.SMALLINT: "S",
                  LiteralKind.TINYINT: "Y"}[k]
        if style == "hive2":
            suffix = ""
        elif style == "user" and suffix and rng.random() < 0.3:
            suffix = suffix.lower()
        return f"{v}{suffix}"
    if k is LiteralKind.DOUBLE:
        text = java_double_str(v)
        if style == "hive3":
            return text + "D"
        if style == "user":
            return rng.choice([text, text + "D", repr(v) if "e" not in repr(v) and "." in repr(v) else text])
        return text
    if k is LiteralKind.DECIMAL:
        text = decimal_str(v)
        if style == "hive2":
            return text
        return text + ("BD" if style == "hive3" or rng.random() < 0.5 else "bd")
    if k is LiteralKind.STRING:
        if style != "user" and v not in PLAIN_STRINGS:
            return _quote(rng, "user", v)  # Hive prints such strings raw; no printer-faithful form exists
        return _quote(rng, style, v)
    if k is LiteralKind.DATE:
        text = v.isoformat()
        if style == "hive2":
            return text
        if style == "user" and rng.random() < 0.3:
            return f"CAST({_quote(rng, style, text)} AS {_kw(rng, style, 'date')})"
        return f"{_kw(rng, style, 'DATE')}{rng.choice(['', ' ']) if style == 'user' else ''}'{text}'"
    if k is LiteralKind.TIMESTAMP:
        if style == "hive2":
            return str(v)
        return f"{_kw(rng, style, 'TIMESTAMP')}'{_hive3_ts(v) if style == 'hive3' else str(v)}'"
    raise AssertionError(k)


def _col(rng: random.Random, style: str, name: str) -> str:
    if style == "user":
        r = rng.random()
        if r < 0.15:
            return f"`{name}`"
        if r < 0.25:
            return f"t.{name}"
        if r < 0.3:
            return name.upper()
    return name


def render(node: Node, rng: random.Random, style: str) -> str:
    """HiveQL text: ``hive3`` as Hive 3/4 prints filterExpr, ``hive2`` as Hive 2 prints it, ``user`` as typed."""
    op = node.op
    sp = (lambda: rng.choice([" ", "  ", "\n", " \t"])) if style == "user" else (lambda: " ")
    if op in ("and", "or"):
        kids = [render(k, rng, style) for k in node.args]
        return "(" + f"{sp()}{_kw(rng, style, op)}{sp()}".join(kids) + ")"
    if op == "not":
        inner = render(node.args[0], rng, style)
        return f"({_kw(rng, style, 'not')} {inner})" if style != "user" or rng.random() < 0.5 else \
            f"{_kw(rng, style, 'NOT')} {inner}" if inner.startswith("(") else f"{_kw(rng, style, 'NOT')} ({inner})"
    if op == "cmp":
        column, lit = node.args
        col = _col(rng, style, column)
        text = render_literal(rng, style, lit)
        cmp = node.cmp
        if style == "user":
            cmp = {"=": rng.choice(["=", "=="]), "<>": rng.choice(["<>", "!="])}.get(cmp, cmp)
        if node.col_right:
            flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(cmp, cmp)
            return f"({text} {flipped} {col})"
        return f"({col}{sp()}{cmp}{sp()}{text})"
    if op == "in":
        column, *lits = node.args
        items = ", ".join(render_literal(rng, style, lit) for lit in lits)
        head = f"({_col(rng, style, column)})" if style != "user" or rng.random() < 0.5 else _col(rng, style, column)
        if node.negated:
            if style == "user" and rng.random() < 0.5:
                return f"({head} {_kw(rng, style, 'NOT')} {_kw(rng, style, 'IN')} ({items}))"
            return f"({_kw(rng, style, 'not')} {head} {_kw(rng, style, 'IN')} ({items}))"
        return f"{head} {_kw(rng, style, 'IN')} ({items})"
    if op == "between":
        column, lo, hi = node.args
        body = (f"{_col(rng, style, column)} {_kw(rng, style, 'BETWEEN')} {render_literal(rng, style, lo)} "
                f"{_kw(rng, style, 'AND')} {render_literal(rng, style, hi)}")
        if node.negated:
            if style == "user" and rng.random() < 0.5:
                return f"({_kw(rng, style, 'not')} ({body}))"
            return body.replace(" BETWEEN ", " NOT BETWEEN ", 1).replace(" between ", " not between ", 1) \
                .replace(" Between ", " Not Between ", 1)
        return body
    if op == "isnull":
        col = _col(rng, style, node.args[0])
        return f"{col} {_kw(rng, style, 'is')} {_kw(rng, style, 'not') + ' ' if node.negated else ''}" \
               f"{_kw(rng, style, 'null')}"
    if op == "bool":
        return _col(rng, style, node.args[0])
    if op == "opaque":
        if node.args[0] == "upper":
            return f"(upper({node.args[1]}) = {render_literal(rng, style, node.args[2])})"
        return f"({node.args[1]} = {node.args[2]})"
    raise AssertionError(op)


# -- Hive expression JSON ------------------------------------------------------------------------------------

def _hive_const(lit: Lit, column: str) -> dict[str, Any]:
    k, v = lit.kind, lit.value
    if k is LiteralKind.NULL:
        return {"const": "void", "value": None}
    kind = k.value
    if k is LiteralKind.STRING and SCHEMA.get(column) == "char(5)":
        kind = "char(5)"  # Hive's type checker gives a char column's literal the column's type
    if k is LiteralKind.DOUBLE:
        text = repr(v)
    elif k is LiteralKind.DECIMAL:
        text = str(v)
    elif k is LiteralKind.BOOLEAN:
        text = "true" if v else "false"
    else:
        text = str(v)
    return {"const": kind, "value": text}


def _hive_col(column: str) -> dict[str, Any]:
    return {"col": column, "type": SCHEMA.get(column, "array<int>")}


def hive_json(node: Node) -> dict[str, Any]:
    op = node.op
    if op in ("and", "or", "not"):
        return {"op": op, "args": [hive_json(k) for k in node.args]}
    if op == "cmp":
        column, lit = node.args
        pair = [_hive_col(column), _hive_const(lit, column)]
        cmp = node.cmp
        if node.col_right:
            pair.reverse()
            cmp = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(cmp, cmp)
        return {"op": cmp, "args": pair}
    if op == "in":
        column, *lits = node.args
        inner = {"op": "in", "args": [_hive_col(column), *(_hive_const(lit, column) for lit in lits)]}
        return {"op": "not", "args": [inner]} if node.negated else inner
    if op == "between":
        column, lo, hi = node.args
        inner = {"op": "between", "invert": False,
                 "args": [_hive_col(column), _hive_const(lo, column), _hive_const(hi, column)]}
        return {"op": "not", "args": [inner]} if node.negated else inner
    if op == "isnull":
        return {"op": "isnotnull" if node.negated else "isnull", "args": [_hive_col(node.args[0])]}
    if op == "bool":
        return _hive_col(node.args[0])
    if node.args[0] == "upper":
        return {"op": "=", "args": [{"fn": "upper", "args": [_hive_col("s")]}, _hive_const(node.args[2], "s")]}
    return {"op": "=", "args": [_hive_col(node.args[1]), _hive_col(node.args[2])]}


# -- Spark filter JSON (literals already in the column's type, as Spark's analyzer leaves them) --------------

UNSUPPORTED: dict[str, Any] = {"fn": "unsupported", "args": []}


def converted(lit: Lit, column: str) -> Literal | Exception | None:
    """The literal in the column's SARG type, as sarg.hiveql converts it (an exception when it does not)."""
    ctype = COLUMNS.get(column)
    if ctype is None or ctype.sarg_type is None:
        return ValueError("no SARG type")
    try:
        return box_literal(HqlLiteral(lit.kind, lit.value), ctype.sarg_type, ctype)
    except ValueError as exc:
        return exc


def _spark_const(value: Literal | None, column: str) -> dict[str, Any] | None:
    kind = SPARK_KIND[column]
    if value is None:
        return None
    if kind in ("int", "smallint", "tinyint"):
        bits = {"int": 31, "smallint": 15, "tinyint": 7}[kind]
        assert isinstance(value, int)
        if not -(2**bits) <= value < 2**bits:
            return None
        return {"const": kind, "value": str(value)}
    if kind in ("double", "float"):
        assert isinstance(value, float)
        return {"const": kind, "value": repr(value)}
    if kind == "boolean":
        return {"const": kind, "value": "true" if value else "false"}
    if kind == "timestamp":
        assert isinstance(value, Timestamp)
        if value.nanos % 1000:
            return None  # Spark's timestamps are microseconds: it cannot hold this literal
    return {"const": kind, "value": str(value)}


OPAQUE = Node("opaque", ["upper", "s", Lit(LiteralKind.STRING, "X")])


def _spark_consts(node: Node) -> list[dict[str, Any]] | None:
    column = node.args[0]
    consts = []
    for lit in node.args[1:]:
        value = converted(lit, column)
        const = None if isinstance(value, Exception) else _spark_const(value, column)
        if const is None:
            return None
        consts.append(const)
    return consts


def spark_view(node: Node, partial: bool = True) -> Node | None:
    """The filter Spark's ORC conversion turns into a SearchArgument (None: it pushes nothing).

    Spark's ``convertibleFilters``: a leaf it cannot push (functions, unknown or binary columns, a bare
    non-boolean column, nulls, literals its column type cannot hold) is dropped from an AND where partial
    pushdown is allowed (not under a NOT); an OR or NOT with such a part is not pushed at all. BETWEEN becomes
    >= AND <=, and timestamps are widened by 999 ns (see ``_spark_timestamp_view``)."""
    op = node.op
    if op == "and":
        kids = [spark_view(k, partial) for k in node.args]
        kept = [k for k in kids if k is not None]
        if (not partial and len(kept) < len(kids)) or not kept:
            return None
        return kept[0] if len(kept) == 1 else Node("and", kept)
    if op == "or":
        kids = [spark_view(k, partial) for k in node.args]
        if any(k is None for k in kids):
            return None
        return Node("or", [k for k in kids if k is not None])
    if op == "not":
        kid = spark_view(node.args[0], False)
        return None if kid is None else Node("not", [kid])
    if not _spark_leaf(node):
        return None
    column = node.args[0]
    if op in ("bool", "isnull"):
        return node
    if SCHEMA[column] == "timestamp":
        return _spark_timestamp_view(node)
    if op == "between":
        _, lo, hi = node.args
        both = Node("and", [Node("cmp", [column, lo], cmp=">="), Node("cmp", [column, hi], cmp="<=")])
        return Node("not", [both]) if node.negated else both
    return node


def _spark_leaf(node: Node) -> bool:
    """Whether Spark pushes this predicate to ORC."""
    if node.op == "opaque":
        return False
    column = node.args[0]
    if column not in SPARK_KIND:
        return False
    if node.op == "bool":
        return column == "b"
    return node.op == "isnull" or _spark_consts(node) is not None


def _spark_timestamp_view(node: Node) -> Node:
    """Spark widens timestamp literals by 999 ns (its timestamps are microseconds, ORC's are nanoseconds):
    ``ts = v`` is BETWEEN v AND v+999ns, ``<=`` and ``>`` compare with v+999ns, IN is an OR of such ranges."""
    column = node.args[0]
    values = [converted(lit, column) for lit in node.args[1:]]
    lits = [Lit(LiteralKind.TIMESTAMP, v) for v in values]
    wide = [Lit(LiteralKind.TIMESTAMP, Timestamp.from_epoch_nanos(v.epoch_nanos + 999)) for v in values
            if isinstance(v, Timestamp)]

    def rng_(k: int) -> Node:
        return Node("between", [column, lits[k], wide[k]])

    if node.op == "in":
        anyof = rng_(0) if len(lits) == 1 else Node("or", [rng_(k) for k in range(len(lits))])
        return Node("not", [anyof]) if node.negated else anyof
    if node.op == "between":
        both = Node("and", [Node("cmp", [column, lits[0]], cmp=">="), Node("cmp", [column, wide[1]], cmp="<=")])
        return Node("not", [both]) if node.negated else both
    cmp = node.cmp
    if cmp == "=":
        return rng_(0)
    if cmp == "<>":
        return Node("not", [rng_(0)])
    if cmp == "<=>":
        return Node("and", [Node("isnull", [column], negated=True), rng_(0)])
    if cmp in ("<=", ">"):
        return Node("cmp", [column, wide[0]], cmp=cmp)
    return Node("cmp", [column, lits[0]], cmp=cmp)


def spark_json(node: Node) -> dict[str, Any]:
    """Spark filter JSON for a filter (literals in the column's type, as Spark's analyzer leaves them); what
    ``spark_view`` replaces by a function becomes a filter Spark's ORC conversion does not take."""
    op = node.op
    if op in ("and", "or", "not"):
        return {"op": op, "args": [spark_json(k) for k in node.args]}
    if not _spark_leaf(node):
        return UNSUPPORTED
    column = node.args[0]
    if op == "bool":
        return {"col": column}
    if op == "isnull":
        return {"op": "isnotnull" if node.negated else "isnull", "args": [{"col": column}]}
    consts = _spark_consts(node)
    assert consts is not None
    if op == "between":
        return {"op": "between", "invert": node.negated, "args": [{"col": column}, *consts]}
    if op == "cmp":
        pair = [{"col": column}, consts[0]]
        cmp = node.cmp
        if node.col_right:
            pair.reverse()
            cmp = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(cmp, cmp)
        return {"op": cmp, "args": pair}
    inner = {"op": "in", "args": [{"col": column}, *consts]}
    return {"op": "not", "args": [inner]} if node.negated else inner


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


# -- rows and SQL truth --------------------------------------------------------------------------------------

def random_row(rng: random.Random) -> dict[str, Any]:
    """One row, values in each column's SARG domain (char padded, as Hive and ORC hold them); None is null."""
    row: dict[str, Any] = {}
    for column in SCHEMA:
        if rng.random() < 0.15:
            row[column] = None
            continue
        lit = literal_for(rng, column)
        value = converted(lit, column)
        if rng.random() < 0.3 or isinstance(value, Exception) or value is None:
            value = _fresh_value(rng, column)
        row[column] = value
    row[UNKNOWN] = rng.randint(-5, 5)
    return row


def _fresh_value(rng: random.Random, column: str) -> Any:
    hive = SCHEMA[column]
    if hive in ("int", "bigint", "smallint", "tinyint"):
        return rng.randint(-100, 100)
    if hive in ("double", "float"):
        return rng.choice([0.0, 1.5, -2.25, 3.0, 100.0])
    if hive in ("string", "varchar(10)", "binary"):
        return rng.choice(TRICKY_STRINGS)
    if hive == "char(5)":
        return rng.choice([s for s in TRICKY_STRINGS if len(s) <= 5]).rstrip(" ").ljust(5)
    if hive == "date":
        return _date(rng)
    if hive == "timestamp":
        return _ts(rng)
    if hive == "decimal(10,2)":
        return Decimal(rng.randint(-10000, 10000)) / 100
    return rng.random() < 0.5


def _cmp(a: Any, op: str, b: Any) -> bool | None:
    if a is None or b is None:
        return None
    if op == "=":
        return bool(a == b)
    if op == "<>":
        return bool(a != b)
    if op == "<":
        return bool(a < b)
    if op == "<=":
        return bool(a <= b)
    if op == ">":
        return bool(a > b)
    return bool(a >= b)


def _and(values: list[bool | None]) -> bool | None:
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


def _or(values: list[bool | None]) -> bool | None:
    if any(v is True for v in values):
        return True
    return None if any(v is None for v in values) else False


def sql_truth(node: Node, row: dict[str, Any]) -> bool | str | None:
    """SQL's three-valued truth of the filter on ``row``, or "unknown" when this model cannot tell (a literal
    that does not convert to the column's type, a function, an unknown column)."""
    op = node.op
    if op in ("and", "or"):
        kids = [sql_truth(k, row) for k in node.args]
        if "unknown" in kids:
            # still decided when a known child decides it
            known = [k for k in kids if k != "unknown"]
            decisive = False if op == "and" else True
            return decisive if decisive in known else "unknown"
        return _and(kids) if op == "and" else _or(kids)  # type: ignore[arg-type]
    if op == "not":
        v = sql_truth(node.args[0], row)
        return v if v in ("unknown", None) else not v
    if op == "opaque":
        return "unknown"
    column = node.args[0]
    if column not in SCHEMA or SCHEMA[column] == "binary":
        return "unknown"
    value = row[column]
    if op == "isnull":
        return (value is not None) if node.negated else (value is None)
    if op == "bool":
        if SCHEMA[column] != "boolean":
            return "unknown"
        return value
    lits = []
    for lit in node.args[1:]:
        c = converted(lit, column)
        if isinstance(c, Exception):
            return "unknown"
        lits.append(c)
    if op == "cmp":
        if node.cmp == "<=>":
            return value == lits[0] if value is not None and lits[0] is not None else (value is None and lits[0] is None)
        return _cmp(value, node.cmp, lits[0])
    if op == "in":
        if value is None:
            result: bool | None = None
        elif any(value == x for x in lits if x is not None):
            result = True
        else:
            result = None if any(x is None for x in lits) else False
        return (None if result is None else not result) if node.negated else result
    lo, hi = lits
    result = _and([_cmp(value, ">=", lo), _cmp(value, "<=", hi)])
    return (None if result is None else not result) if node.negated else result


def fully_supported(node: Node) -> bool:
    """Whether every part of the filter becomes a leaf (no YES_NO_NULL anywhere, before the CNF limit)."""
    op = node.op
    if op in ("and", "or", "not"):
        return all(fully_supported(k) for k in node.args)
    if op == "opaque":
        return False
    column = node.args[0]
    if column not in SCHEMA or SCHEMA[column] == "binary":
        return False
    if op == "bool":
        return SCHEMA[column] == "boolean"
    if op == "isnull":
        return True
    values = [converted(lit, column) for lit in node.args[1:]]
    if any(isinstance(v, Exception) for v in values):
        return False
    return op == "in" or all(v is not None for v in values)


# -- evaluating a SearchArgument on one row (SQL's three-valued logic per leaf) ------------------------------

def leaf_truth(leaf: PredicateLeaf, row: dict[str, Any]) -> TruthValue:
    value = row.get(leaf.column)
    op = leaf.operator
    if op is Operator.IS_NULL:
        return TruthValue.YES if value is None else TruthValue.NO
    if op is Operator.NULL_SAFE_EQUALS:
        return TruthValue.YES if value is not None and value == leaf.literal else TruthValue.NO
    if value is None:
        return TruthValue.NULL
    if op is Operator.IN:
        assert leaf.literals is not None
        if any(v is not None and value == v for v in leaf.literals):
            return TruthValue.YES
        return TruthValue.NULL if None in leaf.literals else TruthValue.NO
    if op is Operator.BETWEEN:
        assert leaf.literals is not None
        lo, hi = leaf.literals
        return TruthValue.YES if lo <= value <= hi else TruthValue.NO  # type: ignore[operator]
    lit = leaf.literal
    ok = {Operator.EQUALS: lambda: value == lit, Operator.LESS_THAN: lambda: value < lit,  # type: ignore[operator]
          Operator.LESS_THAN_EQUALS: lambda: value <= lit}[op]()  # type: ignore[operator]
    return TruthValue.YES if ok else TruthValue.NO


def sarg_truth(s: SearchArgument, row: dict[str, Any]) -> TruthValue:
    return s.evaluate([leaf_truth(leaf, row) for leaf in s.leaves])
