"""The storage-handler contract: JobConf keys, table job properties, decompose_predicate, the meta hook."""

from __future__ import annotations

import pytest

import sarg
from hive_bridge.hive.handler import (
    COLUMNS,
    COLUMNS_TYPES,
    INPUT_DIR,
    HandlerError,
    HudiMetaHook,
    HudiStorageHandler,
    JobConf,
    TableDesc,
)
from sarg.schema import split_type_list


def test_split_hive_types_keeps_nested_commas_and_colons() -> None:
    assert split_type_list("int:string:decimal(10,2):struct<a:int,b:string>:date") == [
        "int", "string", "decimal(10,2)", "struct<a:int,b:string>", "date"]
    assert split_type_list("") == []


def test_jobconf_schema_and_mismatch() -> None:
    conf = JobConf({COLUMNS: "a,b", COLUMNS_TYPES: "bigint:decimal(10,2)"})
    assert conf.schema() == {"a": "bigint", "b": "decimal(10,2)"}
    with pytest.raises(HandlerError, match=r"2 names but columns\.types has 1 types"):
        JobConf({COLUMNS: "a,b", COLUMNS_TYPES: "bigint"}).schema()


def test_handler_class_names_and_job_properties() -> None:
    h = HudiStorageHandler()
    assert h.get_input_format_class() == "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    assert h.get_serde_class() == "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
    assert h.get_output_format_class() == "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
    props: dict[str, str] = {}
    h.configure_table_job_properties(TableDesc("t", "/data/t", (("id", "bigint"), ("name", "string")),
                                               (("day", "string"),)), props)
    assert props[INPUT_DIR] == "/data/t"
    assert props[COLUMNS] == "id,name,day"
    assert props[COLUMNS_TYPES] == "bigint:string:string"


def test_decompose_predicate_pushes_sarg_and_keeps_whole_residual() -> None:
    conf = JobConf({COLUMNS: "id,name", COLUMNS_TYPES: "bigint:string"})
    text = "leaf-0 = (EQUALS id 5), leaf-1 = (IS_NULL name), expr = (or leaf-0 leaf-1)"
    d = HudiStorageHandler().decompose_predicate(conf, text)
    assert d is not None
    assert d.pushed_predicate == "(or leaf-(EQUALS id 5) leaf-(IS_NULL name))"
    assert d.residual_predicate == text
    assert d.pushed_predicate_object.leaves[0].literal == 5


def test_decompose_predicate_returns_none_when_nothing_can_be_pushed() -> None:
    conf = JobConf({COLUMNS: "id", COLUMNS_TYPES: "bigint"})
    assert HudiStorageHandler().decompose_predicate(conf, "YES_NO_NULL") is None
    built = sarg.builder().literal(sarg.TruthValue.YES_NO_NULL).build()
    assert HudiStorageHandler().decompose_predicate(conf, built) is None
    # a LIKE prefix prunes beside a SearchArgument, but what goes back to Hive is a SearchArgument alone
    named = JobConf({COLUMNS: "id,name", COLUMNS_TYPES: "bigint:string"})
    assert HudiStorageHandler().decompose_predicate(named, "name LIKE 'ab%'") is None
    d = HudiStorageHandler().decompose_predicate(named, "id = 5 AND name LIKE 'ab%'")
    assert d is not None and d.pushed_predicate == "leaf-(EQUALS id 5)"
    assert d.residual_predicate == "id = 5 AND name LIKE 'ab%'"


def test_decompose_predicate_bad_text_is_a_handler_error() -> None:
    with pytest.raises(HandlerError, match="line 1, column"):
        HudiStorageHandler().decompose_predicate(JobConf(), "(and leaf-(EQUALS a 1)")


def test_meta_hook_refuses_a_folder_that_is_not_hudi(tmp_path) -> None:
    with pytest.raises(HandlerError, match="table t"):
        HudiMetaHook().pre_create_table(TableDesc("t", str(tmp_path), (("id", "bigint"),)))


def test_path_values_never_stand_in_for_a_stored_partition_column(shared_tables) -> None:  # type: ignore[no-untyped-def]
    """A timestamp-based key generator writes `2024/01/15/10` in the path for `ts_str = 2024-01-15T10:30:00.000Z`:
    pruning must judge a partition column stored in the files by the files' statistics, never by the path (which
    once dropped every file here and lost the rows)."""
    import pyarrow.parquet as pq

    from hive_bridge.pruning import Pruner
    from hive_bridge.stats.index import ColumnStatsIndex
    from hive_bridge.table.table import HudiTable

    root = shared_tables["sample_table.cow.v9_timebasedkeygen_nonhivestyle"]
    table = HudiTable.open(root)
    slices = table.latest_file_slices()
    pruner = Pruner(table, ColumnStatsIndex(table, persist=False), slices)
    values: dict[str, set[str]] = {}
    for s in slices:
        assert s.base_file is not None
        for v in pq.read_table(s.base_file.full_path, columns=["ts_str"]).column("ts_str").to_pylist():
            values.setdefault(v, set()).add(s.base_file.full_path)
    assert any("/" not in v for v in values) and all("/" in s.partition_path for s in slices)
    for value, files in values.items():
        kept = {f.path for f in pruner.run(sarg.parse(f"leaf-(EQUALS ts_str {value})", {"ts_str": "string"})).files}
        assert files <= kept, value


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    import pyarrow as pa

    from hive_bridge.testing.writer import HudiWriter

    root = tmp_path_factory.mktemp("handler") / "events"
    ids = list(range(100))
    data = pa.table({"id": pa.array(ids, pa.int64()), "name": pa.array([f"n{i:02d}" for i in ids]),
                     "region": pa.array(["eu" if i < 50 else "us" for i in ids])})
    HudiWriter(root, partition_fields=("region",), record_key_fields=("id",), rows_per_file=10).insert(data)
    return root


