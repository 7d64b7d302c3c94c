"""The record key a filter fixes on a table keyed on several fields, for Hudi's key indexes to answer.

Hudi's complex key generator writes a record's key as ``field:value`` pairs in ``hoodie.table.recordkey.fields``
order, joined by ``,`` (``txn_id:TXN-007,account_id:ACC-E``), a null value as ``__null__`` and an empty one as
``__empty__`` (``KeyGenUtils.getRecordKey``). A conjunction that fixes every key field by equality
(``txn_id = 'TXN-007' AND account_id = 'ACC-E'``, or an IN on some fields crossed with the others) implies
``_hoodie_record_key IN (<the keys>)``: :func:`with_record_keys` adds that leaf, marked ``derived``, to the
conjunction. Statistics never judge a derived leaf (it may be true or false); the record index and the base files'
bloom filters, which are keyed by the whole record key, narrow it (:mod:`hive_bridge.pruning.key_index`).

Why it is exact: for a row where the conjunction is TRUE, its key is one of the derived keys, so the leaf is TRUE
too and the conjunction keeps its value; where the conjunction is FALSE it stays FALSE; where it is NULL the
leaf may make it FALSE, a refinement Kleene logic never turns into a different definite result (a TRUE root stays
TRUE). Only string and integer key values are formed (what an Avro value's ``toString`` gives for them is plain);
a literal of any other type leaves the conjunction as it is. The leaf is added in positive position only (under a
NOT, a YES_NO leaf could keep a file a certain TRUE conjunction would have let go).

Which encoding a table uses is checked against the keys its own files hold (a base file footer's
``hoodie_min_record_key``) before any of this is used, and again for each file whose bloom filter is asked. Keys of
one field are left alone: Hudi versions differ on whether a one-field complex key carries its field name.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from hive_bridge.filters.expression import And, HudiExpression, Not, Op, Or, Predicate
from sarg import Type
from sarg.schema import find_column

__all__ = ["COMPLEX_KEYGENS", "EMPTY_PLACEHOLDER", "MAX_KEYS", "NULL_PLACEHOLDER", "RECORD_KEY_COLUMN",
           "complex_key", "encoding_matches", "key_value_text", "with_record_keys"]

#: key generators (class name endings) that write ``field:value,...`` keys
COMPLEX_KEYGENS = ("ComplexKeyGenerator", "ComplexAvroKeyGenerator")
NULL_PLACEHOLDER = "__null__"
EMPTY_PLACEHOLDER = "__empty__"
RECORD_KEY_COLUMN = "_hoodie_record_key"
#: at most this many keys are formed for one conjunction (a larger cross product is left alone)
MAX_KEYS = 1024

_FIXING = (Op.EQ, Op.NULL_SAFE_EQ, Op.IN)


def key_value_text(value: object) -> str | None:
    """A literal as the key generator writes it into a key (strings and integers only; None: not formed)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        return value if value else EMPTY_PLACEHOLDER
    if isinstance(value, int):
        return str(value)
    return None


def complex_key(fields: Sequence[str], texts: Sequence[str]) -> str:
    """The record key of a row whose key fields hold ``texts`` (already as :func:`key_value_text` gives them)."""
    return ",".join(f"{f}:{v}" for f, v in zip(fields, texts, strict=True))


def encoding_matches(sample_key: str, fields: Sequence[str]) -> bool:
    """Whether a key a table holds has the ``field:value,...`` form for ``fields`` (in order)."""
    if not sample_key.startswith(f"{fields[0]}:"):
        return False
    at = len(fields[0]) + 1
    for f in fields[1:]:
        found = sample_key.find(f",{f}:", at)
        if found < 0:
            return False
        at = found + len(f) + 2
    return True


def _keys_of(parts: Sequence[HudiExpression], fields: Sequence[str]) -> tuple[str, ...] | None:
    """The keys a conjunction's direct children fix (None: not every field is fixed by a usable equality)."""
    names = dict.fromkeys(fields, True)
    fixed: dict[str, set[str]] = {}
    for part in parts:
        if not (isinstance(part, Predicate) and part.op in _FIXING and not part.derived and part.exact_values):
            continue
        if part.type not in (Type.STRING, Type.LONG):
            continue
        found = find_column(names, part.column)     # sarg's one rule for names
        if found is None:
            continue
        field = found[0]
        texts = [key_value_text(v) for v in part.literals if v is not None]
        if not texts or None in texts:
            continue                                # a literal no key is formed from: this part fixes nothing
        values = {t for t in texts if t is not None}
        fixed[field] = fixed[field] & values if field in fixed else values
    if any(f not in fixed for f in fields):
        return None
    if math.prod(len(fixed[f]) for f in fields) > MAX_KEYS:
        return None
    return tuple(sorted(complex_key(fields, combo) for combo in itertools.product(*(sorted(fixed[f]) for f in fields))))


def with_record_keys(expression: HudiExpression, fields: Sequence[str]) -> HudiExpression:
    """``expression`` with a derived ``_hoodie_record_key IN (...)`` leaf in every conjunction (in positive
    position) that fixes every one of ``fields``."""

    def walk(node: HudiExpression, positive: bool) -> HudiExpression:
        if isinstance(node, And):
            parts = tuple(walk(p, positive) for p in node.parts)
            keys = _keys_of(parts, fields) if positive else None
            if keys:
                derived = Predicate(Op.IN, RECORD_KEY_COLUMN, Type.STRING, keys,
                                    source="the record key the conjunction fixes", derived=True)
                parts = (*parts, derived)
            return And(parts) if parts != node.parts else node
        if isinstance(node, Or):
            parts = tuple(walk(p, positive) for p in node.parts)
            return Or(parts) if parts != node.parts else node
        if isinstance(node, Not):
            child = walk(node.child, not positive)
            return Not(child) if child is not node.child else node
        return node

    return walk(expression, True)
