"""Spark's data source filters as a SearchArgument, with Spark's ORC conversion semantics."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, make_dataclass
from typing import Any

import sarg
from sarg.schema import find_column


@dataclass(frozen=True)
class AndFilter:
    """Both filters (Spark's ``And``, which pyspark's data source filter classes lack)."""

    left: Any
    right: Any


@dataclass(frozen=True)
class OrFilter:
    """Either filter (Spark's ``Or``)."""

    left: Any
    right: Any


@dataclass(frozen=True)
class AsDouble:
    """A comparison (or IN) whose column Spark casts to double to compare it with double literals (``amount >
    1e9`` on a decimal or bigint column is ``cast(amount as double) > 1.0E9``), which Spark's data source filters
    cannot say: ``filter`` holds the column and the double literals."""

    filter: Any


def filter_text(filt: sarg.SearchArgument | None) -> str | None:
    """A filter for scan reports: the SearchArgument as Hive prints it, and its prefix conditions."""
    if filt is None:
        return None
    return " AND ".join([str(filt), *map(str, filt.prefixes)]) if filt.prefixes else str(filt)


def _leaf(name: str, value: bool = True) -> type:
    """One of Spark's data source filter classes: its own class (none is a subclass of another, so that an
    ``isinstance`` test matches exactly one), fields ``attribute`` and, if ``value``, ``value``."""
    fields: list[tuple[str, Any]] = [("attribute", tuple[str, ...])] + ([("value", Any)] if value else [])
    return make_dataclass(name, fields, frozen=True)


class _Filters:
    """Spark's data source filter classes for a pyspark that has none (4.0 pushes no filter to Python data sources
    and has no ``pyspark.sql.datasource.EqualTo`` etc.): the same names and fields, for the file index's filters."""

    EqualTo = _leaf("EqualTo")
    EqualNullSafe = _leaf("EqualNullSafe")
    LessThan = _leaf("LessThan")
    LessThanOrEqual = _leaf("LessThanOrEqual")
    GreaterThan = _leaf("GreaterThan")
    GreaterThanOrEqual = _leaf("GreaterThanOrEqual")
    In = _leaf("In")
    IsNull = _leaf("IsNull", value=False)
    IsNotNull = _leaf("IsNotNull", value=False)
    StringStartsWith = _leaf("StringStartsWith")
    Not = make_dataclass("Not", [("child", Any)], frozen=True)


def filter_classes() -> Any:
    """pyspark's data source filter classes (``pyspark.sql.datasource``, pyspark 4.1+), else the same names
    defined here (pyspark 4.0)."""
    from pyspark.sql import datasource as ds

    return ds if hasattr(ds, "IsNotNull") else _Filters


def spark_filters_to_sarg(filters: Sequence[Any], types: dict[str, sarg.Type]) -> tuple[sarg.SearchArgument | None,
                                                                                        list[Any]]:
    """Spark's pushed filters (conjuncts) as one SearchArgument, with Spark's ORC conversion semantics
    (``types``: column name -> SARG type; names are matched by :func:`sarg.schema.find_column`):
    > is NOT <=, >= is NOT <, IsNotNull is NOT IS_NULL, Not(f) is NOT f. A conjunct ``StringStartsWith`` on a
    string column (or its ``Not``), which a SearchArgument has no leaf for, becomes one of the SearchArgument's
    prefix conditions (:class:`sarg.PrefixCondition`). Returns the SearchArgument and the filters that could not
    be converted (Spark keeps applying those)."""
    ds = filter_classes()
    builder = sarg.builder()
    rejected: list[Any] = []
    converted = 0
    builder.start_and()

    def column(f: Any) -> str:
        return ".".join(f.attribute)

    def literal(value: Any, t: sarg.Type) -> Any:
        import datetime as dt
        from decimal import Decimal

        if value is None:
            return None
        if t is sarg.Type.LONG and isinstance(value, int) and not isinstance(value, bool):
            return value
        if t is sarg.Type.FLOAT and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if t is sarg.Type.STRING and isinstance(value, str):
            return value
        if t is sarg.Type.BOOLEAN and isinstance(value, bool):
            return value
        if t is sarg.Type.DECIMAL and isinstance(value, (Decimal, int)) and not isinstance(value, bool):
            return Decimal(value)
        if t is sarg.Type.DATE and isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return value
        if t is sarg.Type.TIMESTAMP and isinstance(value, dt.datetime):
            if value.tzinfo is not None:
                value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
            return sarg.Timestamp.from_datetime(value)
        raise ValueError(f"literal {value!r} does not fit {t}")

    def _leaf_into(b: sarg.Builder, f: Any) -> bool:
        double = sarg.DoubleReading.NONE
        if isinstance(f, AsDouble):
            f, double = f.filter, sarg.DoubleReading.DOUBLE
        found = find_column(types, column(f)) if hasattr(f, "attribute") else None
        if found is None:  # not a column of the table, or an ambiguous name: Spark applies it, nothing prunes
            return False
        name, t = found
        if double is not sarg.DoubleReading.NONE:
            return _double_leaf_into(b, f, name, t)
        try:
            if isinstance(f, ds.EqualTo):
                b.equals(name, t, literal(f.value, t))
            elif isinstance(f, ds.EqualNullSafe):
                b.null_safe_equals(name, t, literal(f.value, t))
            elif isinstance(f, ds.LessThan):
                b.less_than(name, t, literal(f.value, t))
            elif isinstance(f, ds.LessThanOrEqual):
                b.less_than_equals(name, t, literal(f.value, t))
            elif isinstance(f, ds.GreaterThan):
                b.start_not().less_than_equals(name, t, literal(f.value, t)).end()
            elif isinstance(f, ds.GreaterThanOrEqual):
                b.start_not().less_than(name, t, literal(f.value, t)).end()
            elif isinstance(f, ds.In):
                b.in_(name, t, *[literal(v, t) for v in f.value])
            elif isinstance(f, ds.IsNull):
                b.is_null(name, t)
            elif isinstance(f, ds.IsNotNull):
                b.start_not().is_null(name, t).end()
            else:
                return False
        except (ValueError, sarg.SargError):
            return False
        return True

    def _double_leaf_into(b: sarg.Builder, f: Any, name: str, t: sarg.Type) -> bool:
        """A decimal or bigint column compared as a double: each literal boxed as Hive boxes a double (its Java
        text; a bigint only an integral one) into a leaf that reads DOUBLE (judged by the values whose double
        compares like it); NaN, infinities and other columns: not converted."""
        from decimal import Decimal

        from sarg.literals import java_double_str

        def boxed(value: Any) -> Any:
            if not isinstance(value, float) or not math.isfinite(value):
                raise ValueError(f"{value!r} is not a finite double")
            if t is sarg.Type.DECIMAL:
                return Decimal(java_double_str(value))
            if t is sarg.Type.LONG and value.is_integer() and -(2**63) <= value < 2**63:
                return int(value)
            raise ValueError(f"{value!r} does not box to {t}")

        double = sarg.DoubleReading.DOUBLE
        try:
            if isinstance(f, ds.EqualTo):
                b.equals(name, t, boxed(f.value), double=double)
            elif isinstance(f, ds.EqualNullSafe):
                b.null_safe_equals(name, t, boxed(f.value), double=double)
            elif isinstance(f, ds.LessThan):
                b.less_than(name, t, boxed(f.value), double=double)
            elif isinstance(f, ds.LessThanOrEqual):
                b.less_than_equals(name, t, boxed(f.value), double=double)
            elif isinstance(f, ds.GreaterThan):
                b.start_not().less_than_equals(name, t, boxed(f.value), double=double).end()
            elif isinstance(f, ds.GreaterThanOrEqual):
                b.start_not().less_than(name, t, boxed(f.value), double=double).end()
            elif isinstance(f, ds.In):
                b.in_(name, t, *[boxed(v) for v in f.value], double=double)
            else:
                return False
        except (ValueError, sarg.SargError):
            return False
        return True

    understood: dict[int, bool] = {}

    def _convertible(f: Any) -> bool:
        """Whether every part of ``f`` converts (an AND / OR / NOT with a part that does not is unknown as a
        whole); each part judged once, so a chain of ORs costs its length."""
        known = understood.get(id(f))
        if known is None:
            if isinstance(f, (AndFilter, OrFilter)):
                known = _convertible(f.left) and _convertible(f.right)
            elif isinstance(f, ds.Not):
                known = _convertible(f.child)
            else:
                probe = sarg.builder()
                probe.start_and()
                known = _leaf_into(probe, f)
            understood[id(f)] = known
        return known

    def _emit_into(b: sarg.Builder, f: Any) -> bool:
        if not _convertible(f):
            return False
        if isinstance(f, (AndFilter, OrFilter)):
            b.start_or() if isinstance(f, OrFilter) else b.start_and()
            _emit_into(b, f.left)
            _emit_into(b, f.right)
            b.end()
        elif isinstance(f, ds.Not):
            b.start_not()
            _emit_into(b, f.child)
            b.end()
        else:
            _leaf_into(b, f)
        return True

    prefixes: dict[sarg.PrefixCondition, None] = {}

    def prefix_of(f: Any) -> sarg.PrefixCondition | None:
        """A conjunct ``StringStartsWith`` (or its ``Not``) on a string column, as a prefix condition."""
        negated = isinstance(f, ds.Not)
        inner = f.child if negated else f
        if not isinstance(inner, ds.StringStartsWith) or not isinstance(inner.value, str):
            return None
        found = find_column(types, column(inner))
        if found is None or found[1] is not sarg.Type.STRING:
            return None
        return sarg.PrefixCondition(found[0], inner.value, negated)

    conjuncts = list(filters)
    while any(isinstance(f, AndFilter) for f in conjuncts):  # an AND of conjuncts is more conjuncts
        conjuncts = [part for f in conjuncts for part in ((f.left, f.right) if isinstance(f, AndFilter) else (f,))]
    for f in conjuncts:
        prefix = prefix_of(f)
        if prefix is not None:
            prefixes.setdefault(prefix, None)
        elif _emit_into(builder, f):
            converted += 1
        else:
            rejected.append(f)
    if not converted and not prefixes:
        return None, rejected
    if not converted:
        builder.literal(sarg.TruthValue.YES_NO_NULL)
    builder.end()
    built = builder.build()
    return (dataclasses.replace(built, prefixes=tuple(prefixes)) if prefixes else built), rejected

