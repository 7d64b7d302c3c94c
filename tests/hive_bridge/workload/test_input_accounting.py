"""Every input line accounted for: in a file of filters every line that is not blank or a comment is replayed or
reported as failed with its file, line and text; logs and files of filters are told apart by what they hold (or
``--filters``); gzip'd logs read as plain ones; what is not a log is reported by name; and over the shared real
logs and crafted inputs, the lines holding filters, failed and not filters add up to the lines read."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hive_bridge.workload.codecs import decompressed_chunks
from hive_bridge.workload.inputs import FILTERS, LOG, kind_of_text, sniff
from tests.hive_bridge.workload.conftest import SHARED, json_lines, run

#: one filter per line, as people keep them (WHERE clauses of real queries), with the forms a log reader
#: once passed over: ``<=>`` (NULL and a D-suffixed double), ``isnan``, a bare boolean column and its NOT
WHERE = """\
# WHERE clauses of the reporting queries
id = 5
id > 10 AND id < 20
id BETWEEN 3 AND 7
id IN (1, 2, 3)
id NOT IN (4, 5)
qty IS NULL
qty IS NOT NULL
qty <=> NULL
price <=> 37.94D
isnan(price)
flag
NOT flag
flag <=> false
name = 'n7'
name LIKE 'n1%'
name LIKE '%special%requests%'
name <> 'x' OR qty > 40

