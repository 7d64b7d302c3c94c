"""HiveServer2 statements as per-table filters: what Hive's optimizer would push to each table scan.

Statements come from ``ql.Driver`` lines (``Compiling command(queryId=…): <SQL>``, continued on the following
lines up to the next line that starts with a timestamp; ``Executing command`` repeats the statement: each
``queryId`` counts once). ``USE db`` sets the database of unqualified names for the statements after it.

The SQL is read by sqlglot (Hive dialect). For every ``SELECT`` of a statement (CTEs and subqueries walked), each
base table it reads is one scan, and its filter is the conjunction of:

- the ``WHERE`` conjuncts and inner-join ``ON`` conjuncts that reference that table's columns only (an unqualified
  column belongs to the one table of the ``SELECT``, or to the one table whose schema has it),
- the ``ON`` conjuncts of an outer join that reference only its null-supplying side (they filter that side's rows
  before the join), and nothing else through a null-supplying side: no ``WHERE`` conjunct reaches it, and no ``ON``
  conjunct reaches the preserved side;

constant expressions folded (``date '1998-12-01' - interval '90' day``), conjuncts holding a subquery left out.
A statement sqlglot cannot read raises :class:`SqlError`, which the caller reports (the run goes on).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from sarg.errors import MAX_DEPTH, too_deep

_EXPLAIN = re.compile(r"^\s*EXPLAIN(?:\s+(?:EXTENDED|FORMATTED|DEPENDENCY|AUTHORIZATION|VECTORIZATION|CBO|AST|"
                      r"LOGICAL|ANALYZE|LOCKS))*\s+", re.I)
_USE = re.compile(r"^\s*USE\s+`?([\w]+)`?\s*;?\s*$", re.I)


class SqlError(ValueError):
    """A statement that cannot be read."""


@dataclass
class TableFilter:
    """One scan of a statement: its table (``db.t``), its pushed filter as HiveQL (None: none) and how many
    conjuncts aimed at it could not be kept."""

    table: str
    hiveql: str | None
    unknown: int = 0


def use_database(sql: str) -> str | None:
    """The database of a ``USE db`` statement, else None."""
    m = _USE.match(sql)
    return m.group(1).lower() if m else None


def table_filters(sql: str, database: str = "default",
                  columns_of: Callable[[str], Mapping[str, str] | None] | None = None) -> list[TableFilter]:
    """Every base-table scan of one statement with the filter pushed to it (see the module doc)."""
    import sqlglot
    from sqlglot import exp

    text = _EXPLAIN.sub("", sql.strip().rstrip(";"))
    _check_nesting(text)
    with _deep_enough():
        try:
            trees = [t for t in sqlglot.parse(text, read="hive") if t is not None]
        except sqlglot.errors.ParseError as exc:
            first = str(exc).splitlines()[0] if str(exc) else "cannot be parsed"
            raise SqlError(f"SQL not read: {first}") from None
        except Exception as exc:  # sqlglot's tokenizer raises its own errors
            raise SqlError(f"SQL not read: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") \
                from None
        out: list[TableFilter] = []
        for tree in trees:
            ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
            for select in tree.find_all(exp.Select):
                out.extend(_select_filters(select, database, ctes, columns_of))
    return out


def _check_nesting(text: str) -> None:
    """Refuse a statement whose brackets nest ``sarg.errors.MAX_DEPTH`` deep (outside its quoted text) with the
    error every filter reader gives (the SQL parser recurses on its depth)."""
    depth = 0
    quote = ""
    for pos, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
            if depth >= MAX_DEPTH:
                raise SqlError(f"SQL not read: {too_deep(text, pos).reason} (at character {pos + 1})")
        elif ch == ")":
            depth -= 1


@contextlib.contextmanager
def _deep_enough() -> Iterator[None]:
    """sqlglot recurses about 40 frames per level of brackets: room for ``MAX_DEPTH`` levels while it reads."""
    before = sys.getrecursionlimit()
    wanted = 60 * MAX_DEPTH + 1000
    if before < wanted:
        sys.setrecursionlimit(wanted)
    try:
        yield
    finally:
        if before < wanted:
            sys.setrecursionlimit(before)


def _operands(e: object, kind: type) -> list[object]:
    """The operands of a chain of ``kind`` (And / Or) with brackets around parts of it dropped, in order, without
    recursion: sqlglot's trees are binary, so ``a OR b OR ...`` of 5,000 terms is 5,000 deep."""
    from sqlglot import exp

    out: list[object] = []
    todo = [e]
    while todo:
        node = todo.pop()
        while isinstance(node, exp.Paren) and isinstance(node.this, kind):
            node = node.this
        if isinstance(node, kind):
            todo += [node.right, node.left]  # type: ignore[attr-defined]
        else:
            out.append(node)
    return out


def _conjuncts(e: object) -> list[object]:
    from sqlglot import exp

    return _operands(e, exp.And)


