"""docker/conf/hive-log4j2.properties sends the lines that carry SearchArguments to orc-reader.log.

Checked against real things that run here: which classes of Hive's ``hive-exec`` (pyspark's copy, 2.3.10; Hive 4's
``OrcInputFormat`` and ``ReaderImpl`` log the same lines from the same classes) print them, and real log4j
(pyspark's ``log4j-core``) loading the file the way ``bin/hive`` does: ``-Dlog4j.configurationFile=
hive-log4j2.properties``, found on the classpath, where ``/opt/hive/conf`` comes first.
"""

from __future__ import annotations

import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from hive_bridge.testing import servers

PROPERTIES = Path(__file__).resolve().parents[2] / "docker" / "conf" / "hive-log4j2.properties"
CONTAINER_LOG = "/opt/hive/logs/orc-reader.log"
HIVE_ORC = "org/apache/hadoop/hive/ql/io/orc/"
READER_LINE = b"Reading ORC rows from "
PREDICATE_LINE = b"ORC pushdown predicate: "

# Logs each (logger, level, message) triple of its arguments through log4j's API, then shuts log4j down.
PROBE = """
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;

public class LogProbe {
  public static void main(String[] args) {
    for (int i = 0; i + 2 < args.length; i += 3) {
      LogManager.getLogger(args[i]).log(Level.valueOf(args[i + 1]), args[i + 2]);
    }
    LogManager.shutdown();
  }
}
"""


def log4j_properties(text: str) -> dict[str, str]:
    """``key = value`` lines of a log4j2 properties file (comments and blank lines dropped)."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def configured_loggers(props: dict[str, str]) -> dict[str, dict[str, str]]:
    """logger name -> its settings (``level``, ``additivity``, ``appenderRef.<x>.ref``)."""
    by_id: dict[str, dict[str, str]] = {}
    for key, value in props.items():
        m = re.fullmatch(r"logger\.([^.]+)\.(.+)", key)
        if m:
            by_id.setdefault(m.group(1), {})[m.group(2)] = value
    return {settings["name"]: settings for settings in by_id.values()}


def classes_printing(jar: Path, text: bytes) -> set[str]:
    """Classes of Hive's ``ql.io.orc`` package in ``jar`` whose constants hold ``text``."""
    with zipfile.ZipFile(jar) as zf:
        return {name[:-len(".class")].replace("/", ".") for name in zf.namelist()
                if name.startswith(HIVE_ORC) and name.endswith(".class") and text in zf.read(name)}


def test_the_configured_loggers_are_the_classes_that_print_the_sarg_lines(pyspark_jars: Path) -> None:
    (hive_exec,) = pyspark_jars.glob("hive-exec-*.jar")
    reader = classes_printing(hive_exec, READER_LINE)
    predicate = classes_printing(hive_exec, PREDICATE_LINE)
    assert reader == {servers.HIVE_ORC_READER_LOGGER}
    assert predicate == {"org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"}
    props = log4j_properties(PROPERTIES.read_text(encoding="utf-8"))
    loggers = configured_loggers(props)
    for name in reader | predicate:
        assert name in loggers, f"{name} prints SearchArguments but is not configured"
        assert loggers[name]["level"] == "INFO"
        assert loggers[name]["appenderRef.orc.ref"] == "orc"
        assert loggers[name].get("additivity", "true") == "true", f"{name}: its lines should stay on the console"
    # ORC's own reader logs its line at DEBUG for Spark's native ORC reader; Hive never goes through it.
    assert servers.ORC_READER_LOGGER not in loggers
    assert props["appender.orc.fileName"] == CONTAINER_LOG
    assert props["rootLogger.appenderRef.root.ref"] == "${sys:hive.root.logger}"
    assert props["appender.console.type"] == "Console"


