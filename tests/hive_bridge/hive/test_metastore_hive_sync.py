"""hive_bridge.hive without a metastore: the tables Hudi's Hive sync registers, partition values, the Spark
schema properties, query types by input format and name, and metastore partitions selecting file slices."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import sarg
from hive_bridge.filters.typemap import arrow_to_hive_sync_type, hive_to_arrow
from hive_bridge.hive import (
    HUDI_INPUT_FORMAT,
    HUDI_REALTIME_INPUT_FORMAT,
    HUDI_STORAGE_HANDLER,
    HivePartition,
    HiveSyncTable,
    HiveTable,
    MetastoreClient,
    MetastoreError,
    RegisteredHudiTable,
    hive_sync_tables,
    is_hudi,
    partition_values,
    query_type_of,
    registered_the_old_way,
    spark_table_properties,
)
from hive_bridge.table.table import HudiTable

MOR = "quickstart_trips_table.mor.avro.v6_trips_8i1u"
NON_HIVE_STYLE = "sample_table.cow.v6_simplekeygen_nonhivestyle"


def _table(**kw: Any) -> HiveTable:
    base: dict[str, Any] = dict(database="d", name="t", location="/x", columns=(("a", "int"),), partition_keys=(),
                                input_format=None, output_format=None, serde=None, table_type="EXTERNAL_TABLE")
    base.update(kw)
    return HiveTable(**base)


# ------------------------------------------------------------------------------------------ the tables synced


def test_copy_on_write_is_one_read_optimized_format_table() -> None:
    assert hive_sync_tables("t", "COPY_ON_WRITE") == [HiveSyncTable("t", realtime=False, read_optimized=False)]


def test_merge_on_read_defaults_are_ro_rt_and_the_plain_name() -> None:
    """HiveSyncTool.doSync, strategy ALL, sync_snapshot_with_table_name=true (Hudi 0.14+)."""
    synced = hive_sync_tables("trips", "MERGE_ON_READ")
    assert synced == [HiveSyncTable("trips_ro", False, True), HiveSyncTable("trips_rt", True, False),
                      HiveSyncTable("trips", True, False)]
    assert [t.input_format for t in synced] == [HUDI_INPUT_FORMAT, HUDI_REALTIME_INPUT_FORMAT,
                                                HUDI_REALTIME_INPUT_FORMAT]
    assert [t.name for t in hive_sync_tables("trips", "merge_on_read", sync_snapshot_with_table_name=False)] \
        == ["trips_ro", "trips_rt"]


def test_skip_ro_suffix_then_the_plain_name_ends_realtime_as_in_hudi() -> None:
    """With skip_ro_suffix the read-optimized table is `trips`, which the origin-table sync then updates to the
    realtime input format (HoodieHiveSyncClient.updateSerdeProperties)."""
    assert hive_sync_tables("trips", "MERGE_ON_READ", skip_ro_suffix=True) == [
        HiveSyncTable("trips", True, False), HiveSyncTable("trips_rt", True, False)]
    assert hive_sync_tables("trips", "MERGE_ON_READ", skip_ro_suffix=True, sync_snapshot_with_table_name=False) \
        == [HiveSyncTable("trips", False, True), HiveSyncTable("trips_rt", True, False)]


def test_table_strategies_register_one_table() -> None:
    assert hive_sync_tables("t", "MERGE_ON_READ", table_strategy="ro") == [HiveSyncTable("t", False, True)]
    assert hive_sync_tables("t", "MERGE_ON_READ", table_strategy="RT") == [HiveSyncTable("t", True, False)]
    with pytest.raises(MetastoreError, match="strategy"):
        hive_sync_tables("t", "MERGE_ON_READ", table_strategy="BOTH")
    with pytest.raises(MetastoreError, match="table type"):
        hive_sync_tables("t", "BOGUS")


# ------------------------------------------------------------------------------------------ partition values


def test_partition_values_as_hudis_default_extractors() -> None:
    assert partition_values("city=sf", ["city"], hive_style=True) == ["sf"]  # HiveStylePartitionValueExtractor
    assert partition_values("2024/01/02", ["day"], hive_style=False) == ["2024-01-02"]  # SinglePart...
    assert partition_values("us/ca", ["country", "state"], hive_style=False) == ["us", "ca"]  # MultiPartKeys...
    assert partition_values("country=us/state=ca", ["country", "state"], hive_style=True) == ["us", "ca"]
    assert partition_values("", [], hive_style=False) == []  # NonPartitionedExtractor
    with pytest.raises(MetastoreError, match="not hive-style"):
        partition_values("sf", ["city"], hive_style=True)


# ------------------------------------------------------------------------------------------ types and Spark


def test_hive_sync_types_follow_the_parquet_schema() -> None:
    """HiveSchemaUtil.convertField: INT32 is int whatever its annotation; timestamps are bigint unless
    support_timestamp."""
    assert arrow_to_hive_sync_type(pa.int8(), True) == "int"
    assert arrow_to_hive_sync_type(pa.int16(), True) == "int"
    assert arrow_to_hive_sync_type(pa.int64(), True) == "bigint"
    assert arrow_to_hive_sync_type(pa.timestamp("us", tz="UTC"), True) == "timestamp"
    assert arrow_to_hive_sync_type(pa.timestamp("us", tz="UTC"), False) == "bigint"
    assert arrow_to_hive_sync_type(pa.decimal128(10, 5), True) == "decimal(10,5)"
    assert arrow_to_hive_sync_type(pa.struct([("a", pa.int16()), ("b", pa.list_(pa.string()))]), True) \
        == "struct<a:int,b:array<string>>"


def test_hive_types_read_back_as_arrow() -> None:
    assert hive_to_arrow("decimal(10, 2)") == pa.decimal128(10, 2)
    assert hive_to_arrow("varchar(5)") == pa.string()
    assert hive_to_arrow("map<string,array<struct<`a b`:int,c:date>>>") == pa.map_(
        pa.string(), pa.list_(pa.struct([("a b", pa.int32()), ("c", pa.date32())])))
    with pytest.raises(ValueError, match="unknown Hive type"):
        hive_to_arrow("uniontype<int,string>")


def test_spark_schema_properties_put_partition_columns_last_and_split_long_schemas() -> None:
    fields = [pa.field("day", pa.string()), pa.field("id", pa.int64(), nullable=False),
              pa.field("ts", pa.timestamp("us", tz="UTC")), pa.field("local", pa.timestamp("us"))]
    props = spark_table_properties(fields, ["day"])
    assert props["spark.sql.sources.provider"] == "hudi"
    assert props["spark.sql.sources.schema.numParts"] == "1"
    assert (props["spark.sql.sources.schema.numPartCols"], props["spark.sql.sources.schema.partCol.0"]) == ("1", "day")
    schema = json.loads(props["spark.sql.sources.schema.part.0"])
    # a naive timestamp is `timestamp` as Hudi's Hive sync writes it (its converter has no timestamp_ntz)
    assert [(f["name"], f["type"], f["nullable"]) for f in schema["fields"]] == [
        ("id", "long", False), ("ts", "timestamp", True), ("local", "timestamp", True), ("day", "string", True)]
    wide = spark_table_properties([pa.field(f"column_{i:04d}", pa.string()) for i in range(200)], [],
                                  spark_version="4.0.0")
    parts = int(wide["spark.sql.sources.schema.numParts"])
    assert parts > 1 and "spark.sql.sources.schema.numPartCols" not in wide
    assert all(len(wide[f"spark.sql.sources.schema.part.{i}"]) == 4000 for i in range(parts - 1))
    text = "".join(wide[f"spark.sql.sources.schema.part.{i}"] for i in range(parts))
    assert len(json.loads(text)["fields"]) == 200 and wide["spark.sql.create.version"] == "4.0.0"


# ------------------------------------------------------------------------------------------ reading by name


def test_query_type_by_input_format_then_name() -> None:
    assert query_type_of(_table(name="trips", input_format=HUDI_INPUT_FORMAT)) == "read_optimized"
    assert query_type_of(_table(name="trips_ro", input_format=HUDI_REALTIME_INPUT_FORMAT)) == "snapshot"
    assert query_type_of(_table(name="trips_rt", input_format=HUDI_REALTIME_INPUT_FORMAT)) == "snapshot"
    assert query_type_of(_table(name="TRIPS_RO", input_format=None)) == "read_optimized"
    assert query_type_of(_table(name="trips", input_format="com.uber.hoodie.hadoop.HoodieInputFormat")) \
        == "read_optimized"
    # registered the old way (every table had HoodieParquetInputFormat): the name says
    old = {"storage_handler": HUDI_STORAGE_HANDLER}
    assert query_type_of(_table(name="trips", input_format=HUDI_INPUT_FORMAT, parameters=old)) == "snapshot"
    assert query_type_of(_table(name="trips_ro", input_format=HUDI_INPUT_FORMAT, parameters=old)) \
        == "read_optimized"
    assert registered_the_old_way(_table(parameters=old)) and is_hudi(_table(parameters=old))
    assert not registered_the_old_way(_table(input_format=HUDI_INPUT_FORMAT))


@pytest.fixture(scope="module")
def mor(shared_tables: dict[str, Path]) -> HudiTable:
    return HudiTable.open(shared_tables[MOR])


def _registered(root: Path, parts: dict[str, str], keys: tuple[tuple[str, str], ...] = (("city", "string"),),
                query_type: str = "snapshot") -> RegisteredHudiTable:
    hive = _table(name="trips", location=str(root), partition_keys=keys, input_format=HUDI_REALTIME_INPUT_FORMAT)
    return RegisteredHudiTable(hive, query_type, tuple(HivePartition((v,), str(root / p)) for v, p in parts.items()))


ALL = {"chennai": "city=chennai", "san_francisco": "city=san_francisco", "sao_paulo": "city=sao_paulo"}


def _filter(text: str, table: HudiTable) -> sarg.SearchArgument:
    from hive_bridge.filters.typemap import table_sarg_schema

    return sarg.read_filter(text, table_sarg_schema(table))


def test_partitions_prune_by_their_metastore_values(mor: HudiTable) -> None:
    ref = _registered(Path(mor.base_path), ALL)
    every = ref.select_slices(mor)
    assert len(every.slices) == 3 and every.partitions_total == 3 and not every.unregistered
    chosen = ref.select_slices(mor, _filter("city = 'chennai'", mor))
    assert [s.partition_path for s in chosen.slices] == ["city=chennai"]
    assert (chosen.partitions_kept, chosen.slices_dropped) == (1, 2) and chosen.bytes_dropped > 0
    # leaves on other columns are unknown: every partition is kept
    assert len(ref.select_slices(mor, _filter("fare > 40 or city = 'chennai'", mor)).slices) == 3
    assert len(ref.select_slices(mor, _filter("city in ('chennai', 'sao_paulo')", mor)).slices) == 2
    # a partition's one value, listed exactly, proves NOT IN false for all its rows: only the third is read
    chosen = ref.select_slices(mor, _filter("not (city in ('chennai', 'sao_paulo'))", mor))
    assert [s.partition_path for s in chosen.slices] == ["city=san_francisco"]


def test_read_optimized_selection_has_base_files_only(mor: HudiTable) -> None:
    ref = _registered(Path(mor.base_path), ALL, query_type="read_optimized")
    assert not any(s.log_files for s in ref.select_slices(mor).slices)
    assert any(s.log_files for s in ref.select_slices(mor, query_type="snapshot").slices)


def test_a_partition_whose_metastore_value_disagrees_with_its_folder_is_never_pruned_by_it(mor: HudiTable) -> None:
    """The rows read are the files' own (city = 'san_francisco'): a metastore value that says otherwise must not
    hide them."""
    ref = _registered(Path(mor.base_path), {"chennai": "city=chennai", "sf": "city=san_francisco",
                                      "sao_paulo": "city=sao_paulo"})
    chosen = ref.select_slices(mor, _filter("city = 'san_francisco'", mor))
    assert sorted(s.partition_path for s in chosen.slices) == ["city=san_francisco"]
    assert chosen.inconsistent == ("city=sf",)


def test_unregistered_partitions_are_not_read_and_said(mor: HudiTable) -> None:
    ref = _registered(Path(mor.base_path), {"chennai": "city=chennai", "sao_paulo": "city=sao_paulo"})
    with pytest.warns(RuntimeWarning, match=r"1 partition\(s\) of the Hudi table .* not registered.*city=san_fr"):
        chosen = ref.select_slices(mor)
    assert sorted(s.partition_path for s in chosen.slices) == ["city=chennai", "city=sao_paulo"]
    assert chosen.unregistered == ("city=san_francisco",)


def test_a_partition_outside_the_table_is_refused(mor: HudiTable, tmp_path: Path) -> None:
    ref = RegisteredHudiTable(_table(location=str(mor.base_path), partition_keys=(("city", "string"),)),
                              "snapshot", (HivePartition(("x",), str(tmp_path)),))
    with pytest.raises(MetastoreError, match="outside the Hudi table"):
        ref.select_slices(mor)


def test_typed_partition_keys_default_partition_and_unknown_types(shared_tables: dict[str, Path]) -> None:
    """Non-hive-style folders (`10/`) registered as byteField=10: values compared as the key's type; the default
    partition is NULL; a value that does not convert, or a key type not compared, is unknown (kept)."""
    table = HudiTable.open(shared_tables[NON_HIVE_STYLE])
    root = Path(table.base_path)
    parts = (HivePartition(("10",), str(root / "10")), HivePartition(("20",), str(root / "20")),
             HivePartition(("30",), str(root / "30")))
    ref = RegisteredHudiTable(_table(location=str(root), partition_keys=(("byteField", "int"),)), "snapshot", parts)
    assert [s.partition_path for s in ref.select_slices(table, _filter("byteField < 15", table)).slices] == ["10"]
    assert sorted({s.partition_path for s in ref.select_slices(table, _filter("byteField not in (10, 20)",
                                                                               table)).slices}) == ["30"]
    assert ref.select_slices(table, _filter("byteField is null", table)).slices == []
    as_char = RegisteredHudiTable(_table(location=str(root), partition_keys=(("byteField", "char(2)"),)),
                                  "snapshot", parts)
    assert len(as_char.select_slices(table, _filter("byteField < 15", table)).slices) == len(
        table.latest_file_slices())
    default = (HivePartition(("__HIVE_DEFAULT_PARTITION__",), str(root / "10")),
               HivePartition(("not a number",), str(root / "20")), HivePartition(("30",), str(root / "30")))
    odd = RegisteredHudiTable(_table(location=str(root), partition_keys=(("byteField", "int"),)), "snapshot", default)
    kept = odd.select_slices(table, _filter("byteField = 30", table))
    # 10/ and 20/ disagree with their metastore values (never pruned by them); 30/ is kept by its value
    assert sorted({s.partition_path for s in kept.slices}) == ["10", "20", "30"]


# ------------------------------------------------------------------------------------------ Spark's catalog


@pytest.mark.spark
def test_read_table_by_input_format_and_old_registrations(spark: Any, mor: HudiTable,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """read_table through Spark's catalog: the input format says the query type; a table that names the old
    storage handler is read, with a warning saying how to register it again."""
    import hive_bridge.spark as hs
    import hive_bridge.spark.catalog as hs_catalog

    root = str(mor.base_path)
    spark.sql(f"CREATE TABLE IF NOT EXISTS hive_sync_old_ro (ts bigint) USING parquet LOCATION '{root}' "
              f"TBLPROPERTIES ('storage_handler'='{HUDI_STORAGE_HANDLER}')")
    with pytest.warns(RuntimeWarning, match="no Hudi release ships.*sync_hudi_table"):
        old = hs.read_table(spark, "hive_sync_old_ro", "rider = 'rider-D'")
    assert old.listing.query_type == "read_optimized"
    assert [r["fare"] for r in old.df.collect()] == [33.9]  # the base file's value: the update is in a log

    catalog = {"trips_ro": HUDI_REALTIME_INPUT_FORMAT, "trips": HUDI_INPUT_FORMAT}
    monkeypatch.setattr(hs_catalog, "_catalog_table",
                        lambda _s, name: (root, {hs_catalog._INPUT_FORMAT: catalog[name]}))
    assert hs.read_table(spark, "trips_ro", "rider = 'rider-D'").df.collect()[0]["fare"] == 25.0  # realtime
    assert hs.read_table(spark, "trips", "rider = 'rider-D'").df.collect()[0]["fare"] == 33.9  # read-optimized


@pytest.mark.spark
def test_a_table_spark_cannot_describe_is_read_from_its_catalog_entry(spark: Any, mor: HudiTable,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Hive sync's tables name the provider `hudi`: a Spark without Hudi's bundle fails DESCRIBE on them
    (DATA_SOURCE_NOT_FOUND), and read_table reads the catalog entry instead."""
    import hive_bridge.spark as hs
    import hive_bridge.spark.catalog as hs_catalog

    root = str(mor.base_path)
    spark.sql(f"CREATE TABLE IF NOT EXISTS hive_sync_entry (ts bigint) USING parquet LOCATION '{root}'")
    real_sql = spark.sql

    def describe_fails(query: str, *args: Any, **kw: Any) -> Any:
        if query.startswith("DESCRIBE"):
            raise RuntimeError("[DATA_SOURCE_NOT_FOUND] Failed to find the data source: hudi.")
        return real_sql(query, *args, **kw)

    monkeypatch.setattr(spark, "sql", describe_fails)
    location, params = hs_catalog._catalog_table(spark, "hive_sync_entry")
    assert Path(location) == Path(root) and params["provider"] == "parquet"
    with pytest.raises(hs.SparkReadError, match="DATA_SOURCE_NOT_FOUND"):
        hs_catalog._catalog_table(spark, "no_such_table_here")


