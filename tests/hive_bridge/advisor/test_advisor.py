"""The layout advisor on real Hudi tables written by the test writer: predictions checked against the real engine
on the same rows rewritten in the recommended layout, known best keys recommended, today's kept when it is
already best, the statistics of simulated files equal to the index's statistics of real files, the curves."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from hive_bridge.advisor import Advice, advise_workload, hilbert_index, ranks, z_index
from hive_bridge.advisor.simulate import parse_layout
from hive_bridge.app.cli import main
from hive_bridge.app.replay import load_workload
from hive_bridge.stats.contract import stat_name
from hive_bridge.stats.groups import group_stats
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.clustered import write_in_layout
from hive_bridge.testing.writer import HudiWriter
from hive_bridge.workload.tables import TableResolver

ROWS, PER_FILE = 40_000, 1_000


def _data(seed: int = 11) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(rng.permutation(ROWS), pa.int64()),
        "a": pa.array(rng.integers(0, 1_000_000, ROWS), pa.int64()),
        "b": pa.array(rng.integers(0, 1_000_000, ROWS), pa.int64()),
        "c": pa.array(rng.choice(["Lima", "Oslo", "Rome", "Pune", "Kyiv", "Riga", "Baku", "Doha"], ROWS)),
        "x": pa.array(rng.random(ROWS)),
    })


def _filters(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _range_filters(column: str, count: int, width: int, seed: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"{column} >= {lo} and {column} < {lo + width}" for lo in rng.integers(0, 1_000_000 - width, count)]


def _mean_file_bytes(table: Path) -> int:
    sizes = [s.base_file.size for s in HudiTable.open(table).latest_file_slices() if s.base_file]
    return round(sum(sizes) / len(sizes))


def _advise(table: Path, log: Path, **options: Any) -> Advice:
    """The advice at today's file size (the rewritten tables the predictions are checked on keep it)."""
    options.setdefault("target_file_bytes", _mean_file_bytes(table))
    work, problems = load_workload([str(log)], TableResolver({}, str(table)))
    assert not problems
    work.plan()
    advice, errors = advise_workload(work, [str(table)], **options)
    assert not errors and len(advice) == 1
    return advice[0]


def _measured(table: Path, log: Path) -> tuple[float, float, int]:
    """The real engine on the table: occurrence-weighted (bytes kept, files kept), and the table's bytes."""
    work, _ = load_workload([str(log)], TableResolver({}, str(table)))
    work.plan()
    entries = work.entries()
    total = sum(s.base_file.size for s in HudiTable.open(table).latest_file_slices() if s.base_file)
    return (float(sum(e.occurrences * e.listing.bytes_kept for e in entries if e.listing)),
            float(sum(e.occurrences * e.listing.files_kept for e in entries if e.listing)), total)