def _log4j(pyspark_jars: Path, java_tools: tuple[str, str], tmp_path: Path, orc_log: Path,
           *events: tuple[str, str, str]) -> subprocess.CompletedProcess[str]:
    """Run the probe with the properties file (its ORC log redirected to ``orc_log``) as ``bin/hive`` does."""
    _javac, java = java_tools
    text = PROPERTIES.read_text(encoding="utf-8")
    appender = f"appender.orc.fileName = {CONTAINER_LOG}"
    assert appender in text
    conf, cwd = tmp_path / "conf", tmp_path / "cwd"
    conf.mkdir()
    cwd.mkdir()
    (conf / "hive-log4j2.properties").write_text(
        text.replace(appender, f"appender.orc.fileName = {orc_log}"),
        encoding="utf-8")
    probe = tmp_path / "LogProbe.java"
    probe.write_text(PROBE, encoding="utf-8")
    jars = [next(pyspark_jars.glob(f"log4j-{part}-2*.jar")) for part in ("api", "core")]
    classpath = ":".join([str(conf), *map(str, jars)])
    args = [a for event in events for a in event]
    return subprocess.run([java, "-cp", classpath, "-Dlog4j.configurationFile=hive-log4j2.properties", str(probe),
                           *args], cwd=cwd, capture_output=True, text=True, timeout=120)


SARG = "leaf-0 = (EQUALS event_id 5), expr = leaf-0"
EVENTS = (
    (servers.HIVE_ORC_READER_LOGGER, "INFO",
     f"Reading ORC rows from file:/w/t/000000_0 with {{include: [true, true], offset: 0, length: 9, sarg: {SARG}, "
     "columns: [null, event_id], schema: struct<event_id:int>, includeAcidColumns: true}"),
    ("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "INFO", f"ORC pushdown predicate: {SARG}"),
    (servers.ORC_READER_LOGGER, "DEBUG", "Reading ORC rows from file:/spark.orc with {sarg: (EQUALS x 1)}"),
    ("org.apache.hadoop.hive.ql.Driver", "INFO", "Compiling command(queryId=q1): SELECT 1"),
    ("DataNucleus.Datastore", "INFO", "noise below ERROR"),
)


@pytest.mark.java
def test_log4j_copies_the_sarg_lines_to_the_orc_log_and_keeps_the_console(
        pyspark_jars: Path, java_tools: tuple[str, str], tmp_path: Path) -> None:
    orc_log = tmp_path / "logs" / "orc-reader.log"
    result = _log4j(pyspark_jars, java_tools, tmp_path, orc_log, *EVENTS)
    assert result.returncode == 0, result.stderr
    assert "ERROR" not in result.stderr and "WARN" not in result.stderr, result.stderr  # the file loads cleanly
    # The file gets the two Hive lines, message only; the tests' own reader finds both SearchArguments in it.
    assert orc_log.read_text(encoding="utf-8").splitlines() == [EVENTS[0][2], EVENTS[1][2]]
    found, _ = servers.read_logged_sargs(orc_log)
    assert [(s.sarg, s.schema, s.path) for s in found] == [(SARG, "struct<event_id:int>", "file:/w/t/000000_0"),
                                                           (SARG, None, None)]
    # The console (stdout: `docker compose logs`) has every INFO line, those two included, in Hive's pattern.
    console = result.stdout.splitlines()
    assert len(console) == 3, result.stdout
    assert re.fullmatch(r"\S+  INFO \[main\] orc\.ReaderImpl: Reading ORC rows from file:/w/t/000000_0 .*", console[0])
    assert console[1].endswith(f"INFO [main] orc.OrcInputFormat: ORC pushdown predicate: {SARG}")
    assert console[2].endswith("INFO [main] ql.Driver: Compiling command(queryId=q1): SELECT 1")


@pytest.mark.java
def test_an_unwritable_orc_log_folder_is_an_error_at_start_and_nothing_else(
        pyspark_jars: Path, java_tools: tuple[str, str], tmp_path: Path) -> None:
    """What an unwritable ./logs does to HiveServer2: log4j reports the file, logging goes on, no file appears
    (so the SearchArgument tests find nothing and fail). A file in the way stands for a folder uid 1000 cannot
    write: it fails for root too."""
    (tmp_path / "logs").write_text("not a folder", encoding="utf-8")
    orc_log = tmp_path / "logs" / "orc-reader.log"
    result = _log4j(pyspark_jars, java_tools, tmp_path, orc_log, *EVENTS[:2])
    assert result.returncode == 0
    assert re.search(rf"ERROR .*{re.escape(str(orc_log))}", result.stderr), result.stderr
    assert not orc_log.exists()
    assert "ORC pushdown predicate: " in result.stdout
