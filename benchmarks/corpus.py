"""Seeded random SearchArguments built with sarg's Hive-exact builder: a corpus for benchmarks."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

import sarg
from sarg import Timestamp, TruthValue, Type

SCHEMA = {
    "event_id": "bigint", "qty": "int", "price": "double", "name": "string", "city": "varchar(20)",
    "day": "date", "ts": "timestamp", "amount": "decimal(12,2)", "active": "boolean",
}
STRUCT = "struct<" + ",".join(f"{k}:{v}" for k, v in SCHEMA.items()) + ">"
_TYPES = {"event_id": Type.LONG, "qty": Type.LONG, "price": Type.FLOAT, "name": Type.STRING,
          "city": Type.STRING, "day": Type.DATE, "ts": Type.TIMESTAMP, "amount": Type.DECIMAL,
          "active": Type.BOOLEAN}
_WORDS = ["alpha", "beta", "Zürich", "new york", "a,b", "x(y)", "", "null", "tab\there", "trailing "]


def _value(rng: random.Random, t: Type) -> object:
    if t is Type.LONG:
        return rng.choice([rng.randint(-1000, 1000), rng.randint(-(2**63), 2**63 - 1)])
    if t is Type.FLOAT:
        return rng.choice([rng.uniform(-1e6, 1e6), 0.1, -0.0, 1e-7, float(rng.randint(0, 99))])
    if t is Type.STRING:
        return rng.choice(_WORDS[:4]) + str(rng.randint(0, 99))
    if t is Type.DATE:
        return dt.date(2020, 1, 1) + dt.timedelta(days=rng.randint(0, 2000))
    if t is Type.TIMESTAMP:
        return Timestamp(1_600_000_000 + rng.randint(0, 10**8), rng.randint(0, 999_999_999))
    if t is Type.DECIMAL:
        return Decimal(rng.randint(-10**6, 10**6)).scaleb(-2)
    return rng.random() < 0.5


def _leaf(rng: random.Random, b: sarg.Builder) -> None:
    col = rng.choice(list(_TYPES))
    t = _TYPES[col]
    kind = rng.randrange(7)
    if kind == 0:
        b.equals(col, t, _value(rng, t))
    elif kind == 1:
        b.less_than(col, t, _value(rng, t))
    elif kind == 2:
        b.less_than_equals(col, t, _value(rng, t))
    elif kind == 3:
        b.in_(col, t, *[_value(rng, t) for _ in range(rng.randint(1, 6))])
    elif kind == 4:
        lo, hi = sorted([_value(rng, t), _value(rng, t)], key=str)
        b.between(col, t, lo, hi)
    elif kind == 5:
        b.is_null(col, t)
    else:
        b.null_safe_equals(col, t, _value(rng, t))


def _tree(rng: random.Random, b: sarg.Builder, depth: int) -> None:
    r = rng.random()
    if depth >= 3 or r < 0.4:
        _leaf(rng, b)
        return
    if r < 0.47:
        b.literal(TruthValue.YES_NO_NULL)
        return
    if r < 0.6:
        b.start_not()
        _tree(rng, b, depth + 1)
        b.end()
        return
    b.start_and() if r < 0.8 else b.start_or()
    for _ in range(rng.randint(2, 3)):
        _tree(rng, b, depth + 1)
    b.end()


def generate(count: int, seed: int = 7) -> list[sarg.SearchArgument]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        b = sarg.builder()
        _tree(rng, b, 0)
        out.append(b.build())
    return out
