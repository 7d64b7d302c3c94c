"""hive_bridge.hive (the metastore client) against a real Hive Metastore: register a Hudi table, read it back, clear errors."""

from __future__ import annotations

import time
from typing import Any

import pytest

from hive_bridge.errors import HiveBridgeError
from hive_bridge.hive import (
    HUDI_INPUT_FORMAT,
    HUDI_OUTPUT_FORMAT,
    HUDI_SERDE,
    HUDI_STORAGE_HANDLER,
    HiveTable,
    MetastoreClient,
    MetastoreError,
    is_hudi,
)
from hive_bridge.testing import servers
from tests.integration.conftest import HiveServers, HS2Table

DB = "hive_bridge_hudi"
COLUMNS = [("_hoodie_commit_time", "string"), ("id", "bigint"), ("name", "string"), ("amount", "decimal(10,2)"),
           ("ts", "timestamp")]
PARTITIONS = [("day", "string")]


@pytest.mark.integration
def test_register_and_get_a_hudi_table(metastore: MetastoreClient, hive_servers: HiveServers) -> None:
    location = hive_servers.data_dir / "events"
    location.mkdir(parents=True, exist_ok=True)
    registered = metastore.register_hudi_table(DB, "events", str(location), COLUMNS, PARTITIONS, replace=True)
    table = metastore.get_table(DB, "events")
    assert table == registered
    assert table.location == str(location)
    assert table.columns == tuple(COLUMNS)
    assert table.partition_keys == tuple(PARTITIONS)
    assert table.schema == tuple(COLUMNS + PARTITIONS)
    assert (table.input_format, table.output_format, table.serde) == (HUDI_INPUT_FORMAT, HUDI_OUTPUT_FORMAT, HUDI_SERDE)
    assert table.storage_handler is None  # as Hudi's Hive sync registers: no storage handler (Hudi ships none)
    assert table.table_type == "EXTERNAL_TABLE" and table.parameters["EXTERNAL"] == "TRUE"
    assert table.parameters["spark.sql.sources.provider"] == "hudi"
    assert dict(table.serde_parameters) == {"serialization.format": "1", "path": location.as_uri(),
                                            "hoodie.query.as.ro.table": "true"}
    assert is_hudi(table)
    assert metastore.get_hudi_table(DB, "events") == table
    assert "events" in metastore.get_tables(DB)


@pytest.mark.integration
def test_registering_twice_needs_replace(metastore: MetastoreClient, hive_servers: HiveServers) -> None:
    location = str(hive_servers.data_dir / "twice")
    metastore.register_hudi_table(DB, "twice", location, COLUMNS, replace=True)
    with pytest.raises(MetastoreError, match=r"cannot register hive_bridge_hudi\.twice: .*already exists"):
        metastore.register_hudi_table(DB, "twice", location, COLUMNS)
    again = metastore.register_hudi_table(DB, "twice", location, [("id", "int")], replace=True)
    assert again.columns == (("id", "int"),)


@pytest.mark.integration
def test_missing_table_is_a_clear_error(metastore: MetastoreClient) -> None:
    with pytest.raises(MetastoreError, match=r"^table hive_bridge_hudi\.no_such_table not found in the metastore at "
                                             r"thrift://") as info:
        metastore.get_table(DB, "no_such_table")
    assert info.value.__cause__ is None and info.value.__suppress_context__
    with pytest.raises(MetastoreError, match="not found"):
        metastore.get_table("no_such_database", "t")


@pytest.mark.integration
def test_a_table_made_through_hiveserver2_is_not_hudi(metastore: MetastoreClient, hs2_table: HS2Table) -> None:
    table = metastore.get_table(hs2_table.database, hs2_table.name)
    assert table.columns == hs2_table.columns
    assert not is_hudi(table) and table.storage_handler is None
    assert "orc" in (table.input_format or "").lower()
    with pytest.raises(MetastoreError, match=rf"table {hs2_table.qualified_name} is not a Hudi table: input format"):
        metastore.get_hudi_table(hs2_table.database, hs2_table.name)


@pytest.mark.integration
def test_hiveserver2_sees_the_registered_table(metastore: MetastoreClient, hive_servers: HiveServers,
                                               hs2_cursor: Any) -> None:
    metastore.register_hudi_table(DB, "shared", str(hive_servers.data_dir / "shared"), COLUMNS, replace=True)
    hs2_cursor.execute(f"SHOW TABLES IN {DB}")
    names = {row[1] if len(row) > 1 else row[0] for row in hs2_cursor.fetchall()}
    assert "shared" in names


def test_refused_connection_is_a_clear_error_after_bounded_retries() -> None:
    port = servers.free_port()  # nothing listens there
    started = time.monotonic()
    with pytest.raises(MetastoreError) as info:
        with MetastoreClient(f"thrift://127.0.0.1:{port}", retries=3, timeout=5, backoff=0.05):
            pass
    message = str(info.value)
    assert message.startswith(f"cannot reach the Hive Metastore at thrift://127.0.0.1:{port} after 3 attempt(s): "
                              "connection refused")
    assert "Traceback" not in message and info.value.__cause__ is None
    assert isinstance(info.value, HiveBridgeError)
    assert time.monotonic() - started < 5  # 0.05 + 0.1 s of backoff, not minutes


def test_bad_uris_are_rejected() -> None:
    for uri in ("http://x:9083", "thrift://", "thrift://h:notaport"):
        with pytest.raises(MetastoreError, match=r"metastore URI|port"):
            MetastoreClient(uri)
    assert (MetastoreClient("thrift://h").host, MetastoreClient("thrift://h").port) == ("h", 9083)


def test_is_hudi_reads_handler_input_format_or_provider() -> None:
    def table(**kw: Any) -> HiveTable:
        base: dict[str, Any] = dict(database="d", name="t", location="/x", columns=(("a", "int"),),
                                    partition_keys=(), input_format=None, output_format=None, serde=None,
                                    table_type="EXTERNAL_TABLE")
        base.update(kw)
        return HiveTable(**base)

    assert is_hudi(table(parameters={"storage_handler": HUDI_STORAGE_HANDLER}))
    assert is_hudi(table(input_format="org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"))
    assert is_hudi(table(parameters={"spark.sql.sources.provider": "hudi"}))
    assert not is_hudi(table(input_format="org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"))
    assert not is_hudi(table(parameters={"storage_handler": "org.apache.iceberg.mr.hive.HiveIcebergStorageHandler"}))


def test_relative_location_is_rejected() -> None:
    client = MetastoreClient("thrift://127.0.0.1:1")
    with pytest.raises(MetastoreError, match="must be absolute"):
        client.register_hudi_table("d", "t", "relative/path", [("a", "int")])
