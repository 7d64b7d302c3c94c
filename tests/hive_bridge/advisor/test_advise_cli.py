"""``hive-bridge advise`` through the CLI: a real Spark event log resolved to a Hudi table of its schema, and
bad input (a table that does not open, no filters for the table, a log that cannot be read) told plainly with
an exit code and no traceback."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hive_bridge.testing.writer import HudiWriter
from tests.hive_bridge.workload.conftest import SHARED, run

LOG = SHARED / "spark-eventlogs" / "3.5.8" / "evlog"
LOCATION = "/data/lake/3.5.8_plain/data/t"


@pytest.fixture(scope="module")
def log_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Hudi table with the columns of the log's table ``t`` (partitioned by ``dt``), rows in random order."""
    root = tmp_path_factory.mktemp("advise-cli")
    n = 4_000
    rng = np.random.default_rng(4)
    ids = rng.permutation(n)
    data = pa.table({
        "id": pa.array(ids, pa.int32()), "name": pa.array([f"n{i % 50}" for i in ids]),
        "price": pa.array([float(i % 300) * 1.5 for i in ids]),
        "amount": pa.array([Decimal(int(i) % 40) + Decimal("0.25") for i in ids], pa.decimal128(10, 2)),
        "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(i) % 5) for i in ids]),
        "ts": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(hours=int(i) % 24) for i in ids], pa.timestamp("us")),
        "dt": pa.array([f"2024-01-0{1 + int(i) % 3}" for i in ids]),
    })
    HudiWriter(root / "t", partition_fields=("dt",), rows_per_file=100).insert(data)
    return root / "t"


def test_real_event_log(log_table: Path) -> None:
    """The real 3.5.8 event log's scans of ``t`` go to the table: the advice is printed, with a recommendation
    and its settings or the reason for keeping today's layout, and the calibration line."""
    code, out, err = run("advise", "--table", f"{LOCATION}={log_table}", str(LOG))
    assert code == 0, err
    assert "Layouts for" in out and "today" in out
    assert "judged by the engine on the real files" in out
    assert ("recommended: keep today's layout" in out
            or "hoodie.clustering.plan.strategy.sort.columns=" in out
            or "hoodie.datasource.write.partitionpath.field=" in out)
    code, out, err = run("advise", "--json", "--table", f"{LOCATION}={log_table}", str(LOG))
    assert code == 0, err
    (advice,) = json.loads(out)["advice"]
    assert advice["table"] == str(log_table) and advice["filters"] >= 5
    assert advice["recommended"] is not None or any("keep today's layout" in n for n in advice["notes"])


def test_html_report_with_the_advice(log_table: Path, tmp_path: Path) -> None:
    """``--html``: the workload report's page, its layout advisor section filled from the advice."""
    page = tmp_path / "report.html"
    code, out, err = run("advise", "--html", str(page), "--json", "--table", f"{LOCATION}={log_table}", str(LOG))
    assert code == 0, err
    (advice,) = json.loads(out)["advice"]
    html = page.read_text()
    assert "Layout advisor" in html and "was not run for this report" not in html
    assert all(f"<code>{c['layout']}</code>" in html for c in advice["candidates"])
    assert ("Recommended:" in html) == (advice["recommended"] is not None)


def test_real_log_on_a_real_fixture_table(tmp_path: Path) -> None:
    """The real Spark 3.5.8 driver log replayed onto a real Hudi table of the shared fixtures (every filter goes
    to it; the columns it shares with the log's table, ``id`` and ``name``, are typed, the others unknown): the
    whole small table is read, the advice printed, today's layout kept with the reason, the calibration exact."""
    import zipfile

    from tests.conftest import SHARED_TABLES

    zpath = SHARED_TABLES / "sample_table.cow.v8_nonpartitioned.zip"
    if not zpath.is_file():
        pytest.skip(f"{zpath} is missing")
    with zipfile.ZipFile(zpath) as zf:
        zf.extractall(tmp_path, [m for m in zf.namelist() if not m.startswith("__MACOSX/") and "/._" not in m])
    (root,) = [p.parent.parent for p in tmp_path.glob("*/.hoodie/hoodie.properties")]
    log = SHARED / "spark-driver-logs" / "spark-3.5.8-driver.log"
    code, out, err = run("advise", "--table", str(root), str(log))
    assert code == 0, err
    assert "Layouts for" in out and "linear(id)" in out
    assert "recommended: keep today's layout" in out and "note: keep today's layout" in out
    assert "the whole table was read" in out and "1.00x what the engine keeps" in out
    _no_traceback(err)


def _no_traceback(err: str) -> None:
    assert "Traceback" not in err and 'File "' not in err


def test_table_that_does_not_open(tmp_path: Path) -> None:
    code, _, err = run("advise", "--table", str(tmp_path / "missing"), str(LOG))
    assert code == 2
    assert "hive-bridge advise: table" in err and "missing" in err
    _no_traceback(err)


def test_no_filters_for_the_table(log_table: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("INFO nothing to see here\n")
    code, _, err = run("advise", "--table", str(log_table), str(empty))
    assert code == 1
    assert "no filters of the workload read it" in err or "no scan of the workload read it" in err
    _no_traceback(err)


def test_log_that_cannot_be_read(log_table: Path, tmp_path: Path) -> None:
    code, _, err = run("advise", "--table", str(log_table), str(tmp_path / "nope.log"))
    assert code == 2 and "cannot read" in err and "nope.log" in err
    _no_traceback(err)
    code, _, err = run("advise", "--table", str(log_table))
    assert code == 2 and "give the logs" in err
    code, _, err = run("advise", "--samples", "0", "--table", str(log_table), str(LOG))
    assert code == 2 and "--samples must be 1 or more" in err


def test_damaged_log_reported_and_the_rest_advised(log_table: Path, tmp_path: Path) -> None:
    """A compressed log cut short is reported with its file; the filters of a good log are still advised on."""
    bad = tmp_path / "events.zstd"
    bad.write_bytes(b"\x28\xb5\x2f\xfd garbage")
    good = tmp_path / "filters.txt"
    good.write_text("id = 5\nid >= 100 and id < 200\n")
    code, out, err = run("advise", "--table", str(log_table), str(bad), str(good))
    assert code == 1
    assert "error:" in err and "events.zstd" in err
    assert "Layouts for" in out
    _no_traceback(err)
