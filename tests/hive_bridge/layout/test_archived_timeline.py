"""The archived timeline (:mod:`hive_bridge.layout.archived`): time travel to an archived instant and incremental
pulls from an archived begin equal Hudi's own Spark reader's rows, on two small merge-on-read tables Hudi's writer
archived (a version-9 LSM timeline and version-6 archive log files, ``data/archived/``, with the rows Hudi's reader
returned: see the README there), and time travel equals hudi-rs's too; a damaged archive is an error naming the file; a request inside the active
timeline never opens the archive."""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from hive_bridge.errors import HudiTableError
from hive_bridge.layout.archived import (
    ArchivedTimelineError,
    archive_location,
    read_archived_timeline,
    with_archived,
)
from hive_bridge.layout.asof import TimeTravelError, merge_bound
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.layout.incremental import IncrementalRange, touched_file_groups
from hive_bridge.spark.merge import hudi_reader, merge_with_hudi
from hive_bridge.table.table import HudiTable

DATA = Path(__file__).parent / "data" / "archived"
COLUMNS = ("id", "region", "ts", "v")
TABLES = ("mor9", "mor6")


def unzip_table(name: str, dest: Path) -> Path:
    with zipfile.ZipFile(DATA / f"{name}.zip") as zf:
        zf.extractall(dest)
    return dest / name


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("archived")
    return {name: unzip_table(name, root) for name in TABLES}


@pytest.fixture()
def fresh(tmp_path: Path) -> Callable[[str], Path]:
    """A private copy of a table (for tests that damage it)."""
    return lambda name: unzip_table(name, tmp_path)


def expected() -> dict[str, Any]:
    return dict(json.loads((DATA / "expected.json").read_text()))


def slice_rows(table: HudiTable, slices: list[FileSlice], state: str | None,
               keep: Callable[[str], bool] = lambda _: True) -> list[str]:
    """The rows of the slices as Hudi's peer driver prints them (sorted JSON of the data columns): base files
    alone read as they are, slices with log files merged by hudi-rs up to ``state``; rows kept by commit time."""
    reader = hudi_reader(str(table.base_path), None, merge_bound(state))
    out = []
    for s in slices:
        if s.log_files or s.base_file is None:
            batches = merge_with_hudi(reader, s.base_file.path if s.base_file else "", [lf.path for lf in s.log_files])
            rows = [r for b in batches for r in b.to_pylist()]
        else:
            rows = pq.read_table(s.base_file.full_path).to_pylist()
        out += [json.dumps({c: r[c] for c in COLUMNS}, separators=(",", ":")) for r in rows
                if keep(r["_hoodie_commit_time"])]
    return sorted(out)


def row_keeper(rng: IncrementalRange) -> Callable[[str], bool]:
    """``rng.row_filter()`` as a Python test of a row's commit time."""
    commits = set(rng.commits)
    if not rng.by_completion:
        return lambda ct: rng.begin < ct <= rng.end
    if rng.full_scan and rng.active_from:
        return lambda ct: ct in commits or rng.begin < ct < rng.active_from
    return lambda ct: ct in commits


def incremental_rows(table: HudiTable, begin: str, end: str, fallback: bool) -> tuple[IncrementalRange, list[str]]:
    rng, slices = table.incremental(begin, end, fallback=fallback)
    return rng, slice_rows(table, slices, None if rng.full_scan else rng.state_instant, row_keeper(rng))


def _archived_writes(table: HudiTable) -> list[str]:
    first = table.timeline.completed_writes[0].timestamp
    return [i.timestamp for i in with_archived(table.timeline).completed_writes if i.timestamp < first]


