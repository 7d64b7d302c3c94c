"""Merge-on-read log files: every block of every real fixture log reads, its records are the records hudi-rs
merges, damage never raises and never costs the blocks around it, and the encoders write what Hudi writes
(byte for byte) and what hudi-rs reads."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.logfile import (
    MAGIC,
    BlockType,
    HeaderKey,
    LogBlock,
    LogFileContents,
    LogFormatError,
    data_block_table,
    delete_block_keys,
    read_log_file,
)
from hive_bridge.testing.logfile_writer import (
    avro_block_content,
    delete_block_content,
    encode_block,
    parquet_block_content,
    rollback_block,
)
from tests.conftest import FIXTURE_NAMES

LOG_NAME = re.compile(r"^\.(?P<file_id>.+)_(?P<instant>\d+)\.log\.(?P<version>\d+)_(?P<token>[\w-]+)$")
MOR = [n for n in FIXTURE_NAMES if ".mor." in n]
A, D, P, C, H = (BlockType.AVRO_DATA, BlockType.DELETE, BlockType.PARQUET_DATA, BlockType.COMMAND,
                 BlockType.HFILE_DATA)
#: MOR fixture -> (number of data log files, block types in them, block types in metadata-table logs)
EXPECTED: dict[str, tuple[int, set[BlockType], set[BlockType]]] = {
    "quickstart_trips_table.mor.avro.v6_trips_8i1u": (1, {A}, set()),
    "quickstart_trips_table.mor.avro.v8_trips_8i3u1d": (5, {A, D}, {H, D}),
    "sample_table.mor.avro.v9_lance_nonhivestyle": (1, {A}, {H, D}),
    # Hudi 1.1 rolled back by deleting the log file: no command block anywhere in this table
    "sample_table.mor.avro.v9_nonpartitioned_rollback": (0, set(), {H, D}),
    "sample_table.mor.avro.v9_txns_nonpart_meta": (5, {A, D}, {H, D}),
    "sample_table.mor.avro.v9_txns_simple_meta": (5, {A, D}, {H, D}),
    "sample_table.mor.avro.v9_txns_simple_nometa": (5, {A, D}, set()),
    "sample_table.mor.avro.v9_txns_simple_overwrite": (0, set(), {H, D}),
    "sample_table.mor.parquet.v6_complexkeygen_hivestyle": (1, {P}, set()),
    "sample_table.mor.parquet.v6_empty": (0, set(), set()),
    "sample_table.mor.parquet.v6_nonpartitioned": (1, {P}, set()),
    "sample_table.mor.parquet.v6_nonpartitioned_rollback": (3, {P, C}, set()),
    "sample_table.mor.parquet.v6_simplekeygen_hivestyle_no_metafields": (0, set(), set()),
    "sample_table.mor.parquet.v6_simplekeygen_nonhivestyle": (1, {P}, set()),
    "sample_table.mor.parquet.v6_simplekeygen_nonhivestyle_overwritetable": (1, {P}, set()),
}
TRIPS_V6 = "quickstart_trips_table.mor.avro.v6_trips_8i1u"
TRIPS_V8 = "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"
ROLLBACK_V6 = "sample_table.mor.parquet.v6_nonpartitioned_rollback"
PARQUET_V6 = "sample_table.mor.parquet.v6_nonpartitioned"
NONPART_V9 = "sample_table.mor.avro.v9_txns_nonpart_meta"
KEY = "_hoodie_record_key"


def _log_files(root: Path) -> list[Path]:
    """Every log file under a table folder, the metadata table's included, in log-version order."""
    out = []
    for folder, _dirs, files in os.walk(root):
        for name in files:
            m = LOG_NAME.match(name)
            if m:
                out.append((folder, m["file_id"], m["instant"], int(m["version"]), name))
    return [Path(folder) / name for folder, *_, name in sorted(out)]


def _is_metadata(root: Path, log: Path) -> bool:
    return ".hoodie" in log.relative_to(root).parts


def _concat(paths: list[Path], tmp_path: Path) -> tuple[Path, bytes, list[LogBlock]]:
    """One log file holding every block of ``paths`` in order."""
    data = b"".join(p.read_bytes() for p in paths)
    path = tmp_path / ".f-0_1.log.1_0-0-0"
    path.write_bytes(data)
    contents = read_log_file(path)
    assert contents.corrupt_regions == 0 and len(contents.blocks) == len(paths)
    return path, data, list(contents.blocks)


def _same(a: LogBlock, b: LogBlock) -> bool:
    return (a.offset, a.length, a.block_type, dict(a.header), dict(a.footer), a.content) == \
        (b.offset, b.length, b.block_type, dict(b.header), dict(b.footer), b.content)


# ------------------------------------------------------------------ the real fixture logs
def test_expectations_cover_every_mor_fixture() -> None:
    if not MOR:
        pytest.skip("shared Hudi tables not found")
    assert sorted(EXPECTED) == MOR