-- date and time
d = DATE '2024-01-03'
d >= DATE '2024-01-02' AND d < DATE '2024-01-04'
ts > TIMESTAMP '2024-01-01 10:00:00'
amount < 10.25
amount >= 3.25BD
NOT (id = 3 OR id = 4)
(id < 5 OR qty > 30) AND price < 100.0
leaf-(EQUALS id 5)
(and leaf-(LESS_THAN id 20) (not leaf-(IS_NULL qty)))
id = 5 AND
name = 'unterminated
price >>> 3
"""


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import datetime as dt
    from decimal import Decimal

    from hive_bridge.testing.writer import HudiWriter

    n = 60
    root = tmp_path_factory.mktemp("accounting") / "t"
    HudiWriter(root, rows_per_file=10, record_key_fields=("id",)).insert(pa.table({
        "id": pa.array(range(n), pa.int64()),
        "qty": pa.array([None if i % 9 == 0 else i for i in range(n)], pa.int64()),
        "price": pa.array([i * 1.01 for i in range(n)]),
        "flag": pa.array([i % 2 == 0 for i in range(n)]),
        "name": pa.array([f"n{i}" for i in range(n)]),
        "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 5) for i in range(n)]),
        "ts": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(hours=i % 24) for i in range(n)], pa.timestamp("us")),
        "amount": pa.array([Decimal(i) + Decimal("0.25") for i in range(n)], pa.decimal128(10, 2)),
    }))
    return root


def _filter_lines(text: str) -> dict[int, str]:
    return {i: line.strip() for i, line in enumerate(text.splitlines(), start=1)
            if line.strip() and not line.strip().startswith(("#", "--"))}


def _failed_lines(err: str, path: Path) -> dict[int, str]:
    """line -> the message line of each failure reported for ``path``."""
    out: dict[int, str] = {}
    for m in re.finditer(rf"^error: {re.escape(str(path))}(?::(\d+)|: line (\d+))[:,].*$", err, re.M):
        out[int(m.group(1) or m.group(2))] = m.group(0)
    return out


@pytest.mark.parametrize("how", ["told", "--filters", "stdin"])
def test_every_line_of_a_file_of_filters_is_replayed_or_reported(table: Path, tmp_path: Path, how: str) -> None:
    path = tmp_path / "where.txt"
    path.write_text(WHERE)
    if how == "stdin":
        import subprocess
        import sys

        proc = subprocess.run([sys.executable, "-m", "hive_bridge", "replay", "--table", str(table), "--json", "-"],
                              input=WHERE, capture_output=True, text=True, timeout=300)
        code, out, err, name = proc.returncode, proc.stdout, proc.stderr, "<stdin>"
    else:
        args = ["--filters", str(path)] if how == "--filters" else [str(path)]
        code, out, err = run("replay", "--table", str(table), "--json", *args)
        name = str(path)
    assert "Traceback" not in err
    rows, summary = json_lines(out)
    assert summary["failed"] == 3 and summary["filters"] == len(rows) + 3
    replayed = {line: r["filter"] for r in rows for line in r["lines"]}
    assert all(r["input"] == name for r in rows)
    failed = _failed_lines(err, Path(name))
    wanted = _filter_lines(WHERE)
    assert set(replayed) | set(failed) == set(wanted)     # every filter line: a record or a failure
    assert not set(replayed) & set(failed)
    for line, text in replayed.items():
        assert text == wanted[line]
    assert {wanted[n] for n in failed} == {"id = 5 AND", "name = 'unterminated", "price >>> 3"}
    # the forms a log reader once passed over are replayed
    assert {"qty <=> NULL", "price <=> 37.94D", "isnan(price)", "flag", "NOT flag", "flag <=> false"} <= \
        set(replayed.values())
    assert code == 1
    blank_or_comment = len(WHERE.splitlines()) - len(wanted)
    assert (f"1 inputs, {len(WHERE.splitlines())} lines read: {len(wanted)} holding filters, 0 failed, "
            f"{blank_or_comment} not filters") in err


def test_workload_replay_of_a_file_of_filters_names_each_failure(table: Path, tmp_path: Path) -> None:
    """The workload replay (here: --html) takes the same file: each line an occurrence at its file:line, a
    filter that does not parse reported with it, the line counts in the summary."""
    path = tmp_path / "where.txt"
    path.write_text(WHERE)
    code, out, err = run("replay", "--table", str(table), "--json", "--html", str(tmp_path / "r.html"),
                         "--filters", str(path))
    rows, summary = json_lines(out)
    assert code == 1 and "Traceback" not in err
    wanted = _filter_lines(WHERE)
    seen = {int(q.rpartition(":")[2]) for r in rows for q in r["queries"]}
    assert seen == set(wanted)                            # every filter line is an occurrence
    failed = {int(m.group(1)) for m in re.finditer(rf"^error: {re.escape(str(path))}:(\d+): ", err, re.M)}
    assert {wanted[n] for n in failed} == {"id = 5 AND", "name = 'unterminated", "price >>> 3"}
    assert summary["failed"] == 3
    (count,) = summary["inputs_read"]
    assert count == {"input": str(path), "kind": FILTERS, "lines": len(WHERE.splitlines()),
                     "filter_lines": len(wanted), "failed_lines": 0,
                     "other_lines": len(WHERE.splitlines()) - len(wanted)}
    assert summary["lines"] == summary["filter_lines"] + summary["failed_lines"] + summary["other_lines"]


def test_a_log_is_told_from_a_file_of_filters() -> None:
    assert kind_of_text(["id = 5", "flag", "NOT flag", "isnan(price)"]) == FILTERS
    assert kind_of_text(["id = 5", "24/11/22 06:40:01 INFO Executor: Running task"]) == LOG
    assert kind_of_text(["      filterExpr: (id = 1) (type: boolean)"]) == LOG
    assert kind_of_text(["leaf-0 = (EQUALS x 1)", "expr = leaf-0"]) == LOG  # an old SearchArgument over lines
    for log in [*(SHARED / "spark-driver-logs").glob("*.log"), *(SHARED / "hive").glob("*.log")]:
        assert sniff(str(log)) == (LOG, None), log
    assert sniff(str(SHARED / "spark-eventlogs" / "3.5.8" / "evlog" / "local-1795748232830"))[0] == "event log"


def _lines_in(path: Path) -> int:
    data = b"".join(decompressed_chunks(str(path)))
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def test_shared_real_logs_every_line_accounted_for(tmp_path: Path) -> None:
    """Every shared log (event logs of every version and codec, Spark driver logs, Hive's logs), one run: each
    input's lines (counted here independently from the decompressed bytes) are its lines holding filters, failed
    and not filters; nothing failed."""
    logs = [SHARED / "spark-eventlogs", *sorted((SHARED / "spark-driver-logs").glob("*.log")),
            *sorted((SHARED / "hive").glob("*.log"))]
    code, out, err = run("replay", "--json", *map(str, logs))
    _, summary = json_lines(out)
    assert code == 0, err
    counts = {c["input"]: c for c in summary["inputs_read"]}
    assert len(counts) == 7 + 4 + 2        # 7 event log files, 4 driver logs, 2 Hive logs
    for name, c in counts.items():
        assert c["lines"] == _lines_in(Path(name)), name
        assert c["lines"] == c["filter_lines"] + c["failed_lines"] + c["other_lines"], name
        assert c["failed_lines"] == 0 and c["filter_lines"] > 0, name
    for key in ("lines", "filter_lines", "failed_lines", "other_lines"):
        assert summary[key] == sum(c[key] for c in counts.values())
    # an event log's filter lines are the plan events that brought new scans: never more than its scans
    events = [c for c in counts.values() if c["kind"] == "event log"]
    assert 0 < sum(c["filter_lines"] for c in events) <= summary["scans"]
    driver = counts[str(SHARED / "spark-driver-logs" / "spark-3.5.8-driver.log")]
    assert driver["kind"] == LOG and driver["filter_lines"] >= 13 * 2   # Pushed + Post-Scan lines of 13 scans


def _without_source(rows: list[dict[str, Any]]) -> list[str]:
    keep = ("table", "filter", "occurrences", "files_kept", "unknown_filters", "unknown_filter_texts")
    return sorted(json.dumps({k: r.get(k) for k in keep}) for r in rows)


def test_gzipd_driver_log_and_event_log_read_as_plain_ones(tmp_path: Path) -> None:
    from tests.hive_bridge.workload.conftest import write_shared_log_table

    table = write_shared_log_table(tmp_path / "t")
    driver = SHARED / "spark-driver-logs" / "spark-3.5.8-driver.log"
    event = SHARED / "spark-eventlogs" / "3.5.8" / "evlog" / "local-1795748232830"
    gz_driver = tmp_path / "driver.log.gz"
    gz_driver.write_bytes(gzip.compress(driver.read_bytes()))
    gz_event = tmp_path / "local-1795748232830"   # gzip'd, its name unchanged: told by its first bytes
    gz_event.write_bytes(gzip.compress(event.read_bytes()))
    for plain, packed, args in [(driver, gz_driver, ["--table", str(table)]),
                                (event, gz_event, ["--table", f"/data/lake/3.5.8_plain/data/t={table}"])]:
        code_a, out_a, err_a = run("replay", "--json", *args, str(plain))
        code_b, out_b, err_b = run("replay", "--json", *args, str(packed))
        rows_a, summary_a = json_lines(out_a)
        rows_b, summary_b = json_lines(out_b)
        assert code_a == code_b == 0, err_a + err_b
        assert rows_b and _without_source(rows_a) == _without_source(rows_b)
        assert summary_a["scans"] == summary_b["scans"] > 0
        assert {k: v for k, v in summary_a["inputs_read"][0].items() if k != "input"} == \
            {k: v for k, v in summary_b["inputs_read"][0].items() if k != "input"}


def test_binary_file_is_reported_and_counted_unreadable(table: Path, tmp_path: Path) -> None:
    binary = tmp_path / "part-0.parquet"
    shutil.copy(next(table.rglob("*.parquet")), binary)
    filters = tmp_path / "f.txt"
    filters.write_text("id = 5\n")
    for extra in ([], ["--html", str(tmp_path / "r.html")]):
        code, out, err = run("replay", "--table", str(table), "--json", *extra, str(binary), str(filters))
        assert code == 1
        assert f"error: {binary}: binary content (neither text nor a known compressed log): not a log" in err
        lines = [json.loads(line) for line in out.splitlines()]
        assert [r["filter"] for r in lines if not r.get("summary")] == ["id = 5"]
    _, summary = json_lines(out)
    assert summary["inputs_unreadable"] == 1
    # without any table: still reported, never "0 distinct filters" and exit 0
    code, out, err = run("replay", "--json", str(binary))
    assert code == 1 and "binary content" in err


def test_a_log_with_no_filter_is_noted(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("2024-01-01 10:00:00 INFO Main: started\n2024-01-01 10:00:01 INFO Main: done\n")
    code, out, err = run("replay", "--json", str(log))
    _, summary = json_lines(out)
    assert code == 0
    assert f"note: {log}: 2 lines read (text log), none holding a filter" in err
    assert summary["other_lines"] == 2 and summary["filter_lines"] == 0


def _deep(n: int, leaf: str) -> str:
    """``n`` leaves joined by alternating AND and OR, each join bracketed: nested ``n - 1`` levels deep."""
    text = leaf.format(0)
    for i in range(1, n):
        text = f"({text} {'AND' if i % 2 else 'OR'} {leaf.format(i)})"
    return text


def test_five_thousand_deep_and_or_is_reported_as_explain_reports_it(table: Path, tmp_path: Path) -> None:
    """HiveQL in a file of filters (both replays) and a Spark driver log's Catalyst list: each the filter's own
    failure, with where it is and the same message as explain's; the other filters are replayed."""
    filters = tmp_path / "deep.txt"
    filters.write_text("id = 1\n" + _deep(5000, "id = {}") + "\n")
    code, out, err = run("explain", "--table", str(table), _deep(5000, "id = {}"))
    assert code != 0 and "nested deeper than 200 levels" in err
    for extra in ([], ["--html", str(tmp_path / "r.html")]):
        code, out, err = run("replay", "--table", str(table), "--json", *extra, str(filters))
        assert code == 1 and "Traceback" not in err and "RecursionError" not in err
        assert re.search(rf"^error: {re.escape(str(filters))}(:2|: line 2).*nested deeper than 200 levels", err,
                         re.M), err
        assert any(r.get("filter") == "id = 1" for r in map(json.loads, out.splitlines()))
    driver = tmp_path / "driver.log"
    driver.write_text("24/01/01 10:00:00 INFO FileSourceStrategy: Pushed Filters: IsNotNull(id)\n"
                      "24/01/01 10:00:00 INFO FileSourceStrategy: Post-Scan Filters: "
                      + _deep(5000, "(id#1 = {})") + "\n"
                      "24/01/01 10:00:01 INFO FileSourceStrategy: Pushed Filters: IsNotNull(id),EqualTo(id,5)\n"
                      "24/01/01 10:00:01 INFO FileSourceStrategy: Post-Scan Filters: isnotnull(id#1),(id#1 = 5)\n")
    code, out, err = run("replay", "--table", str(table), "--json", str(driver))
    rows, summary = json_lines(out)
    assert code == 1 and "Traceback" not in err and "RecursionError" not in err
    assert re.search(rf"^error: {re.escape(str(driver))}:2: .*expression nested deeper than 200 levels", err, re.M), err
    # the too-deep list is not read (its files kept as unknown); the scan's other list is, and the next scan too
    assert sorted(r["filter"] for r in rows) == ["id IS NOT NULL", "id IS NOT NULL AND id = 5"], rows
    assert summary["failed"] == 1


def test_advise_reads_the_same_inputs(table: Path, tmp_path: Path) -> None:
    """advise takes files of filters (--filters) and reports what is not a log as replay does."""
    filters = tmp_path / "f.txt"
    filters.write_text("# two filters\nid < 10\nflag <=> false\n")
    binary = tmp_path / "blob"
    binary.write_bytes(bytes(range(256)) * 8)
    code, out, err = run("advise", "--json", "--samples", "1", "--sample-rows", "1000", "--table", str(table),
                         "--filters", str(filters), str(binary))
    assert code == 1 and "Traceback" not in err
    assert f"error: {binary}: binary content" in err
    assert "2 inputs, 3 lines read: 2 holding filters, 0 failed, 1 not filters; 1 inputs could not be read" in err
    doc = json.loads(out)
    assert doc["advice"], doc
