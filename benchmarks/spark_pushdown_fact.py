"""A measured fact: Spark's own parquet filter pushdown loses rows that hold NaN or -0.0; hive-bridge does not.

A generated copy-on-write table (20 base files of 50 rows, written by pyarrow through HudiWriter) holds a double
column `v` with NaN, -0.0, 0.0 and nulls. For each filter the script counts the rows
- Spark returns reading the latest base files with `spark.sql.parquet.filterPushdown` ON (Spark's default),
- the same with it OFF (what `hive_bridge.spark.session()` sets),
- `read_hudi(spark, path, filter)` returns with pushdown ON (the filter as HiveQL text: parsed, files pruned,
  applied to rows; its parquet scans get only the filters that cannot lose a row),
- Spark SQL's semantics say match, computed here in Python (NaN = NaN and above every number, -0.0 = 0.0).

    python benchmarks/spark_pushdown_fact.py
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hive_bridge.spark import PARQUET_PUSHDOWN, read_hudi, session
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter

FILES, ROWS = 20, 50


def value(i: int) -> float | None:
    """File b = i // 50: ordinary values rising with i (file 0 holds 0 .. 14.7, file 19 285 .. 299.7); NaN in
    every other file (so in files whose max is below 100), -0.0 in every third, 0.0 in every fourth, nulls."""
    b, j = divmod(i, ROWS)
    if j == 7 and b % 2 == 0:
        return math.nan
    if j in (11, 12) and b % 3 == 0:
        return -0.0
    if j == 13 and b % 4 == 0:
        return 0.0
    if j == 17:
        return None
    return round(i * 0.3, 1)


# (label, Spark SQL / HiveQL filter text, Spark SQL's answer for one value)
FILTERS = [
    ("v = 0.0", "v = 0.0", lambda v: v == 0.0),  # -0.0 == 0.0 in Python too
    ("v = double('NaN')", "v = double('NaN')", lambda v: math.isnan(v)),
    ("v > 100", "v > 100", lambda v: math.isnan(v) or v > 100),
]


def main() -> None:
    values = [value(i) for i in range(FILES * ROWS)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "pushdown_fact"
        data = pa.table({"id": pa.array(range(len(values)), pa.int64()), "v": pa.array(values, pa.float64())})
        HudiWriter(root, record_key_fields=("id",), rows_per_file=ROWS).insert(data)
        paths = [s.base_file.full_path for s in HudiTable.open(root).latest_file_slices() if s.base_file]
        spark = session("spark-pushdown-fact")
        import pyspark

        print(f"Spark {spark.version} (pyspark {pyspark.__version__}), pyarrow {pa.__version__}; {len(paths)} "
              f"parquet files, {len(values)} rows: {sum(v is not None and math.isnan(v) for v in values)} NaN, "
              f"{sum(v is not None and v == 0 and math.copysign(1, v) < 0 for v in values)} -0.0, "
              f"{sum(v is not None and v == 0 and math.copysign(1, v) > 0 for v in values)} 0.0, "
              f"{values.count(None)} null")
        header = f"{'filter':<20} {'pushdown ON':>12} {'pushdown OFF':>13} {'read_hudi':>10} {'Spark SQL says':>15}"
        print(header)
        print("-" * len(header))
        for label, text, matches in FILTERS:
            expected = sum(1 for v in values if v is not None and matches(v))
            counts = []
            for flag in ("true", "false"):
                spark.conf.set(PARQUET_PUSHDOWN, flag)
                counts.append(spark.read.parquet(*paths).where(text).count())
            spark.conf.set(PARQUET_PUSHDOWN, "true")     # read_hudi needs nothing of the session
            via = read_hudi(spark, str(root), text).df.count()
            print(f"{label:<20} {counts[0]:>12} {counts[1]:>13} {via:>10} {expected:>15}")
        spark.stop()


if __name__ == "__main__":
    main()
