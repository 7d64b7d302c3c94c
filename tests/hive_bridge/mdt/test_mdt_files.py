"""The files partition's records read without an object per file equal fastavro's reading: on every fixture
table's metadata table, on random records (meta fields or not, any names, sizes and deletions, maps in several
blocks), and on damaged ones, where the fast reader either gives fastavro's answer or none (then fastavro reads
the value and reports what is wrong); schemas of another shape are left to fastavro."""

from __future__ import annotations

import io
import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive_bridge.formats.hfile.reader import HFileReader
from hive_bridge.formats.logfile import BlockType, HeaderKey, read_log_file
from hive_bridge.mdt.files import FileInfos, decode_files_record, files_plan
from hive_bridge.mdt.records import decode_values
from hive_bridge.mdt.table import MetadataTable
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.mdt_records import avro_long as _varint
from hive_bridge.testing.mdt_records import metadata_record_schema

from .test_metadata import MDT_TABLES


def _fastavro(value: bytes, schema_json: str) -> dict[str, Any] | None:
    buf = io.BytesIO(value)
    try:
        rec = fastavro.schemaless_reader(buf, fastavro.parse_schema(json.loads(schema_json)), None,
                                         return_record_name=True, return_record_name_override=True)
    except Exception:
        return None
    return rec if isinstance(rec, dict) and buf.tell() == len(value) else None


def _plain(rec: dict[str, Any]) -> dict[str, Any]:
    out = dict(rec)
    if isinstance(out.get("filesystemMetadata"), FileInfos):
        out["filesystemMetadata"] = dict(out["filesystemMetadata"].items())
    return out


def _files_values(root: Path) -> list[tuple[bytes, str]]:
    """(value, writer schema) of every cell of the files partition: base HFiles and HFILE_DATA log blocks."""
    out = []
    folder = root / ".hoodie" / "metadata" / "files"
    for path in sorted(folder.glob("*.hfile")):
        reader = HFileReader.open(path)
        assert reader.avro_schema is not None
        out += [(v, reader.avro_schema) for _, v in reader.entries()]
    for path in sorted(folder.glob(".*.log.*")):
        for block in read_log_file(str(path)).blocks:
            if block.block_type == BlockType.HFILE_DATA:
                reader = HFileReader(block.content, str(path))
                schema = block.header.get(HeaderKey.SCHEMA) or reader.avro_schema
                assert schema is not None
                out += [(v, schema) for _, v in reader.entries()]
    return out


@pytest.mark.parametrize("name", MDT_TABLES)
def test_fixture_files_records_read_as_fastavro_reads_them(fixture_tables: dict[str, Path], name: str) -> None:
    values = _files_values(fixture_tables[name])
    assert values
    fast = 0
    for value, schema in values:
        plan = files_plan(schema)
        assert plan is not None, schema
        want = _fastavro(value, schema)
        got = decode_files_record(value, plan)
        assert want is not None
        if got is not None:
            fast += 1
            assert _plain(got) == want
    assert fast == len(values)              # Hudi's files records all have the usual shape


@pytest.mark.parametrize("name", MDT_TABLES)
def test_files_listing_is_the_same_through_fastavro(fixture_tables: dict[str, Path], name: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    table = HudiTable.open(fixture_tables[name])
    fast = MetadataTable.open(table)
    parts = fast.all_partitions() if table.properties.is_partitioned else [""]
    got = {p: fast.files(p) for p in parts}
    from hive_bridge.config import clear_caches
    from hive_bridge.mdt import records

    clear_caches()
    monkeypatch.setattr(records, "files_plan", lambda schema: None)
    slow = MetadataTable.open(HudiTable.open(fixture_tables[name]))
    assert {p: slow.files(p) for p in parts} == got
    assert any(got.values())
    clear_caches()


def _string(s: str) -> bytes:
    b = s.encode("utf-8")
    return _varint(len(b)) + b


def _record(schema: dict[str, Any], entries: list[tuple[str, int, bool]], blocks: list[int],
            negative: bool) -> bytes:
    """A files record of ``schema`` (meta fields null) whose map is written in blocks of the given sizes
    (negative counts with byte sizes when ``negative``), as Avro allows and fastavro reads."""
    out = bytearray()
    for f in schema["fields"]:
        name = f["name"]
        if name.startswith("_hoodie_"):
            out += _varint(0)
        elif name == "key":
            out += _string("p1")
        elif name == "type":
            out += _varint(2)
        elif name == "filesystemMetadata":
            out += _varint(1)
            at = 0
            for size in blocks:
                chunk = b"".join(_string(n) + _varint(s) + bytes([d]) for n, s, d in entries[at:at + size])
                at += size
                out += (_varint(-size) + _varint(len(chunk))) if negative else _varint(size)
                out += chunk
            assert at == len(entries)
            out += _varint(0)
        else:
            out += _varint(0)
    return bytes(out)


_names = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.booleans(), st.dictionaries(_names, st.tuples(st.integers(-2**63, 2**63 - 1), st.booleans()), max_size=40),
       st.data(), st.booleans())