@pytest.mark.parametrize("name", MOR)
def test_every_fixture_log_reads_whole(fixture_tables: dict[str, Path], name: str) -> None:
    root = fixture_tables[name]
    n_data_logs, data_types, metadata_types = EXPECTED[name]
    seen: dict[bool, set[int]] = {False: set(), True: set()}
    data_logs = 0
    for log in _log_files(root):
        contents = read_log_file(log)
        assert isinstance(contents, LogFileContents) and contents.path == str(log)
        assert contents.corrupt_regions == 0 and contents.problems == ()
        assert contents.size == log.stat().st_size == contents.readable_end
        assert contents.blocks and contents.blocks[0].offset == 0
        assert sum(b.length for b in contents.blocks) == contents.size
        metadata = _is_metadata(root, log)
        data_logs += not metadata
        for block in contents.blocks:
            seen[metadata].add(block.block_type)
            assert block.format_version == 1 and block.footer == {}
            assert block.instant is not None and re.fullmatch(r"\d{17}", block.instant)
            assert set(block.header) <= {HeaderKey.INSTANT_TIME, HeaderKey.TARGET_INSTANT_TIME, HeaderKey.SCHEMA,
                                         HeaderKey.COMMAND_BLOCK_TYPE}
            if block.block_type in (A, P):
                assert data_block_table(block, str(log)).num_rows >= 1
            elif block.block_type == D:
                keys = delete_block_keys(block, str(log))
                assert keys or metadata      # the metadata table writes empty delete blocks
            elif block.block_type == H:
                with pytest.raises(LogFormatError, match=r"byte \d+: HFILE_DATA block not readable"):
                    data_block_table(block, str(log))
    assert data_logs == n_data_logs
    assert seen[False] == data_types
    assert seen[True] == metadata_types


def test_every_log_of_every_fixture_reads_whole(fixture_tables: dict[str, Path]) -> None:
    """Copy-on-write tables hold logs too: those of their metadata table."""
    n = 0
    for root in fixture_tables.values():
        for log in _log_files(root):
            contents = read_log_file(log)
            assert contents.corrupt_regions == 0 and contents.readable_end == contents.size, contents.problems
            n += 1
    assert n > 400


def test_rollback_command_block(fixture_tables: dict[str, Path]) -> None:
    logs = _log_files(fixture_tables[ROLLBACK_V6])
    blocks = [read_log_file(p).blocks for p in logs]
    assert [[BlockType(b.block_type) for b in bs] for bs in blocks] == [[P], [C], [P]]
    command = blocks[1][0]
    assert command.is_rollback and command.content == b""
    assert command.target_instant == blocks[0][0].instant == "20250126040826878"
    assert command.instant == "20250126040936578"
    assert dict(command.header) == {0: "20250126040936578", 1: "20250126040826878", 3: "0"}
    assert not blocks[0][0].is_rollback and blocks[0][0].target_instant is None
    with pytest.raises(LogFormatError, match="COMMAND block not readable"):
        data_block_table(command)
    with pytest.raises(LogFormatError, match="not a delete block"):
        delete_block_keys(command)


def test_v8_delete_blocks_name_real_record_keys(fixture_tables: dict[str, Path]) -> None:
    from hudi import HudiTableBuilder

    root = fixture_tables[TRIPS_V8]
    deleted = []
    for log in _log_files(root):
        if not _is_metadata(root, log):
            deleted += [k for b in read_log_file(log).blocks if b.block_type == D for k in delete_block_keys(b)]
    assert sorted(deleted) == [("c8abbe79-8d89-47ea-b4ce-4d224bae5bfa", "city=chennai"),
                               ("e3cf430c-889d-4015-bc98-59bdce1e530c", "city=sao_paulo")]
    in_base_files = set()
    for parquet in root.rglob("*.parquet"):
        if ".hoodie" not in parquet.parts:
            part = pq.read_table(parquet, columns=[KEY, "_hoodie_partition_path"]).to_pylist()
            in_base_files |= {(r[KEY], r["_hoodie_partition_path"]) for r in part}
    assert set(deleted) <= in_base_files
    now = pa.Table.from_batches(HudiTableBuilder.from_base_uri(str(root)).build().read())
    assert not {k for k, _ in deleted} & set(now.column(KEY).to_pylist())


def _slices_with_logs(root: Path) -> list[tuple[str, list[str]]]:
    """Every (base file, log files) slice hudi-rs lists at any instant of the timeline, or now."""
    from hudi import HudiReadOptions, HudiTableBuilder

    table = HudiTableBuilder.from_base_uri(str(root)).build()
    timeline = table.get_timeline()
    instants = sorted({i.timestamp for i in (timeline.get_completed_commits() + timeline.get_completed_deltacommits()
                                            + timeline.get_completed_replacecommits())})
    found: dict[tuple[str, tuple[str, ...]], None] = {}
    for slices in [table.get_file_slices(HudiReadOptions().with_as_of_timestamp(i)) for i in instants] \
            + [table.get_file_slices()]:
        for s in slices:
            if s.log_files_relative_paths():
                found[(s.base_file_relative_path(), tuple(s.log_files_relative_paths()))] = None
    return [(base, list(logs)) for base, logs in found]


