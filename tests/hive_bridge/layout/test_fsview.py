"""File-system view: latest file slices of real Hudi tables equal hudi-rs's, file for file; own edge cases."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from hive_bridge.errors import HiveBridgeError, HudiTableError
from hive_bridge.layout.fsview import (
    FileSlice,
    parse_base_file_name,
    parse_log_file_name,
    partition_values_for,
)
from hive_bridge.layout.properties import TableProperties, parse_java_properties
from hive_bridge.layout.timeline import State, normalize_timestamp, parse_instant_file_name
from hive_bridge.table.table import HudiTable
from tests.conftest import FIXTURE_NAMES
from tests.hive_bridge.oracle import our_slices, reference_slices

OVERWRITE_COW = "sample_table.cow.v6_simplekeygen_nonhivestyle_overwritetable"
ROLLBACK_MOR = "sample_table.mor.parquet.v6_nonpartitioned_rollback"
TRIPS_V8 = "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"
TRIPS_V6 = "quickstart_trips_table.mor.avro.v6_trips_8i1u"
V9_TXNS = "sample_table.cow.v9_txns_simple_nometa"
V9_TIME = "sample_table.cow.v9_timebasedkeygen_nonhivestyle"


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_latest_slices_equal_hudi_rs(fixture_tables: dict[str, Path], name: str) -> None:
    path = fixture_tables[name]
    ours = HudiTable.open(path).latest_file_slices()
    assert our_slices(ours) == reference_slices(path)
    for s in ours:
        assert s.base_file is not None
        assert Path(s.base_file.full_path).is_file()
        assert s.base_file.full_path == str(path / s.base_file.path)
        assert s.base_file.size == Path(s.base_file.full_path).stat().st_size
        assert s.base_file.instant == s.base_instant and s.base_file.file_id == s.file_id


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_properties_of_every_fixture(fixture_tables: dict[str, Path], name: str) -> None:
    props = HudiTable.open(fixture_tables[name]).properties
    assert props.name and props.table_type == ("MERGE_ON_READ" if ".mor." in name else "COPY_ON_WRITE")
    expected_version = int(name.rsplit(".", 1)[-1][1])
    assert props.version == expected_version
    assert props.timeline_layout_version == (1 if expected_version == 6 else 2)
    assert props.base_path == str(fixture_tables[name])
    assert props.drop_partition_columns is False


def test_properties_fields(fixture_tables: dict[str, Path]) -> None:
    complex_ = HudiTable.open(fixture_tables["sample_table.cow.v6_complexkeygen_hivestyle"]).properties
    assert complex_.partition_fields == ["byteField", "shortField"]
    assert complex_.record_key_fields == ["id", "name"]
    assert complex_.hive_style_partitioning is True
    plain = HudiTable.open(fixture_tables["sample_table.cow.v8_simplekeygen_nonhivestyle"]).properties
    assert plain.partition_fields == ["byteField"] and plain.hive_style_partitioning is False
    nonpart = HudiTable.open(fixture_tables["sample_table.cow.v6_nonpartitioned"]).properties
    assert nonpart.partition_fields == [] and not nonpart.is_partitioned
    nometa = HudiTable.open(fixture_tables["sample_table.cow.v6_simplekeygen_hivestyle_no_metafields"]).properties
    assert nometa.populate_meta_fields is False
    # escaped `\:` in the create schema is unescaped
    assert nonpart.create_schema is not None and json.loads(nonpart.create_schema)["type"] == "record"


def test_partition_values(fixture_tables: dict[str, Path]) -> None:
    by_table = {
        "sample_table.cow.v6_complexkeygen_hivestyle": {"byteField", "shortField"},
        "sample_table.cow.v6_simplekeygen_nonhivestyle": {"byteField"},
        V9_TIME: {"ts_str"},
        "sample_table.cow.v6_nonpartitioned": set(),
    }
    for name, keys in by_table.items():
        for s in HudiTable.open(fixture_tables[name]).latest_file_slices():
            assert set(s.partition_values) == keys
    hive = HudiTable.open(fixture_tables["sample_table.cow.v6_complexkeygen_hivestyle"]).latest_file_slices()
    assert {(s.partition_values["byteField"], s.partition_values["shortField"]) for s in hive} == {
        ("10", "300"), ("20", "100"), ("30", "100")}
    plain = HudiTable.open(fixture_tables["sample_table.cow.v6_simplekeygen_nonhivestyle"]).latest_file_slices()
    assert sorted(s.partition_values["byteField"] for s in plain) == ["10", "20", "30"]
    timed = HudiTable.open(fixture_tables[V9_TIME]).latest_file_slices()
    assert {s.partition_values["ts_str"] for s in timed} == {s.partition_path for s in timed}
    assert "2024/01/15/10" in {s.partition_path for s in timed}


def test_partition_values_urlencoded_and_unknown_layout() -> None:
    props = TableProperties.from_mapping(
        {"hoodie.table.name": "t", "hoodie.table.version": "6", "hoodie.table.partition.fields": "a,b",
         "hoodie.datasource.write.partitionpath.urlencode": "true"}, Path("/x"))
    assert partition_values_for("x%2Fy/2", props) == {"a": "x/y", "b": "2"}
    assert partition_values_for("a=1/b=%3D", props) == {"a": "1", "b": "="}
    assert partition_values_for("1/2/3", props) == {}
    assert partition_values_for("", props) == {}


def test_timeline_states_v6_and_v8(fixture_tables: dict[str, Path]) -> None:
    v6 = HudiTable.open(fixture_tables["sample_table.cow.v6_simplekeygen_nonhivestyle"]).timeline
    assert [(i.timestamp, i.action, i.state) for i in v6.completed] == [
        ("20240418172802262", "commit", State.COMPLETED), ("20240418172804498", "commit", State.COMPLETED)]
    assert v6.inflight == () and v6.requested == ()
    assert all(i.completion_time is None for i in v6.instants)
    v8 = HudiTable.open(fixture_tables[TRIPS_V8]).timeline
    actions = {i.timestamp: (i.action, i.state, i.completion_time) for i in v8.instants}
    assert actions["20251220210129235"] == ("commit", State.COMPLETED, "20251220210129883")  # compaction
    assert actions["20251220210117766"] == ("indexing", State.COMPLETED, "20251220210118628")
    assert [i.timestamp for i in v8.completed_writes][-1] == "20251220210130911"
    v9 = HudiTable.open(fixture_tables[V9_TXNS]).timeline
    clustering = v9.get("20260307135709297")
    assert clustering is not None and clustering.action == "replacecommit" and clustering.is_completed


def test_replacecommit_hides_replaced_groups_and_time_travel(fixture_tables: dict[str, Path]) -> None:
    path = fixture_tables[OVERWRITE_COW]
    table = HudiTable.open(path)
    latest = table.latest_file_slices()
    assert [s.file_id for s in latest] == ["ebcb261d-62d3-4895-90ec-5b3c9622dff4-0"]
    assert len(table.timeline.replaced_file_groups()) == 3
    before = table.latest_file_slices(as_of="20240707001302376")
    assert our_slices(before) == reference_slices(path, "20240707001302376")
    assert len(before) == 3
    first = table.latest_file_slices(as_of="20240707001301554")
    assert our_slices(first) == reference_slices(path, "20240707001301554")
    assert {s.base_instant for s in first} == {"20240707001301554"}
    assert table.latest_file_slices(as_of="20240101000000000") == []
    # 14-digit (seconds) times and instants are accepted
    assert our_slices(table.latest_file_slices(as_of="20240707001302")) == our_slices(before)
    instant = table.timeline.get("20240707001301554")
    assert instant is not None and our_slices(table.latest_file_slices(as_of=instant)) == our_slices(first)


@pytest.mark.parametrize("name", [V9_TXNS, TRIPS_V8, "sample_table.cow.v6_complexkeygen_hivestyle"])
def test_time_travel_equals_hudi_rs_at_every_instant(fixture_tables: dict[str, Path], name: str) -> None:
    path = fixture_tables[name]
    table = HudiTable.open(path)
    for instant in table.timeline.completed_writes:
        slices = table.latest_file_slices(as_of=instant.timestamp)
        ours = our_slices(slices)
        ref = reference_slices(path, instant.timestamp)
        # hudi-rs keeps log files written after the as-of instant in the slice; we leave them out
        assert [o[:5] for o in ours] == [r[:5] for r in ref], instant
        for o, r in zip(ours, ref, strict=True):
            assert set(o[5]) <= set(r[5])
        assert all(lf.instant <= instant.timestamp for s in slices for lf in s.log_files)
    assert our_slices(table.latest_file_slices()) == reference_slices(path)


def test_mor_log_files(fixture_tables: dict[str, Path]) -> None:
    rollback = HudiTable.open(fixture_tables[ROLLBACK_MOR]).latest_file_slices()
    assert len(rollback) == 1 and rollback[0].has_log_files
    assert [lf.version for lf in rollback[0].log_files] == [1, 2, 3]
    assert {lf.instant for lf in rollback[0].log_files} == {"20250126040823628"}
    trips = HudiTable.open(fixture_tables[TRIPS_V8]).latest_file_slices()
    logs = {s.partition_path: [lf.instant for lf in s.log_files] for s in trips}
    # v8: only the log written after the compaction (by completion time) belongs to the latest slice
    assert logs == {"city=chennai": [], "city=san_francisco": [], "city=sao_paulo": ["20251220210130911"]}
    v6 = HudiTable.open(fixture_tables[TRIPS_V6]).latest_file_slices()
    assert sum(s.has_log_files for s in v6) == 1


def test_rolled_back_commit_is_not_returned(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy(ROLLBACK_MOR)
    # the rollback deleted this base file of the failed commit; put it back as a leftover
    leftover = path / "cd329d8f-0ce4-4654-84ab-2f769aae5034-0_1-33-44_20250126040826878.parquet"
    shutil.copy(next(path.glob("0712b9f9*.parquet")), leftover)
    table = HudiTable.open(path)
    assert "20250126040826878" in table.timeline.rolled_back_timestamps
    assert [s.file_id for s in table.latest_file_slices()] == ["0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0"]


def test_uncommitted_files_are_not_returned(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("sample_table.cow.v8_simplekeygen_nonhivestyle")
    expected = our_slices(HudiTable.open(path).latest_file_slices())
    timeline = path / ".hoodie" / "timeline"
    src = next((path / "10").glob("*.parquet"))
    # an inflight commit, a requested-only commit and an orphan file with no instant at all
    (timeline / "20250713011400000.commit.requested").write_bytes(b"")
    (timeline / "20250713011400000.inflight").write_bytes(b"")
    (timeline / "20250713011500000.commit.requested").write_bytes(b"")
    fid = "7b0ea4f9-3768-4e87-b12c-8d33efd22b55-0"
    for ts in ("20250713011400000", "20250713011500000", "20250713011600000"):
        shutil.copy(src, path / "10" / f"{fid}_9-9-9_{ts}.parquet")
    table = HudiTable.open(path)
    assert [i.timestamp for i in table.timeline.inflight] == ["20250713011400000"]
    assert [i.timestamp for i in table.timeline.requested] == ["20250713011500000"]
    assert our_slices(table.latest_file_slices()) == expected
    assert our_slices(table.latest_file_slices()) == reference_slices(path)


def test_v6_inflight_older_than_latest_commit_is_not_returned(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("sample_table.cow.v6_simplekeygen_nonhivestyle")
    expected = our_slices(HudiTable.open(path).latest_file_slices())
    hoodie = path / ".hoodie"
    # an instant between the two commits that never completed (e.g. a crashed concurrent writer)
    (hoodie / "20240418172803000.commit.requested").write_bytes(b"")
    (hoodie / "20240418172803000.inflight").write_bytes(b"{}")
    src = next((path / "20").glob("*.parquet"))
    shutil.copy(src, path / "20" / "76e0556b-390d-4249-b7ad-9059e2bc2cbd-0_0-1-1_20240418172803000.parquet")
    assert our_slices(HudiTable.open(path).latest_file_slices()) == expected


def test_file_slice_is_frozen(fixture_tables: dict[str, Path]) -> None:
    s = HudiTable.open(fixture_tables["sample_table.cow.v6_nonpartitioned"]).latest_file_slices()[0]
    assert isinstance(s, FileSlice)
    with pytest.raises(AttributeError):
        s.file_id = "x"  # type: ignore[misc]
    assert s.base_file is not None
    with pytest.raises(AttributeError):
        s.base_file.size = 0  # type: ignore[misc]
    assert s.partition_path == "" and s.partition_values == {} and s.log_files == ()


def test_arrow_schema(fixture_tables: dict[str, Path]) -> None:
    schema = HudiTable.open(fixture_tables["sample_table.cow.v6_nonpartitioned"]).arrow_schema()
    assert schema.names[:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                                "_hoodie_partition_path", "_hoodie_file_name"]
    assert str(schema.field("decimalField").type) == "decimal128(10, 5)"
    assert str(schema.field("timestampField").type) == "timestamp[us, tz=UTC]"
    data = HudiTable.open(fixture_tables["sample_table.cow.v6_nonpartitioned"]).arrow_schema(
        include_meta_fields=False)
    assert data.names[0] == "id"
    empty = HudiTable.open(fixture_tables["sample_table.cow.v6_empty"]).arrow_schema()
    assert "isActive" in empty.names and str(empty.field("id").type) == "int32"


# ------------------------------------------------------------------- errors
def _messages(exc: pytest.ExceptionInfo[HudiTableError]) -> str:
    assert isinstance(exc.value, HiveBridgeError)
    assert exc.value.__cause__ is None or not isinstance(exc.value.__cause__, HudiTableError)
    return str(exc.value)


def test_error_not_a_hudi_folder(tmp_path: Path) -> None:
    with pytest.raises(HudiTableError) as exc:
        HudiTable.open(tmp_path)
    assert str(tmp_path) in _messages(exc) and "no .hoodie/" in str(exc.value)
    with pytest.raises(HudiTableError, match="does not exist"):
        HudiTable.open(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(HudiTableError, match="not a folder"):
        HudiTable.open(tmp_path / "file")


def test_error_missing_properties(tmp_path: Path) -> None:
    (tmp_path / ".hoodie").mkdir()
    with pytest.raises(HudiTableError) as exc:
        HudiTable.open(tmp_path)
    assert "hoodie.properties" in _messages(exc) and "missing" in str(exc.value)


@pytest.mark.parametrize(("text", "why"), [
    ("hoodie.table.name=t\nhoodie.table.version=5\n", "unsupported table version 5"),
    ("hoodie.table.name=t\nhoodie.table.version=six\n", "not a number"),
    ("hoodie.table.name=t\n", "hoodie.table.version is missing"),
    ("hoodie.table.version=6\n", "hoodie.table.name is missing"),
    ("hoodie.table.name=t\nhoodie.table.version=6\nhoodie.table.type=BOTH\n", "unknown hoodie.table.type"),
])
def test_error_bad_properties(tmp_path: Path, text: str, why: str) -> None:
    (tmp_path / ".hoodie").mkdir()
    (tmp_path / ".hoodie" / "hoodie.properties").write_text(text)
    with pytest.raises(HudiTableError) as exc:
        HudiTable.open(tmp_path)
    assert why in _messages(exc) and "hoodie.properties" in str(exc.value)


def test_error_unreadable_commit_file_v6(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy(OVERWRITE_COW)
    bad = path / ".hoodie" / "20240707001303088.replacecommit"
    bad.write_bytes(b'{"partitionToWriteStats": {')
    with pytest.raises(HudiTableError) as exc:
        HudiTable.open(path).latest_file_slices()
    assert str(bad) in _messages(exc) and "unreadable commit file" in str(exc.value)


def test_error_unreadable_commit_file_v8_avro(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy(V9_TXNS)
    bad = path / ".hoodie" / "timeline" / "20260307135707243_20260307135707527.replacecommit"
    bad.write_bytes(bad.read_bytes()[:200])
    with pytest.raises(HudiTableError) as exc:
        HudiTable.open(path).latest_file_slices()
    assert str(bad) in _messages(exc) and "damaged Avro" in str(exc.value)


def test_error_damaged_replace_metadata(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy(OVERWRITE_COW)
    f = path / ".hoodie" / "20240707001303088.replacecommit"
    meta = json.loads(f.read_text())
    meta["partitionToReplaceFileIds"] = ["not", "a", "map"]
    f.write_text(json.dumps(meta))
    with pytest.raises(HudiTableError, match="partitionToReplaceFileIds is not a map"):
        HudiTable.open(path).latest_file_slices()


def test_error_bad_as_of(fixture_tables: dict[str, Path]) -> None:
    table = HudiTable.open(fixture_tables[OVERWRITE_COW])
    with pytest.raises(HudiTableError, match="not an instant time"):
        table.latest_file_slices(as_of="yesterday")


# ------------------------------------------------------------ name parsing
def test_parse_file_names() -> None:
    assert parse_base_file_name("abc-0_1-2-3_20240101000000000.parquet") == ("abc-0", "1-2-3", "20240101000000000")
    assert parse_base_file_name("a_b_c_1-2-3_20240101000000000.parquet") == ("a_b_c", "1-2-3", "20240101000000000")
    assert parse_base_file_name("abc-0_1-2-3_2024x.parquet") is None
    assert parse_base_file_name(".abc-0_1-2-3_20240101000000000.parquet") is None
    assert parse_base_file_name("abc.parquet") is None
    assert parse_log_file_name(".f-0_20250126040823628.log.2_1-0-1") == ("f-0", "20250126040823628", 2, "1-0-1")
    assert parse_log_file_name(".f-0_20250126040823628.log.12") == ("f-0", "20250126040823628", 12, "")
    assert parse_log_file_name(".hoodie_partition_metadata") is None
    assert parse_log_file_name("f-0_20250126040823628.log.1_0-1-1") is None


def test_parse_instant_file_names() -> None:
    i = parse_instant_file_name("20240101000000000.commit", 1)
    assert i is not None and (i.action, i.state, i.completion_time) == ("commit", State.COMPLETED, None)
    i = parse_instant_file_name("20240101000000000.inflight", 1)
    assert i is not None and (i.action, i.state) == ("commit", State.INFLIGHT)
    i = parse_instant_file_name("20240101000000000.replacecommit.requested", 2)
    assert i is not None and (i.action, i.state) == ("replacecommit", State.REQUESTED)
    i = parse_instant_file_name("20240101000000000_20240101000001000.deltacommit", 2)
    assert i is not None and (i.action, i.state, i.completion_time) == (
        "deltacommit", State.COMPLETED, "20240101000001000")
    assert parse_instant_file_name("20240101000000000_20240101000001000.deltacommit", 1) is None
    assert parse_instant_file_name("hoodie.properties", 1) is None
    assert parse_instant_file_name("20240101000000000.commit.crc", 2) is None
    assert parse_instant_file_name("20240101000000000.unknownaction", 1) is None


def test_java_properties_parser() -> None:
    text = (
        "# comment\n! also comment\n  key1 = value one \nkey2:va\\:lue\nkey3 value3\n"
        "multi=first \\\n    second\nesc=tab\\there\\u0041\nempty=\n"
    )
    props = parse_java_properties(text)
    assert props == {"key1": "value one ", "key2": "va:lue", "key3": "value3", "multi": "first second",
                     "esc": "tab\thereA", "empty": ""}
    with pytest.raises(HudiTableError, match=r"hoodie.properties: not a properties file"):
        parse_java_properties("bad=\\u00zz\n", "t/.hoodie/hoodie.properties")


def test_java_properties_equal_to_the_hand_written_parser_on_every_fixture() -> None:
    """Every hoodie.properties of the shared tables (data and metadata tables) reads as the parser the project
    had before it used the javaproperties package (the expected entries are that parser's, recorded)."""
    import zipfile

    from tests.conftest import SHARED_TABLES

    seen = 0
    for z in sorted(Path(SHARED_TABLES).glob("*.zip")):
        with zipfile.ZipFile(z) as zf:
            for name in zf.namelist():
                if name.endswith("/hoodie.properties") and "__MACOSX" not in name:
                    text = zf.read(name).decode("latin-1")
                    props = parse_java_properties(text)
                    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and ln.strip()[0] not in "#!"]
                    assert len(props) == len(lines), name
                    for ln in lines:
                        key, _, value = ln.partition("=")
                        assert props[key] == value.replace("\\:", ":").replace("\\=", "="), (name, key)
                    seen += 1
    assert seen >= 40


