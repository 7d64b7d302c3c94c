"""Parquet's printed ``FilterPredicate`` (executor logs and Hive task logs, ``INFO FilterCompat: Filtering using
predicate: …`` and ``Predicate has been collapsed to: …``) as HiveQL filter text typed by the table's columns.

Forms: ``and(l, r)``, ``or(l, r)``, ``not(p)``, ``eq/noteq/lt/lteq/gt/gteq(col, value)``, ``in(col, v1, …)``,
``eq(col, null)`` (IS NULL), ``noteq(col, null)`` (IS NOT NULL); ``userdefinedbyinstance(…)`` and anything else
are unknown. Values are *physical*: strings ``Binary{"…"}``, dates as epoch days, decimals stored as integers as
unscaled integers; they are turned back into the column's type (a timestamp's integer, whose unit the line does
not say, and a decimal stored as bytes are unknown). Parquet's ``noteq(c, v)`` also holds for nulls. A value
printed raw may hold ``)`` or ``, ``: every reading of the text is tried and a leaf is kept only when all
readings agree on it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from decimal import Decimal
from functools import partial

from hive_bridge.workload.printed_filters import decimal_hiveql, hiveql_identifier
from hive_bridge.workload.readings import UNKNOWN_CALL, Alternatives, Node, Readings, Rule, render
from sarg.schema import find_column

_CALL = re.compile(r"([a-z]+)\(")
_COLUMN = re.compile(r"[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)*")
_EPOCH = dt.date(1970, 1, 1)
_LEAVES = ("eq", "noteq", "lt", "lteq", "gt", "gteq", "in")


class _Parser(Readings):
    """All readings of one printed predicate (see :mod:`hive_bridge.workload.readings`); leaves are
    ``Node(<fn>, column, values=...)``."""

    def rule(self, pos: int) -> Rule:
        t = self.text
        m = _CALL.match(t, pos)
        if not m:
            return []
        fn, inner = m.group(1), m.end()
        alts: Alternatives = []
        if fn in ("and", "or"):
            for left, e in (yield inner):
                if len(alts) >= self.max_readings:  # the readings kept at a position
                    break
                if t.startswith(", ", e):
                    for right, e2 in (yield e + 2):
                        if len(alts) >= self.max_readings:  # the readings kept at a position
                            break
                        if t.startswith(")", e2):
                            alts.append((self.node(fn, (left, right), pos), e2 + 1))
        elif fn == "not":
            negated = yield inner
            alts += [(self.node("not", (n,), pos), e + 1) for n, e in negated if t.startswith(")", e)]
        elif fn in _LEAVES:
            c = _COLUMN.match(t, inner)
            if c and t.startswith(", ", c.end()):
                start = c.end() + 2
                for close in self.closes(start):
                    body = t[start:close]
                    values = tuple(_split_values(body)) if fn == "in" else (body,)
                    alts.append((Node(fn, column=c.group(0), values=values), close + 1))
        if not alts:
            alts = [(Node("unknown", text=t[pos:c + 1]), c + 1) for c in self.closes(inner)]
        return alts


def _split_values(body: str) -> list[str]:
    """``in``'s values: split at ``, `` outside ``Binary{"…"}`` (a value holding ``", `` is ambiguous and makes
    the split wrong, which the typed reading then refuses)."""
    out, cur, i = [], [], 0
    while i < len(body):
        if body.startswith('Binary{"', i):
            end = body.find('"}', i + 8)
            if end < 0:
                return [body]
            cur.append(body[i:end + 2])
            i = end + 2
            continue
        if body.startswith(", ", i):
            out.append("".join(cur))
            cur = []
            i += 2
            continue
        cur.append(body[i])
        i += 1
    out.append("".join(cur))
    return out


def _value(raw: str, hive_type: str) -> str | None:
    base = hive_type.lower().split("(", 1)[0].strip()
    if base in ("tinyint", "smallint", "int", "integer", "bigint"):
        return raw if re.fullmatch(r"-?\d+", raw) else None
    if base in ("float", "double"):
        return raw if re.fullmatch(r"-?\d+(?:\.\d+)?(?:[Ee][-+]?\d+)?", raw) else None
    if base == "boolean":
        return raw if raw in ("true", "false") else None
    if base in ("string", "varchar", "char"):
        m = re.fullmatch(r'Binary\{"(.*)"\}', raw, re.S)
        if not m:
            return None
        return "'" + m.group(1).replace("\\", "\\\\").replace("'", "\\'") + "'"
    if base == "date":
        if not re.fullmatch(r"-?\d+", raw):
            return None
        try:
            return f"DATE '{(_EPOCH + dt.timedelta(days=int(raw))).isoformat()}'"
        except OverflowError:
            return None
    if base == "decimal":
        m = re.fullmatch(r"decimal\(\s*\d+\s*,\s*(\d+)\s*\)", hive_type.lower().replace(" ", ""))
        if not m or not re.fullmatch(r"-?\d+", raw):
            return None
        return decimal_hiveql(str(Decimal(int(raw)).scaleb(-int(m.group(1)))))
    return None


_OPS = {"eq": "=", "lt": "<", "lteq": "<=", "gt": ">", "gteq": ">="}


def _leaf(node: Node, types: Mapping[str, str]) -> str | None:
    kind = node.kind
    if kind == "unknown":
        return None
    found = find_column(types, node.column)
    if found is None:
        return None
    name, hive_type = found
    col = hiveql_identifier(name)
    values = node.values
    if kind in ("eq", "noteq") and values == ("null",):
        return f"{col} IS NULL" if kind == "eq" else f"{col} IS NOT NULL"
    typed = [_value(v, hive_type) for v in values]
    if not typed or any(v is None for v in typed):
        return None
    if kind == "in":
        return f"{col} IN ({', '.join(v for v in typed if v is not None)})"
    if kind == "noteq":
        return f"(NOT {col} = {typed[0]} OR {col} IS NULL)"
    return f"{col} {_OPS[kind]} {typed[0]}"


def predicate_to_hiveql(text: str, types: Mapping[str, str]) -> tuple[str | None, int]:
    """The HiveQL text of a printed parquet predicate (None: nothing certain) and 1 when some of it is unknown.
    A predicate nested deeper than ``sarg.errors.MAX_DEPTH`` levels raises that limit's
    :class:`sarg.SargSyntaxError`."""
    text = text.strip()
    readings = [n for n, e in _Parser(text).expr(0) if e == len(text)]
    if not readings:
        return None, 1
    forms = {render(n, partial(_leaf, types=types)) for n in readings}
    if len(forms) != 1:
        return None, 1
    (form,) = forms
    return form, 0 if form is not None and UNKNOWN_CALL not in form else 1
