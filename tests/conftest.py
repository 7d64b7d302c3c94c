"""Shared fixtures: hypothesis profiles, pyspark's jar folder (Hive's real classes), one SparkSession."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=20_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

REPO = Path(__file__).resolve().parent.parent
SHARED_TABLES = REPO.parent / "shared" / "data" / "hudi-tables"
#: the shared tables by zip stem (``sample_table.cow.v6_nonpartitioned``), for parametrizing
FIXTURE_NAMES = sorted(p.stem for p in SHARED_TABLES.glob("*.zip")) if SHARED_TABLES.is_dir() else []


@pytest.fixture(scope="session")
def pyspark_jars() -> Path:
    """pyspark's jars/ folder: hive-storage-api 2.8.1, hive-exec 2.3.10, ORC, the metastore, Spark itself."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    if not any(jars.glob("hive-storage-api-*.jar")):
        pytest.skip("pyspark's jars do not include hive-storage-api")
    return jars


@pytest.fixture(scope="session")
def java_tools() -> tuple[str, str]:
    """(javac, java) paths; the oracle tests need both."""
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        pytest.skip("javac/java (JDK 17+) not on PATH")
    return javac, java


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One local SparkSession for the whole run (starting one costs ~6 s)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    work = tmp_path_factory.mktemp("spark")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("hive-bridge-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(work / "warehouse"))
        .config("spark.local.dir", str(work / "tmp"))
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={work}")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