def test_normalize_timestamp() -> None:
    assert normalize_timestamp("20240101000000000") == "20240101000000000"
    assert normalize_timestamp("20240101000000") == "20240101000000999"
    assert normalize_timestamp("2024-01-01 00:00:00.123") == "20240101000000123"
    with pytest.raises(HudiTableError):
        normalize_timestamp("2024")


def test_restore_undoes_commits(tmp_path: Path) -> None:
    import fastavro
    import pyarrow as pa

    from hive_bridge.testing.writer import HudiWriter

    w = HudiWriter(tmp_path / "t", rows_per_file=2)
    first = w.insert(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    second = w.insert(pa.table({"id": pa.array([4, 5], pa.int64())}))
    hoodie = tmp_path / "t" / ".hoodie"
    # a restore that undid the first commit, whose files could not be deleted: its commit file is gone, so
    # only the restore metadata tells that these files (older than every remaining commit) are not data
    for f in hoodie.glob(f"{first.instant}.*"):
        f.unlink()
    restore = w.new_instant()
    schema = {"type": "record", "name": "HoodieRestoreMetadata", "fields": [
        {"name": "startRestoreTime", "type": "string"},
        {"name": "instantsToRollback", "type": {"type": "array", "items": {
            "type": "record", "name": "HoodieInstantInfo",
            "fields": [{"name": "commitTime", "type": "string"}, {"name": "action", "type": "string"}]}}},
    ]}
    with (hoodie / f"{restore}.restore").open("wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), [
            {"startRestoreTime": restore, "instantsToRollback": [{"commitTime": first.instant, "action": "commit"}]}])
    table = HudiTable.open(tmp_path / "t")
    assert table.timeline.rolled_back_timestamps == {first.instant}
    assert {s.base_instant for s in table.latest_file_slices()} == {second.instant}
    assert len(table.latest_file_slices()) == 1
    (hoodie / f"{restore}.restore").unlink()  # without the restore they would count as archived commits
    assert {s.base_instant for s in HudiTable.open(tmp_path / "t").latest_file_slices()} == {
        first.instant, second.instant}