#: MOR fixture -> (slices with logs at some instant, log records compared with hudi-rs, deleted keys checked)
ORACLE = {
    TRIPS_V6: (1, 1, 0),
    TRIPS_V8: (4, 2, 2),
    "sample_table.mor.avro.v9_lance_nonhivestyle": (1, 1, 0),
    NONPART_V9: (1, 2, 2),
    "sample_table.mor.avro.v9_txns_simple_meta": (3, 2, 2),
    "sample_table.mor.avro.v9_txns_simple_nometa": (3, 2, 2),
    "sample_table.mor.parquet.v6_complexkeygen_hivestyle": (1, 1, 0),
    PARQUET_V6: (1, 1, 0),
    ROLLBACK_V6: (1, 1, 0),
    "sample_table.mor.parquet.v6_simplekeygen_nonhivestyle": (1, 1, 0),
    "sample_table.mor.parquet.v6_simplekeygen_nonhivestyle_overwritetable": (1, 1, 0),
}


@pytest.mark.parametrize("name", sorted(ORACLE))
def test_log_records_are_the_records_hudi_rs_merges(fixture_tables: dict[str, Path], name: str) -> None:
    """Replaying a slice's blocks (latest record per key, deletes remove, rolled-back instants skipped) gives
    exactly the values, in every column, that hudi-rs returns for those keys."""
    from hudi import HudiTableBuilder

    root = fixture_tables[name]
    reader = HudiTableBuilder.from_base_uri(str(root)).build().create_file_group_reader_with_options()
    slices = _slices_with_logs(root)
    compared = deleted = 0
    for base, logs in slices:
        merged = {r[KEY]: r for r in reader.read_file_slice_from_paths(base, logs).to_pylist()}
        blocks = [b for log in logs for b in read_log_file(root / log).blocks]
        rolled_back = {b.target_instant for b in blocks if b.is_rollback}
        state: dict[str, dict[str, Any] | None] = {}
        for b in blocks:
            if b.instant in rolled_back:
                continue
            if b.block_type in (A, P):
                state.update((r[KEY], r) for r in data_block_table(b).to_pylist())
            elif b.block_type == D:
                state.update((k, None) for k, _ in delete_block_keys(b))
        for key, record in state.items():
            if record is None:
                assert key not in merged
                deleted += 1
            else:
                assert record == {c: merged[key][c] for c in record}, key
                compared += 1
    assert (len(slices), compared, deleted) == ORACLE[name]


def test_rolled_back_block_is_not_what_hudi_rs_returns(fixture_tables: dict[str, Path]) -> None:
    from hudi import HudiTableBuilder

    root = fixture_tables[ROLLBACK_V6]
    [(base, logs)] = _slices_with_logs(root)
    rolled = data_block_table(read_log_file(root / logs[0]).blocks[0]).to_pylist()[0]
    merged = {r["id"]: r for r in HudiTableBuilder.from_base_uri(str(root)).build()
              .create_file_group_reader_with_options().read_file_slice_from_paths(base, logs).to_pylist()}
    assert rolled["_hoodie_commit_time"] == "20250126040826878"
    assert merged[rolled["id"]]["_hoodie_commit_time"] != rolled["_hoodie_commit_time"]


def test_avro_block_types_are_true_values(fixture_tables: dict[str, Path]) -> None:
    root = fixture_tables["sample_table.mor.avro.v9_txns_simple_meta"]
    log = next(p for p in _log_files(root) if "region=us" in str(p) and not _is_metadata(root, p))
    table = data_block_table(read_log_file(log).blocks[0])
    assert table.schema.field("txn_datetime").type == pa.timestamp("us", tz="UTC")
    assert table.schema.field("amount").type == pa.decimal128(15, 2)
    row = table.to_pylist()[0]
    assert row["txn_id"] == "TXN-001" and row["txn_ts"] == 1700100000001
    assert row["txn_datetime"] == datetime(2024, 1, 15, 16, 30, tzinfo=timezone.utc)
    assert row["txn_date"] == date(2024, 1, 15)
    assert row["amount"] == Decimal("1250.00") and row["amount"].as_tuple().exponent == -2
    assert row["fee_amount"] == Decimal("0.00")


# ------------------------------------------------------------------ encoders write what Hudi writes
def test_encoders_reproduce_every_fixture_block_byte_for_byte(fixture_tables: dict[str, Path]) -> None:
    n = 0
    for name in MOR:
        for log in _log_files(fixture_tables[name]):
            data = log.read_bytes()
            for b in read_log_file(log, data).blocks:
                n += 1
                assert encode_block(BlockType(b.block_type), b.header, b.content, b.footer) == \
                    data[b.offset:b.offset + b.length]
                if b.block_type == C:
                    assert rollback_block(b.instant or "", b.target_instant or "") == data[b.offset:][:b.length]
                if b.block_type == D:     # Spark SQL's DELETE writes ordering value 0, an IntWrapper
                    keys = delete_block_keys(b)
                    assert delete_block_content([(k, p, 0) for k, p in keys]) == b.content
                if b.block_type == A:
                    schema = json.loads(b.header[HeaderKey.SCHEMA])
                    assert avro_block_content(_fastavro_records(b.content, schema), schema) == b.content
    assert n > 350


