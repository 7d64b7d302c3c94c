"""Spark's data source filters as a SearchArgument, with Spark's ORC conversion semantics."""

from __future__ import annotations

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
    > is NOT <=, >= is NOT <, IsNotNull is NOT IS_NULL, Not(f) is NOT f. Returns the SearchArgument and the
    filters that could not be converted (Spark keeps applying those)."""
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

    def _emit_into(b: sarg.Builder, f: Any) -> bool:
        if isinstance(f, (AndFilter, OrFilter)):  # both sides understood, or the whole is unknown
            probe = sarg.builder()
            probe.start_and()
            if not (_emit_into(probe, f.left) and _emit_into(probe, f.right)):
                return False
            b.start_or() if isinstance(f, OrFilter) else b.start_and()
            _emit_into(b, f.left)
            _emit_into(b, f.right)
            b.end()
            return True
        if isinstance(f, ds.Not):
            probe = sarg.builder()
            if not _emit_into(probe, f.child):
                return False
            b.start_not()
            _emit_into(b, f.child)
            b.end()
            return True
        found = find_column(types, column(f)) if hasattr(f, "attribute") else None
        if found is None:  # not a column of the table, or an ambiguous name: Spark applies it, nothing prunes
            return False
        name, t = found
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

    for f in filters:
        if _emit_into(builder, f):
            converted += 1
        else:
            rejected.append(f)
    if not converted:
        return None, rejected
    builder.end()
    return builder.build(), rejected

