"""Spark's printed filters (Catalyst expressions and V1 ``sources.Filter`` case classes) as HiveQL filter text.

Spark prints literals raw: ``(name#12 = it's, x)``, ``EqualTo(name,a,b)``, ``In(id, [1,10,2])``. A printed
list of filters can therefore often be read in more than one way. Each list is parsed into *every* reading the
grammar admits (a literal may end at any closing bracket after which the text goes on as a filter would); a
conjunct is kept only when every reading has it, so a filter whose split is not certain is unknown — it keeps
files, as an unknown SearchArgument leaf does, and is counted.

Literals are typed by the table's column types (Hive type names, as :func:`hive_bridge.filters.typemap.table_sarg_schema`
gives them); a decimal column's literal stays exact (``1.00000000000000000E-7`` is written ``0.000000100…``, which
HiveQL reads exactly), a double's ``NaN`` / ``Infinity`` are casts of their text. A literal that does not read as
its column's type, a column the table lacks, a binary value, a function of a column (``cast(id#1 as string)``;
a decimal column cast to a decimal of more scale is its value or NULL, and is read), ``LIKE`` / ``RLIKE``
patterns, a dynamic pruning expression: unknown. A boolean column alone (``flag#3``) is ``flag``, ``isnan(x#2)``
Spark's ``isnan``. ``StartsWith(s#1, ab)`` and V1's ``StringStartsWith(s,ab)`` on a string column are
``s LIKE 'ab%'`` (its wildcards escaped), which prunes as a prefix where it is a conjunct of the whole filter. The
result is HiveQL filter text (read by :func:`sarg.parse_hiveql` like any other filter), where an unknown part
inside ``OR``/``NOT`` is written ``unknown()`` (a call the SearchArgument reads as "maybe") and listed.

Lists are read without recursion (:mod:`hive_bridge.workload.readings`); one nested deeper than
``sarg.errors.MAX_DEPTH`` levels is not read, with that limit's error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial

from hive_bridge.workload.readings import (
    Alternatives,
    Node,
    Readings,
    Rule,
    render,
    walk,
)
from sarg.errors import MAX_DEPTH, SargSyntaxError, too_deep
from sarg.prefix import like_pattern
from sarg.schema import find_column

_MAX_TEXT = 200_000

_ATTR = re.compile(r"(?P<name>[A-Za-z_][\w$]*(?:\.[\w$]+)*|`[^`]+`)#(?P<id>\d+)L?(?P<field>(?:\.[A-Za-z_][\w$]*)*)")
_ITEM_START = r"(?=\(|NOT |[A-Za-z_][\w$.]*\(|[A-Za-z_][\w$.]*#\d)"  # after a list's separator
_DPP = re.compile(r"dynamicpruning#\d+(?: \[[^\]]*\])?")
_V1_NAME = re.compile(r"(?P<name>`(?:[^`]|``)+`|[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)*)")
_INT = re.compile(r"-?\d+\Z")
_NUM = re.compile(r"-?\d+(?:\.\d+)?(?:[Ee][-+]?\d+)?\Z")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_TS = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,9})?\Z")
_OPS = {"=": "=", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "<=>": "<=>"}
_V1_OPS = {"EqualTo": "=", "EqualNullSafe": "<=>", "LessThan": "<", "LessThanOrEqual": "<=", "GreaterThan": ">",
           "GreaterThanOrEqual": ">="}


@dataclass
class Translated:
    """The HiveQL text of a list of filters (None: nothing usable) and how many filters were unknown."""

    hiveql: str | None
    unknown: int = 0
    conjuncts: list[str] = field(default_factory=list)
    unknown_texts: list[str] = field(default_factory=list)
    #: whole lists that read no way at all (a form not understood, e.g. cut by a newline in a text log)
    unread: list[str] = field(default_factory=list)
    #: why each of ``unread`` was not read (``"a form not understood"``, or the nesting limit's error)
    unread_reasons: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------ parsing
_OPAQUE_START = re.compile(r"[A-Za-z_][\w$]*\(|\(")
_V1_CALL = re.compile(r"([A-Za-z]+)\(")
_INFIX = re.compile(r" (?:NOT )?(?:LIKE|RLIKE|ILIKE) ")
_CAST_DECIMAL = re.compile(r"cast\((?P<attr>[^()\s]+) as decimal\((?P<p>\d+),(?P<s>\d+)\)\)")


class _Parser(Readings):
    """All readings of one printed filter list (see :mod:`hive_bridge.workload.readings`)."""

    def __init__(self, text: str, v1: bool, shown: str, offset: int, sep: str = ", ") -> None:
        super().__init__(text, shown, offset)
        self.v1 = v1
        self.item_end = re.compile(r"\)|\]| AND | OR |" + re.escape(sep))
        self.item_start = re.compile(re.escape(sep) + _ITEM_START)

    def rule(self, pos: int) -> Rule:
        return self._v1_expr(pos) if self.v1 else self._cat_expr(pos)

    # Catalyst ------------------------------------------------------------------------------------------
    def _cat_expr(self, pos: int) -> Rule:
        t = self.text
        alts: Alternatives = []
        if t.startswith("NOT ", pos):
            negated = yield pos + 4
            alts += [(self.node("not", (n,), pos), e) for n, e in negated]
        for fn, kind in (("isnotnull(", "isnotnull"), ("isnull(", "isnull"), ("isnan(", "isnan")):
            if t.startswith(fn, pos):
                m = _ATTR.match(t, pos + len(fn))
                if m and t.startswith(")", m.end()):
                    alts.append((Node(kind, column=_attr_name(m), column_ref=m.group(0)), m.end() + 1))
        if t.startswith("(", pos):
            for left, e in (yield pos + 1):
                if len(alts) >= self.max_readings:  # the readings kept at a position
                    break
                for word, kind in ((" AND ", "and"), (" OR ", "or")):
                    if t.startswith(word, e):
                        for right, e2 in (yield e + len(word)):
                            if len(alts) >= self.max_readings:  # the readings kept at a position
                                break
                            if t.startswith(")", e2):
                                alts.append((self.node(kind, (left, right), pos), e2 + 1))
            m = _ATTR.match(t, pos + 1)
            cast = None if m else _CAST_DECIMAL.match(t, pos + 1)
            if cast is not None:
                m = _ATTR.fullmatch(cast.group("attr"))
            if m:
                after = cast.end() if cast is not None else m.end()
                cast_to = "" if cast is None else f"decimal({cast.group('p')},{cast.group('s')})"
                for op in ("<=>", "<=", ">=", "=", "<", ">"):
                    head = f" {op} "
                    if t.startswith(head, after):
                        lit = after + len(head)
                        alts += [(Node("cmp", column=_attr_name(m), column_ref=m.group(0), op=op,
                                       values=(t[lit:c],), text=cast_to), c + 1) for c in self.closes(lit)]
                        break
        m = _ATTR.match(t, pos)
        if m:
            infix = _INFIX.match(t, m.end())
            if t.startswith(" IN (", m.end()):
                lit = m.end() + 5
                for c in self.closes(lit):
                    body = t[lit:c]
                    alts.append((Node("in", column=_attr_name(m), column_ref=m.group(0), values=tuple(body.split(","))),
                                 c + 1))
            elif t.startswith(" INSET ", m.end()):
                lit = m.end() + 7
                # the values run to where the item ends: any ", " or the list's close may be that end
                ends = [i.start() for i in self.item_start.finditer(t, lit)][: self.max_readings]
                if t.endswith("]"):
                    ends.append(len(t) - 1)
                for c in ends:
                    alts.append((Node("in", column=_attr_name(m), column_ref=m.group(0),
                                      values=tuple(t[lit:c].split(", "))), c))
            elif infix is not None:
                # LIKE / RLIKE print without brackets, their pattern raw: it may end wherever a filter may
                alts += [(Node("unknown", text=t[pos:c], column_ref=m.group(0)), c) for c in self._item_ends(infix.end())]
            elif self.item_end.match(t, m.end()):
                alts.append((Node("bool", column=_attr_name(m), column_ref=m.group(0)), m.end()))  # a boolean column
        if t.startswith("StartsWith(", pos):
            m = _ATTR.match(t, pos + 11)
            if m and t.startswith(", ", m.end()):
                lit = m.end() + 2
                alts += [(Node("prefix", column=_attr_name(m), column_ref=m.group(0), values=(t[lit:c],)), c + 1)
                         for c in self.closes(lit)]
        m = _DPP.match(t, pos)
        if m:  # a dynamic pruning subquery's placeholder: not a literal filter
            alts.append((Node("unknown", text=m.group(0)), m.end()))
        if not alts:
            alts = self._opaque(pos)
        return alts

    def _item_ends(self, start: int) -> list[int]:
        """Where a raw text from ``start`` may end: before a ``)``, ``]``, `` AND ``, `` OR `` or the list's
        separator."""
        t = self.text
        ends: list[int] = []
        for m in self.item_end.finditer(t, start):
            ends.append(m.start())
            if len(ends) >= self.max_readings:
                break
        return ends

    def _opaque(self, pos: int) -> Alternatives:
        """Something not understood: a call or parenthesised text up to any closing bracket (unknown)."""
        t = self.text
        m = _OPAQUE_START.match(t, pos)
        if not m:
            return []
        return [(Node("unknown", text=t[pos:c + 1]), c + 1) for c in self.closes(m.end())]

    # V1 sources.Filter -------------------------------------------------------------------------------
    def _v1_expr(self, pos: int) -> Rule:
        t = self.text
        alts: Alternatives = []
        m = _V1_CALL.match(t, pos)
        if not m:
            return []
        fn, inner = m.group(1), m.end()
        if fn in ("And", "Or"):
            for left, e in (yield inner):
                if len(alts) >= self.max_readings:  # the readings kept at a position
                    break
                if t.startswith(",", e):
                    for right, e2 in (yield e + 1):
                        if len(alts) >= self.max_readings:  # the readings kept at a position
                            break
                        if t.startswith(")", e2):
                            alts.append((self.node(fn.lower(), (left, right), pos), e2 + 1))
        elif fn == "Not":
            negated = yield inner
            alts += [(self.node("not", (n,), pos), e + 1) for n, e in negated if t.startswith(")", e)]
        elif fn in ("IsNull", "IsNotNull"):
            n = _V1_NAME.match(t, inner)
            if n and t.startswith(")", n.end()):
                alts.append((Node(fn.lower(), column=_v1_name(n.group("name"))), n.end() + 1))
        elif fn in _V1_OPS:
            n = _V1_NAME.match(t, inner)
            if n and t.startswith(",", n.end()):
                lit = n.end() + 1
                alts += [(Node("cmp", column=_v1_name(n.group("name")), op=_V1_OPS[fn], values=(t[lit:c],)), c + 1)
                         for c in self.closes(lit)]
        elif fn == "StringStartsWith":
            n = _V1_NAME.match(t, inner)
            if n and t.startswith(",", n.end()):
                lit = n.end() + 1
                alts += [(Node("prefix", column=_v1_name(n.group("name")), values=(t[lit:c],)), c + 1)
                         for c in self.closes(lit)]
        elif fn == "In":
            n = _V1_NAME.match(t, inner)
            if n and t.startswith(", [", n.end()):
                lit = n.end() + 3
                alts += [(Node("in", column=_v1_name(n.group("name")), values=tuple(t[lit:c].split(","))), c + 2)
                         for c in self.closes(lit, "])")]
        if not alts:  # StringContains, StringEndsWith, AlwaysTrue, ...: unknown
            alts = [(Node("unknown", text=t[pos:c + 1]), c + 1) for c in self.closes(inner)]
        return alts

    # lists -------------------------------------------------------------------------------------------
    def readings(self, pos: int, sep: str, close: str) -> list[list[Node]]:
        """Every reading of ``item (sep item)* close`` from ``pos`` to the end of the text."""
        t = self.text
        out: list[list[Node]] = []
        # depth first, alternatives in order (no recursion: a list may have thousands of items)
        todo: list[tuple[Node | None, int, list[Node]]] = [(None, pos, [])]
        while todo and len(out) < self.max_readings:
            node, e, acc = todo.pop()
            if node is None:  # the items from e on
                todo.extend((n, end, acc) for n, end in reversed(self.expr(e)))
            elif t.startswith(close, e) and e + len(close) == len(t):
                out.append([*acc, node])
            elif t.startswith(sep, e):
                todo.append((None, e + len(sep), [*acc, node]))
        for reading in out:  # the list is an AND of its items: its levels too
            if len(reading) > 1 and max(n.depth if n.kind == "and" else n.depth + 1 for n in reading) > MAX_DEPTH:
                raise too_deep(self.shown, self.offset + pos)
        if len(out) > 1:
            # a literal holding one of this list's own attribute references (name#id) is a misreading:
            # Catalyst's ids are the plan's, not text a user's literal holds; dropped while another reading stays
            attrs = {m.group(0) for reading in out for n in reading for m in _ATTR.finditer(_structure(n))}
            plausible = [r for r in out if not any(a in v for n in r for v in _literals(n) for a in attrs)
                         and not any(_swallows(n, attrs, self.item_start) for n in r)]
            out = plausible or out
        return out


def _swallows(node: Node, attrs: set[str], item_start: re.Pattern[str]) -> bool:
    """Whether an unknown part runs on over what reads as a next item of the list holding one of its
    attribute references (``(cast(id#2 as string) = 5), (price#3 > 1.5)`` read as one part)."""
    for n in walk(node):
        if n.kind != "unknown":
            continue
        for m in item_start.finditer(n.text):
            rest = n.text[m.end():]
            if any(a in rest for a in attrs):
                return True
    return False


def _literals(node: Node) -> list[str]:
    return [v for n in walk(node) for v in n.values]


def _structure(node: Node) -> str:
    """The attribute references a parsed filter holds outside its literals."""
    return " ".join(n.column_ref for n in walk(node) if n.column_ref)


def _attr_name(m: re.Match[str]) -> str:
    name = m.group("name")
    if name.startswith("`"):
        name = name[1:-1]
    return name + m.group("field")


def _v1_name(name: str) -> str:
    if name.startswith("`"):
        return name[1:-1].replace("``", "`")
    return name


def parse_list(text: str, v1: bool = False, sep: str = ", ") -> list[list[Node]]:
    """Every reading of a printed filter list ``[f1, f2, ...]`` (Catalyst) or ``[F1, F2]`` (V1), items
    separated by ``sep``; empty when the text reads no way at all. A list nested deeper than
    ``sarg.errors.MAX_DEPTH`` levels raises that limit's :class:`sarg.SargSyntaxError`."""
    text = text.strip()
    if not text.startswith("[") or not text.endswith("]") or len(text) > _MAX_TEXT:
        return []
    if text == "[]":
        return [[]]
    inner = text[1:]
    if inner.startswith("Set("):  # Spark 4's driver log: [Set(...)] is not a filter list form used in metadata
        return []
    parser = _Parser(inner, v1, text, 1, sep)
    return parser.readings(0, sep, "]")


# ------------------------------------------------------------------------------------------------ HiveQL
def hiveql_identifier(name: str) -> str:
    """A column name as HiveQL text: plain where it is a plain identifier, else back-quoted as one name."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return name
    return "`" + name.replace("`", "``") + "`"


def _base(hive_type: str) -> str:
    return hive_type.lower().split("(", 1)[0].strip()


def _literal(raw: str, hive_type: str) -> str | None:
    """A raw printed literal as HiveQL literal text of the column's type, or None when it does not read so.
    A decimal column's literal is written without an exponent (HiveQL reads it exactly for a decimal column); a
    double's ``NaN`` and infinities as casts of their text (Spark's NaN, equal to itself)."""
    base = _base(hive_type)
    if base in ("tinyint", "smallint", "int", "integer", "bigint"):
        return raw if _INT.match(raw) else None
    if base in ("float", "double"):
        if raw in ("NaN", "Infinity", "-Infinity"):
            return f"CAST('{raw}' AS DOUBLE)"
        return raw if _NUM.match(raw) else None
    if base == "decimal":
        return decimal_hiveql(raw)
    if base in ("string", "varchar", "char"):
        return "'" + raw.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if base == "date":
        return f"DATE '{raw}'" if _DATE.match(raw) else None
    if base == "timestamp":
        return f"TIMESTAMP '{raw}'" if _TS.match(raw) else None
    if base == "boolean":
        return raw if raw in ("true", "false") else None
    return None


def decimal_hiveql(raw: str) -> str | None:
    """A printed decimal (``BigDecimal.toString``: ``10.250``, ``-1.00E-7``) as HiveQL number text without an
    exponent (``10.250``, ``-0.000000100``), which HiveQL reads exactly for a decimal column (never through a
    double); None when it is not one, or too far from any decimal(38) value."""
    if not _NUM.match(raw):
        return None
    value = Decimal(raw)
    if value and not -80 <= value.adjusted() <= 80:
        return None
    return format(value, "f")


def to_hiveql(node: Node, types: Mapping[str, str], v1: bool = False) -> str | None:
    """The HiveQL text of one parsed filter (None: unknown); an unknown part inside an AND / OR is written
    ``unknown()``."""
    return render(node, partial(_leaf_hiveql, types=types, v1=v1))


def _leaf_hiveql(node: Node, types: Mapping[str, str], v1: bool) -> str | None:
    kind = node.kind
    if kind == "unknown" or not node.column:
        return None
    found = find_column(types, node.column)
    if found is None:
        return None
    name, hive_type = found
    col = hiveql_identifier(name)
    base = _base(hive_type)
    if kind == "isnull":
        return f"{col} IS NULL"
    if kind == "isnotnull":
        return f"{col} IS NOT NULL"
    if kind == "isnan":  # Spark's isnan: NaN only, never NULL (HiveQL reads it as col <=> NaN)
        return f"isnan({col})" if base in ("float", "double") else None
    if kind == "bool":  # a boolean column as a filter: HiveQL's bare column is the same (EQUALS col true)
        return col if hive_type.strip().lower() == "boolean" else None
    if kind == "prefix":  # a LIKE of exactly the strings starting with the literal (sarg.prefix)
        if base not in ("string", "varchar"):
            return None
        return f"{col} LIKE {_literal(like_pattern(node.values[0]), hive_type)}"
    if v1 and base == "timestamp":
        return None  # java.sql.Timestamp.toString: the JVM's zone, not the session's
    if kind == "cmp" and node.text and not _value_preserving_cast(node.text, hive_type):
        return None
    values = list(node.values)
    if kind == "in" and base in ("string", "varchar", "char") and len(values) > 1:
        # "x,y,z" may be the values x, y, z or "x,y", z or x, "y,z" or "x,y,z": every run of pieces is a
        # possible value, so all of them are (the IN holds the true ones among others: never drops a row)
        if len(values) > 12:
            return None
        values = [",".join(values[i:j]) for i in range(len(values)) for j in range(i + 1, len(values) + 1)]
    lits = [_literal(v, hive_type) for v in values]
    if not lits or any(x is None for x in lits):
        return None
    if kind == "cmp":
        return f"{col} {_OPS[node.op]} {lits[0]}"
    if kind == "in":
        return f"{col} IN ({', '.join(x for x in lits if x is not None)})"
    return None


_DECIMAL_TYPE = re.compile(r"decimal\((\d+),(\d+)\)")


def _value_preserving_cast(target: str, hive_type: str) -> bool:
    """Whether Spark's ``cast(col as <target>)`` of a ``hive_type`` column (Spark widens a decimal column so to
    compare it with a literal of more scale) is the column's value or null: a decimal target with at least the
    column's scale. Null (an overflow) only ever removes rows, so the comparison on the column itself keeps every
    row the cast one does."""
    t, c = _DECIMAL_TYPE.fullmatch(target), _DECIMAL_TYPE.fullmatch(hive_type.replace(" ", "").lower())
    return t is not None and c is not None and int(t.group(2)) >= int(c.group(2))


def _impossible(node: Node, types: Mapping[str, str]) -> bool:
    for n in walk(node):
        if n.kind == "unknown":
            depth = 0
            for ch in n.text:
                depth += 1 if ch == "(" else -1 if ch == ")" else 0
                if depth < 0:
                    return True
            if depth != 0:
                return True
            continue
        if n.kind not in ("cmp", "in") or not n.column:
            continue
        found = find_column(types, n.column)
        if found is None:
            continue
        base = _base(found[1])
        if base in ("string", "varchar", "char", "binary") or "<" in found[1]:
            continue
        if any(_literal(v, found[1]) is None for v in n.values):
            return True
    return False


def describe(node: Node) -> str:
    """A short form of a parsed filter, for messages."""
    text = render(node, _describe_leaf)
    assert text is not None
    return text


def _describe_leaf(node: Node) -> str:
    kind = node.kind
    if kind == "unknown":
        return node.text
    if kind in ("isnull", "isnotnull", "isnan"):
        return f"{kind}({node.column})"
    if kind == "bool":
        return node.column
    if kind == "in":
        return f"{node.column} IN ({','.join(node.values)})"
    if kind == "prefix":
        return f"StartsWith({node.column}, {node.values[0]})"
    column = f"cast({node.column} as {node.text})" if node.text else node.column
    return f"({column} {node.op} {node.values[0]})"


def translate_lists(lists: Sequence[tuple[str, bool] | tuple[str, bool, str]], types: Mapping[str, str],
              keep: Callable[[Node], bool] | None = None) -> Translated:
    """The conjunction of printed filter lists (each ``(text, is_v1)``), typed by ``types``, as HiveQL: the
    conjuncts every reading of a list agrees on; the rest counted unknown and listed (a whole conjunct, or the
    parts of one written ``unknown()``). V1 lists beside Catalyst ones (a scan's PushedFilters beside its
    DataFilters) are a cross-check: what they say for certain is added (each is implied by the Catalyst
    filters), what they leave unknown is not counted again. A list nested deeper than ``sarg.errors.MAX_DEPTH``
    levels is not read (its files kept), with that limit's error as the reason."""
    conjuncts: list[str] = []
    unknown_texts: list[str] = []
    said: list[str | None] = []  # each unknown text's HiveQL in the first reading (None: none)
    unread: list[str] = []
    reasons: list[str] = []
    catalyst = any(not item[1] for item in lists)
    for item in lists:
        text, v1 = item[0], item[1]
        counted = not (v1 and catalyst)
        try:
            readings = parse_list(text, v1, item[2] if len(item) > 2 else ", ")
            why = "a form not understood"
        except SargSyntaxError as exc:
            readings, why = [], exc.reason
        if not readings:
            if text.strip() not in ("", "[]") and counted:
                unknown_texts.append(text.strip())
                said.append(None)
                unread.append(text.strip())
                reasons.append(why)
            continue
        if len(readings) > 1:
            # a reading whose literal cannot be its column's value (Spark printed a value of that type), or
            # whose unknown part has unbalanced brackets (Spark prints calls whole), is not what was printed
            possible = [r for r in readings if not any(_impossible(n, types) for n in r)]
            readings = possible or readings
        per_reading: list[list[str | None]] = []
        parts: list[list[str]] = []  # the first reading's unknown parts, per item
        for n_reading, items in enumerate(readings):
            texts: list[str | None] = []
            for n in items:
                unknown_parts: list[str] = []
                texts.append(render(n, partial(_leaf_hiveql, types=types, v1=v1), unknown_parts, describe)
                             if keep is None or keep(n) else None)
                if n_reading == 0:
                    parts.append(unknown_parts)
            per_reading.append(texts)
        first = readings[0]
        common = set.intersection(*({h for h in r if h is not None} for r in per_reading))
        for node, h, inner in zip(first, per_reading[0], parts, strict=True):
            if h is not None and h in common:
                if h not in conjuncts:
                    conjuncts.append(h)
                    if counted:  # the parts of it written unknown()
                        unknown_texts.extend(inner)
                        said.extend([None] * len(inner))
            elif counted:
                unknown_texts.append(describe(node))
                said.append(h)
    # what a V1 cross-check said for certain is not unknown
    unknown_texts = [t for t, h in zip(unknown_texts, said, strict=True) if h is None or h not in conjuncts]
    hiveql = " AND ".join(conjuncts) if conjuncts else None
    return Translated(hiveql, len(unknown_texts), conjuncts, unknown_texts, unread, reasons)
