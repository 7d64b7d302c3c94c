"""Event logs of real pyspark runs over Hudi tables written by the test writer (one subprocess, every codec)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hive_bridge.app.cli import main

SHARED = Path(os.environ.get("HIVE_BRIDGE_WORKLOAD_LOGS", "/work/shared/data/workload-logs"))
HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def hudi_eventlogs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """{"root": folder, "tables": name -> path, "queries": [(sql, per-table predicate)], "logs": codec -> folder}"""
    root = tmp_path_factory.mktemp("hudi-eventlogs")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parents[2]), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(HERE / "make_hudi_eventlogs.py"), str(root)], env=env,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"make_hudi_eventlogs.py failed:\n{proc.stderr[-3000:]}")
    info = json.loads((root / "queries.json").read_text())
    info["root"] = root
    info["logs"] = {p.name: p for p in (root / "eventlogs").iterdir()}
    return info


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def json_lines(text: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert rows and rows[-1].get("summary") is True
    return rows[:-1], rows[-1]


def write_shared_log_table(path: Path, rows: int = 50) -> Path:
    """A Hudi table with the columns of the shared real event logs' table ``t`` (partitioned by ``dt``, 5 rows a
    file), written at ``path``: the logs' scans of ``t`` replay against it with ``--table LOCATION=path``."""
    import datetime as dt
    from decimal import Decimal

    import pyarrow as pa

    from hive_bridge.testing.writer import HudiWriter

    n = rows
    data = pa.table({
        "id": pa.array(range(n), pa.int32()), "name": pa.array([f"n{i}" for i in range(n)]),
        "price": pa.array([i * 1.5 for i in range(n)]),
        "amount": pa.array([Decimal(i) + Decimal("0.25") for i in range(n)], pa.decimal128(10, 2)),
        "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 5) for i in range(n)]),
        "ts": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(hours=i % 24) for i in range(n)], pa.timestamp("us")),
        "dt": pa.array([f"2024-01-0{1 + i % 3}" for i in range(n)]),
    })
    HudiWriter(path, partition_fields=("dt",), rows_per_file=5).insert(data)
    return path


@pytest.fixture(scope="session")
def tpch_eventlog(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """{"root", "logs": folder, "tables": name -> path, "queries": [(sql, table -> predicate or None)]}: TPC-H
    queries 13, 14, 16 (and Q9's part filter) run by pyspark over small Hudi tables of TPC-H's schema."""
    root = tmp_path_factory.mktemp("tpch")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parents[2]), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(HERE / "make_tpch_eventlog.py"), str(root)], env=env,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"make_tpch_eventlog.py failed:\n{proc.stderr[-3000:]}")
    return {"root": root, "logs": root / "eventlogs", "tables": json.loads((root / "tables.json").read_text()),
            "queries": json.loads((root / "queries.json").read_text())}