def _fastavro_records(content: bytes, schema: dict[str, Any]) -> list[dict[str, Any]]:
    parsed = fastavro.parse_schema(schema)
    count = int.from_bytes(content[4:8], "big")
    fo, pos = io.BytesIO(content), 8
    out: list[Any] = []
    for _ in range(count):
        n = int.from_bytes(content[pos:pos + 4], "big")
        fo.seek(pos + 4)
        out.append(fastavro.schemaless_reader(fo, parsed, None))
        pos += 4 + n
    return out


def test_encode_block_round_trip_and_layout() -> None:
    header = {HeaderKey.INSTANT_TIME: "20240101000000000", HeaderKey.SCHEMA: "{}", 42: "unknown key ✓"}
    raw = encode_block(BlockType.CDC_DATA, header, b"payload", footer={HeaderKey.BLOCK_IDENTIFIER: "7"})
    assert raw.startswith(MAGIC)
    assert int.from_bytes(raw[6:14], "big") == len(raw) - 14
    assert int.from_bytes(raw[-8:], "big") == len(raw) - 8
    [block] = read_log_file("x", raw).blocks
    assert (block.offset, block.length, block.format_version, block.block_type) == (0, len(raw), 1, 6)
    assert dict(block.header) == {0: "20240101000000000", 2: "{}", 42: "unknown key ✓"}
    assert dict(block.footer) == {6: "7"} and block.content == b"payload"
    assert block.instant == "20240101000000000" and block.target_instant is None and not block.is_rollback
    with pytest.raises(LogFormatError, match=r"^x: byte 0: CDC_DATA block not readable"):
        data_block_table(block, "x")
    [unknown] = read_log_file("x", encode_block(99, {}, b"")).blocks
    assert unknown.block_type == 99 and "type=99" in repr(unknown)
    with pytest.raises(LogFormatError, match="type 99 block not readable"):
        data_block_table(unknown)


def test_rollback_block_round_trip() -> None:
    [block] = read_log_file("r", rollback_block("20240102000000000", "20240101000000000")).blocks
    assert block.block_type == BlockType.COMMAND and block.is_rollback
    assert (block.instant, block.target_instant) == ("20240102000000000", "20240101000000000")


def test_delete_block_round_trip_and_ordering_wrappers() -> None:
    def wrappers(content: bytes) -> list[Any]:
        from hive_bridge.formats.logfile import DELETE_RECORD_LIST_SCHEMA

        datum: Any = fastavro.schemaless_reader(io.BytesIO(content[8:]), fastavro.parse_schema(
            DELETE_RECORD_LIST_SCHEMA), None, return_record_name=True)
        return [r["orderingVal"] for r in datum["deleteRecordList"]]

    content = delete_block_content([("k1", "p=1", 5), ("k2", "", None), ("k3", "p=2", 7)])
    block = read_log_file("d", encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: "1"}, content)).blocks[0]
    assert delete_block_keys(block) == [("k1", "p=1"), ("k2", ""), ("k3", "p=2")]
    ns = "org.apache.hudi.avro.model."
    assert wrappers(content) == [(ns + "IntWrapper", {"value": 5}), None, (ns + "IntWrapper", {"value": 7})]
    # one int too wide for 32 bits makes every int of the block a LongWrapper (hudi-rs refuses mixed types)
    assert [w[0] for w in wrappers(delete_block_content([("a", "", 1), ("b", "", 2**40)]))] == \
        [ns + "LongWrapper"] * 2
    assert wrappers(delete_block_content([("a", "", "x"), ("b", "", 1.5), ("c", "", True),
                                          ("d", "", Decimal("1.5")), ("e", "", ("LongWrapper", 3))])) == [
        (ns + "StringWrapper", {"value": "x"}), (ns + "DoubleWrapper", {"value": 1.5}),
        (ns + "BooleanWrapper", {"value": True}), (ns + "DecimalWrapper", {"value": Decimal("1.500000000000000")}),
        (ns + "LongWrapper", {"value": 3})]
    with pytest.raises(TypeError, match="no Hudi ordering wrapper"):
        delete_block_content([("a", "", object())])


@pytest.mark.parametrize(("content", "why"), [
    (b"\x00\x00\x00\x02\x00\x00\x00\x01x", "Kryo-serialised .* version 2 not readable"),
    (b"\x00\x00\x00\x07", "delete block version 7 not readable"),
    (b"\x00\x00", "too short"),
    (b"\x00\x00\x00\x03\x00\x00\x00\x09\x02", "does not match the content"),
    (b"\x00\x00\x00\x03\x00\x00\x00\x01\x05", "does not decode"),
    (b"\x00\x00\x00\x03\x00\x00\x00\x05\x02\x00\x00\x00\x00", "has no record key"),
])
def test_bad_delete_content_is_a_log_format_error(content: bytes, why: str) -> None:
    [block] = read_log_file("d", encode_block(BlockType.DELETE, {}, content)).blocks
    with pytest.raises(LogFormatError, match=f"^d: byte 0: .*{why}"):
        delete_block_keys(block, "d")


