"""hive_bridge.pruning.partition_values: partitions given by their values, as a statistics table judged by the
vectorized evaluator (the files' rules): dropped only when the values prove no row matches."""

from __future__ import annotations

import pyarrow as pa

import sarg
from hive_bridge.filters.expression import translate
from hive_bridge.pruning.partition_values import partition_values_table, prune_partitions
from hive_bridge.stats.contract import file_stats_from_table

SCHEMA = {"day": "date", "n": "bigint", "city": "string", "fare": "double"}
KEYS = [("day", pa.date32()), ("n", pa.int64()), ("city", pa.string())]
VALUES = [("2024-01-01", "1", "sf"), ("2024-01-02", "__HIVE_DEFAULT_PARTITION__", "ny"), ("not a date", "3", "la")]


def _keep(text: str, keys: list[tuple[str, pa.DataType | None]] = KEYS,
          values: list[tuple[str, ...]] = VALUES) -> list[bool]:
    return prune_partitions(translate(sarg.read_filter(text, SCHEMA), SCHEMA), keys, values)


def test_the_table_holds_each_value_as_exact_bounds_and_the_default_partition_as_null() -> None:
    table = partition_values_table(KEYS, VALUES)
    assert table.column("num_rows").to_pylist() == [1, 1, 1]
    files = file_stats_from_table(table)
    n = [f.columns["n"] for f in files]
    assert [(c.min, c.max, c.null_count, c.min_exact) for c in n] == [
        (1, 1, 0, True), (None, None, 1, None), (3, 3, 0, True)]
    day = [f.columns["day"] for f in files]
    assert day[2].min is None and day[2].null_count is None  # does not convert: unknown, never "no nulls"


def test_partitions_are_dropped_only_when_their_values_prove_no_row_matches() -> None:
    assert _keep("city = 'sf'") == [True, False, False]
    assert _keep("n > 2") == [False, False, True]
    assert _keep("n is null") == [False, True, False]
    assert _keep("day = date '2024-01-02'") == [False, True, True]  # 'not a date' is unknown: kept
    assert _keep("fare > 10") == [True, True, True]  # not a key: unknown
    assert _keep("city = 'sf' or fare > 10") == [True, True, True]


def test_a_key_without_a_type_is_unknown() -> None:
    untyped = [("day", None), ("n", None), ("city", None)]
    assert _keep("city = 'sf'", untyped) == [True, True, True]
    assert partition_values_table([("city", None)], [("sf",)]).column_names == ["num_rows"]
