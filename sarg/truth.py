"""Hive's three-valued ``TruthValue``: the set of SQL outcomes still possible for some row.

Hive's hand-written ``and``/``or``/``not`` tables are Kleene logic lifted to sets of outcomes; this module
computes them from that definition (three booleans: can be true, can be false, can be null), and the tests
check every one of the 49 + 49 + 7 cases against Hive's own ``SearchArgument.TruthValue``.
"""

from __future__ import annotations

from enum import Enum
from functools import cache


class TruthValue(Enum):
    """YES={true}, NO={false}, NULL={unknown}, YES_NULL, NO_NULL, YES_NO, YES_NO_NULL."""

    YES = (True, False, False)
    NO = (False, True, False)
    NULL = (False, False, True)
    YES_NULL = (True, False, True)
    NO_NULL = (False, True, True)
    YES_NO = (True, True, False)
    YES_NO_NULL = (True, True, True)

    @property
    def can_true(self) -> bool:
        return self.value[0]

    @property
    def can_false(self) -> bool:
        return self.value[1]

    @property
    def can_null(self) -> bool:
        return self.value[2]

    @staticmethod
    def of(can_true: bool, can_false: bool, can_null: bool) -> TruthValue:
        """The TruthValue for a set of possible outcomes (the empty set has none: it raises)."""
        return _BY_BITS[(bool(can_true), bool(can_false), bool(can_null))]

    def and_(self, other: TruthValue) -> TruthValue:
        return _and(self, other)

    def or_(self, other: TruthValue) -> TruthValue:
        return _or(self, other)

    def not_(self) -> TruthValue:
        t, f, n = self.value
        return _BY_BITS[(f, t, n)]

    def is_needed(self) -> bool:
        """Hive's isNeeded: a row group or file must be read unless the value is NO, NULL or NO_NULL."""
        return self.can_true

    def with_nulls(self, has_nulls: bool) -> TruthValue:
        """ORC's "with nulls": YES->YES_NULL, NO->NO_NULL, YES_NO->YES_NO_NULL when the column has nulls."""
        if not has_nulls:
            return self
        t, f, _ = self.value
        return _BY_BITS[(t, f, True)]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"TruthValue.{self.name}"


_BY_BITS: dict[tuple[bool, bool, bool], TruthValue] = {tv.value: tv for tv in TruthValue}

# Kleene truth tables over single outcomes: T, F, N (unknown).
_KLEENE_AND = {
    ("T", "T"): "T", ("T", "F"): "F", ("T", "N"): "N",
    ("F", "T"): "F", ("F", "F"): "F", ("F", "N"): "F",
    ("N", "T"): "N", ("N", "F"): "F", ("N", "N"): "N",
}
_KLEENE_OR = {
    ("T", "T"): "T", ("T", "F"): "T", ("T", "N"): "T",
    ("F", "T"): "T", ("F", "F"): "F", ("F", "N"): "N",
    ("N", "T"): "T", ("N", "F"): "N", ("N", "N"): "N",
}


def _outcomes(tv: TruthValue) -> list[str]:
    return [o for o, flag in zip("TFN", tv.value, strict=True) if flag]


def _lift(table: dict[tuple[str, str], str], a: TruthValue, b: TruthValue) -> TruthValue:
    results = {table[(x, y)] for x in _outcomes(a) for y in _outcomes(b)}
    return _BY_BITS[("T" in results, "F" in results, "N" in results)]


@cache
def _and(a: TruthValue, b: TruthValue) -> TruthValue:
    return _lift(_KLEENE_AND, a, b)


@cache
def _or(a: TruthValue, b: TruthValue) -> TruthValue:
    return _lift(_KLEENE_OR, a, b)
