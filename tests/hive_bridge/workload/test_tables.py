"""Which table a scan read: a location inside a table resolves to the folder holding .hoodie/, s3a is s3,
NAME=URI by name or by location, one plain --table for every scan; no URI's user info is ever printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_bridge.workload.tables import TableResolver, normalize_location, parse_table_args, redact


def test_location_inside_a_table_resolves_to_its_base(tmp_path: Path) -> None:
    base = tmp_path / "lake" / "orders"
    (base / ".hoodie").mkdir(parents=True)
    (base / ".hoodie" / "hoodie.properties").write_text("hoodie.table.name=orders\n")
    (base / "dt=2024-01-01").mkdir()
    r = TableResolver()
    assert r.resolve(None, [f"file:{base}/dt=2024-01-01/f1.parquet"]) == str(base)
    assert r.resolve(None, [f"file://{base}/dt=2024-01-01"]) == str(base)
    assert r.resolve(None, [f"file:{tmp_path}/elsewhere/x.parquet"]) is None


def test_named_tables_and_one_plain_table() -> None:
    named, default = parse_table_args(["sales.orders=s3://b/orders", "/data/lake/t=/tables/t"])
    assert default is None
    r = TableResolver(named, default)
    assert r.resolve("spark_catalog.sales.orders", []) == "s3://b/orders"
    assert r.resolve(None, ["file:/data/lake/t/dt=1/f.parquet"]) == "/tables/t"
    assert r.resolve("other", ["s3a://b/x/y"]) is None
    assert r.resolve("sales.orders_ro", []) == r.resolve("sales.orders_rt", []) == "s3://b/orders"  # Hive sync
    named, default = parse_table_args(["s3://b/one"])
    assert TableResolver(named, default).resolve("anything", ["/x"]) == "s3://b/one"
    with pytest.raises(ValueError):
        parse_table_args(["/a", "/b"])


def test_normalize_and_redact() -> None:
    assert normalize_location("s3a://bucket/t/dt=1") == "s3://bucket/t/dt=1"
    assert normalize_location("file:/a/b/") == "/a/b"
    assert redact("s3://AKIAXXX:secret@bucket/t") == "s3://bucket/t"
    assert redact("hdfs://user@nn:8020/t") == "hdfs://nn:8020/t"
    # a location's user info is no part of its name: neither kept nor shown, and prefixes still match
    assert normalize_location("s3a://AKIAXXX:se/cr+et@bucket/t/dt=1") == "s3://bucket/t/dt=1"
    assert normalize_location("abfss://c@acct.dfs.core.windows.net/t") == "abfss://c@acct.dfs.core.windows.net/t"
    r = TableResolver({"s3://bucket/t": "/local/t"})
    assert r.resolve(None, ["s3a://AKIAXXX:se/cr+et@bucket/t/dt=1/f.parquet"]) == "/local/t"
