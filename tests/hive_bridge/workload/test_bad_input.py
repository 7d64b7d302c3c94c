"""Bad event logs: each problem is reported with its file and line (and the offending text), the run goes on,
the exit code is 1; nothing is guessed and no library traceback is shown."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import zstandard

from hive_bridge.workload import application_files, lines_of, read_application
from hive_bridge.workload.codecs import LongLine, decompressed_chunks, lzf_decompress
from hive_bridge.workload.eventlog import Problem
from tests.hive_bridge.workload.conftest import SHARED, json_lines, run

SMALL = SHARED / "spark-eventlogs" / "codecs" / "rolling" / "evlog"


def _plain_lines() -> list[bytes]:
    (events,) = [p for p in next(SMALL.iterdir()).iterdir() if p.name.startswith("events_")]
    return events.read_bytes().splitlines()


def _read(path: Path) -> tuple[list[object], list[Problem]]:
    problems: list[Problem] = []
    scans = [s for files in application_files(str(path)) for s in read_application(files, problems)]
    return scans, problems


def test_malformed_json_unknown_events_and_nodes_go_on(tmp_path: Path) -> None:
    lines = _plain_lines()
    start = next(i for i, line in enumerate(lines) if b"SQLExecutionStart" in line)
    extra = [b'{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":7,"sparkP',
             b'{"Event":"SparkListenerSomethingNew","x":1}',
             json.dumps({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
                         "executionId": 8, "sparkPlanInfo": {"nodeName": "NewNode", "children": [], "metadata": {},
                                                             "metrics": []}}).encode(),
             b"not json at all"]
    log = tmp_path / "local-1700000000000"
    log.write_bytes(b"\n".join(lines[:start] + extra + lines[start:]) + b"\n")
    scans, problems = _read(log)
    assert len(scans) == 1
    assert [(p.line, p.message.split(" (")[0].split(":")[0]) for p in problems] == [
        (start + 1, "malformed JSON"), (start + 4, "not a Spark event")]
    assert "not json at all" in problems[1].message
    code, _, err = run("replay", "--json", "--table", f"{SMALL}=/nowhere", str(log))
    assert code == 1
    assert f"{log}:{start + 1}: malformed JSON" in err and "Traceback" not in err


def test_truncated_zstd_and_truncated_last_line(tmp_path: Path) -> None:
    data = b"\n".join(_plain_lines()) + b"\n"
    whole = zstandard.ZstdCompressor().compress(data)
    cut = tmp_path / "local-1700000000001.zstd"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    scans, problems = _read(cut)
    assert problems and "truncated" in problems[0].message and problems[0].source == str(cut)
    inprogress = tmp_path / "local-1700000000002.inprogress"
    inprogress.write_bytes(data[: len(data) - 40])       # a last line cut short, as while Spark still writes
    scans, problems = _read(inprogress)
    assert len(scans) == 1 and problems == []          # expected while the application runs: passed over
    finished = tmp_path / "local-1700000000002"
    finished.write_bytes(data[: len(data) - 40])
    scans, problems = _read(finished)
    assert len(scans) == 1
    assert len(problems) == 1 and problems[0].message.startswith("the last line is cut short")


def test_decompression_bomb_is_capped(tmp_path: Path) -> None:
    bomb = tmp_path / "local-1700000000003.zstd"
    cctx = zstandard.ZstdCompressor(level=19)
    bomb.write_bytes(cctx.compress(b'{"Event":"SparkListenerLogStart"}\n' + b" " * (80 << 20)))
    chunks = decompressed_chunks(str(bomb), cap=1 << 20)
    with pytest.raises(Exception, match="decompression bomb"):
        for _ in chunks:
            pass
    _, problems = _read(bomb)   # the default cap: 400 times the file's size
    assert any("decompression bomb" in p.message for p in problems)


def test_long_line_is_skipped_not_held() -> None:
    chunks = iter([b"a" * 10, b"b" * 10 + b"\nshort\n", b"c" * 30])
    got = list(lines_of(chunks, max_line=15))
    assert isinstance(got[0], LongLine) and got[0].length == 20
    assert got[1] == b"short" and isinstance(got[2], LongLine)


def test_hundred_megabyte_line_is_reported(tmp_path: Path) -> None:
    log = tmp_path / "local-1700000000004"
    lines = _plain_lines()
    with open(log, "wb") as fh:
        fh.write(lines[0] + b"\n")
        fh.write(b'{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","x":"')
        block = b"x" * (1 << 20)
        for _ in range(100):
            fh.write(block)
        fh.write(b'"}\n')
        fh.write(b"\n".join(lines[1:]) + b"\n")
    scans, problems = _read(log)
    assert len(scans) == 1
    assert [p.line for p in problems] == [2] and "over the limit" in problems[0].message


def test_lzf_blocks() -> None:
    # a literal run of 3, then a back reference of length 3+2 at distance 3 (overlapping copy)
    assert lzf_decompress(bytes([2]) + b"abc" + bytes([(3 << 5) | 0, 2]), 8) == b"abcabcab"
    with pytest.raises(ValueError):
        lzf_decompress(bytes([(1 << 5), 9]), 3)


def test_missing_input_and_unopenable_table(tmp_path: Path) -> None:
    code, out, err = run("replay", "--json", str(tmp_path / "missing-folder"), str(SMALL))
    json_lines(out)
    assert code == 1 and "missing-folder: cannot read: No such file" in err
    shutil.copytree(SMALL, tmp_path / "logs")
    code, out, err = run("replay", "--json", "--table", f"/data/lake/small_3.5.8_rolling/t={tmp_path / 'no-table'}",
                         str(tmp_path / "logs"))
    _, summary = json_lines(out)
    assert code == 1
    (info,) = summary["tables_unopened"].values()
    assert info["scans"] == 1 and "no-table" in err


def test_no_credential_in_any_output(tmp_path: Path) -> None:
    secret = "wJalrXUtnFEMIK7MDENGbPxRfiCYSECRET"
    shutil.copytree(SMALL, tmp_path / "logs")
    for extra in ([], ["--json"]):
        code, out, err = run("replay", *extra, "--table",
                             f"/data/lake/small_3.5.8_rolling/t=s3://AKIAEXAMPLE:{secret}@bucket/t",
                             "--storage-option", f"secret_key={secret}", "--storage-option", "access_key=AKIAEXAMPLE",
                             "--storage-option", "endpoint_override=http://127.0.0.1:1", str(tmp_path / "logs"))
        assert code == 1
        assert secret not in out + err and "AKIAEXAMPLE" not in out + err


def test_session_time_zone_changed_at_run_time(tmp_path: Path) -> None:
    """spark.conf.set('spark.sql.session.timeZone', ...) shows in the execution's modifiedConfigs (3.4+)."""
    lines = _plain_lines()
    for i, line in enumerate(lines):
        if b"SQLExecutionStart" in line:
            ev = json.loads(line)
            ev["modifiedConfigs"] = {"spark.sql.session.timeZone": "America/Los_Angeles"}
            lines[i] = json.dumps(ev).encode()
    log = tmp_path / "local-1700000000005"
    log.write_bytes(b"\n".join(lines) + b"\n")
    (scan,), problems = _read(log)
    assert problems == [] and scan.time_zone == "America/Los_Angeles"


