"""hive_bridge.testing.servers without starting Hive: the ORC log reader, port waits, stopping by PID, log4j2 config."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import pytest

from hive_bridge.testing import servers
from hive_bridge.testing.servers import LoggedSarg, ServerError, ServerProcess

SCHEMA = "struct<id:bigint,name:string,s1:struct<a:int,b:date>,ts:timestamp>"
SPARK_LINE = ("Reading ORC rows from file:/w/t/part-00000-x.zstd.orc with {include: [true, true, true], offset: 0, "
              "length: 556, sarg: {sarg}, schema: " + SCHEMA + ", includeAcidColumns: true, "
              "allowSARGToFilter: false, useSelected: false}\n")


def spark_line(sarg_text: str, path: str = "file:/w/t/part-00000-x.zstd.orc") -> str:
    return SPARK_LINE.replace("{sarg}", sarg_text).replace("file:/w/t/part-00000-x.zstd.orc", path)


def test_reads_spark_orc_lines_with_schema_and_path(tmp_path: Path) -> None:
    log = tmp_path / "orc.log"
    log.write_text(spark_line("(and leaf-(EQUALS id 5) (not leaf-(IN name a b)))")
                   + "Reading ORC rows from file:/w/t/part-1.orc with {include: null, offset: 0, length: 9}\n"
                   + spark_line("leaf-(EQUALS name x, schema: struct<y:int>)", "file:/w/t/part-2.orc"))
    found, offset = servers.read_logged_sargs(log)
    assert offset == log.stat().st_size
    assert found == [
        LoggedSarg("(and leaf-(EQUALS id 5) (not leaf-(IN name a b)))", SCHEMA, "file:/w/t/part-00000-x.zstd.orc"),
        # A string literal that looks like the schema field does not cut the SearchArgument short.
        LoggedSarg("leaf-(EQUALS name x, schema: struct<y:int>)", SCHEMA, "file:/w/t/part-2.orc"),
    ]


def test_reads_only_what_was_appended_and_only_complete_lines(tmp_path: Path) -> None:
    log = tmp_path / "orc.log"
    log.write_text(spark_line("leaf-(EQUALS id 1)"))
    first, offset = servers.read_logged_sargs(log)
    assert [s.sarg for s in first] == ["leaf-(EQUALS id 1)"]
    line = spark_line("leaf-(EQUALS id 2)")
    with log.open("a") as f:
        f.write(line[:40])  # a line still being written
    assert servers.read_logged_sargs(log, offset) == ([], offset)
    with log.open("a") as f:
        f.write(line[40:])
    second, end = servers.read_logged_sargs(log, offset)
    assert [s.sarg for s in second] == ["leaf-(EQUALS id 2)"] and end == log.stat().st_size
    assert servers.log_offset(log) == end
    assert servers.read_logged_sargs(tmp_path / "missing.log", 7) == ([], 7)
    assert servers.log_offset(tmp_path / "missing.log") == 0


def test_a_string_literal_with_a_newline_stays_in_its_record(tmp_path: Path) -> None:
    log = tmp_path / "orc.log"
    log.write_text(spark_line("leaf-(EQUALS name two\nlines)") + spark_line("leaf-(IS_NULL id)"))
    found, _ = servers.read_logged_sargs(log)
    assert [s.sarg for s in found] == ["leaf-(EQUALS name two\nlines)", "leaf-(IS_NULL id)"]


def test_reads_hive4_orc_pushdown_predicate_lines(tmp_path: Path) -> None:
    log = tmp_path / "hive.log"
    log.write_text("2026-01-01T00:00:00,000 INFO [main] orc.OrcInputFormat: ORC pushdown predicate: "
                   "(and leaf-(BETWEEN d 2024-01-01 2024-02-01) (not leaf-(IS_NULL d)))\n"
                   "2026-01-01T00:00:00,001 INFO [main] other: nothing here\n")
    found, _ = servers.read_logged_sargs(log)
    assert found == [LoggedSarg("(and leaf-(BETWEEN d 2024-01-01 2024-02-01) (not leaf-(IS_NULL d)))", None, None)]


def test_log4j2_config_sends_the_orc_reader_at_debug_to_its_file(tmp_path: Path) -> None:
    text = servers.write_log4j2(tmp_path / "log4j2.properties", orc_log=tmp_path / "orc.log").read_text()
    assert "logger.orc.name = org.apache.orc.impl.ReaderImpl" in text
    assert "logger.orc.level = debug" in text
    assert f"appender.orc.fileName = {tmp_path / 'orc.log'}" in text
    assert "orc" not in servers.write_log4j2(tmp_path / "plain.properties").read_text().replace("Console", "")


def _process(tmp_path: Path, code: str, port: int) -> ServerProcess:
    log = tmp_path / "server.log"
    log.write_text("line one\nline two: the reason\n")
    import subprocess

    proc = subprocess.Popen([sys.executable, "-c", code])
    return ServerProcess("test server", proc, "127.0.0.1", port, log, tmp_path)


def test_wait_for_port_reports_an_early_exit_with_the_log_tail(tmp_path: Path) -> None:
    server = _process(tmp_path, "raise SystemExit(3)", servers.free_port())
    with pytest.raises(ServerError, match=r"(?s)test server exited with code 3 before 127\.0\.0\.1:\d+ opened.*"
                                          r"line two: the reason"):
        servers.wait_for_port(server, timeout=30)


def test_wait_for_port_times_out_with_the_log_tail(tmp_path: Path) -> None:
    server = _process(tmp_path, "import time; time.sleep(60)", servers.free_port())
    try:
        with pytest.raises(ServerError, match=r"(?s)did not open 127\.0\.0\.1:\d+ within 1 s.*the reason"):
            servers.wait_for_port(server, timeout=1)
    finally:
        server.stop()
    assert not server.running


def test_wait_for_port_returns_once_the_port_listens(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        server = _process(tmp_path, "import time; time.sleep(60)", s.getsockname()[1])
        with server:
            servers.wait_for_port(server, timeout=5)
        assert not server.running


def test_stop_escalates_to_sigkill(tmp_path: Path) -> None:
    code = ("import signal, time, sys; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(60)")
    import subprocess

    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    server = ServerProcess("stubborn", proc, "127.0.0.1", 1, tmp_path / "log", tmp_path)
    started = time.monotonic()
    assert server.stop(timeout=0.5) == -9
    assert time.monotonic() - started < 5
    assert server.stop() == -9  # a second stop is harmless


def test_free_port_is_bindable_on_loopback() -> None:
    port = servers.free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_missing_java_is_a_clear_server_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(servers, "find_java", lambda: None)
    with pytest.raises(ServerError, match="no `java` found"):
        servers.start_metastore(tmp_path)
    with pytest.raises(ServerError, match="no `java` found"):
        servers.start_thrift_server(tmp_path)


def test_a_port_taken_meanwhile_is_retried_on_another(tmp_path: Path) -> None:
    tried: list[int] = []

    def start(port: int) -> ServerProcess:
        tried.append(port)
        if len(tried) < 3:
            raise ServerError("Hive Metastore exited with code 1 ...\njava.net.BindException: Address already in use")
        return ServerProcess("ok", None, "127.0.0.1", port, tmp_path / "log", tmp_path)  # type: ignore[arg-type]

    assert servers._on_free_port(start, "127.0.0.1", None).port == tried[-1]
    assert len(tried) == 3
    tried.clear()
    with pytest.raises(ServerError, match="Address already in use"):
        servers._on_free_port(start, "127.0.0.1", 4242)  # an explicit port is never changed
    assert tried == [4242]

    def broken(port: int) -> ServerProcess:
        raise ServerError("exited with code 1: no such class")

    with pytest.raises(ServerError, match="no such class"):
        servers._on_free_port(broken, "127.0.0.1", None)


def test_java_major_version(tmp_path: Path) -> None:
    found = servers.find_java()
    if found is None:
        pytest.skip("no java here")
    version = servers.java_major_version(found[0])
    assert version is not None and version >= 8
    assert servers.java_major_version(str(tmp_path / "no-such-java")) is None