@pytest.mark.parametrize("name", TABLES)
def test_archived_instants_and_their_metadata_are_read(tables: dict[str, Path], name: str) -> None:
    table = HudiTable.open(tables[name])
    archived = read_archived_timeline(table.properties)
    assert archived.files and all(f.startswith(archive_location(table.properties)) for f in archived.files)
    writes = [i for i in archived.instants if i.action in ("commit", "deltacommit")]
    assert len(writes) >= 5 and {i.action for i in writes} == {"commit", "deltacommit"}   # compaction archived too
    assert all(i.is_completed for i in writes)
    assert max(i.timestamp for i in archived.instants) < table.timeline.completed_writes[0].timestamp
    for i in writes:
        stats = archived.metadata[i.timestamp]["partitionToWriteStats"]
        assert set(stats) <= {"region=EU", "region=US"} and all(w["fileId"] for ws in stats.values() for w in ws)
    if table.properties.timeline_layout_version >= 2:       # the LSM timeline keeps completion times
        assert all(i.completion_time and i.completion_time >= i.timestamp for i in writes)
    merged = with_archived(table.timeline)
    assert merged is with_archived(table.timeline) is table.timeline.merged_archive          # read once
    assert [i.timestamp for i in merged.completed_writes] == sorted(
        [i.timestamp for i in writes] + [i.timestamp for i in table.timeline.completed_writes])


@pytest.mark.parametrize("name", TABLES)
def test_time_travel_to_archived_instants_equals_hudi(tables: dict[str, Path], name: str) -> None:
    queries = [q for q in expected()["queries"] if q["table"] == name and q["kind"] == "asof"]
    assert len(queries) == 3
    for q in queries:
        table = HudiTable.open(tables[name])
        assert q["instant"] in _archived_writes(table)
        checked, slices = table.time_travel(q["instant"])
        assert checked.instant == q["instant"]
        assert all(s.base_instant <= q["instant"] for s in slices)
        assert slice_rows(table, slices, checked.instant) == sorted(q["rows"]), q["instant"]
        assert hudi_rs_rows(tables[name], q["instant"]) == sorted(q["rows"]), q["instant"]


def hudi_rs_rows(path: Path, as_of: str) -> list[str]:
    """hudi-rs's time-travel read (it reads the files as of an instant before its active timeline too; its
    incremental read does not read the archived timeline)."""
    from hudi import HudiReadOptions
    from hudi import HudiTable as RsTable

    batches = RsTable(str(path)).read(HudiReadOptions().with_as_of_timestamp(as_of))
    return sorted(json.dumps({c: r[c] for c in COLUMNS}, separators=(",", ":")) for b in batches
                  for r in b.to_pylist())


@pytest.mark.parametrize("name", TABLES)
def test_incremental_from_an_archived_begin_equals_hudi(tables: dict[str, Path], name: str) -> None:
    queries = [q for q in expected()["queries"] if q["table"] == name and q["kind"] == "incremental"]
    assert {q["fallback"] for q in queries} == {False, True}
    for q in queries:
        table = HudiTable.open(tables[name])
        rng, rows = incremental_rows(table, q["begin"], q["end"], q["fallback"])
        assert rng.full_scan == q["fallback"]
        assert rng.archived == (not q["fallback"])
        if rng.archived:   # the archived commits in the range are read
            assert set(_archived_writes(table)) & set(rng.commits)
        assert_hudi_rows(table, rng, rows, q["rows"])


def assert_hudi_rows(table: HudiTable, rng: IncrementalRange, ours: list[str], hudi: list[str]) -> None:
    """Our incremental rows equal Hudi's; except that Hudi's version-6 relations without the fallback take only
    the range's active commits: then Hudi's rows are those of the file groups the active commits wrote, kept by
    commit time in (begin, end] as ours are, and fewer than ours."""
    if rng.archived and not rng.by_completion:
        active = [c for c in rng.commits if c >= table.timeline.completed_writes[0].timestamp]
        groups = touched_file_groups(table.timeline, tuple(active))
        slices = [s for s in table.latest_file_slices(rng.state_instant) if (s.partition_path, s.file_id) in groups]
        assert slice_rows(table, slices, rng.state_instant, row_keeper(rng)) == sorted(hudi)
        assert set(hudi) < set(ours)
    else:
        assert ours == sorted(hudi), rng