def test_list_status_prunes_with_the_jobconf_filter(events) -> None:  # type: ignore[no-untyped-def]
    from hive_bridge.hive.handler import FILTER_TEXT, SARG_PUSHDOWN, HoodieParquetInputFormat, job_conf_for
    from hive_bridge.table.table import HudiTable

    table = HudiTable.open(events)
    fmt = HoodieParquetInputFormat()
    conf = job_conf_for(table, "leaf-0 = (EQUALS id 42), expr = leaf-0")
    assert conf[SARG_PUSHDOWN] and conf[COLUMNS].startswith("_hoodie_commit_time,") and "region" in conf[COLUMNS]
    result = fmt.list_status(conf)
    assert result.files_total == 10 and len(result.files) == 1
    status = result.files[0]
    assert status.path.endswith(".parquet") and "region=eu" in status.path and status.length > 0
    assert status.modification_time > 0
    assert result.dropped_by_statistics == 9

    conf = job_conf_for(table, "region = 'us' and id < 60")  # HiveQL goes to hive.io.filter.text
    assert FILTER_TEXT in conf
    result = fmt.list_status(conf)
    assert result.dropped_by_partition == 5 and len(result.files) == 1

    everything = fmt.list_status(job_conf_for(table))
    assert len(everything.files) == 10 and everything.dropped_by_statistics == 0


def test_list_status_of_partition_folders(events) -> None:  # type: ignore[no-untyped-def]
    from hive_bridge.hive.handler import HoodieParquetInputFormat, job_conf_for
    from hive_bridge.table.table import HudiTable

    conf = job_conf_for(HudiTable.open(events), "leaf-(LESS_THAN id 25)")
    conf[INPUT_DIR] = str(events / "region=eu")
    result = HoodieParquetInputFormat().list_status(conf)
    assert result.files_total == 5 and len(result.files) == 3
    conf[INPUT_DIR] = str(events.parent)
    with pytest.raises(HandlerError, match="not inside a Hudi table"):
        HoodieParquetInputFormat().list_status(conf)


def test_realtime_and_read_optimized_input_formats(shared_tables) -> None:  # type: ignore[no-untyped-def]
    """Hudi's two input formats on a merge-on-read table: HoodieParquetInputFormat (Hive sync's ``<t>_ro``)
    lists base files only and judges them alone; HoodieParquetRealtimeInputFormat (``<t>``, ``<t>_rt``) lists
    slices with their log files and judges each by its base and log statistics together."""
    from hive_bridge.hive.handler import (
        HoodieParquetInputFormat,
        HoodieParquetRealtimeInputFormat,
        input_format_for,
        job_conf_for,
    )
    from hive_bridge.table.table import HudiTable

    table = HudiTable.open(shared_tables["quickstart_trips_table.mor.avro.v6_trips_8i1u"])
    # the table's one log record was written by the deltacommit after the insert: only it has that commit time
    conf = job_conf_for(table, "_hoodie_commit_time = '20250331030645735'")
    ro = HoodieParquetInputFormat().list_status(conf)
    rt = HoodieParquetRealtimeInputFormat().list_status(conf)
    assert ro.query_type == "read_optimized" and rt.query_type == "snapshot"
    assert all(not s.log_files for s in ro.slices) and ro.log_files_total == 0
    assert [s.file_id for s in rt.slices if s.log_files] and rt.log_files_total == 1
    assert rt.kept_log_files == 1 and ro.kept_log_files == 0
    with_log = next(s.file_id for s in table.latest_file_slices() if s.log_files)
    assert with_log in {s.file_id for s in rt.slices}  # the log's record matches: the slice must be read
    assert ro.files_kept == 0  # no base file holds a row of that commit
    assert rt.files_kept == 1
    assert type(input_format_for("org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat")) \
        is HoodieParquetRealtimeInputFormat
    assert type(input_format_for("org.apache.hudi.hadoop.HoodieParquetInputFormat")) is HoodieParquetInputFormat
    assert type(input_format_for(None, "trips_ro")) is HoodieParquetInputFormat
    assert type(input_format_for(None, "trips_rt")) is HoodieParquetRealtimeInputFormat
    assert type(input_format_for(None, "trips")) is HoodieParquetRealtimeInputFormat
    with pytest.raises(ValueError, match="unknown query type"):
        HoodieParquetInputFormat(query_type="incremental")
