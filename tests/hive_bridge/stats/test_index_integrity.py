"""The persisted index's integrity: a damaged, altered, unverified or half-written segment is never used for a
verdict (its files' statistics are read again and every file holding a matching row is kept), concurrent
writers persist each file once, killed writers' temporary files are removed and never read."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.app.cli import main
from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.formats.parquet_footer import StatsLeaf
from hive_bridge.pruning import Pruner
from hive_bridge.stats import segments
from hive_bridge.stats.entries import entry_keys
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.integrity import FolderLock, SegmentRejected, clear_inverted_bounds, seal
from hive_bridge.stats.reader import FileToRead, LocalStatsReader, ReadRows
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter

REPO = Path(__file__).resolve().parents[3]

#: filters as HiveQL, and the same condition on a file's rows (the truth a plan must keep)
FILTERS: list[tuple[str, Callable[[pa.Table], Any]]] = [
    ("id = 1", lambda t: pc.equal(t["id"], 1)),
    ("id < 7", lambda t: pc.less(t["id"], 7)),
    ("id >= 55", lambda t: pc.greater_equal(t["id"], 55)),
    ("id between 20 and 24", lambda t: pc.and_(pc.greater_equal(t["id"], 20), pc.less_equal(t["id"], 24))),
    ("name = 'n0031'", lambda t: pc.equal(t["name"], "n0031")),
    ("part = 2 and id > 40", lambda t: pc.and_(pc.equal(t["part"], 2), pc.greater(t["id"], 40))),
]


def _folder(root: Path) -> Path:
    return root / ".hoodie" / ".hive_bridge" / "column_stats"


def _segments(root: Path) -> list[Path]:
    return sorted(_folder(root).glob("seg-*.arrow"))


def _write_table(root: Path, n: int = 60, rows_per_file: int = 5) -> HudiWriter:
    w = HudiWriter(root, partition_fields=["part"], rows_per_file=rows_per_file)
    w.insert(pa.table({"id": pa.array(range(n), pa.int64()), "part": [i % 3 for i in range(n)],
                       "name": [f"n{i:04d}" for i in range(n)]}))
    return w


def _kept(table: HudiTable, index: ColumnStatsIndex, text: str) -> set[str]:
    result = Pruner(table, index, table.latest_file_slices()).run(sarg.read_filter(text, table_sarg_schema(table)))
    return {s.base_file.path for s in result.slices if s.base_file is not None}


def _truth(table: HudiTable) -> dict[str, set[str]]:
    """Per filter, the base files holding a matching row (read from the data itself)."""
    out: dict[str, set[str]] = {text: set() for text, _ in FILTERS}
    for s in table.latest_file_slices():
        assert s.base_file is not None
        data = pq.read_table(s.base_file.full_path)
        data = data.append_column("part", pa.array([int(s.partition_path.split("=")[-1])] * data.num_rows)) \
            if "part" not in data.column_names else data
        for text, cond in FILTERS:
            if pc.any(cond(data)).as_py():
                out[text].add(s.base_file.path)
    return out


@dataclass
class Built:
    root: Path
    table: HudiTable
    name: str
    good: bytes
    stats: pa.Table
    kept: dict[str, set[str]]
    truth: dict[str, set[str]]

    def reset(self, content: bytes) -> None:
        """The index folder holding only the segment `name` with `content`."""
        for p in _folder(self.root).iterdir():
            p.unlink()
        (_folder(self.root) / self.name).write_bytes(content)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """A 12-file table (ids 0..59, 3 partitions), its index persisted as one segment, and the clean index's
    statistics and plans."""
    root = tmp_path_factory.mktemp("integrity") / "t"
    w = _write_table(root)
    table = w.table()
    index = ColumnStatsIndex(table)
    stats = index.load()
    (seg,) = _segments(root)
    kept = {text: _kept(table, index, text) for text, _ in FILTERS}
    truth = _truth(table)
    for text, _ in FILTERS:
        assert truth[text] <= kept[text], text       # the clean plan keeps every file holding a match
    assert len(truth["id = 1"]) == 1 and stats.num_rows == 12
    assert all(len(kept[text]) < 12 for text, _ in FILTERS)    # each filter's plan drops files
    return Built(root, table, seg.name, seg.read_bytes(), stats, kept, truth)


def _corrupt(data: st.DataObject, good: bytes) -> bytes:
    size = len(good)
    kind = data.draw(st.sampled_from(["flip", "truncate", "overwrite", "append"]))
    if kind == "flip":
        out = bytearray(good)
        for bit in data.draw(st.lists(st.integers(0, size * 8 - 1), min_size=1, max_size=4)):
            out[bit // 8] ^= 1 << (bit % 8)
        return bytes(out)
    if kind == "truncate":
        return good[:data.draw(st.integers(0, size - 1))]
    if kind == "append":
        return good + data.draw(st.binary(min_size=1, max_size=64))
    start = data.draw(st.integers(0, size - 1))
    chunk = data.draw(st.binary(min_size=1, max_size=256))
    return good[:start] + chunk + good[start + len(chunk):]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_corruption_is_detected_and_no_matching_file_is_dropped(built: Built, data: st.DataObject) -> None:
    bad = _corrupt(data, built.good)
    built.reset(bad)
    index = ColumnStatsIndex(built.table)
    stats = index.load()
    if bad == built.good:           # an overwrite with the same bytes: nothing to detect, the segment is used
        assert (index.last.corrupt_segments, index.last.files_from_index) == (0, 12)
    else:
        assert (index.last.corrupt_segments, index.last.segments_read, index.last.files_from_footers) == (1, 0, 12)
        assert [d.where for d in index.discarded] == [str(_folder(built.root) / built.name)]
        assert not (_folder(built.root) / built.name).exists()      # discarded: replaced by a new segment
    assert stats.equals(built.stats)
    for text, _ in FILTERS:
        kept = _kept(built.table, index, text)
        assert kept == built.kept[text], text
        assert built.truth[text] <= kept, text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_resealed_corruption_never_raises_a_library_error(built: Built, data: st.DataObject) -> None:
    """Damage behind a checksum recomputed over it (a writer's bug, a forger): Arrow's full validation and the
    value checks refuse what is not a valid segment, and nothing from pyarrow escapes loading or planning."""
    body = built.good[:-32]
    built.reset(seal(_corrupt(data, body)))
    index = ColumnStatsIndex(built.table)
    stats = index.load()
    stats.validate(full=True)
    assert index.last.corrupt_segments + index.last.segments_read == 1
    for text, _ in FILTERS:
        _kept(built.table, index, text)


def _unsealed(table: pa.Table) -> bytes:
    """A segment as the previous format wrote it: the Arrow IPC file alone, no checksum."""
    sink = pa.BufferOutputStream()
    segments.write_segment_to(sink, table)
    return bytes(sink.getvalue().to_pybytes())


def test_a_segment_without_checksum_is_not_trusted(built: Built) -> None:
    rows = segments.load_segment(pa.py_buffer(built.good), "clean")
    built.reset(_unsealed(rows))
    index = ColumnStatsIndex(built.table)
    assert index.load().equals(built.stats)
    assert (index.last.corrupt_segments, index.last.files_from_footers, index.last.files_from_index) == (1, 12, 0)
    assert "has no checksum" in index.discarded[0].reason
    (seg,) = _segments(built.root)
    segments.read_segment(seg)                       # what replaced it is sealed: verified
    assert ColumnStatsIndex(built.table).load().equals(built.stats)


def _tampered(built: Built, lo: int, hi: int) -> pa.Table:
    """The clean segment's rows with the bounds of id of the file holding id 1 replaced."""
    rows = segments.load_segment(pa.py_buffer(built.good), "clean")
    (victim,) = built.truth["id = 1"]
    at = pc.equal(rows.column("path"), victim)
    for name, value in (("id::min", lo), ("id::max", hi)):
        i = rows.schema.get_field_index(name)
        rows = rows.set_column(i, name, pc.if_else(at, pa.scalar(value, pa.int64()), rows.column(name)))
    return rows


def test_altered_values_under_the_old_checksum_fail_it(built: Built) -> None:
    """Bounds that look plausible (2..16 for a file holding 1) but are not the bytes that were sealed."""
    built.reset(_unsealed(_tampered(built, 2, 16)) + built.good[-32:])
    index = ColumnStatsIndex(built.table)
    assert index.load().equals(built.stats) and index.last.corrupt_segments == 1
    assert index.discarded[0].reason.startswith("failed its checksum")
    assert _kept(built.table, index, "id = 1") == built.kept["id = 1"]
    # the same rows accepted would drop the file holding id 1
    built.reset(segments.segment_bytes(_tampered(built, 2, 16)))
    forged = ColumnStatsIndex(built.table)
    forged.load()
    assert forged.last.corrupt_segments == 0 and not built.truth["id = 1"] & _kept(built.table, forged, "id = 1")


def test_inverted_bounds_fail_the_value_checks_even_when_sealed(built: Built) -> None:
    built.reset(segments.segment_bytes(_tampered(built, 17, 3)))
    index = ColumnStatsIndex(built.table)
    assert index.load().equals(built.stats) and index.last.corrupt_segments == 1
    assert index.discarded[0].reason == "failed its checks: id::min above id::max"
    with pytest.raises(SegmentRejected, match="min above"):
        segments.load_segment(pa.py_buffer(segments.segment_bytes(_tampered(built, 17, 3))), "x")


def test_a_count_out_of_range_fails_the_checks(built: Built) -> None:
    rows = segments.load_segment(pa.py_buffer(built.good), "clean")
    i = rows.schema.get_field_index("num_rows")
    built.reset(segments.segment_bytes(rows.set_column(i, "num_rows", pa.array([-1] * rows.num_rows, pa.int64()))))
    index = ColumnStatsIndex(built.table)
    assert index.load().equals(built.stats) and index.last.corrupt_segments == 1
    assert "num_rows below 0" in index.discarded[0].reason


def test_inverted_bounds_from_a_source_are_unknown() -> None:
    rows = pa.table({"path": ["a", "b", "c"], "x::min": pa.array([1, 9, None], pa.int64()),
                     "x::max": pa.array([5, 3, 4], pa.int64()), "x::null_count": pa.array([0, 0, 0], pa.int64()),
                     "x::min_exact": [True, True, None], "x::max_exact": [True, True, None],
                     "f::min": pa.array([float("nan"), 2.0, 0.0]), "f::max": pa.array([1.0, 1.0, -0.0])})
    out = clear_inverted_bounds(rows)
    assert out.column("x::min").to_pylist() == [1, None, None] and out.column("x::max").to_pylist() == [5, None, 4]
    assert out.column("x::min_exact").to_pylist() == [True, None, None]
    # NaN compares as nothing (kept); 2.0 > 1.0 is inverted; -0.0 and 0.0 are equal
    assert out.column("f::min").to_pylist()[1:] == [None, 0.0]
    assert out.column("f::max").to_pylist()[1:] == [None, -0.0]


def test_rows_of_one_file_in_two_segments_are_used_once(built: Built) -> None:
    """Two writers that indexed the same files (object storage: no lock): each row kept once on load."""
    built.reset(built.good)
    (_folder(built.root) / built.name.replace("seg-", "seg-9")).write_bytes(built.good)
    index = ColumnStatsIndex(built.table)
    assert index.load().equals(built.stats)
    assert (index.last.segments_read, index.last.files_from_index, index.segments.duplicate_rows) == (2, 12, 12)


# ------------------------------------------------------------------ the explain case of the report


@pytest.fixture
def three_files(tmp_path: Path) -> Path:
    """ids 1..50 in three files (1-17, 18-34, 35-50), indexed by `hive-bridge index`."""
    root = tmp_path / "t"
    HudiWriter(root, rows_per_file=17).insert(pa.table({"id": pa.array(range(1, 51), pa.int64()),
                                                        "name": [f"n{i}" for i in range(1, 51)]}))
    assert main(["index", "--table", str(root)], stdout=io.StringIO(), stderr=io.StringIO()) == 0
    return root


def _flip_one_bit(root: Path) -> Path:
    (seg,) = _segments(root)
    data = bytearray(seg.read_bytes())
    data[len(data) // 2] ^= 0x10
    seg.write_bytes(bytes(data))
    return seg


def test_explain_after_a_bit_flip_keeps_the_file_and_says_so(three_files: Path) -> None:
    seg = _flip_one_bit(three_files)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "hive_bridge", "explain", "--table", str(three_files), "id = 1"],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "files kept 1 / 3" in proc.stdout
    assert f"hive-bridge explain: index segment {seg} failed its checksum; discarded" in proc.stderr
    assert "rebuilt the statistics of 3 files" in proc.stderr
    # and in JSON: the counter, the notice, the file holding id 1 kept (the index rebuilt: nothing discarded now)
    _flip_one_bit(three_files)
    out, err = io.StringIO(), io.StringIO()
    assert main(["explain", "--table", str(three_files), "id = 1", "--json"], stdout=out, stderr=err) == 0
    doc = json.loads(out.getvalue())
    assert doc["index_segments_discarded"] == 1 and doc["files_kept"] == 1
    assert len(doc["index_problems"]) == 1 and "failed its checksum" in doc["index_problems"][0]
    (kept,) = [f for f in doc["files"] if f["kept"]]
    assert pq.read_table(three_files / kept["path"]).column("id").to_pylist()[0] == 1
    out, err = io.StringIO(), io.StringIO()
    assert main(["explain", "--table", str(three_files), "id = 1", "--json"], stdout=out, stderr=err) == 0
    assert json.loads(out.getvalue())["index_segments_discarded"] == 0 and "index segment" not in err.getvalue()


def test_index_and_replay_say_a_segment_was_discarded(three_files: Path, tmp_path: Path) -> None:
    _flip_one_bit(three_files)
    out, err = io.StringIO(), io.StringIO()
    assert main(["index", "--table", str(three_files)], stdout=out, stderr=err) == 0
    assert "hive-bridge index: index segment" in err.getvalue() and "3 footers read" in out.getvalue()
    _flip_one_bit(three_files)
    log = tmp_path / "filters.log"
    log.write_text("      filterExpr: (id = 1) (type: boolean)\n")
    out, err = io.StringIO(), io.StringIO()
    assert main(["replay", "--table", str(three_files), "--json", str(log)], stdout=out, stderr=err) == 0
    row, summary = [json.loads(line) for line in out.getvalue().splitlines()]
    assert row["index_segments_discarded"] == 1 and row["files_kept"] == 1
    assert summary["summary"] is True and summary["tables"][0]["index_segments_discarded"] == 1
    assert "hive-bridge replay: index segment" in err.getvalue()


# ------------------------------------------------------------------ writers


def test_a_killed_writers_temporary_file_is_never_read_and_removed(tmp_path: Path) -> None:
    w = _write_table(tmp_path / "t")
    table = w.table()
    clean = ColumnStatsIndex(table)
    stats = clean.load()
    wanted = _kept(table, clean, "id = 1")
    assert wanted and len(wanted) < 12
    (seg,) = _segments(w.base_path)
    rows = segments.read_segment(seg)
    # statistics that would drop every file for id = 1 if they were read
    lying = rows.set_column(rows.schema.get_field_index("id::min"), "id::min", pa.array([1000] * 12, pa.int64()))
    lying = lying.set_column(lying.schema.get_field_index("id::max"), "id::max", pa.array([2000] * 12, pa.int64()))
    tmp = _folder(w.base_path) / f".tmp-{seg.name}"
    tmp.write_bytes(segments.segment_bytes(lying))
    seg.unlink()
    # another writer holds the lock: the file may be its own, being written; left alone, never read
    with FolderLock(_folder(w.base_path), wait=0) as held:
        assert held
        index = ColumnStatsIndex(w.table(), persist=False)
        assert index.load().equals(stats) and index.last.files_from_footers == 12
        assert tmp.exists() and _kept(table, index, "id = 1") == wanted
    # no writer holds it: removed on load
    index = ColumnStatsIndex(w.table())
    assert index.load().equals(stats) and index.last.files_from_footers == 12
    assert not tmp.exists() and len(_segments(w.base_path)) == 1
    # and by a writer, under the lock (planted after the load, while the new file's footer is read)
    w.insert(pa.table({"id": pa.array([100], pa.int64()), "part": [0], "name": ["new"]}))
    index = ColumnStatsIndex(w.table(), reader=_Planting(tmp, segments.segment_bytes(lying)))
    index.load()
    assert (index.last.files_from_footers, index.last.segments_written) == (1, 1) and not tmp.exists()
    assert _kept(w.table(), index, "id = 1") == wanted


class _Planting(LocalStatsReader):
    """Leaves a temporary file as a killed writer would, while reading."""

    def __init__(self, path: Path, content: bytes) -> None:
        super().__init__(1)
        self.path, self.content = path, content

    def read_footers(self, files: Sequence[FileToRead], target: Sequence[StatsLeaf]) -> ReadRows:
        self.path.write_bytes(self.content)
        return super().read_footers(files, target)


def test_folder_lock_is_held_by_one_at_a_time(tmp_path: Path) -> None:
    with FolderLock(tmp_path / "f", wait=0) as first:
        assert first
        with FolderLock(tmp_path / "f", wait=0) as second:
            assert not second
    with FolderLock(tmp_path / "f", wait=0) as again:
        assert again


class _MeetingReader(LocalStatsReader):
    """Reads footers only once every process has loaded the (empty) index and come to read: both then hold the
    same files to persist."""

    def __init__(self, barrier: Any) -> None:
        super().__init__(1)
        self.barrier = barrier

    def read_footers(self, files: Sequence[FileToRead], target: Sequence[StatsLeaf]) -> ReadRows:
        self.barrier.wait(timeout=120)
        return super().read_footers(files, target)


def _index_in_process(root: str, barrier: Any, results: Any) -> None:
    index = ColumnStatsIndex(HudiTable.open(root), reader=_MeetingReader(barrier))
    index.load()
    results.put((index.last.files_from_footers, index.last.segments_written))


def _keys(root: Path) -> list[str]:
    return [k for seg in _segments(root) for k in entry_keys(*(segments.read_segment(seg).column(c)
                                                               for c in ("path", "file_size", "instant"))).to_pylist()]


def test_two_processes_indexing_at_once_persist_each_file_once(tmp_path: Path) -> None:
    w = _write_table(tmp_path / "t")
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_index_in_process, args=(str(w.base_path), barrier, results)) for _ in range(2)]
    for p in procs:
        p.start()
    outcomes = sorted(results.get(timeout=300) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    # both read every footer; one persisted them, the other found them persisted under the lock
    assert outcomes == [(12, 0), (12, 1)]
    keys = _keys(w.base_path)
    assert len(_segments(w.base_path)) == 1 and len(keys) == len(set(keys)) == 12
    index = ColumnStatsIndex(w.table())
    reference = ColumnStatsIndex(w.table(), persist=False, source="footers").load()
    assert index.load().equals(reference) and (index.last.files_from_index, index.last.files_from_footers) == (12, 0)


def test_two_index_commands_at_once_leave_no_duplicate_rows(tmp_path: Path) -> None:
    w = _write_table(tmp_path / "t", n=300)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "hive_bridge", "index", "--table", str(w.base_path)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and "Traceback" not in err and "60 file slices" in out, err
    keys = _keys(w.base_path)
    assert len(keys) == len(set(keys)) == 60
    index = ColumnStatsIndex(w.table())
    reference = ColumnStatsIndex(w.table(), persist=False, source="footers").load()
    assert index.load().equals(reference) and (index.last.files_from_index, index.last.corrupt_segments) == (60, 0)
