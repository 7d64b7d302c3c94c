"""Typed leaves from their printed text: the per-leaf work both SARG readers share (``sarg.grammar``, lark's own
parser, the reference; ``sarg.fastpath``, the fast driver over the same tables).

- literal typing: :func:`convert` (a literal's text as a value of a type), :func:`infer_type` (the type printed
  literals most plausibly have, without a schema), :func:`make_leaf` (one leaf's literal text typed);
- whether a leaf's text may have been misread (a string literal holding parentheses: :func:`misreadable`);
- leaf numbering in the inline form (:func:`number_leaf`: equal leaves share an id);
- the leaf cache: typed leaves kept by their text (``LEAF_CACHE_SIZE``; :func:`clear_cache` empties it), since
  logs repeat the same leaves. Column types are looked up with ``sarg.schema.lookup`` (exact name, else the one
  case-insensitive match).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

from sarg.errors import SargSyntaxError
from sarg.literals import Literal, Timestamp, UnknownLiteral, parse_decimal
from sarg.model import DoubleReading, ExpressionTree, Operator, PredicateLeaf, Type
from sarg.schema import ColumnType, lookup

_LONG_RE = re.compile(r"-?\d+")
_DOUBLE_RE = re.compile(r"-?(?:\d+\.\d+(?:E-?\d+)?|Infinity)|NaN")
_NUMBER_RE = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|-?Infinity|NaN")
_DECIMAL_RE = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TS = r"\d{4,}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,9})?"
_TS_RE = re.compile(_TS)
_TS_LIST_RE = re.compile(rf"(?:{_TS}|null)(?: (?:{_TS}|null))*")
_TS_TOKEN_RE = re.compile(rf"{_TS}|null")
_DYNAMIC_NAME_RE = re.compile(r"DynamicValue\(\w+\)")
_LEAF_RE = re.compile(r"\(([A-Z][A-Z_]*) ([^\s()]+)(?: (.*))?\)", re.S)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


# -- literal typing -----------------------------------------------------------------------------------------

_STRING, _LONG, _FLOAT, _DECIMAL = Type.STRING, Type.LONG, Type.FLOAT, Type.DECIMAL
_DATE, _TIMESTAMP, _BOOLEAN = Type.DATE, Type.TIMESTAMP, Type.BOOLEAN
_IS_NULL, _IN, _BETWEEN = Operator.IS_NULL, Operator.IN, Operator.BETWEEN


def convert(text: str, type_: Type) -> Literal:
    """One literal's text as a value of ``type_`` (an UnknownLiteral when it does not convert)."""
    if text.startswith("DynamicValue(") and text.endswith(")") and len(text) >= 14:  # DynamicValue(...)
        return UnknownLiteral(text, "a dynamic value (semijoin) is only known at run time")
    if type_ is _STRING:
        return text
    try:
        if type_ is _LONG:
            if not _LONG_RE.fullmatch(text):
                raise ValueError(f"not an integer: {text!r}")
            value = int(text)
            if not _LONG_MIN <= value <= _LONG_MAX:
                raise ValueError(f"out of the LONG range: {text}")
            return value
        if type_ is _FLOAT:
            if not _NUMBER_RE.fullmatch(text):
                raise ValueError(f"not a number: {text!r}")
            return float(text)
        if type_ is _DECIMAL:
            if not _DECIMAL_RE.fullmatch(text):
                raise ValueError(f"not a decimal: {text!r}")
            return parse_decimal(text)
        if type_ is _DATE:
            if not _DATE_RE.fullmatch(text):
                raise ValueError(f"not a date: {text!r}")
            return dt.date.fromisoformat(text)
        if type_ is _TIMESTAMP:
            return Timestamp.parse(text)
        if text == "true" or text == "false":
            return text == "true"
        raise ValueError(f"not a boolean: {text!r}")
    except (ValueError, ArithmeticError) as exc:
        return UnknownLiteral(text, str(exc))


def infer_type(texts: Sequence[str]) -> Type:
    """The SARG type the printed literals most plausibly have, without a schema."""
    values = [t for t in texts if t != "null"]
    if len(values) == 1:
        return _infer_one(values[0])
    if not values:
        return _STRING
    if all(_LONG_RE.fullmatch(t) for t in values):
        if all(_LONG_MIN <= int(t) <= _LONG_MAX for t in values):
            return _LONG
        return _DECIMAL
    if all(_DOUBLE_RE.fullmatch(t) or _LONG_RE.fullmatch(t) for t in values):
        return _FLOAT
    if all(_TS_RE.fullmatch(t) for t in values):
        return _TIMESTAMP
    if all(_DATE_RE.fullmatch(t) for t in values):
        return _DATE
    if all(t in ("true", "false") for t in values):
        return _BOOLEAN
    return _STRING  # DynamicValue(...) too


