"""The Python data source's incremental query type (``hoodie.datasource.query.type=incremental`` with Hudi's
begin / end / fallback options), its reader driven as Spark's workers drive it: the rows equal hudi-rs's
incremental read on tables of version 6 (requested times) and 8 (completion times)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from hive_bridge.layout.incremental import BEGIN_OPTION, END_OPTION, FALLBACK_OPTION
from hive_bridge.spark.datasource import HudiHiveReader
from hive_bridge.spark.options import QUERY_TYPE_OPTION
from hive_bridge.spark.sessions import SparkReadError, spark_schema
from hive_bridge.table.table import HudiTable
from tests.hive_bridge.layout.test_incremental_v8 import _hudi_rs, _times
from tests.hive_bridge.layout.test_time_travel import History, write_history

KEY = ("id", "name", "ts")


@pytest.fixture(scope="module", params=[(6, "COPY_ON_WRITE"), (8, "COPY_ON_WRITE"), (6, "MERGE_ON_READ"),
                                        (8, "MERGE_ON_READ")], ids=["cow-v6", "cow-v8", "mor-v6", "mor-v8"])
def history(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> History:
    version, table_type = request.param
    return write_history(tmp_path_factory.mktemp("incds") / "t", version, table_type, seed=41, commits=7)


def _read(path: Path, options: dict[str, str]) -> Counter[tuple[object, ...]]:
    table = HudiTable.open(path)
    reader = HudiHiveReader(str(path), spark_schema(table.arrow_schema()),
                            {QUERY_TYPE_OPTION: "incremental", **options})
    out: Counter[tuple[object, ...]] = Counter()
    for part in reader.partitions():
        for batch in reader.read(part):
            out.update(tuple(r[k] for k in KEY) for r in batch.to_pylist())
    return out


def test_incremental_option_rows_equal_hudi_rs(history: History) -> None:
    table = HudiTable.open(history.path)
    times = _times(table) if table.properties.version >= 8 else history.instants
    ranges = [(times[a], times[b]) for a in range(len(times)) for b in range(a + 1, len(times))
              if (a + b) % 3 == 0]
    assert len(ranges) >= 4, times
    for begin, end in ranges:
        assert _read(history.path, {BEGIN_OPTION: begin, END_OPTION: end}) == _hudi_rs(history.path, begin, end, KEY)
    # no end: up to the latest commit
    assert _read(history.path, {BEGIN_OPTION: times[1]}) == _hudi_rs(history.path, times[1], times[-1], KEY)


def test_incremental_option_errors_and_fallback(history: History) -> None:
    with pytest.raises(SparkReadError, match=f"hudi-hive: .*an incremental query needs {BEGIN_OPTION}"):
        _read(history.path, {})
    early = "20000101000000000"
    with pytest.raises(SparkReadError, match="is before the first commit of the active timeline"):
        _read(history.path, {BEGIN_OPTION: early, FALLBACK_OPTION: "false"})
    # the fallback reads the latest state, rows kept by commit time: every commit is after `early`
    everything = _read(history.path, {BEGIN_OPTION: early, FALLBACK_OPTION: "true"})
    assert everything == _read(history.path, {BEGIN_OPTION: "earliest"})
    # unsaid: off on version 6 (Hudi 0.x's default), on for versions 8 and 9 (Hudi 1.x's)
    if HudiTable.open(history.path).properties.version < 8:
        with pytest.raises(SparkReadError, match="is before the first commit of the active timeline"):
            _read(history.path, {BEGIN_OPTION: early})
    else:
        assert _read(history.path, {BEGIN_OPTION: early}) == everything
