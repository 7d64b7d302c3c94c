"""Fixtures: the shared real Hudi tables (unzipped once per session) and a hudi-rs oracle."""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SHARED_TABLES = REPO.parent / "shared" / "data" / "hudi-tables"


def _unzip(zip_path: Path, dest: Path) -> Path:
    """Extract one fixture zip (skipping macOS clutter) and return its table folder."""
    with zipfile.ZipFile(zip_path) as zf:
        members = [m for m in zf.namelist() if not m.startswith("__MACOSX/") and "/._" not in m]
        zf.extractall(dest, members=members)
    tables = [p.parent.parent for p in dest.glob("*/.hoodie/hoodie.properties")]
    assert len(tables) == 1, f"{zip_path.name}: expected one table folder, found {tables}"
    return tables[0]


FIXTURE_NAMES = sorted(p.stem for p in SHARED_TABLES.glob("*.zip")) if SHARED_TABLES.is_dir() else []


@pytest.fixture(scope="session")
def fixture_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every shared fixture table, unzipped once: zip stem -> table folder (treat as read-only)."""
    if not FIXTURE_NAMES:
        pytest.skip(f"shared Hudi tables not found in {SHARED_TABLES}")
    root = tmp_path_factory.mktemp("hudi_fixtures")
    return {name: _unzip(SHARED_TABLES / f"{name}.zip", root / name) for name in FIXTURE_NAMES}


@pytest.fixture
def fixture_copy(fixture_tables: dict[str, Path], tmp_path: Path) -> Callable[[str], Path]:
    """A private, writable copy of one fixture table (for tests that write the index or damage files)."""

    def copy(name: str) -> Path:
        src = fixture_tables[name]
        dest = tmp_path / name / src.name
        shutil.copytree(src, dest)
        return dest

    return copy