# ------------------------------------------------------------------------------------------ sync, no server


class _Recording(MetastoreClient):
    """A client whose metastore is a dict: what sync_hudi_table registers, without a server."""

    def __init__(self) -> None:
        super().__init__("thrift://127.0.0.1:1")
        self.registered: dict[str, dict[str, Any]] = {}

    def table_exists(self, db: str, name: str) -> bool:
        return name in self.registered

    def register_hudi_table(self, db: str, name: str, location: str, columns: Any, partition_keys: Any = (),
                            **kw: Any) -> HiveTable:
        self.registered[name] = dict(db=db, location=location, columns=list(columns), keys=list(partition_keys), **kw)
        return _table(database=db, name=name, location=location)


def test_sync_of_a_v8_table_records_completion_time_and_partitions(shared_tables: dict[str, Path]) -> None:
    root = shared_tables["quickstart_trips_table.mor.avro.v8_trips_8i3u1d"]
    client = _Recording()
    client.sync_hudi_table(str(root), database="db")
    assert list(client.registered) == ["v8_trips_8i3u1d_ro", "v8_trips_8i3u1d_rt", "v8_trips_8i3u1d"]
    ro = client.registered["v8_trips_8i3u1d_ro"]
    assert (ro["realtime"], ro["read_optimized"]) == (False, True)
    assert ro["keys"] == [("city", "string")] and "city" not in dict(ro["columns"])
    assert ro["columns"][:5] == [(n, "string") for n in ("_hoodie_commit_time", "_hoodie_commit_seqno",
                                                         "_hoodie_record_key", "_hoodie_partition_path",
                                                         "_hoodie_file_name")]
    table = HudiTable.open(root)
    latest = table.timeline.latest_completed_write
    assert latest is not None and ro["parameters"]["last_commit_time_sync"] == latest.timestamp
    assert ro["parameters"]["last_commit_completion_time_sync"] == max(
        i.completion_time for i in table.timeline.completed_writes if i.completion_time)
    assert [(p.values, p.location) for p in ro["partitions"]] == [
        ((c,), f"{root.as_uri()}/city={c}") for c in ("chennai", "san_francisco", "sao_paulo")]
    assert [f.name for f in ro["spark_schema"]][-1] == "city"
    with pytest.raises(MetastoreError, match=r"already exists .*replace=True"):
        client.sync_hudi_table(str(root), database="db")