SCHEMA: dict[str, Any] = {
    "type": "record", "name": "r", "namespace": "hoodie.t", "fields": [
        {"name": "id", "type": "long"},
        {"name": "s", "type": ["null", "string"], "default": None},
        {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}], "default": None},
        {"name": "ts_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "local", "type": ["null", {"type": "long", "logicalType": "local-timestamp-micros"}]},
        {"name": "d", "type": ["null", {"type": "int", "logicalType": "date"}]},
        {"name": "dec_fixed", "type": ["null", {"type": "fixed", "name": "fixed", "size": 7,
                                                "logicalType": "decimal", "precision": 15, "scale": 2}]},
        {"name": "dec_bytes", "type": {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 9}},
        {"name": "f", "type": "float"},
        {"name": "b", "type": ["null", "bytes"]},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"]}},
        {"name": "nested", "type": ["null", {"type": "record", "name": "n", "fields": [
            {"name": "when", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}]},
            {"name": "amounts", "type": {"type": "array", "items": ["null", {
                "type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 3}]}},
            # a reference to the named decimal type above
            {"name": "by_name", "type": {"type": "map", "values": ["null", "hoodie.t.fixed"]}},
        ]}]},
    ]}


def _decimal(unscaled: int, scale: int) -> Decimal:
    sign, digits, _ = Decimal(unscaled).as_tuple()
    return Decimal((sign, digits, -scale))


RECORDS = st.lists(st.fixed_dictionaries({
    "id": st.integers(-(2**63), 2**63 - 1),
    "s": st.none() | st.text(max_size=5),
    "ts": st.none() | st.integers(-(2**62), 2**62),
    "ts_ms": st.integers(-(2**50), 2**50),
    "local": st.none() | st.integers(-(2**55), 2**55),
    "d": st.none() | st.integers(-(2**20), 2**20),
    "dec_fixed": st.none() | st.integers(-(10**15) + 1, 10**15 - 1),
    "dec_bytes": st.integers(-(10**30) + 1, 10**30 - 1),
    "f": st.floats(width=32, allow_nan=False),
    "b": st.none() | st.binary(max_size=4),
    "e": st.sampled_from(["X", "Y"]),
    "nested": st.none() | st.fixed_dictionaries({
        "when": st.none() | st.integers(-(2**60), 2**60),
        "amounts": st.lists(st.none() | st.integers(-(10**10) + 1, 10**10 - 1), max_size=3),
        "by_name": st.dictionaries(st.text(max_size=3), st.none() | st.integers(-(10**15) + 1, 10**15 - 1),
                                   max_size=2),
    }),
}), max_size=6)


@settings(max_examples=100, deadline=None, database=None, derandomize=True)
@given(RECORDS)
def test_avro_block_round_trip_gives_true_values(records: list[dict[str, Any]]) -> None:
    def avro(r: dict[str, Any]) -> dict[str, Any]:     # what fastavro writes: Decimals for decimals
        n = r["nested"]
        return {**r, "dec_fixed": None if r["dec_fixed"] is None else _decimal(r["dec_fixed"], 2),
                "dec_bytes": _decimal(r["dec_bytes"], 9),
                "nested": None if n is None else {
                    **n, "amounts": [None if a is None else _decimal(a, 3) for a in n["amounts"]],
                    "by_name": {k: None if v is None else _decimal(v, 2) for k, v in n["by_name"].items()}}}

    raw = encode_block(BlockType.AVRO_DATA, {HeaderKey.INSTANT_TIME: "1", HeaderKey.SCHEMA: json.dumps(SCHEMA)},
                       avro_block_content([avro(r) for r in records], SCHEMA))
    table = data_block_table(read_log_file("a", raw).blocks[0])
    assert table.num_rows == len(records)
    assert table.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert table.schema.field("ts_ms").type == pa.timestamp("ms", tz="UTC")
    assert table.schema.field("local").type == pa.timestamp("us")
    for col in ("ts", "ts_ms", "local"):       # epoch counts exactly as written: nothing shifted
        assert table.column(col).cast(pa.int64()).to_pylist() == [r[col] for r in records]
    assert table.column("d").cast(pa.int32()).to_pylist() == [r["d"] for r in records]
    expected = [avro(r) for r in records]
    got = table.drop_columns(["ts", "ts_ms", "local", "d", "nested"]).to_pylist()  # datetimes may overflow
    for e, g in zip(expected, got, strict=True):
        assert (g["id"], g["s"], g["b"], g["e"]) == (e["id"], e["s"], e["b"], e["e"])
        assert g["dec_fixed"] == e["dec_fixed"] and g["dec_bytes"] == e["dec_bytes"]
        assert g["f"] == pytest.approx(e["f"], rel=1e-6)
    nested = table.column("nested").combine_chunks()
    present = [i for i, r in enumerate(records) if r["nested"] is not None]
    assert [i for i, valid in enumerate(nested.is_valid().to_pylist()) if valid] == present
    children = {name: nested.field(name) for name in ("when", "amounts", "by_name")}
    when = children["when"].cast(pa.int64()).to_pylist()
    amounts = children["amounts"].to_pylist()
    by_name = children["by_name"].to_pylist(maps_as_pydicts="strict")
    for i in present:
        e = expected[i]["nested"]
        assert (when[i], amounts[i], by_name[i]) == (e["when"], e["amounts"], e["by_name"])


HEADERS = st.dictionaries(st.integers(0, 12), st.text(max_size=20), max_size=5)


@settings(max_examples=80, deadline=None, database=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 9), HEADERS, st.binary(max_size=40), HEADERS), max_size=5))
def test_encoded_blocks_read_back(specs: list[tuple[int, dict[int, str], bytes, dict[int, str]]]) -> None:
    raws = [encode_block(t, h, c, f) for t, h, c, f in specs]
    contents = read_log_file("p", b"".join(raws))
    assert contents.corrupt_regions == 0 and contents.readable_end == contents.size == sum(map(len, raws))
    offset = 0
    for (t, h, c, f), raw, block in zip(specs, raws, contents.blocks, strict=True):
        assert (block.offset, block.length, block.block_type, block.content) == (offset, len(raw), t, c)
        assert dict(block.header) == h and dict(block.footer) == f
        offset += len(raw)