def _infer_one(text: str) -> Type:
    """``infer_type`` of one literal that is not ``null``."""
    if _LONG_RE.fullmatch(text):
        return _LONG if _LONG_MIN <= int(text) <= _LONG_MAX else _DECIMAL
    if _DOUBLE_RE.fullmatch(text):
        return _FLOAT
    if _TS_RE.fullmatch(text):
        return _TIMESTAMP
    if _DATE_RE.fullmatch(text):
        return _DATE
    if text == "true" or text == "false":
        return _BOOLEAN
    return _STRING


_leaf = PredicateLeaf.trusted
#: a printed LONG or DECIMAL literal may be a double Hive's builder boxed (PredicateLeaf.double)
_EXACT_NUMBERS = frozenset({Type.LONG, Type.DECIMAL})
_NONE, _EITHER = DoubleReading.NONE, DoubleReading.EITHER


def make_leaf(op: Operator, column: str, region: str | None, column_type: ColumnType | None) -> PredicateLeaf:
    """Type one leaf's literal text (``region``: everything after ``column `` up to the closing parenthesis)."""
    declared = column_type.sarg_type if column_type is not None else None
    untyped = column_type is not None and declared is None  # a column whose type has no SARG type
    if op is _IS_NULL:
        if region is not None:
            raise ValueError("IS_NULL takes no literal")
        return _leaf(op, declared or _STRING, column)
    if op is not _IN and op is not _BETWEEN:
        if region is None:
            return _leaf(op, declared or _STRING, column)
        if untyped and column_type is not None:
            type_ = _STRING
            value: Literal = UnknownLiteral(region, f"column type {column_type.hive_type} has no SARG type")
        else:
            type_ = declared or (_STRING if region == "null" else _infer_one(region))
            value = convert(region, type_)
        ambiguous = type_ is _STRING and ("(" in region or ")" in region)
        return _leaf(op, type_, column, value, None, (region,), ambiguous, _EITHER if type_ in _EXACT_NUMBERS else _NONE)
    if region is None:
        raise ValueError(f"{op} needs literals")
    return _list_leaf(op, column, region, declared, untyped)


def _list_leaf(op: Operator, column: str, region: str, declared: Type | None, untyped: bool) -> PredicateLeaf:
    want = 2 if op is _BETWEEN else None
    if declared is _TIMESTAMP or (declared is None and not untyped and _TS_LIST_RE.fullmatch(region)):
        tokens = _TS_TOKEN_RE.findall(region) if _TS_LIST_RE.fullmatch(region) else region.split(" ")
        type_ = _TIMESTAMP
    else:
        tokens = region.split(" ")
        type_ = declared or infer_type(tokens)
    if untyped or (want is not None and len(tokens) != want and type_ is not _STRING):
        unknown = UnknownLiteral(region, "the list does not read as literals of the column's type")
        return _leaf(op, type_, column, None, (unknown,) * (want or 1), (region,))
    if type_ is _STRING:
        ambiguous = (len(tokens) > 1 if want is None else len(tokens) != want) or "(" in region or ")" in region
        literals: tuple[Literal | None, ...]
        if want is not None and len(tokens) != want:
            literals = (" ".join(tokens[:1]), " ".join(tokens[1:]))
        else:
            literals = tuple([convert(t, _STRING) for t in tokens])
        return _leaf(op, type_, column, None, literals, tuple(tokens), ambiguous)
    values = tuple([None if t == "null" else convert(t, type_) for t in tokens])
    return _leaf(op, type_, column, None, values, tuple(tokens), False, _EITHER if type_ in _EXACT_NUMBERS else _NONE)



# -- misreadable text, leaf numbering ---------------------------------------------------------------------

def misreadable(leaves: Sequence[PredicateLeaf]) -> bool:
    """Whether some literal text holds a parenthesis (other than a ``DynamicValue(...)``): then the text may
    have been cut at the wrong ``)`` and every leaf of the reading is in doubt."""
    return any(leaf_misreadable(leaf) for leaf in leaves)


