"""Hudi tables registered as Hudi's Hive sync registers them, in a real metastore, read by name.

A merge-on-read fixture (8 inserts, then 1 update in a log file: rider-D's fare 33.9 becomes 25.0) is synced as
``HiveSyncTool`` does by default (``<t>_ro``, ``<t>_rt``, ``<t>``), read by name through the metastore
(read-optimized: the base files' rows; snapshot: the merged rows) and seen through HiveServer2.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hive_bridge.hive import (
    HUDI_INPUT_FORMAT,
    HUDI_OUTPUT_FORMAT,
    HUDI_REALTIME_INPUT_FORMAT,
    HUDI_SERDE,
    HUDI_STORAGE_HANDLER,
    MetastoreClient,
    is_hudi,
)
from hive_bridge.spark import SparkReadError, read_hudi, read_table
from hive_bridge.table.table import HudiTable
from tests.conftest import SHARED_TABLES
from tests.integration.conftest import HiveServers

pytestmark = pytest.mark.integration

DB = "hive_bridge_sync"
MOR = "quickstart_trips_table.mor.avro.v6_trips_8i1u"
NON_HIVE_STYLE = "sample_table.cow.v6_simplekeygen_nonhivestyle"
COLUMNS = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
           "_hoodie_file_name", "ts", "uuid", "rider", "driver", "fare"]
CITIES = ("chennai", "san_francisco", "sao_paulo")


def _unzip(name: str, dest: Path) -> Path:
    zpath = SHARED_TABLES / f"{name}.zip"
    if not zpath.is_file():
        pytest.skip(f"{zpath} is missing")
    target = dest / name
    shutil.rmtree(target, ignore_errors=True)
    with zipfile.ZipFile(zpath) as zf:
        zf.extractall(target, [m for m in zf.namelist() if not m.startswith("__MACOSX/") and "/._" not in m])
    return next(target.glob("*/.hoodie/hoodie.properties")).parent.parent


@pytest.fixture(scope="module")
def trips(hive_servers: HiveServers) -> Path:
    """The merge-on-read fixture where the servers see it, synced as Hive sync does: trips_ro, trips_rt, trips."""
    root = _unzip(MOR, Path(hive_servers.data_dir) / "hive_sync")
    with MetastoreClient(hive_servers.metastore_uri, timeout=60) as hms:
        synced = hms.sync_hudi_table(str(root), database=DB, table="trips", replace=True)
    assert [t.name for t in synced] == ["trips_ro", "trips_rt", "trips"]
    return root


def _rows(df: Any) -> set[tuple[str, str, float, str]]:
    return {(r["uuid"], r["rider"], r["fare"], r["city"]) for r in df.select("uuid", "rider", "fare", "city").collect()}


def _base_rows(root: Path) -> set[tuple[str, str, float, str]]:
    """The latest base files' rows: what a read-optimized query returns."""
    table = pa.concat_tables([pq.read_table(s.base_file.full_path) for s in HudiTable.open(root).latest_file_slices()
                              if s.base_file is not None])
    return {(r["uuid"], r["rider"], r["fare"], r["city"]) for r in table.to_pylist()}


def _merged_rows(root: Path) -> set[tuple[str, str, float, str]]:
    """hudi-rs's snapshot: base files merged with their log files."""
    import hudi

    table = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(str(root)).build().read())
    return {(r["uuid"], r["rider"], r["fare"], r["city"]) for r in table.to_pylist()}