def test_scans_that_are_not_file_scans_are_counted_and_named(tmp_path: Path) -> None:
    """A table read through Spark's Hive support (``Scan hive db.t``) has no location or filters in the plan's
    metadata: it is counted among the scans no table could be found for, by name, never planned; a SELECT
    without FROM (``Scan OneRowRelation``) reads no table and is not counted."""
    lines = _plain_lines()
    start = next(i for i, line in enumerate(lines) if b"SQLExecutionStart" in line)
    plan = {"nodeName": "Project", "metadata": {}, "metrics": [], "children": [
        {"nodeName": "Scan hive default.events", "children": [], "metadata": {}, "metrics": []},
        {"nodeName": "Scan OneRowRelation", "children": [], "metadata": {}, "metrics": []}]}
    extra = [json.dumps({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
                         "executionId": 9, "sparkPlanInfo": plan}).encode(),
             json.dumps({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd",
                         "executionId": 9, "time": 1}).encode()]
    log = tmp_path / "local-1700000000001"
    log.write_bytes(b"\n".join(lines[:start] + extra + lines[start:]) + b"\n")
    scans, problems = _read(log)
    assert not problems
    others = [s for s in scans if getattr(s, "other", False)]
    assert [s.node for s in others] == ["Scan hive default.events"]   # type: ignore[attr-defined]
    code, out, err = run("replay", "--json", str(log))
    _, summary = json_lines(out)
    assert code == 0, err
    assert summary["scans_unresolved"]["(Scan hive default.events: not a file scan, its filters are not in the log)"] \
        == 1
    assert not any("OneRowRelation" in k for k in summary["scans_unresolved"])