def leaf_misreadable(leaf: PredicateLeaf) -> bool:
    for text in leaf.texts or ():
        if ("(" in text or ")" in text) and not all(
                _DYNAMIC_NAME_RE.fullmatch(t) for t in text.split(" ") if "(" in t or ")" in t):
            return True
    return False


_SCAN_LIMIT = 16  # up to this many leaves, a new body is compared with the earlier leaves; past it, hashed


def number_leaf(leaf_ids: dict[str | PredicateLeaf, int], leaves: list[PredicateLeaf], body: str,
            leaf: PredicateLeaf) -> int:
    """The id of an inline leaf: a body seen before keeps its id (a dict of str, cheap); a new body that reads
    as a leaf equal to an earlier one (another spelling) gets that one's id; else the next id."""
    leaf_id = leaf_ids.get(body)
    if leaf_id is None:
        n = len(leaves)
        if n < _SCAN_LIMIT:  # few leaves: compare with the earlier ones of the same column and operator
            column, operator = leaf.column, leaf.operator
            for i, other in enumerate(leaves):
                if other.column == column and other.operator is operator and other == leaf:
                    leaf_id = i
                    break
        else:  # many: by hash (a leaf's hash costs more than a few comparisons)
            if n == _SCAN_LIMIT:
                for i, other in enumerate(leaves):
                    leaf_ids.setdefault(other, i)
            leaf_id = leaf_ids.get(leaf)
        if leaf_id is None:
            leaf_id = n
            leaves.append(leaf)
            if n >= _SCAN_LIMIT:
                leaf_ids[leaf] = n
        leaf_ids[body] = leaf_id
    return leaf_id



# -- the leaf cache -----------------------------------------------------------------------------------------

_OPERATORS: dict[str, Operator] = dict(Operator.__members__)
_OPERATOR_NAMES = tuple(o.value for o in Operator)
LEAF_CACHE_SIZE = 8192
LeafEntry = tuple[str, ColumnType | None, PredicateLeaf, dict[int, ExpressionTree], bool]
_leaf_cache: dict[str, LeafEntry] = {}


def cached_leaf(text: str, schema: dict[str, ColumnType], body: str, pos: int) -> LeafEntry:
    """The leaf cache's entry for one ``(OPERATOR column literal...)`` body that starts at ``pos`` in ``text``:
    (column, its type, the typed leaf, LEAF tree nodes of that leaf by leaf id, whether its text may have been
    misread: see ``misreadable``).

    Typed leaves are kept by body text (with the column and its type, checked on every hit): logs repeat the
    same leaves, and leaves and trees are immutable. At most LEAF_CACHE_SIZE bodies (emptied when full)."""
    hit = _leaf_cache.get(body)
    if hit is not None:
        column_type = (schema.get(hit[0]) or lookup(schema, hit[0])) if schema else None
        if column_type is hit[1] or column_type == hit[1]:
            return hit
    m = _LEAF_RE.fullmatch(body)
    if m is None:  # pragma: no cover - the grammar only lets well-formed bodies through
        raise SargSyntaxError("malformed leaf", text, pos)
    op_name, column, region = m.groups()
    op = _OPERATORS.get(op_name)
    if op is None:
        raise SargSyntaxError(f"unknown operator {op_name}", text, pos + 1, _OPERATOR_NAMES)
    column_type = lookup(schema, column) if schema else None
    try:
        leaf = make_leaf(op, column, region, column_type)
    except ValueError as exc:
        raise SargSyntaxError(str(exc), text, pos) from None
    if len(_leaf_cache) >= LEAF_CACHE_SIZE:
        _leaf_cache.clear()
    misread = region is not None and ("(" in region or ")" in region) and leaf_misreadable(leaf)
    entry = _leaf_cache[body] = (column, column_type, leaf, {}, misread)
    return entry


def read_leaf(text: str, schema: dict[str, ColumnType], body: str, pos: int) -> PredicateLeaf:
    """The typed leaf of one ``(OPERATOR column literal...)`` body that starts at ``pos`` in ``text``."""
    return cached_leaf(text, schema, body, pos)[2]


def clear_cache() -> None:
    """Forget the typed leaves kept from earlier parses (benchmarks use it to measure the cold path)."""
    _leaf_cache.clear()


__all__ = ["LEAF_CACHE_SIZE", "clear_cache", "convert", "infer_type", "make_leaf"]
