"""Listing from the metadata table's files partition: the same latest slices as the folders and hudi-rs on every
fixture table that has one; a damaged or lagging metadata table falls back to the folders, and says why."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from hive_bridge.table.table import HudiTable
from tests.conftest import FIXTURE_NAMES
from tests.hive_bridge.oracle import reference_slices

MDT_FILES = [n for n in (
    "quickstart_trips_table.mor.avro.v8_trips_8i3u1d",
    "sample_table.cow.v9_lance_nonpartitioned",
    "sample_table.cow.v9_timebasedkeygen_epochmillis",
    "sample_table.cow.v9_timebasedkeygen_nonhivestyle",
    "sample_table.cow.v9_txns_simple_meta",
    "sample_table.cow.v9_txns_simple_overwrite",
    "sample_table.mor.avro.v9_lance_nonhivestyle",
    "sample_table.mor.avro.v9_nonpartitioned_rollback",
    "sample_table.mor.avro.v9_txns_nonpart_meta",
    "sample_table.mor.avro.v9_txns_simple_meta",
    "sample_table.mor.avro.v9_txns_simple_overwrite",
) if n in FIXTURE_NAMES]


def _slices(table: HudiTable) -> list[tuple[object, ...]]:
    return sorted((s.partition_path, s.file_id, s.base_instant, s.base_file.path if s.base_file else None,
                   s.base_file.size if s.base_file else None, tuple(lf.path for lf in s.log_files),
                   tuple(lf.size for lf in s.log_files)) for s in table.latest_file_slices())


@pytest.mark.parametrize("name", MDT_FILES)
def test_mdt_listing_equals_the_folders_and_hudi_rs(fixture_tables: dict[str, Path], name: str) -> None:
    root = fixture_tables[name]
    from_mdt = HudiTable.open(root, listing="auto")
    assert from_mdt.listing_source == "mdt", from_mdt.listing_problems
    folders = HudiTable.open(root)
    assert folders.listing_source == "folders"
    assert _slices(from_mdt) == _slices(folders)
    ours = sorted((s.partition_path, s.file_id, s.base_file.path if s.base_file else "",
                   tuple(sorted(lf.name for lf in s.log_files))) for s in from_mdt.latest_file_slices())
    theirs = sorted((p, f, b, logs) for p, f, _c, b, _size, logs in reference_slices(root))
    assert ours == theirs


def _fallback(root: Path, why: str) -> None:
    with pytest.warns(RuntimeWarning, match="listing the folders"):
        table = HudiTable.open(root, listing="mdt")
    assert table.listing_source == "folders"
    assert any(why in p for p in table.listing_problems), table.listing_problems
    assert _slices(table) == _slices(HudiTable.open(root))


def test_a_damaged_files_partition_falls_back(fixture_copy: Callable[[str], Path]) -> None:
    root = fixture_copy("sample_table.cow.v9_txns_simple_meta")
    for hfile in (root / ".hoodie" / "metadata" / "files").glob("*.hfile"):
        hfile.write_bytes(hfile.read_bytes()[:100])
    _fallback(root, "files")


def test_a_lagging_metadata_table_falls_back(fixture_copy: Callable[[str], Path], tmp_path: Path) -> None:
    """The metadata table's last deltacommit made uncommitted: the data instant it described is not in the
    metadata table, whose listing would miss that instant's files."""
    root = fixture_copy("quickstart_trips_table.mor.avro.v8_trips_8i3u1d")
    timeline = root / ".hoodie" / "metadata" / ".hoodie" / "timeline"
    last = sorted(p for p in timeline.iterdir() if p.name.endswith(".deltacommit") and "_" in p.name)[-1]
    shutil.move(str(last), str(tmp_path / last.name))
    _fallback(root, "lags")


def test_no_metadata_table_lists_the_folders(fixture_tables: dict[str, Path]) -> None:
    table = HudiTable.open(fixture_tables["sample_table.cow.v6_nonpartitioned"], listing="auto")
    assert table.listing_source == "folders" and table.listing_problems
