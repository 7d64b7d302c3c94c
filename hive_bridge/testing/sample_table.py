"""The demo's sample table: 1,000 base files of 1,000 events each, hive-style partitioned by ``day``, with
``event_id`` clustered (each file holds a narrow range), as an ingestion job writes them."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa

FILES = 1000
ROWS_PER_FILE = 1000
DAYS = 10
CITIES = ["Amsterdam", "Berlin", "Chicago", "Delhi", "Lagos", "Lima", "Osaka", "Paris", "Seoul", "Zürich"]


def sample_rows(n_files: int = FILES, rows_per_file: int = ROWS_PER_FILE) -> pa.Table:
    """Events with clustered keys: file k holds event ids [k*rows, (k+1)*rows)."""
    import numpy as np

    n = n_files * rows_per_file
    rng = np.random.default_rng(42)
    event_id = np.arange(n, dtype=np.int64)
    day_index = event_id * DAYS // n
    base = dt.datetime(2024, 3, 1)
    ts = np.array([base + dt.timedelta(days=int(d)) for d in range(DAYS)], dtype="datetime64[us]")[day_index]
    ts = ts + (event_id % (24 * 3600)).astype("timedelta64[s]")
    city = np.array(CITIES, dtype=object)[rng.integers(0, len(CITIES), n)]
    city_mask = rng.random(n) < 0.01
    amount = rng.integers(0, 100_000, n)
    return pa.table({
        "event_id": pa.array(event_id),
        "user_id": pa.array(rng.integers(0, 50_000, n).astype(np.int32)),
        "city": pa.array(city, pa.string(), mask=city_mask),
        "price": pa.array(rng.random(n) * 100.0),
        "amount": pa.array([Decimal(int(a)).scaleb(-2) for a in amount], pa.decimal128(12, 2)),
        "ts": pa.array(ts, pa.timestamp("us", tz="UTC")),
        "active": pa.array(rng.random(n) < 0.5),
        "day": pa.array([(base + dt.timedelta(days=int(d))).date().isoformat() for d in day_index], pa.string()),
    })


def build_table(path: Path, n_files: int = FILES, rows_per_file: int = ROWS_PER_FILE) -> Path:
    from hive_bridge.testing.writer import write_hudi_table

    tmp = path.with_name(path.name + ".building")
    if tmp.exists():
        import shutil

        shutil.rmtree(tmp)
    data = sample_rows(n_files, rows_per_file)
    # one insert commit per day partition keeps files narrow in event_id (clustered keys)
    write_hudi_table(tmp, data, partition_fields=("day",), hive_style=True, record_key_fields=("event_id",),
                     rows_per_file=rows_per_file, table_name="demo_events")
    tmp.rename(path)
    return path