@pytest.fixture(scope="module")
def scattered_partitioned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pa.Table]:
    """Rows in random order, partitioned by ``c`` (8 values)."""
    root = tmp_path_factory.mktemp("advisor-partitioned")
    data = _data(12)
    HudiWriter(root / "t", rows_per_file=PER_FILE // 4, partition_fields=["c"]).insert(data)
    return root / "t", data


def test_partitioned_table_clustered_inside_its_partitions(scattered_partitioned: tuple[Path, pa.Table],
                                                           tmp_path: Path) -> None:
    """A clustering orders rows inside each partition: the prediction for linear(a) on a table partitioned by c
    is within 10 % of the engine on the same rows written sorted by a inside the same partitions; c (a partition
    field) is no sort candidate."""
    table, data = scattered_partitioned
    log = _filters(tmp_path / "f.txt", [f"{f} and c = 'Lima'" for f in _range_filters("a", 30, 50_000)])
    advice = _advise(table, log, sample_rows_per_sample=10_000, samples=6)
    names = [c.layout for c in advice.candidates]
    assert "linear(c)" not in names and "partition(c)" not in names
    assert advice.recommended is not None and advice.recommended["layout"] == "linear(a)"
    predicted = next(c for c in advice.candidates if c.layout == "linear(a)")
    write_in_layout(tmp_path / "rewritten", data, "linear(a)", rows_per_file=PER_FILE // 4, partition_fields=["c"])
    bytes_kept, files_kept, total = _measured(tmp_path / "rewritten", log)
    share_predicted, share_measured = predicted.bytes_read / advice.table_bytes, bytes_kept / total
    assert abs(share_predicted - share_measured) <= 0.1 * share_measured, (share_predicted, share_measured)
    assert abs(predicted.files_read - files_kept) <= 0.1 * files_kept, (predicted.files_read, files_kept)


@pytest.fixture(scope="module")
def scattered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pa.Table]:
    """Rows written in random order: no column is clustered."""
    root = tmp_path_factory.mktemp("advisor")
    data = _data()
    HudiWriter(root / "t", rows_per_file=PER_FILE).insert(data)
    return root / "t", data


@pytest.mark.parametrize("workload", ["a", "a+b"])
def test_prediction_matches_the_engine_on_the_rewritten_table(scattered: tuple[Path, pa.Table], tmp_path: Path,
                                                              workload: str) -> None:
    """Sampled (a quarter of the rows, 3 samples): the recommended layout's predicted share of the bytes read is
    within 10 % of what the real engine keeps once the same rows are written in that layout."""
    table, data = scattered
    lines = _range_filters("a", 40, 20_000)
    if workload == "a+b":
        lines = [f"{f} and b >= {lo} and b < {lo + 200_000}"
                 for f, lo in zip(lines, np.random.default_rng(9).integers(0, 800_000, 40), strict=True)]
    log = _filters(tmp_path / "filters.txt", lines)
    advice = _advise(table, log, sample_rows_per_sample=10_000, samples=3)
    assert advice.samples == 3 and advice.sample_rows >= 9_000
    assert advice.recommended is not None, advice.notes
    layout = advice.recommended["layout"]
    assert "a" in parse_layout(layout).columns
    predicted = next(c for c in advice.candidates if c.layout == layout)
    write_in_layout(tmp_path / "rewritten", data, layout, rows_per_file=PER_FILE)
    bytes_kept, files_kept, total = _measured(tmp_path / "rewritten", log)
    share_predicted = predicted.bytes_read / advice.table_bytes
    share_measured = bytes_kept / total
    assert abs(share_predicted - share_measured) <= 0.1 * share_measured, (share_predicted, share_measured)
    assert abs(predicted.files_read - files_kept) <= 0.1 * files_kept, (predicted.files_read, files_kept)
    # the calibration: today simulated beside the engine's figure on today's files
    today = advice.candidates[0]
    assert today.layout == "today"
    assert abs(today.bytes_read - advice.engine_bytes_read) <= 0.1 * advice.engine_bytes_read
    assert advice.calibration_filters == advice.filters and advice.simulated_bytes_read == today.bytes_read
    assert predicted.saving > 0.5


def test_known_best_key_is_recommended(scattered: tuple[Path, pa.Table], tmp_path: Path) -> None:
    """Point and narrow range filters on b only, rows scattered: linear(b) is recommended, with its settings."""
    table, _ = scattered
    log = _filters(tmp_path / "f.txt", _range_filters("b", 30, 2_000) + ["b = 123456"] * 5 + ["x < 0.5"])
    advice = _advise(table, log, sample_rows_per_sample=10_000, samples=3)
    assert advice.recommended is not None and advice.recommended["layout"] == "linear(b)"
    settings = advice.recommended["settings"]
    assert settings["hoodie.clustering.plan.strategy.sort.columns"] == "b"
    assert settings["hoodie.layout.optimize.strategy"] == "linear"
    assert int(settings["hoodie.clustering.plan.strategy.target.file.max.bytes"]) == advice.target_file_bytes
    assert settings["hoodie.clustering.inline"] == "true"
    low_today = advice.candidates[0].bytes_low
    best = next(c for c in advice.candidates if c.layout == "linear(b)")
    assert best.bytes_high < low_today and best.bytes_low <= best.bytes_read <= best.bytes_high


def test_a_sorted_table_keeps_its_layout(tmp_path: Path) -> None:
    """The rows already sorted by the filtered column: no layout saves beyond the spread; today is kept."""
    data = _data(5)
    write_in_layout(tmp_path / "sorted", data, "linear(a)", rows_per_file=PER_FILE)
    log = _filters(tmp_path / "f.txt", _range_filters("a", 40, 20_000))
    advice = _advise(tmp_path / "sorted", log, sample_rows_per_sample=10_000, samples=3)
    assert advice.recommended is None
    assert any("keep today's layout" in n for n in advice.notes)


def test_partitioning_by_a_filtered_low_cardinality_column(scattered: tuple[Path, pa.Table], tmp_path: Path) -> None:
    """Equality filters on an 8-valued column: a partitioning by it is a candidate, and with the rewrite caveat
    when it is recommended; the whole table read (small) gives no spread."""
    table, _ = scattered
    log = _filters(tmp_path / "f.txt", ["c = 'Lima'"] * 4 + ["c = 'Oslo'"] * 3 + ["c IN ('Rome', 'Pune')"])
    advice = _advise(table, log)
    assert advice.samples == 1 and any("whole table" in n for n in advice.notes)
    names = [c.layout for c in advice.candidates]
    assert "partition(c)" in names and "linear(c)" in names
    assert advice.recommended is not None
    assert advice.recommended["layout"] in ("partition(c)", "linear(c)")
    if advice.recommended["layout"] == "partition(c)":
        assert advice.recommended["settings"] == {"hoodie.datasource.write.partitionpath.field": "c"}
        assert any("rewritten" in n for n in advice.notes)


def test_json_contract(scattered: tuple[Path, pa.Table], tmp_path: Path) -> None:
    table, _ = scattered
    log = _filters(tmp_path / "f.txt", _range_filters("a", 5, 10_000))
    out, err = io.StringIO(), io.StringIO()
    code = main(["advise", "--json", "--sample-rows", "5000", "--target-file-bytes", str(_mean_file_bytes(table)),
                 "--table", str(table), str(log)], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    doc = json.loads(out.getvalue())
    (a,) = doc["advice"]
    assert set(a) == {"table", "sample_rows", "samples", "target_file_bytes", "filters", "candidates",
                      "recommended", "notes", "warnings"}
    assert all(isinstance(n, str) for n in a["warnings"])
    assert a["table"] == str(table) and a["filters"] == 5 and a["samples"] == 3
    assert isinstance(a["sample_rows"], int) and isinstance(a["target_file_bytes"], int)
    for c in a["candidates"]:
        assert set(c) == {"layout", "files_read", "bytes_read", "bytes_low", "bytes_high", "saving", "vs_best"}
        assert c["bytes_low"] <= c["bytes_read"] <= c["bytes_high"]
        assert c["vs_best"] >= 1.0
    assert min(c["vs_best"] for c in a["candidates"]) == 1.0
    assert a["candidates"][0]["layout"] == "today" and a["candidates"][0]["saving"] == 0
    rec = a["recommended"]
    assert rec is not None
    assert set(rec) == {"layout", "saving", "settings", "sql", "files", "runner_up"}
    assert all(isinstance(v, str) for v in rec["settings"].values())
    assert rec["sql"][-1].startswith("CALL run_clustering(") and isinstance(rec["files"], int)
    assert set(rec["runner_up"]) == {"layout", "bytes_vs_best", "within_spread"}
    assert rec["runner_up"]["bytes_vs_best"] >= 1.0 and isinstance(rec["runner_up"]["within_spread"], bool)
    assert all(isinstance(n, str) for n in a["notes"])


def test_group_stats_equal_the_index_of_real_files(tmp_path: Path) -> None:
    """Rows grouped as the writer put them in files: group_stats gives what the statistics index reads from the
    files' footers (nulls, NaN, strings, dates, timestamps)."""
    n, per = 60, 10
    rng = np.random.default_rng(1)
    x = rng.random(n)
    x[[3, 17, 40]] = np.nan
    data = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "x": pa.array(x, mask=np.isin(np.arange(n), [5, 6])),
        "s": pa.array([None if i % 7 == 0 else f"v{i * 37 % 11}" for i in range(n)]),
        "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(v)) for v in rng.integers(0, 300, n)]),
        "ts": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(seconds=int(v)) for v in rng.integers(0, 10**6, n)],
                       pa.timestamp("us")),
    })
    HudiWriter(tmp_path / "t", rows_per_file=per).insert(data)
    table = HudiTable.open(tmp_path / "t")
    slices = table.latest_file_slices()
    real = ColumnStatsIndex(table, source="footers").table(slices)
    # the writer's files in the order of their first id
    order = sorted(range(len(slices)), key=lambda i: real.column(stat_name("id", "min"))[i].as_py())
    real = real.take(pa.array(order))
    groups = np.repeat(np.arange(n // per), per)
    simulated = group_stats(data, groups, n // per)
    for col in data.column_names:
        for stat in ("min", "max", "null_count"):
            name = stat_name(col, stat)
            assert simulated.column(name).to_pylist() == real.column(name).cast(simulated.column(name).type
                                                                                ).to_pylist(), name
    assert simulated.column(stat_name("x", "nan_count")).to_pylist() == [1, 1, 0, 0, 1, 0]


def test_curves() -> None:
    """Z-order interleaves bits; consecutive Hilbert indices are neighbouring cells (a curve visiting each cell
    once); ranks keep order and ties."""
    bits = 4
    xs, ys = np.meshgrid(np.arange(16, dtype=np.uint64), np.arange(16, dtype=np.uint64))
    xs, ys = xs.ravel(), ys.ravel()
    h = hilbert_index([xs, ys], bits)
    assert sorted(h.tolist()) == list(range(256))
    path = np.argsort(h)
    steps = np.abs(np.diff(xs[path].astype(np.int64))) + np.abs(np.diff(ys[path].astype(np.int64)))
    assert (steps == 1).all()
    cube = np.array(np.meshgrid(*[np.arange(8, dtype=np.uint64)] * 3)).reshape(3, -1)
    h3 = hilbert_index(list(cube), 3)
    path3 = np.argsort(h3)
    assert sorted(h3.tolist()) == list(range(512))
    assert (np.abs(np.diff(cube[:, path3].astype(np.int64), axis=1)).sum(axis=0) == 1).all()
    z = z_index([np.array([1, 2, 3], np.uint64), np.array([0, 1, 3], np.uint64)], 2)
    assert z.tolist() == [0b0010, 0b1001, 0b1111]
    r = ranks(pa.array([5, None, 3, 5, 9]), 2)
    assert r[1] == 0 and r[0] == r[3] and r[1] <= r[2] <= r[0] <= r[4]
