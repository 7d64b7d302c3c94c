"""``hive-bridge explain --as-of`` and ``replay --as-of``: an earlier state of the table planned; an instant
that cannot be read is an error naming it and the table."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from hive_bridge.testing.writer import HudiWriter
from tests.hive_bridge.app.test_cli import run


def _data(ids: list[int], tag: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"{tag}{i}" for i in ids],
                     "region": ["eu" if i % 2 else "us" for i in ids]})


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("asof") / "t"
    w = HudiWriter(root, partition_fields=("region",), rows_per_file=5)
    first = w.insert(_data(list(range(20)), "n"))
    second = w.insert(_data(list(range(100, 120)), "m"))
    third = w.upsert(_data([0, 1, 100], "u"))
    return root, [first.instant, second.instant, third.instant]


def test_explain_as_of_plans_the_earlier_state(history: tuple[Path, list[str]]) -> None:
    root, instants = history
    code, out, _ = run("explain", "--table", str(root), "--json", "--as-of", instants[0], "id >= 100")
    assert code == 0
    doc = json.loads(out)
    assert doc["as_of"] == instants[0]
    # the state as of the first commit: its 4 files, none of which holds an id >= 100
    assert doc["files_total"] == 4 and doc["files_kept"] == 0
    assert all(f["path"].endswith(f"_{instants[0]}.parquet") for f in doc["files"])
    code, out, _ = run("explain", "--table", str(root), "--json", "id >= 100")
    latest = json.loads(out)
    assert "as_of" not in latest and latest["files_total"] == 8 and latest["files_kept"] == 4


def test_explain_as_of_a_date_time(history: tuple[Path, list[str]]) -> None:
    root, instants = history
    i = instants[1]
    text = f"{i[:4]}-{i[4:6]}-{i[6:8]} {i[8:10]}:{i[10:12]}:{i[12:14]}.{i[14:]}"
    code, out, _ = run("explain", "--table", str(root), "--json", "--as-of", text, "id >= 100")
    assert code == 0 and json.loads(out)["as_of"] == i and json.loads(out)["files_total"] == 8


@pytest.mark.parametrize(("value", "says"), [
    ("2000-01-01", "before the first completed commit of the active timeline"),
    ("2999-12-31 00:00:00", "it is in the future"),
    ("tomorrow", "--as-of: unsupported as-of time format: 'tomorrow'"),
])
def test_explain_as_of_refused(history: tuple[Path, list[str]], value: str, says: str) -> None:
    root, _ = history
    code, out, err = run("explain", "--table", str(root), "--as-of", value, "id >= 100")
    assert code == 2 and out == ""
    assert says in err and "hive-bridge explain:" in err and "Traceback" not in err
    if value != "tomorrow":
        assert str(root) in err and f"as of {value!r}" in err


def test_replay_as_of(history: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, instants = history
    filters = tmp_path / "filters.txt"
    filters.write_text("id >= 100\nname = 'u0'\n")
    code, out, err = run("replay", "--table", str(root), "--json", "--as-of", instants[1], "--filters", str(filters))
    assert code == 0, err
    *docs, summary = [json.loads(line) for line in out.splitlines()]
    assert summary["summary"] is True
    by_filter = {d["filter"]: d for d in docs}
    assert all(d["as_of"] == instants[1] for d in docs)
    # as of the second commit no row is named u0 yet, but statistics cannot tell (min n0 .. max n9): kept
    assert by_filter["id >= 100"]["files_total"] == 8 and by_filter["id >= 100"]["files_kept"] == 4
    code, out, err = run("replay", "--table", str(root), "--json", "--as-of", instants[2] + "1", "--filters",
                         str(filters))
    assert code == 2 and "unsupported as-of time format" in err and "--as-of" in err