def test_tables_have_hive_syncs_shape(trips: Path, metastore: MetastoreClient) -> None:
    """HMSDDLExecutor.createTable + addPartitionsToTable + updateLastCommitTimeSynced, with Hive sync's defaults."""
    uri = trips.as_uri()
    for name, input_format, ro in (("trips_ro", HUDI_INPUT_FORMAT, "true"),
                                   ("trips_rt", HUDI_REALTIME_INPUT_FORMAT, "false"),
                                   ("trips", HUDI_REALTIME_INPUT_FORMAT, "false")):
        table = metastore.get_table(DB, name)
        assert (table.input_format, table.output_format, table.serde) == (input_format, HUDI_OUTPUT_FORMAT, HUDI_SERDE)
        assert table.table_type == "EXTERNAL_TABLE" and table.storage_handler is None and is_hudi(table)
        assert Path(table.location) == trips
        assert dict(table.serde_parameters) == {"serialization.format": "1", "path": uri,
                                                "hoodie.query.as.ro.table": ro}
        params = {k: v for k, v in table.parameters.items() if k != "transient_lastDdlTime"}  # the metastore's own
        schema = json.loads(params.pop("spark.sql.sources.schema.part.0"))
        assert params == {"EXTERNAL": "TRUE", "last_commit_time_sync": "20250331030645735",
                          "spark.sql.sources.provider": "hudi", "spark.sql.sources.schema.numParts": "1",
                          "spark.sql.sources.schema.numPartCols": "1", "spark.sql.sources.schema.partCol.0": "city"}
        assert [f["name"] for f in schema["fields"]] == [*COLUMNS, "city"]
        assert [c for c, _ in table.columns] == COLUMNS and dict(table.columns)["fare"] == "double"
        assert table.partition_keys == (("city", "string"),)
        partitions = metastore.get_partitions(DB, name)
        assert [(p.values, Path(p.location)) for p in partitions] == [((c,), trips / f"city={c}") for c in CITIES]
    assert [metastore.resolve_hudi_table(DB, n).query_type for n in ("trips_ro", "trips_rt", "trips")] == [
        "read_optimized", "snapshot", "snapshot"]


@pytest.mark.spark
def test_read_optimized_and_snapshot_by_name(trips: Path, hive_servers: HiveServers, spark: Any) -> None:
    base, merged = _base_rows(trips), _merged_rows(trips)
    assert base != merged and len(base) == len(merged) == 8
    ro = read_table(spark, f"{DB}.trips_ro", metastore=hive_servers.metastore_uri)
    assert ro.listing.query_type == "read_optimized" and _rows(ro.df) == base
    for name in ("trips_rt", "trips"):
        rt = read_table(spark, f"{DB}.{name}", metastore=hive_servers.metastore_uri)
        assert rt.listing.query_type == "snapshot" and _rows(rt.df) == merged, name
    # the update lives in a log file: only a snapshot query sees it
    d = "rider = 'rider-D'"
    assert [r["fare"] for r in read_table(spark, f"{DB}.trips_ro", d, metastore=hive_servers.metastore_uri)
            .df.collect()] == [33.9]
    assert [r["fare"] for r in read_table(spark, f"{DB}.trips", d, metastore=hive_servers.metastore_uri)
            .df.collect()] == [25.0]


@pytest.mark.spark
def test_metastore_partitions_prune_before_statistics(trips: Path, metastore: MetastoreClient, spark: Any) -> None:
    read = read_table(spark, f"{DB}.trips_rt", "city = 'chennai' and fare > 20", metastore=metastore)
    assert (read.listing.files_total, read.listing.dropped_by_partition, read.listing.files_kept) == (3, 2, 1)
    assert _rows(read.df) == {r for r in _merged_rows(trips) if r[3] == "chennai" and r[2] > 20}
    # a partition the metastore does not have is not read (as Hive does not), and said
    metastore._call("drop a partition", lambda c: c.drop_partition(DB, "trips_ro", ["sao_paulo"], False))
    try:
        with pytest.warns(RuntimeWarning, match=r"1 partition\(s\).*not registered.*city=sao_paulo"):
            read = read_table(spark, f"{DB}.trips_ro", metastore=metastore)
        assert _rows(read.df) == {r for r in _base_rows(trips) if r[3] != "sao_paulo"}
    finally:
        metastore.sync_hudi_table(str(trips), database=DB, table="trips", replace=True)


@pytest.mark.spark
def test_partition_locations_that_are_not_hives_layout(hive_servers: HiveServers, metastore: MetastoreClient,
                                                       spark: Any) -> None:
    """A table partitioned without hive-style folders (`10/`): its partitions byteField=10… are located at
    `<table>/10`, not at Hive's `<table>/byteField=10`; they are read from there and pruned by their values."""
    root = _unzip(NON_HIVE_STYLE, Path(hive_servers.data_dir) / "hive_sync")
    (table,) = metastore.sync_hudi_table(str(root), database=DB, table="plain_paths", replace=True)
    # the metastore lower-cases names (Hive's identifiers are case-insensitive)
    assert table.input_format == HUDI_INPUT_FORMAT and table.partition_keys == (("bytefield", "int"),)
    assert [(p.values, Path(p.location)) for p in metastore.get_partitions(DB, "plain_paths")] == [
        ((v,), root / v) for v in ("10", "20", "30")]
    by_name = read_table(spark, f"{DB}.plain_paths", "byteField = 10", metastore=metastore)
    by_path = read_hudi(spark, str(root), "byteField = 10")
    assert by_name.listing.dropped_by_partition == len(HudiTable.open(root).latest_file_slices()) - \
        by_name.listing.files_kept > 0
    assert sorted(map(tuple, by_name.df.collect())) == sorted(map(tuple, by_path.df.collect()))


