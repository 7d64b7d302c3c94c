"""Orders of rows: by one column (Hudi's ``linear``), along a Z-order or a Hilbert curve over several columns.

As Hudi's sample-based curve build (``hoodie.layout.optimize.curve.build.method=sample``) does, each column's
values are first mapped to ranks by range bounds taken from the rows themselves (:func:`ranks`: ``2**bits``
buckets of equal row count, equal values in one bucket, nulls first), then the ranks are combined into one
curve index per row, vectorized with numpy: bits interleaved (:func:`z_index`) or the Hilbert index
(:func:`hilbert_index`, Skilling's transform, "Programming the Hilbert curve", AIP Conf. Proc. 707, 2004).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: bits per column of a curve index (3 columns x 21 bits fit an unsigned 64-bit integer)
BITS = 21


def ranks(values: pa.Array | pa.ChunkedArray, bits: int = BITS) -> np.ndarray:
    """Each value's bucket among ``2**bits`` range buckets of equal row count (equal values share a bucket;
    nulls sort first, NaN last, as Spark sorts them), as uint64."""
    arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    if pa.types.is_boolean(arr.type) or pa.types.is_decimal(arr.type):
        arr = arr.cast(pa.int8()) if pa.types.is_boolean(arr.type) else arr.cast(pa.float64())
    # "min" ties: a value's rank is 1 + the number of rows below it, so equal values share a bucket
    rank = rank_nulls_first(arr, "min")
    r = rank.to_numpy().astype(np.uint64) - np.uint64(1)
    return np.asarray((r * np.uint64(1 << bits)) // np.uint64(n), dtype=np.uint64)


def linear_order(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Row positions sorted by one column (nulls first, ties in their current order)."""
    table = pa.table({"v": values, "i": pa.array(np.arange(len(values), dtype=np.int64))})
    try:   # pyarrow 22+: null placement per key
        order = pc.sort_indices(table, sort_keys=[("v", "ascending", "at_start"), ("i", "ascending", "at_start")])
    except (TypeError, ValueError, pa.ArrowInvalid):
        order = pc.sort_indices(table, sort_keys=[("v", "ascending"), ("i", "ascending")], null_placement="at_start")
    return order.to_numpy()  # type: ignore[no-any-return]


def rank_nulls_first(values: pa.Array, tiebreaker: str) -> pa.Array:
    """``pc.rank`` ascending with nulls first (``tiebreaker``: ``"min"`` or ``"dense"``), 1-based."""
    try:   # pyarrow 22+: null placement per key
        return pc.rank(values, sort_keys=[("", "ascending", "at_start")], tiebreaker=tiebreaker)
    except (TypeError, ValueError, pa.ArrowInvalid):
        return pc.rank(values, sort_keys="ascending", null_placement="at_start", tiebreaker=tiebreaker)


def z_index(coords: Sequence[np.ndarray], bits: int = BITS) -> np.ndarray:
    """The Z-order (Morton) index of each row: the columns' rank bits interleaved, most significant first, the
    first column's bit ahead of the others' at each level."""
    d = len(coords)
    if d * bits > 64:
        raise ValueError(f"{d} columns x {bits} bits do not fit 64 bits")
    out = np.zeros(len(coords[0]) if d else 0, dtype=np.uint64)
    for b in range(bits - 1, -1, -1):
        for c in coords:
            out = (out << np.uint64(1)) | ((c >> np.uint64(b)) & np.uint64(1))
    return out


def hilbert_index(coords: Sequence[np.ndarray], bits: int = BITS) -> np.ndarray:
    """The Hilbert index of each row (``len(coords)`` dimensions of ``bits`` bits each): Skilling's
    axes-to-transpose, then the transposed bits interleaved."""
    d = len(coords)
    if d * bits > 64:
        raise ValueError(f"{d} columns x {bits} bits do not fit 64 bits")
    x = [np.asarray(c, dtype=np.uint64).copy() for c in coords]
    one = np.uint64(1)
    m = one << np.uint64(bits - 1)
    # inverse undo excess work
    q = m
    while q > one:
        p = q - one
        for i in range(d):
            hit = (x[i] & q) != 0
            # where set: invert the low bits of x[0]; else exchange the low bits of x[0] and x[i]
            x0 = x[0]
            t = (x0 ^ x[i]) & p
            new0 = np.where(hit, x0 ^ p, x0 ^ t)
            if i:
                x[i] = np.where(hit, x[i], x[i] ^ t)
            x[0] = new0
        q >>= one
    # Gray encode
    for i in range(1, d):
        x[i] ^= x[i - 1]
    t = np.zeros_like(x[0])
    q = m
    while q > one:
        t = np.where((x[d - 1] & q) != 0, t ^ (q - one), t)
        q >>= one
    for i in range(d):
        x[i] ^= t
    return z_index(x, bits)


def curve_order(columns: Sequence[pa.Array | pa.ChunkedArray], curve: str, bits: int | None = None) -> np.ndarray:
    """Row positions along a ``"z-order"`` or ``"hilbert"`` curve over the columns' ranks (ties in the rows'
    current order)."""
    b = bits if bits is not None else min(BITS, 64 // max(1, len(columns)))
    coords = [ranks(c, b) for c in columns]
    index = z_index(coords, b) if curve == "z-order" else hilbert_index(coords, b)
    return np.argsort(index, kind="stable")


__all__ = ["BITS", "curve_order", "hilbert_index", "linear_order", "rank_nulls_first", "ranks", "z_index"]