def _select_filters(select: object, database: str, ctes: set[str],
                    columns_of: Callable[[str], Mapping[str, str] | None] | None) -> list[TableFilter]:
    from sqlglot import exp

    assert isinstance(select, exp.Select)
    sources: list[tuple[object, str]] = []  # (source expression, join side: "" / LEFT / RIGHT / FULL / CROSS)
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is not None:
        sources.append((from_.this, ""))
    joins = list(select.args.get("joins") or [])
    for j in joins:
        sources.append((j.this, (j.side or "").upper()))
    # the base tables of this SELECT, by alias; subqueries and CTE references are walked as their own SELECTs
    tables: list[tuple[str, str]] = []  # (alias, db.t)
    for src, _ in sources:
        if isinstance(src, exp.Table) and src.name and not (not src.db and src.name.lower() in ctes):
            db = (src.db or database).lower()
            tables.append((src.alias_or_name.lower(), f"{db}.{src.name.lower()}"))
    if not tables:
        return []
    null_supplying: set[str] = set()
    aliases = [_alias(s) for s, _ in sources]
    for i, (_src, side) in enumerate(sources):
        if side == "LEFT":
            null_supplying.add(aliases[i])
        elif side == "RIGHT":
            null_supplying.update(aliases[:i])
        elif side == "FULL":
            null_supplying.update(aliases[: i + 1])
    pushed: dict[str, list[str]] = {alias: [] for alias, _ in tables}
    unknown: dict[str, int] = {alias: 0 for alias, _ in tables}
    schemas = {alias: (columns_of(name) if columns_of else None) for alias, name in tables}

    def owner(conjunct: object) -> str | None:
        if conjunct.find(exp.Subquery, exp.Exists, exp.Select) is not None:  # type: ignore[attr-defined]
            return None
        owners: set[str] = set()
        for col in conjunct.find_all(exp.Column):  # type: ignore[attr-defined]
            q = col.table.lower() if col.table else ""
            if q:
                owners.add(q)
                continue
            if len(aliases) == 1:
                owners.add(aliases[0])
                continue
            having = [a for a, _ in tables if _has_column(schemas[a], col.name)]
            if len(having) != 1:
                return None
            owners.add(having[0])
        if len(owners) != 1:
            return None
        (o,) = owners
        return o if o in pushed else None

    def push(conjunct: object, allowed: Callable[[str], bool]) -> None:
        o = owner(conjunct)
        if o is None or not allowed(o):
            return
        text = _hiveql(conjunct)
        if text is None:
            unknown[o] += 1
        else:
            pushed[o].append(text)

    where = select.args.get("where")
    if where is not None:
        for c in _conjuncts(where.this):
            push(c, lambda o: o not in null_supplying)
    for i, j in enumerate(joins, start=1):
        on = j.args.get("on")
        if on is None:
            continue
        side = (j.side or "").upper()
        this = aliases[i]
        left = set(aliases[:i])

        def allowed(o: str, side: str = side, this: str = this, left: set[str] = left) -> bool:
            if side == "":
                return o not in null_supplying
            if side == "LEFT":
                return o == this
            return side == "RIGHT" and o in left

        for c in _conjuncts(on):
            push(c, allowed)
    return [TableFilter(name, " AND ".join(pushed[alias]) if pushed[alias] else None, unknown[alias])
            for alias, name in tables]


def _alias(src: object) -> str:
    from sqlglot import exp

    if isinstance(src, exp.Expression):
        return src.alias_or_name.lower()
    return ""


def _has_column(schema: Mapping[str, str] | None, name: str) -> bool:
    if schema is None:
        return False
    low = name.lower()
    return any(k.lower() == low for k in schema)


def _hiveql(conjunct: object) -> str | None:
    """One conjunct as HiveQL filter text over unqualified columns, constants folded (None: not expressible).
    Chains of AND / OR are written operand by operand (each in brackets), so their length never recurses."""
    from sqlglot import exp

    node = conjunct
    while isinstance(node, exp.Paren) and isinstance(node.this, (exp.And, exp.Or)):
        node = node.this
    if isinstance(node, (exp.And, exp.Or)):
        parts = [_hiveql(part) for part in _operands(node, type(node))]
        if any(part is None for part in parts):
            return None
        word = " AND " if isinstance(node, exp.And) else " OR "
        return "(" + word.join(part for part in parts if part is not None) + ")"
    return _leaf_hiveql(node)


def _leaf_hiveql(conjunct: object) -> str | None:
    from sqlglot import exp
    from sqlglot.optimizer.simplify import simplify

    assert isinstance(conjunct, exp.Expression)
    e = conjunct.copy()
    for col in list(e.find_all(exp.Column)):
        col.set("table", None)
        col.set("db", None)
        col.set("catalog", None)
    try:
        e = simplify(e)
    except Exception:  # simplification is an optimisation: the conjunct as written is as true
        pass
    if isinstance(e, (exp.Or, exp.Xor)):
        e = exp.Paren(this=e)
    try:
        return e.sql(dialect="hive")
    except Exception:
        return None