def test_parquet_block_round_trip() -> None:
    table = pa.table({"k": ["a", "b"], "v": pa.array([1.5, None]), "t": pa.array([1, 2], pa.timestamp("us"))})
    [block] = read_log_file("p", encode_block(BlockType.PARQUET_DATA, {}, parquet_block_content(table))).blocks
    assert block.content.startswith(b"PAR1") and block.content.endswith(b"PAR1")
    assert data_block_table(block).equals(table)


# ------------------------------------------------------------------ damage never raises, never costs good blocks
@pytest.fixture
def five_blocks(fixture_tables: dict[str, Path], tmp_path: Path) -> tuple[Path, bytes, list[LogBlock]]:
    """avro, delete, avro, delete, avro: the v9 non-partitioned table's five log files as one."""
    root = fixture_tables[NONPART_V9]
    logs = [p for p in _log_files(root) if not _is_metadata(root, p)]
    path, data, blocks = _concat(logs, tmp_path)
    assert [b.block_type for b in blocks] == [A, D, A, D, A]
    return path, data, blocks


def test_truncated_at_every_byte(five_blocks: tuple[Path, bytes, list[LogBlock]]) -> None:
    path, data, blocks = five_blocks
    ends = {b.offset + b.length for b in blocks}
    for cut in range(len(data)):
        contents = read_log_file(path, data[:cut])
        intact = [b for b in blocks if b.offset + b.length <= cut]
        assert len(contents.blocks) == len(intact) and all(map(_same, contents.blocks, intact))
        assert contents.readable_end == max((b.offset + b.length for b in intact), default=0)
        if cut in ends or cut == 0:
            assert contents.corrupt_regions == 0 and contents.problems == ()
        else:
            assert contents.corrupt_regions == 1
            [problem] = contents.problems
            assert problem.startswith(f"{path}: byte {contents.readable_end}: ")
            assert "up to the end of the file unreadable" in problem


@pytest.mark.parametrize("garbage", [b"\x00", b"#HUDI", MAGIC, MAGIC + b"\x00" * 20, os.urandom(300),
                                     MAGIC + (10**6).to_bytes(8, "big") + b"x" * 50])
def test_garbage_tail(five_blocks: tuple[Path, bytes, list[LogBlock]], garbage: bytes) -> None:
    path, data, blocks = five_blocks
    contents = read_log_file(path, data + garbage)
    assert all(map(_same, contents.blocks, blocks)) and len(contents.blocks) == 5
    assert contents.corrupt_regions == 1 and contents.readable_end == len(data)
    assert contents.problems[0].startswith(f"{path}: byte {len(data)}: ")


def test_garbage_between_blocks_then_resync(five_blocks: tuple[Path, bytes, list[LogBlock]]) -> None:
    path, data, blocks = five_blocks
    cut = blocks[2].offset
    damaged = data[:cut] + b"junk" + MAGIC + b"\xff" * 9 + data[cut:]
    contents = read_log_file(path, damaged)
    assert [b.offset for b in contents.blocks] == [b.offset + (19 if b.offset >= cut else 0) for b in blocks]
    assert contents.corrupt_regions == 1 and contents.readable_end == len(damaged)
    assert re.fullmatch(rf"{re.escape(str(path))}: byte {cut}: no block magic .*; skipped 19 bytes to the next "
                        rf"block at byte {cut + 19}", contents.problems[0])


def test_every_single_byte_flip_in_a_middle_block(five_blocks: tuple[Path, bytes, list[LogBlock]]) -> None:
    """Whatever byte of the third block is damaged: no exception, the blocks around it intact; the block is
    either still well formed (a changed header value or content) or one corrupt region from its magic."""
    path, data, blocks = five_blocks
    middle = blocks[2]
    regions = 0
    for i in range(middle.offset, middle.offset + middle.length):
        damaged = bytearray(data)
        damaged[i] ^= 0xFF
        contents = read_log_file(path, bytes(damaged))
        got = list(contents.blocks)
        assert all(map(_same, got[:2], blocks[:2])) and all(map(_same, got[-2:], blocks[-2:]))
        assert contents.readable_end == len(data)
        if contents.corrupt_regions:
            regions += 1
            assert len(got) == 4 and contents.corrupt_regions == 1
            assert contents.problems[0].startswith(f"{path}: byte {middle.offset}: ")
            assert f"skipped {middle.length} bytes to the next block at byte {blocks[3].offset}" \
                in contents.problems[0]
        else:
            assert len(got) == 5 and (got[2].offset, got[2].length) == (middle.offset, middle.length)
            try:                       # content damage shows when decoding: as a LogFormatError or not at all
                data_block_table(got[2], str(path))
            except LogFormatError as exc:
                assert str(exc).startswith(f"{path}: byte {middle.offset}: ")
    assert regions >= 40           # magic, lengths, version, header counts and lengths, trailing length