def test_an_archived_begin_with_an_empty_archive_stays_an_error(tables: dict[str, Path], tmp_path: Path) -> None:
    path = shutil.copytree(tables["mor9"], tmp_path / "t")
    table = HudiTable.open(path)
    shutil.rmtree(archive_location(table.properties))
    with pytest.raises(HudiTableError, match="the archived timeline holds no commit"):
        table.incremental("20000101000000000", None, fallback=False)
    with pytest.raises(TimeTravelError, match="the archived timeline holds no commit"):
        HudiTable.open(path).time_travel("20000101000000000")


@pytest.mark.parametrize("name", TABLES)
def test_before_every_archived_commit_is_refused(tables: dict[str, Path], name: str) -> None:
    table = HudiTable.open(tables[name])
    first = _archived_writes(table)[0]
    with pytest.raises(TimeTravelError) as exc:
        table.time_travel("2000-01-01")
    assert f"before the first completed commit of the table ({first}, on the archived timeline)" in str(exc.value)
    unknown = str(int(first) + 1)
    with pytest.raises(TimeTravelError, match=f"as of {unknown}: no such instant on the timeline"):
        HudiTable.open(tables[name]).time_travel(unknown)


# ------------------------------------------------------------------------------------------- damaged archives
def _lsm_damages(history: Path) -> list[tuple[Callable[[], None], str]]:
    parquet = sorted(history.glob("*.parquet"))[0]
    manifest = max(history.glob("manifest_*"), key=lambda p: int(p.name.split("_")[1]))
    return [
        (lambda: parquet.write_bytes(parquet.read_bytes()[:200]), parquet.name),
        (lambda: manifest.write_text('{"files": 3}'), manifest.name),
        (lambda: parquet.unlink(), parquet.name),
        (lambda: (history / "_version_").write_text("x"), "_version_"),
    ]


def _log_damages(archive: Path) -> list[tuple[Callable[[], None], str]]:
    log = sorted(archive.glob(".commits_.archive.*"))[0]

    def flip() -> None:         # a byte inside the records (not in the framing): a record that does not decode
        data = bytearray(log.read_bytes())
        data[len(data) - 400] ^= 0xFF
        log.write_bytes(bytes(data))

    return [(lambda: log.write_bytes(log.read_bytes()[:-100]), log.name), (flip, log.name)]


@pytest.mark.parametrize("name", TABLES)
def test_a_damaged_archive_is_an_error_naming_the_file(fresh: Callable[[str], Path], name: str) -> None:
    damages = _lsm_damages if name == "mor9" else _log_damages
    k = 0
    while True:
        path = fresh(name)
        table = HudiTable.open(path)
        history = Path(archive_location(table.properties))
        cases = damages(history)
        if k == len(cases):
            break
        damage, file_name = cases[k]
        archived = _archived_writes(table)[1]
        damage()
        for incremental in (False, True):
            with pytest.raises(ArchivedTimelineError) as exc:
                if incremental:
                    HudiTable.open(path).incremental(archived, None, fallback=False)
                else:
                    HudiTable.open(path).time_travel(archived)
            assert file_name in str(exc.value) and str(history) in str(exc.value), (k, str(exc.value))
        shutil.rmtree(path)
        k += 1
    assert k >= 2


# ------------------------------------------------------------------------------------------------- lazy rule
@pytest.mark.parametrize("name", TABLES)
def test_requests_inside_the_active_timeline_never_open_the_archive(fresh: Callable[[str], Path],
                                                                    name: str) -> None:
    path = fresh(name)
    probe = HudiTable.open(path)
    history = Path(archive_location(probe.properties))
    active = probe.timeline.completed_writes
    before_active = str(int(active[0].timestamp) - 1)
    # the archive's files are replaced by garbage: a request that opened any of them would fail
    for f in history.iterdir():
        f.write_bytes(b"not an archive")
    table = HudiTable.open(path)
    checked, slices = table.time_travel(active[0].timestamp)
    assert checked.instant == active[0].timestamp and slices
    rng, touched = table.incremental(active[0].completion_time or active[0].timestamp, None)
    assert rng.commits and not rng.archived and touched
    assert table.latest_file_slices()
    assert table.timeline.merged_archive is None
    # a request before the active timeline does open it (and says which file is bad)
    with pytest.raises(ArchivedTimelineError, match=str(history)):
        HudiTable.open(path).time_travel(before_active)