def _register_the_old_way(metastore: MetastoreClient, name: str, root: Path, columns: list[tuple[str, str]]) -> None:
    """What hive-bridge registered before: a storage_handler parameter naming a class no Hudi release ships."""
    from hmsclient.genthrift.hive_metastore import ttypes

    sd = ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema(n, t, None) for n, t in columns], location=root.as_uri(),
        inputFormat=HUDI_INPUT_FORMAT, outputFormat=HUDI_OUTPUT_FORMAT, compressed=False, numBuckets=-1,
        serdeInfo=ttypes.SerDeInfo(name=name, serializationLib=HUDI_SERDE, parameters={"serialization.format": "1"}),
        bucketCols=[], sortCols=[], parameters={}, storedAsSubDirectories=False)
    table = ttypes.Table(tableName=name, dbName=DB, owner="hive_bridge", createTime=0, lastAccessTime=0, retention=0,
                         sd=sd, partitionKeys=[ttypes.FieldSchema("city", "string", None)],
                         parameters={"EXTERNAL": "TRUE", "storage_handler": HUDI_STORAGE_HANDLER},
                         tableType="EXTERNAL_TABLE")
    metastore.drop_table(DB, name)
    metastore._call(f"create {name}", lambda c: c.create_table(table))


@pytest.mark.spark
def test_a_table_registered_the_old_way_is_read_with_a_warning(trips: Path, metastore: MetastoreClient,
                                                               spark: Any) -> None:
    columns = list(metastore.get_table(DB, "trips_ro").columns)
    _register_the_old_way(metastore, "old_trips_ro", trips, columns)
    with pytest.warns(RuntimeWarning, match=r"no Hudi release ships.*sync_hudi_table\('.*', "
                                            r"database='hive_bridge_sync', table='old_trips', replace=True\)"):
        read = read_table(spark, f"{DB}.old_trips_ro", metastore=metastore)
    assert read.listing.query_type == "read_optimized" and _rows(read.df) == _base_rows(trips)
    with pytest.raises(SparkReadError, match=r"table hive_bridge_sync\.no_such_table: table .* not found"):
        read_table(spark, f"{DB}.no_such_table", metastore=metastore)


def _hs2_error(cursor: Any, sql: str) -> str | None:
    try:
        cursor.execute(sql)
        cursor.fetchall()
    except Exception as exc:
        return str(exc)
    return None


def test_hiveserver2_sees_the_synced_tables(trips: Path, metastore: MetastoreClient, hive_servers: HiveServers,
                                            hs2_cursor: Any) -> None:
    """Through HiveServer2 the synced tables are there by name. Spark's Thrift Server (the local flavor) has no
    Hudi bundle: Hive sync's data-source tables fail only for want of the `hudi` data source, the old
    registration for its storage handler (no jar can fix that); with Hive sync's sync_as_datasource=false,
    Spark reads the read-optimized table as a parquet Hive table: the base files' rows."""
    hs2_cursor.execute(f"SHOW TABLES IN {DB}")
    names = {row[1] if len(row) > 1 else row[0] for row in hs2_cursor.fetchall()}
    assert {"trips_ro", "trips_rt", "trips"} <= names
    if not hive_servers.local:  # a real HiveServer2 loads ParquetHiveSerDe: DESCRIBE works without Hudi's jars
        hs2_cursor.execute(f"DESCRIBE {DB}.trips_ro")
        assert [r[0] for r in hs2_cursor.fetchall()][:len(COLUMNS)] == COLUMNS
        return
    error = _hs2_error(hs2_cursor, f"DESCRIBE {DB}.trips_rt") or ""
    assert "Failed to find the data source: hudi" in error and "storage handler" not in error
    _register_the_old_way(metastore, "old_way", trips, list(metastore.get_table(DB, "trips_ro").columns))
    assert "Error in loading storage handler" in (_hs2_error(hs2_cursor, f"DESCRIBE {DB}.old_way") or "")
    metastore.sync_hudi_table(str(trips), database=DB, table="hive_only", sync_as_datasource=False, replace=True)
    hs2_cursor.execute(f"DESCRIBE FORMATTED {DB}.hive_only_ro")
    described = {str(r[0]).strip(): str(r[1]).strip() for r in hs2_cursor.fetchall() if r[0]}
    assert described["InputFormat"] == HUDI_INPUT_FORMAT and described["Provider"] == "hive"
    hs2_cursor.execute(f"SELECT uuid, rider, fare, city FROM {DB}.hive_only_ro")
    assert set(hs2_cursor.fetchall()) == _base_rows(trips)


