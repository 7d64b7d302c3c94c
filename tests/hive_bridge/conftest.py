"""Fixtures for hive_bridge tests: the real Hudi tables of ../shared, unzipped once per session."""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import SHARED_TABLES


def _unzip_all(dest: Path) -> dict[str, Path]:
    tables: dict[str, Path] = {}
    for zpath in sorted(SHARED_TABLES.glob("*.zip")):
        with zipfile.ZipFile(zpath) as zf:
            members = [m for m in zf.namelist() if not m.startswith("__MACOSX/") and "/._" not in m]
            target = dest / zpath.stem
            zf.extractall(target, members)
        roots = [p.parent.parent for p in target.glob("*/.hoodie/hoodie.properties")]
        if roots:
            tables[zpath.stem] = roots[0]
    return tables


@pytest.fixture(scope="session")
def shared_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """name (the zip's stem, e.g. ``sample_table.cow.v6_nonpartitioned``) -> table root, in a fresh copy."""
    if not SHARED_TABLES.is_dir():
        pytest.skip(f"{SHARED_TABLES} is missing")
    return _unzip_all(tmp_path_factory.mktemp("shared-tables"))


@pytest.fixture(scope="session")
def fixture_tables(shared_tables: dict[str, Path]) -> dict[str, Path]:
    """The shared tables (treat as read-only; :func:`fixture_copy` gives a writable copy)."""
    return shared_tables


@pytest.fixture
def fixture_copy(fixture_tables: dict[str, Path], tmp_path: Path) -> Callable[[str], Path]:
    """A private, writable copy of one fixture table as Hudi's writer left it (for tests that write the index or
    damage files): the index earlier tests built in the shared copy is left behind, so every copy starts alike
    whatever ran before it."""

    def copy(name: str) -> Path:
        src = fixture_tables[name]
        dest = tmp_path / name / src.name
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".hive_bridge"))
        return dest

    return copy
