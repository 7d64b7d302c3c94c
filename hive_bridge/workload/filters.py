"""Spark's printed filters (Catalyst expressions and V1 ``sources.Filter`` case classes) as HiveQL filter text.

Spark prints literals raw: ``(name#12 = it's, x)``, ``EqualTo(name,a,b)``, ``In(id, [1,10,2])``. A printed
list of filters can therefore often be read in more than one way. Each list is parsed into *every* reading the
grammar admits (a literal may end at any closing bracket after which the text goes on as a filter would); a
conjunct is kept only when every reading has it, so a filter whose split is not certain is unknown — it keeps
files, as an unknown SearchArgument leaf does, and is counted.

Literals are typed by the table's column types (Hive type names, as :func:`hive_bridge.typemap.table_sarg_schema`
gives them); a literal that does not read as its column's type, a column the table lacks, a binary value, a
function of a column (``cast(id#1 as string)``), a dynamic pruning expression: unknown. ``StartsWith(s#1, ab)``
and V1's ``StringStartsWith(s,ab)`` on a string column are ``s LIKE 'ab%'`` (its wildcards escaped), which
prunes as a prefix where it is a conjunct of the whole filter. The
result is HiveQL filter text (read by :func:`sarg.parse_hiveql` like any other filter), where an unknown part
inside ``OR``/``NOT`` is written ``unknown()`` (a call the SearchArgument reads as "maybe").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from sarg.hiveql import MAX_DEPTH
from sarg.prefix import like_pattern
from sarg.schema import find_column

UNKNOWN_CALL = "unknown()"
_MAX_READINGS = 32
_MAX_TEXT = 200_000

_ATTR = re.compile(r"(?P<name>[A-Za-z_][\w$]*(?:\.[\w$]+)*|`[^`]+`)#(?P<id>\d+)L?(?P<field>(?:\.[A-Za-z_][\w$]*)*)")
_ITEM_START = re.compile(r", (?=\(|NOT |[A-Za-z_][\w$.]*\(|[A-Za-z_][\w$.]*#\d)")
_DPP = re.compile(r"dynamicpruning#\d+(?: \[[^\]]*\])?")
#: where an item of a Catalyst list not understood may end: the next item, a connective, a bracket
_ITEM_END = re.compile(r", | AND | OR |\)|\]\Z")
_WORD_OP = re.compile(r" (?:NOT )?[A-Za-z]+ ")
_V1_NAME = re.compile(r"(?P<name>`(?:[^`]|``)+`|[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)*)")
_INT = re.compile(r"-?\d+\Z")
_NUM = re.compile(r"-?\d+(?:\.\d+)?(?:[Ee][-+]?\d+)?\Z")
_DEC = re.compile(r"-?\d+(?:\.\d+)?\Z")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_TS = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,9})?\Z")
_OPS = {"=": "=", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "<=>": "<=>"}
_V1_OPS = {"EqualTo": "=", "EqualNullSafe": "<=>", "LessThan": "<", "LessThanOrEqual": "<=", "GreaterThan": ">",
           "GreaterThanOrEqual": ">="}


@dataclass(frozen=True)
class Node:
    """One parsed filter: ``kind`` and, by kind, its column, operator, raw literal(s) or children."""

    kind: str  # "and", "or", "not", "cmp", "in", "isnull", "isnotnull", "prefix" (StartsWith), "unknown"
    column: str = ""
    op: str = ""
    values: tuple[str, ...] = ()
    children: tuple[Node, ...] = ()
    text: str = ""  # of an unknown node: what it was
    column_ref: str = ""  # the attribute as printed (name#id), Catalyst only


@dataclass
class Translated:
    """The HiveQL text of a list of filters (None: nothing usable) and how many filters were unknown."""

    hiveql: str | None
    unknown: int = 0
    conjuncts: list[str] = field(default_factory=list)
    unknown_texts: list[str] = field(default_factory=list)
    #: whole lists that read no way at all (a form not understood, e.g. cut by a newline in a text log)
    unread: list[str] = field(default_factory=list)
    #: why the lists could not be read at all (nested deeper than :data:`MAX_DEPTH` levels), None when read
    error: str | None = None


class NestedTooDeep(ValueError):
    """A printed filter nested deeper than :data:`sarg.hiveql.MAX_DEPTH` levels (as the HiveQL reader refuses)."""

    def __init__(self) -> None:
        super().__init__(f"expression nested deeper than {MAX_DEPTH} levels")


# ------------------------------------------------------------------------------------------------ parsing
class _Parser:
    """All readings of one printed filter list (packrat: each rule at each position parsed once)."""

    def __init__(self, text: str, v1: bool) -> None:
        self.text = text
        self.v1 = v1
        self.memo: dict[tuple[str, int], list[tuple[Node, int]]] = {}
        self.depth = 0

    def expr(self, pos: int) -> list[tuple[Node, int]]:
        key = ("e", pos)
        hit = self.memo.get(key)
        if hit is None:
            self.memo[key] = []  # a left-recursive probe finds nothing
            self.depth += 1
            if self.depth > 2 * MAX_DEPTH:  # a NOT and its operand are two levels here, one in HiveQL
                raise NestedTooDeep()
            try:
                hit = self.memo[key] = self._dedupe(self._v1_expr(pos) if self.v1 else self._cat_expr(pos))
            finally:
                self.depth -= 1
        return hit

    @staticmethod
    def _dedupe(alts: list[tuple[Node, int]]) -> list[tuple[Node, int]]:
        seen: dict[tuple[Node, int], None] = {}
        for a in alts:
            seen.setdefault(a, None)
            if len(seen) >= _MAX_READINGS:
                break
        return list(seen)

    def _closes(self, start: int, closer: str = ")") -> list[int]:
        """Positions of ``closer`` at or after ``start``."""
        out: list[int] = []
        i = self.text.find(closer, start)
        while i >= 0 and len(out) < 4 * _MAX_READINGS:
            out.append(i)
            i = self.text.find(closer, i + 1)
        return out

    # Catalyst ------------------------------------------------------------------------------------------
    def _cat_expr(self, pos: int) -> list[tuple[Node, int]]:
        t = self.text
        alts: list[tuple[Node, int]] = []
        if t.startswith("NOT ", pos):
            alts += [(Node("not", children=(n,)), e) for n, e in self.expr(pos + 4)]
        for fn, kind in (("isnotnull(", "isnotnull"), ("isnull(", "isnull")):
            if t.startswith(fn, pos):
                m = _ATTR.match(t, pos + len(fn))
                if m and t.startswith(")", m.end()):
                    alts.append((Node(kind, column=_attr_name(m), column_ref=m.group(0)), m.end() + 1))
        if t.startswith("(", pos):
            for left, e in self.expr(pos + 1):
                for word, kind in ((" AND ", "and"), (" OR ", "or")):
                    if t.startswith(word, e):
                        for right, e2 in self.expr(e + len(word)):
                            if t.startswith(")", e2):
                                alts.append((Node(kind, children=(left, right)), e2 + 1))
            m = _ATTR.match(t, pos + 1)
            if m:
                for op in ("<=>", "<=", ">=", "=", "<", ">"):
                    head = f" {op} "
                    if t.startswith(head, m.end()):
                        lit = m.end() + len(head)
                        alts += [(Node("cmp", column=_attr_name(m), column_ref=m.group(0), op=op, values=(t[lit:c],)), c + 1)
                                 for c in self._closes(lit)]
                        break
        m = _ATTR.match(t, pos)
        if m:
            if t.startswith(" IN (", m.end()):
                lit = m.end() + 5
                for c in self._closes(lit):
                    body = t[lit:c]
                    alts.append((Node("in", column=_attr_name(m), column_ref=m.group(0), values=tuple(body.split(","))), c + 1))
            elif t.startswith(" INSET ", m.end()):
                lit = m.end() + 7
                # the values run to where the item ends: any ", " or the list's close may be that end
                ends = [i.start() for i in _ITEM_START.finditer(t, lit)][: _MAX_READINGS]
                if t.endswith("]"):
                    ends.append(len(t) - 1)
                for c in ends:
                    alts.append((Node("in", column=_attr_name(m), column_ref=m.group(0), values=tuple(t[lit:c].split(", "))), c))
        if t.startswith("StartsWith(", pos):
            m = _ATTR.match(t, pos + 11)
            if m and t.startswith(", ", m.end()):
                lit = m.end() + 2
                alts += [(Node("prefix", column=_attr_name(m), column_ref=m.group(0), values=(t[lit:c],)), c + 1)
                         for c in self._closes(lit)]
        m = _DPP.match(t, pos)
        if m:  # a dynamic pruning subquery's placeholder: not a literal filter
            alts.append((Node("unknown", text=m.group(0)), m.end()))
        if not alts:
            alts = self._opaque(pos)
        return alts

    def _opaque(self, pos: int) -> list[tuple[Node, int]]:
        """Something not understood: a call or parenthesised text up to any closing bracket, or an expression
        led by a column and a word (``o_comment#15 LIKE %special%requests%``, its literal raw like every other) up
        to wherever an item may end (unknown)."""
        t = self.text
        m = re.compile(r"[A-Za-z_][\w$]*\(|\(").match(t, pos)
        if m:
            return [(Node("unknown", text=t[pos:c + 1]), c + 1) for c in self._closes(m.end())]
        m = _ATTR.match(t, pos)
        if not m or not _WORD_OP.match(t, m.end()):  # a comparison (``id#1 = 5``) is printed in brackets
            return []
        ends = [e.start() for e, _ in zip(_ITEM_END.finditer(t, m.end()), range(4 * _MAX_READINGS), strict=False)]
        return [(Node("unknown", text=t[pos:e], column_ref=m.group(0)), e) for e in ends]

    # V1 sources.Filter -------------------------------------------------------------------------------
    def _v1_expr(self, pos: int) -> list[tuple[Node, int]]:
        t = self.text
        alts: list[tuple[Node, int]] = []
        m = re.compile(r"([A-Za-z]+)\(").match(t, pos)
        if not m:
            return []
        fn, inner = m.group(1), m.end()
        if fn in ("And", "Or"):
            for left, e in self.expr(inner):
                if t.startswith(",", e):
                    for right, e2 in self.expr(e + 1):
                        if t.startswith(")", e2):
                            alts.append((Node(fn.lower(), children=(left, right)), e2 + 1))
        elif fn == "Not":
            alts += [(Node("not", children=(n,)), e + 1) for n, e in self.expr(inner) if t.startswith(")", e)]
        elif fn in ("IsNull", "IsNotNull"):
            n = _V1_NAME.match(t, inner)
            if n and t.startswith(")", n.end()):
                alts.append((Node(fn.lower(), column=_v1_name(n.group("name"))), n.end() + 1))
        elif fn in _V1_OPS:
            n = _V1_NAME.match(t, inner)
            if n and t.startswith(",", n.end()):
                lit = n.end() + 1
                alts += [(Node("cmp", column=_v1_name(n.group("name")), op=_V1_OPS[fn], values=(t[lit:c],)), c + 1)
                         for c in self._closes(lit)]
        elif fn == "StringStartsWith":
            n = _V1_NAME.match(t, inner)
            if n and t.startswith(",", n.end()):
                lit = n.end() + 1
                alts += [(Node("prefix", column=_v1_name(n.group("name")), values=(t[lit:c],)), c + 1)
                         for c in self._closes(lit)]
        elif fn == "In":
            n = _V1_NAME.match(t, inner)
            if n and t.startswith(", [", n.end()):
                lit = n.end() + 3
                alts += [(Node("in", column=_v1_name(n.group("name")), values=tuple(t[lit:c].split(","))), c + 2)
                         for c in self._closes(lit, "])")]
        if not alts:
            alts = [(Node("unknown", text=t[pos:c + 1]), c + 1) for c in self._closes(inner)]
        return alts

    # lists -------------------------------------------------------------------------------------------
    def readings(self, pos: int, sep: str, close: str) -> list[list[Node]]:
        """Every reading of ``item (sep item)* close`` from ``pos`` to the end of the text."""
        t = self.text
        out: list[list[Node]] = []

        def walk(p: int, acc: list[Node]) -> None:
            for node, e in self.expr(p):
                if len(out) >= _MAX_READINGS:
                    return
                if t.startswith(close, e) and e + len(close) == len(t):
                    out.append([*acc, node])
                elif t.startswith(sep, e):
                    walk(e + len(sep), [*acc, node])

        walk(pos, [])
        if len(out) > 1:
            # a literal holding one of this list's own attribute references (name#id) is a misreading:
            # Catalyst's ids are the plan's, not text a user's literal holds; dropped while another reading stays
            attrs = {m.group(0) for reading in out for n in reading for m in _ATTR.finditer(_structure(n))}
            plausible = [r for r in out if not any(a in v for n in r for v in _literals(n) for a in attrs)
                         and not any(_swallows(n, attrs) for n in r)]
            out = plausible or out
        return out


def _swallows(node: Node, attrs: set[str]) -> bool:
    """Whether an unknown part runs on over what reads as a next item of the list holding one of its
    attribute references (``(cast(id#2 as string) = 5), (price#3 > 1.5)`` read as one part)."""
    if node.kind in ("and", "or", "not"):
        return any(_swallows(c, attrs) for c in node.children)
    if node.kind != "unknown":
        return False
    for m in _ITEM_START.finditer(node.text):
        rest = node.text[m.end():]
        if any(a in rest for a in attrs):
            return True
    return False


def _literals(node: Node) -> list[str]:
    return list(node.values) + [v for c in node.children for v in _literals(c)]


def _structure(node: Node) -> str:
    """The attribute references a parsed filter holds outside its literals."""
    if node.kind in ("and", "or", "not"):
        return " ".join(_structure(c) for c in node.children)
    return node.column_ref


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
    separated by ``sep``; empty when the text reads no way at all."""
    text = text.strip()
    if not text.startswith("[") or not text.endswith("]") or len(text) > _MAX_TEXT:
        return []
    if text == "[]":
        return [[]]
    inner = text[1:]
    if inner.startswith("Set("):  # Spark 4's driver log: [Set(...)] is not a filter list form used in metadata
        return []
    parser = _Parser(inner, v1)
    return parser.readings(0, sep, "]")


# ------------------------------------------------------------------------------------------------ HiveQL
def hiveql_identifier(name: str) -> str:
    """A column name as HiveQL text: plain where it is a plain identifier, else back-quoted as one name."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return name
    return "`" + name.replace("`", "``") + "`"


def _literal(raw: str, hive_type: str) -> str | None:
    """A raw printed literal as HiveQL literal text of the column's type, or None when it does not read so."""
    base = hive_type.lower().split("(", 1)[0].strip()
    if base in ("tinyint", "smallint", "int", "integer", "bigint"):
        return raw if _INT.match(raw) else None
    if base in ("float", "double"):
        return raw if _NUM.match(raw) else None
    if base == "decimal":
        return raw if _DEC.match(raw) else None
    if base in ("string", "varchar", "char"):
        return "'" + raw.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if base == "date":
        return f"DATE '{raw}'" if _DATE.match(raw) else None
    if base == "timestamp":
        return f"TIMESTAMP '{raw}'" if _TS.match(raw) else None
    if base == "boolean":
        return raw if raw in ("true", "false") else None
    return None


def to_hiveql(node: Node, types: Mapping[str, str], v1: bool = False) -> str | None:
    """The HiveQL text of one parsed filter (None: unknown)."""
    kind = node.kind
    if kind in ("and", "or"):
        parts = [to_hiveql(c, types, v1) for c in node.children]
        if kind == "and" and all(p is None for p in parts):
            return None
        if kind == "or" and any(p is None for p in parts) and all(p is None for p in parts):
            return None
        return "(" + f" {kind.upper()} ".join(p if p is not None else UNKNOWN_CALL for p in parts) + ")"
    if kind == "not":
        inner = to_hiveql(node.children[0], types, v1)
        return None if inner is None else f"NOT {inner}"
    if kind == "unknown" or not node.column:
        return None
    found = find_column(types, node.column)
    if found is None:
        return None
    name, hive_type = found
    col = hiveql_identifier(name)
    if kind == "isnull":
        return f"{col} IS NULL"
    if kind == "isnotnull":
        return f"{col} IS NOT NULL"
    if kind == "prefix":  # a LIKE of exactly the strings starting with the literal (sarg.prefix)
        if hive_type.lower().split("(", 1)[0].strip() not in ("string", "varchar"):
            return None
        return f"{col} LIKE {_literal(like_pattern(node.values[0]), hive_type)}"
    if v1 and hive_type.lower().startswith("timestamp"):
        return None  # java.sql.Timestamp.toString: the JVM's zone, not the session's
    values = list(node.values)
    if kind == "in" and hive_type.lower().split("(", 1)[0] in ("string", "varchar", "char") and len(values) > 1:
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


def _impossible(node: Node, types: Mapping[str, str]) -> bool:
    if node.kind in ("and", "or", "not"):
        return any(_impossible(c, types) for c in node.children)
    if node.kind == "unknown":
        depth = 0
        for ch in node.text:
            depth += 1 if ch == "(" else -1 if ch == ")" else 0
            if depth < 0:
                return True
        return depth != 0
    if node.kind not in ("cmp", "in") or not node.column:
        return False
    found = find_column(types, node.column)
    if found is None:
        return False
    base = found[1].lower().split("(", 1)[0].strip()
    if base in ("string", "varchar", "char", "binary") or "<" in found[1]:
        return False
    return any(_literal(v, found[1]) is None for v in node.values)


def describe(node: Node) -> str:
    """A short form of a parsed filter, for messages."""
    if node.kind == "unknown":
        return node.text
    if node.kind in ("and", "or"):
        return "(" + f" {node.kind.upper()} ".join(describe(c) for c in node.children) + ")"
    if node.kind == "not":
        return "NOT " + describe(node.children[0])
    if node.kind in ("isnull", "isnotnull"):
        return f"{node.kind}({node.column})"
    if node.kind == "in":
        return f"{node.column} IN ({','.join(node.values)})"
    if node.kind == "prefix":
        return f"StartsWith({node.column}, {node.values[0]})"
    return f"({node.column} {node.op} {node.values[0]})"


def translate(lists: Sequence[tuple[str, bool] | tuple[str, bool, str]], types: Mapping[str, str],
              keep: Callable[[Node], bool] | None = None) -> Translated:
    """The conjunction of printed filter lists (each ``(text, is_v1)``), typed by ``types``, as HiveQL: the
    conjuncts every reading of a list agrees on; the rest counted unknown. V1 lists beside Catalyst ones (a
    scan's PushedFilters beside its DataFilters) are a cross-check: what they say for certain is added (each is
    implied by the Catalyst filters), what they leave unknown is not counted again. Lists nested deeper than
    :data:`sarg.hiveql.MAX_DEPTH` levels are not read: ``error`` says so (as the HiveQL reader says it)."""
    try:
        return _translate(lists, types, keep)
    except NestedTooDeep as exc:
        return Translated(None, error=str(exc))
    except RecursionError:  # pragma: no cover - the depth guard comes first
        return Translated(None, error=f"expression nested deeper than {MAX_DEPTH} levels")


def _translate(lists: Sequence[tuple[str, bool] | tuple[str, bool, str]], types: Mapping[str, str],
               keep: Callable[[Node], bool] | None) -> Translated:
    conjuncts: list[str] = []
    unknown_texts: list[str] = []
    said: list[str | None] = []  # each unknown text's HiveQL in the first reading (None: none)
    unread: list[str] = []
    catalyst = any(not item[1] for item in lists)
    for item in lists:
        text, v1 = item[0], item[1]
        readings = parse_list(text, v1, item[2] if len(item) > 2 else ", ")
        counted = not (v1 and catalyst)
        if not readings:
            if text.strip() not in ("", "[]") and counted:
                unknown_texts.append(text.strip())
                said.append(None)
                unread.append(text.strip())
            continue
        if len(readings) > 1:
            # a reading whose literal cannot be its column's value (Spark printed a value of that type), or
            # whose unknown part has unbalanced brackets (Spark prints calls whole), is not what was printed
            possible = [r for r in readings if not any(_impossible(n, types) for n in r)]
            readings = possible or readings
        per_reading: list[list[str | None]] = []
        for items in readings:
            per_reading.append([to_hiveql(n, types, v1) if keep is None or keep(n) else None for n in items])
        first = readings[0]
        common = set.intersection(*({h for h in r if h is not None} for r in per_reading))
        for node, h in zip(first, per_reading[0], strict=True):
            if h is not None and h in common:
                if h not in conjuncts:
                    conjuncts.append(h)
            elif counted:
                unknown_texts.append(describe(node))
                said.append(h)
    # what a V1 cross-check said for certain is not unknown
    unknown_texts = [t for t, h in zip(unknown_texts, said, strict=True) if h is None or h not in conjuncts]
    hiveql = " AND ".join(conjuncts) if conjuncts else None
    return Translated(hiveql, len(unknown_texts), conjuncts, unknown_texts, unread)