def test_damaged_command_block_between_parquet_blocks(fixture_tables: dict[str, Path], tmp_path: Path) -> None:
    path, data, blocks = _concat(_log_files(fixture_tables[ROLLBACK_V6]), tmp_path)
    for i in range(blocks[1].offset, blocks[1].offset + blocks[1].length):
        damaged = bytearray(data)
        damaged[i] ^= 0x55
        got = read_log_file(path, bytes(damaged)).blocks
        assert _same(got[0], blocks[0]) and _same(got[-1], blocks[-1])


def test_damaged_parquet_content_is_a_log_format_error(fixture_tables: dict[str, Path]) -> None:
    [log] = _log_files(fixture_tables[PARQUET_V6])
    [block] = read_log_file(log).blocks
    failures = 0
    for i in range(0, len(block.content), 61):
        content = bytearray(block.content)
        content[i] ^= 0xFF
        try:
            data_block_table(LogBlock(**{**_fields(block), "content": bytes(content)}), "p")
        except LogFormatError as exc:
            assert str(exc).startswith("p: byte 0: parquet data block does not read: ")
            failures += 1
    assert failures >= 1


def _fields(block: LogBlock) -> dict[str, Any]:
    return {f: getattr(block, f) for f in ("offset", "length", "format_version", "block_type", "header",
                                           "footer", "content")}


@pytest.mark.parametrize(("change", "why"), [
    (lambda b: {"header": {}}, "has no SCHEMA header"),
    (lambda b: {"header": {**b.header, 2: '{"type": "record", "fields": [{"name": "x", "type": "nope"}]}'}},
     "schema not usable"),
    (lambda b: {"header": {**b.header, 2: json.dumps({**json.loads(b.header[2]), "fields": [
        {"name": "only", "type": "boolean"}]})}}, "record 0 decodes to 1 bytes, its frame says"),
    (lambda b: {"content": b.content[:6]}, "content too short"),
    (lambda b: {"content": b"\x00\x00\x00\x09" + b.content[4:]}, "Avro data block version 9 not readable"),
    (lambda b: {"content": b.content[:4] + b"\x00\x00\x7f\x00" + b.content[8:]}, "impossible record count"),
    (lambda b: {"content": b.content[:4] + b"\x00\x00\x00\x02" + b.content[8:]}, "record 1 of 2 cut off"),
    (lambda b: {"content": b.content[:8] + b"\x00\x01\x00\x00" + b.content[12:]}, "record 0 length 65536 runs"),
    (lambda b: {"content": b.content + b"\x00"}, "1 bytes after the last of 1 records"),
    (lambda b: {"content": b.content[:12] + b"\x07" + b.content[13:]}, "record 0 does not decode"),
])
def test_bad_avro_block_is_a_log_format_error(fixture_tables: dict[str, Path],
                                              change: Callable[[LogBlock], dict[str, Any]], why: str) -> None:
    root = fixture_tables[TRIPS_V6]
    [log] = _log_files(root)
    [block] = read_log_file(log).blocks
    bad = LogBlock(**{**_fields(block), **change(block)})
    with pytest.raises(LogFormatError, match=f"^{re.escape(str(log))}: byte 0: .*{why}"):
        data_block_table(bad, str(log))


def test_unreadable_file_raises_log_format_error(tmp_path: Path) -> None:
    missing = tmp_path / ".nope_1.log.1_0-0-0"
    with pytest.raises(LogFormatError, match=re.escape(str(missing))) as info:
        read_log_file(missing)
    assert isinstance(info.value, HudiTableError)
    with pytest.raises(LogFormatError, match="cannot read log file"):
        read_log_file(tmp_path)
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert read_log_file(empty) == LogFileContents(str(empty), 0, (), 0, 0, ())


def test_a_log_on_object_storage_needs_its_storage() -> None:
    """The reader is handed its Storage: a URI without one is refused (no storage looked up by location)."""
    with pytest.raises(LogFormatError, match=r"^s3://bucket/t/\.f_1\.log\.1_0-0-0: .*Storage \(none given\)"):
        read_log_file("s3://bucket/t/.f_1.log.1_0-0-0")