def _hs2_loads(cursor: Any, class_name: str) -> bool:
    """Whether HiveServer2 can load a class: Hive's reflect UDF gives NULL when Class.forName throws."""
    try:
        cursor.execute(f"SELECT reflect('java.lang.Class', 'forName', '{class_name}')")
        rows = cursor.fetchall()
    except Exception:
        return False
    return [tuple(r) for r in rows] == [(f"class {class_name}",)]


def test_hive4_reads_the_read_optimized_table_with_hudis_bundle(trips: Path, hive_servers: HiveServers,
                                                                hs2_cursor: Any) -> None:
    """A real HiveServer2 reads a synced table's rows only with Hudi's hudi-hadoop-mr bundle on its classpath
    (the compose stack: the jar in docker/auxlib/, see docker/README.md); without it this test skips."""
    if hive_servers.local:
        pytest.skip("the local Spark Thrift Server is not Hive: see test_hiveserver2_sees_the_synced_tables")
    if not _hs2_loads(hs2_cursor, HUDI_INPUT_FORMAT):
        pytest.skip(f"this HiveServer2 cannot load {HUDI_INPUT_FORMAT}: it needs Hudi's hudi-hadoop-mr bundle on "
                    "its classpath (compose stack: copy the jar into docker/auxlib/, see docker/README.md)")
    hs2_cursor.execute(f"SELECT uuid, rider, fare, city FROM {DB}.trips_ro")
    assert set(hs2_cursor.fetchall()) == _base_rows(trips)


def test_replay_resolves_table_names_through_the_metastore(trips: Path, hive_servers: HiveServers,
                                                          tmp_path: Path) -> None:
    """A HiveServer2 log names tables only: ``replay --metastore`` finds each one's location as Hive sync
    registered it (``_ro`` read-optimized, ``_rt`` and the plain name snapshot), opens the table once, and plans
    the filters against it; a name the metastore does not have is reported with its scans."""
    import io

    from hive_bridge.app.cli import main

    def stmt(qid: str, sql: str) -> str:
        return (f"2024-01-01T10:00:01,000  INFO [HiveServer2-Background-Pool: Thread-45] ql.Driver: Compiling "
                f"command(queryId={qid}): {sql}\n")

    log = tmp_path / "hs2.log"
    log.write_text(stmt("ro", f"SELECT fare FROM {DB}.trips_ro WHERE city = 'chennai'")
                   + stmt("rt", f"SELECT fare FROM {DB}.trips_rt WHERE fare > 20 AND city = 'chennai'")
                   + stmt("plain", f"SELECT fare FROM {DB}.trips WHERE rider = 'rider-D'")
                   + stmt("gone", f"SELECT 1 FROM {DB}.no_such_table WHERE x = 1"))
    out, err = io.StringIO(), io.StringIO()
    code = main(["replay", "--json", "--metastore", hive_servers.metastore_uri, str(log)], stdout=out, stderr=err)
    rows = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
    summary = rows.pop()
    assert summary.get("summary") is True and code == 0, err.getvalue()
    assert {r["table"] for r in rows} == {str(trips)}
    by_query = {q: r for r in rows for q in r["queries"]}
    assert set(by_query) == {"ro", "rt", "plain"}
    assert (by_query["ro"]["query_type"], by_query["rt"]["query_type"], by_query["plain"]["query_type"]) == \
        ("read_optimized", "snapshot", "snapshot")
    # the chennai partition holds one file group of the three: the others are not kept
    assert by_query["ro"]["files_kept"] == 1 and by_query["ro"]["files_total"] == 3
    assert summary["scans_unresolved"] == {f"{DB}.no_such_table": 1}