def test_sync_of_a_copy_on_write_table_without_meta_fields_or_timestamps(shared_tables: dict[str, Path]) -> None:
    root = shared_tables[NON_HIVE_STYLE]
    client = _Recording()
    client.sync_hudi_table(str(root), table="t", omit_metadata_fields=True, support_timestamp=False,
                           table_properties={"owner.team": "x"}, serde_properties={"k": "v"})
    (only,) = client.registered.values()
    assert list(client.registered) == ["t"] and only["db"] == "default"
    assert (only["realtime"], only["read_optimized"]) == (False, False)  # syncHoodieTable(name, false, false)
    columns = dict(only["columns"])
    assert not any(c.startswith("_hoodie") for c in columns)
    assert columns["timestampField"] == "bigint" and columns["shortField"] == "int"
    assert only["keys"] == [("byteField", "int")]
    assert [p.values for p in only["partitions"]] == [("10",), ("20",), ("30",)]  # SinglePart: the folder names
    assert only["parameters"]["owner.team"] == "x" and only["serde_parameters"] == {"k": "v"}
    assert "last_commit_completion_time_sync" not in only["parameters"]  # version 6: no completion times


def test_sync_refuses_what_it_cannot_register(tmp_path: Path) -> None:
    with pytest.raises(MetastoreError, match="cannot sync"):
        _Recording().sync_hudi_table(str(tmp_path))