def test_random_records_read_as_fastavro_reads_them(meta: bool, files: dict[str, tuple[int, bool]],
                                                     data: st.DataObject, negative: bool) -> None:
    schema = metadata_record_schema(meta)
    schema_json = json.dumps(schema)
    plan = files_plan(schema_json)
    assert plan is not None
    entries = [(n, s, d) for n, (s, d) in files.items()]
    cuts = sorted(data.draw(st.lists(st.integers(0, len(entries)), max_size=3)))
    edges = [0, *cuts, len(entries)]
    blocks = [b - a for a, b in pairwise(edges) if b > a]
    value = _record(schema, entries, blocks, negative)
    want = _fastavro(value, schema_json)
    assert want is not None
    got = decode_files_record(value, plan)
    assert got is not None
    assert _plain(got) == want
    infos = got["filesystemMetadata"]
    assert isinstance(infos, FileInfos)
    assert infos.live_sizes() == {n: s for n, s, d in entries if not d}


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_names, st.tuples(st.integers(0, 10**12), st.booleans()), min_size=1, max_size=12),
       st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=3),
       st.integers(-3, 3))
def test_damaged_records_get_fastavros_answer_or_none(files: dict[str, tuple[int, bool]],
                                                      changes: list[tuple[int, int]], cut: int) -> None:
    """Never another answer than fastavro's: a damaged value is read the same or left to fastavro."""
    schema = metadata_record_schema(True)
    schema_json = json.dumps(schema)
    plan = files_plan(schema_json)
    assert plan is not None
    value = bytearray(_record(schema, [(n, s, d) for n, (s, d) in files.items()], [len(files)], False))
    for at, byte in changes:
        value[at % len(value)] = byte
    damaged = bytes(value[:cut] if cut < 0 else value + bytes(cut))
    got = decode_files_record(damaged, plan)
    if got is not None:
        assert _plain(got) == _fastavro(damaged, schema_json)


def test_other_shapes_are_left_to_fastavro() -> None:
    schema = metadata_record_schema(False)
    assert files_plan(json.dumps(schema)) is not None
    no_map = {**schema, "fields": [f for f in schema["fields"] if f["name"] != "filesystemMetadata"]}
    assert files_plan(json.dumps(no_map)) is None
    other = json.loads(json.dumps(schema))
    for f in other["fields"]:
        if f["name"] == "filesystemMetadata":
            record = f["type"][1]["values"]
            record["fields"] = list(reversed(record["fields"]))
    assert files_plan(json.dumps(other)) is None
    assert files_plan("not json") is None
    plan = files_plan(json.dumps(schema))
    assert plan is not None
    assert decode_files_record(b"", plan) is None


def test_the_metadata_reader_uses_it_only_for_files_records() -> None:
    schema = metadata_record_schema(False)
    value = _record(schema, [("a.parquet", 10, False), ("b.parquet", 5, True)], [2], False)
    (key, rec), = decode_values([(b"p1", value)], json.dumps(schema), "here", files=True)
    assert key == "p1" and isinstance(rec["filesystemMetadata"], FileInfos)
    (key, rec), = decode_values([(b"p1", value)], json.dumps(schema), "here")
    assert isinstance(rec["filesystemMetadata"], dict)
    assert rec["filesystemMetadata"] == {"a.parquet": {"size": 10, "isDeleted": False},
                                         "b.parquet": {"size": 5, "isDeleted": True}}


def test_a_size_wider_than_64_bits_is_left_to_fastavro() -> None:
    """fastavro wraps a varint wider than 64 bits; the fast reader gives no answer for it rather than another."""
    schema = metadata_record_schema(False)
    schema_json = json.dumps(schema)
    plan = files_plan(schema_json)
    assert plan is not None
    value = _record(schema, [("a.parquet", 7, False)], [1], False)
    seven = _varint(7)
    at = value.index(b"a.parquet") + len(b"a.parquet")
    assert value[at:at + len(seven)] == seven
    for wide in (bytes([0xFF] * 9 + [0x7F]), bytes([0xFF] * 11 + [0x01])):
        damaged = value[:at] + wide + value[at + len(seven):]
        assert _fastavro(damaged, schema_json) is not None           # fastavro reads it, wrapped
        assert decode_files_record(damaged, plan) is None