def test_structural_problems_are_named() -> None:
    good = encode_block(BlockType.COMMAND, {HeaderKey.INSTANT_TIME: "1"}, b"")

    def problem(raw: bytes) -> str:
        contents = read_log_file("f", raw)
        assert contents.corrupt_regions == 1 and not contents.blocks
        return contents.problems[0]

    assert "format version 2 not readable" in problem(good[:14] + b"\x00\x00\x00\x02" + good[18:])
    assert "does not match its trailing length" in problem(good[:-1] + b"\x00")
    assert "runs past the end of the file" in problem(good[:-3])
    assert "impossible block length -1" in problem(MAGIC + b"\xff" * 8 + good[14:])
    assert "header value of key 0 is not UTF-8" in problem(good.replace(b"\x00\x00\x00\x011", b"\x00\x00\x00\x01\xff"))
    assert "impossible header entry count" in problem(good[:22] + b"\x00\x00\x01\x00" + good[26:])
    short = MAGIC + (14).to_bytes(8, "big") + b"\x00" * 6 + (20).to_bytes(8, "big")
    assert "too short for a block" in problem(short)


# ------------------------------------------------------------------ hudi-rs reads the logs we write
def _next_log_name(existing: str, version: int) -> str:
    m = LOG_NAME.match(Path(existing).name)
    assert m
    return str(Path(existing).parent / f".{m['file_id']}_{m['instant']}.log.{version}_1-0-1")


def _merged(root: Path, base: str, logs: list[str]) -> list[dict[str, Any]]:
    from hudi import HudiTableBuilder

    reader = HudiTableBuilder.from_base_uri(str(root)).build().create_file_group_reader_with_options()
    rows: list[dict[str, Any]] = reader.read_file_slice_from_paths(base, logs).to_pylist()
    return rows


def test_hudi_rs_reads_an_avro_log_we_append(fixture_copy: Callable[[str], Path]) -> None:
    root = fixture_copy(TRIPS_V6)
    [(base, logs)] = _slices_with_logs(root)
    [old] = read_log_file(root / logs[0]).blocks
    before = {r[KEY]: r for r in _merged(root, base, logs)}
    schema = json.loads(old.header[HeaderKey.SCHEMA])
    key = sorted(before)[0]
    update = {f["name"]: before[key][f["name"]] for f in schema["fields"]}
    update.update(fare=1234.5, ts=update["ts"] + 1, _hoodie_commit_time=old.instant)
    content = avro_block_content([update], schema)
    name = _next_log_name(logs[0], 2)
    # hudi-rs reads only blocks of instants up to the latest commit: reuse the committed instant of the old block
    header = {HeaderKey.INSTANT_TIME: old.instant or "", HeaderKey.SCHEMA: json.dumps(schema)}
    (root / name).write_bytes(encode_block(BlockType.AVRO_DATA, header, content))
    after = {r[KEY]: r for r in _merged(root, base, [*logs, name])}
    assert after[key] == {**before[key], "fare": 1234.5, "ts": update["ts"], "_hoodie_commit_time": old.instant}
    assert {k: v for k, v in after.items() if k != key} == {k: v for k, v in before.items() if k != key}
    assert data_block_table(read_log_file(root / name).blocks[0]).to_pylist() == [update]
    # hudi-rs reads a block only if its instant completed on the timeline, or is older than the timeline's
    # start (archived): not one the timeline does not have, be it later than every commit or between two
    for instant, read in [("29991231235959999", False), ("20250331030643000", False), ("20200101000000000", True)]:
        header[HeaderKey.INSTANT_TIME] = instant
        (root / name).write_bytes(encode_block(BlockType.AVRO_DATA, header, content))
        fare = {r[KEY]: r for r in _merged(root, base, [*logs, name])}[key]["fare"]
        assert fare == (1234.5 if read else before[key]["fare"]), instant


def test_hudi_rs_reads_parquet_delete_and_rollback_blocks_we_append(fixture_copy: Callable[[str], Path]) -> None:
    root = fixture_copy(PARQUET_V6)
    [(base, logs)] = _slices_with_logs(root)
    [old] = read_log_file(root / logs[0]).blocks
    by_id = {r["id"]: r for r in _merged(root, base, logs)}
    assert sorted(by_id) == [1, 2, 3]
    table = data_block_table(old)
    updated = table.set_column(table.schema.get_field_index("doubleField"), table.schema.field("doubleField"),
                               pa.array([777.25]))
    names = [_next_log_name(logs[0], v) for v in (2, 3, 4)]
    (root / names[0]).write_bytes(encode_block(BlockType.PARQUET_DATA, dict(old.header),
                                               parquet_block_content(updated)))
    (root / names[1]).write_bytes(encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: old.instant or ""},
                                               delete_block_content([(str(2), "", 0)])))
    now = {r["id"]: r for r in _merged(root, base, [*logs, *names[:2]])}
    assert sorted(now) == [1, 3]
    assert now[1]["doubleField"] == 777.25 and now[3] == by_id[3]
    # rolling back the instant undoes every block written at it, ours and the original
    (root / names[2]).write_bytes(rollback_block("20250117083140000", old.instant or ""))
    rolled = {r["id"]: r for r in _merged(root, base, [*logs, *names])}
    assert sorted(rolled) == [1, 2, 3] and rolled[2] == by_id[2]
    assert rolled[1]["doubleField"] != 777.25 and rolled[1]["_hoodie_commit_time"] != old.instant
    assert [BlockType(b.block_type) for n in names for b in read_log_file(root / n).blocks] == [P, D, C]