def test_listing_skips_what_is_not_a_data_file(fixture_copy: Callable[[str], Path]) -> None:
    """The listing tells files from folders by the size only regular files have: a FIFO and a folder named
    like a base file, and hidden folders, give no file slices."""
    import os

    path = fixture_copy(OVERWRITE_COW)
    table = HudiTable.open(path)
    before = [(s.partition_path, s.file_id, s.base_file and s.base_file.path) for s in table.latest_file_slices()]
    partition = next(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
    some_base = next(partition.glob("*.parquet"))
    os.mkfifo(partition / f"fifo_{some_base.name}")
    (partition / f"dir-{some_base.name}").mkdir()
    (partition / ".hidden").mkdir()
    (path / ".hidden_partition").mkdir()
    after = [(s.partition_path, s.file_id, s.base_file and s.base_file.path)
             for s in HudiTable.open(path).latest_file_slices()]
    assert after == before


def _slices_after_listing(path: Path, as_of: str | None = None) -> list[FileSlice]:
    """The slices computed from an already-listed table (the path time travel takes), not the first call's
    path that builds each partition's slices while the listing runs."""
    table = HudiTable.open(path)
    table.partition_paths()  # lists the folders
    return table._fsview.latest_file_slices(as_of)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_slices_built_during_listing_equal_slices_built_after(fixture_tables: dict[str, Path], name: str) -> None:
    path = fixture_tables[name]
    first = HudiTable.open(path).latest_file_slices()
    assert first == _slices_after_listing(path)
    assert [(s.partition_path, s.file_id) for s in first] == sorted((s.partition_path, s.file_id) for s in first)


def test_slices_built_during_listing_with_upserts_and_several_partitions(tmp_path: Path) -> None:
    import pyarrow as pa

    from hive_bridge.testing.writer import HudiWriter

    w = HudiWriter(tmp_path / "t", partition_fields=["p"], rows_per_file=3)
    w.insert(pa.table({"id": pa.array(range(40), pa.int64()), "p": pa.array([i % 4 for i in range(40)], pa.int32())}))
    up = w.upsert(pa.table({"id": pa.array([0, 5, 10], pa.int64()), "p": pa.array([0, 1, 2], pa.int32())}))
    first = HudiTable.open(tmp_path / "t").latest_file_slices()
    assert first == _slices_after_listing(tmp_path / "t")
    assert len({s.partition_path for s in first}) == 4
    assert any(s.base_instant == up.instant for s in first)
    assert all(s.base_file is not None and s.base_file.instant == s.base_instant for s in first)


def test_listing_leaves_the_garbage_collector_as_it_found_it(fixture_tables: dict[str, Path]) -> None:
    """With freeze_listing=True the listing moves its objects to the oldest generation with gc.freeze()/unfreeze(): it must leave the
    collector enabled, and objects a process froze itself frozen."""
    import gc

    path = fixture_tables["sample_table.cow.v6_complexkeygen_hivestyle"]
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert HudiTable.open(path, freeze_listing=True).latest_file_slices()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        assert HudiTable.open(path, freeze_listing=True).latest_file_slices()
        assert gc.get_freeze_count() == frozen and gc.isenabled()
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        assert HudiTable.open(path, freeze_listing=True).latest_file_slices()
        assert not gc.isenabled()
    finally:
        gc.enable()



def test_the_collector_is_left_alone_unless_asked(fixture_tables: dict[str, Path],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """gc_paused() touches the whole process's collector (surprising inside a Spark driver): opt-in only."""
    from hive_bridge.layout import fsview

    calls: list[int] = []

    def spy():  # type: ignore[no-untyped-def]
        calls.append(1)
        return fsview.nullcontext()

    monkeypatch.setattr(fsview, "gc_paused", spy)
    path = fixture_tables["sample_table.cow.v6_complexkeygen_hivestyle"]
    assert HudiTable.open(path).latest_file_slices()
    assert calls == []
    assert HudiTable.open(path, freeze_listing=True).latest_file_slices()
    assert len(calls) >= 1

def test_two_base_files_of_one_group_and_instant(fixture_copy: Callable[[str], Path]) -> None:
    """A group with two base files of the same instant (a retried task's leftover): the later name wins, in both
    ways of building the slices."""
    path = fixture_copy(OVERWRITE_COW)
    s = HudiTable.open(path).latest_file_slices()[0]
    assert s.base_file is not None
    src = Path(s.base_file.full_path)
    fid, _token, instant = s.base_file.name[: -len(".parquet")].rsplit("_", 2)
    twins = [src.with_name(f"{fid}_{t}_{instant}.parquet") for t in ("0-0-0", "9-9-9")]
    for twin in twins:
        shutil.copyfile(src, twin)
    expected_name = max(src.name, *(t.name for t in twins))
    for slices in (HudiTable.open(path).latest_file_slices(), _slices_after_listing(path)):
        got = next(x for x in slices if x.file_id == s.file_id and x.partition_path == s.partition_path)
        assert got.base_file is not None and got.base_file.name == expected_name and got.base_instant == instant
