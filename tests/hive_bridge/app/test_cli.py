"""`hive-bridge`: replay (tables, JSON Lines, bad input, --verify), explain (summary, --files, --json), index,
read (bad filter before Spark, quiet Spark start, --verbose), --help texts, demo's pieces."""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from hive_bridge.app.cli import _plain, build_parser, main
from hive_bridge.spark import start as spark_start
from hive_bridge.testing.writer import HudiWriter


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20 files × 10 rows, clustered ids, two partitions."""
    root = tmp_path_factory.mktemp("cli") / "events"
    ids = list(range(200))
    data = pa.table({"id": pa.array(ids, pa.int64()),
                     "name": pa.array([f"n{i:03d}" for i in ids]),
                     "score": pa.array([None if i % 7 == 0 else i / 2 for i in ids], pa.float64()),
                     "region": pa.array(["eu" if i < 100 else "us" for i in ids])})
    HudiWriter(root, partition_fields=("region",), record_key_fields=("id",), rows_per_file=10).insert(data)
    return root


def run(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        old = sys.stdin
        sys.stdin = io.StringIO(stdin)
        try:
            code = main(list(argv), stdout=out, stderr=err)
        finally:
            sys.stdin = old
    else:
        code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


LOG = "\n".join([
    "24/11/22 06:40:01 DEBUG ReaderImpl: Reading ORC rows from file:/w/p0.orc with {include: [true], offset: 0, "
    "length: 9, sarg: leaf-(EQUALS id 5), schema: struct<id:bigint,name:string>, includeAcidColumns: true}",
    "24/11/22 06:40:01 DEBUG ReaderImpl: Reading ORC rows from file:/w/p1.orc with {include: [true], offset: 0, "
    "length: 9, sarg: leaf-(EQUALS id 5), schema: struct<id:bigint,name:string>, includeAcidColumns: true}",
    "2024-01-01T00:00:00,000 INFO OrcInputFormat: ORC pushdown predicate: leaf-0 = (EQUALS region us)",
    "leaf-1 = (LESS_THAN id 150)",
    "expr = (and leaf-0 leaf-1)",
    "      filterExpr: (name = 'n007') (type: boolean)",
    "x ORC pushdown predicate: (and leaf-(EQUALS id 1)",
    "(not leaf-(IS_NULL score))",
]) + "\n"


def test_replay_json_lines(table: Path, tmp_path: Path) -> None:
    log = tmp_path / "spark.log"
    log.write_text(LOG)
    code, out, err = run("replay", "--table", str(table), "--json", str(log))
    assert code == 1  # one filter does not parse
    *docs, summary = [json.loads(line) for line in out.splitlines()]
    # the summary object last, as the workload replay writes it: the filter that failed is counted there
    assert summary["summary"] is True and summary["failed"] == 1 and summary["filters"] == 5
    assert summary["tables"][0]["scans"] == 6 and summary["filter_lines"] == 8
    assert [d["filter"] for d in docs] == [
        "leaf-(EQUALS id 5)",
        "leaf-0 = (EQUALS region us)\nleaf-1 = (LESS_THAN id 150)\nexpr = (and leaf-0 leaf-1)",
        "(name = 'n007')",
        "(not leaf-(IS_NULL score))",
    ]
    first = docs[0]
    assert first["occurrences"] == 2
    assert first["files_total"] == 20 and first["files_kept"] == 1
    assert first["kept"] == [k for k in first["kept"] if k.startswith("region=eu/")] and len(first["kept"]) == 1
    assert first["bytes_kept"] < first["bytes_total"]
    assert docs[1]["files_kept"] == 5 and docs[1]["dropped_by_partition"] == 10
    assert docs[2]["files_kept"] == 1
    assert docs[3]["files_kept"] == 20  # IS NOT NULL: every file has non-null scores
    assert "line 7, column" in err and "unexpected end of text" in err
    assert "Traceback" not in err


def test_filter_by_filter_replay_is_a_view_of_the_workload_replay(table: Path, tmp_path: Path) -> None:
    """The same filters through both replays: the same record form and the same figures; the kept files listed
    by the filter-by-filter replay always, by the workload replay with --kept-files only."""
    filters = tmp_path / "filters.txt"
    filters.write_text("leaf-(EQUALS id 5)\nid < 20\nregion = 'us' AND id >= 150\nname = 'n007'\nid = 5 AND\n")
    code, out, err = run("replay", "--table", str(table), "--json", str(filters))
    assert code == 1 and "line 5, column" in err
    *single, single_summary = [json.loads(line) for line in out.splitlines()]
    views = {}
    for extra in ([], ["--kept-files"]):
        code, out, err = run("replay", "--table", str(table), "--json", "--html", str(tmp_path / "r.html"), *extra,
                             "--filters", str(filters))
        assert code == 1, err
        *records, summary = [json.loads(line) for line in out.splitlines()]
        views[bool(extra)] = [r for r in records if "error" not in r], summary
        # the workload replay writes the failed filter's record too (the view reports it on stderr only)
        assert [r["error"] for r in records if "error" in r] == ["line 1, column 11: unexpected end of text"]
    workload, summary = views[True]
    assert not any("kept" in r for r in views[False][0])
    assert [r["filter"] for r in single] == [r["filter"] for r in workload] == [
        "leaf-(EQUALS id 5)", "id < 20", "region = 'us' AND id >= 150", "name = 'n007'"]
    provenance = {"first_line", "input", "lines"}
    for a, b in zip(single, workload, strict=True):
        assert set(a) - provenance == set(b) - provenance, set(a) ^ set(b)
        assert a["kind"] == b["kind"] and a["origin"] == b["origin"] and a["sarg"] == b["sarg"]
        for key in ("files_kept", "files_total", "bytes_kept", "kept", "unknown_parts", "dropped_by_statistics",
                    "dropped_by_partition", "occurrences", "table", "columns"):
            assert a.get(key) == b.get(key), key
    assert [r["kind"] for r in single] == ["sarg", "hiveql", "hiveql", "hiveql"]
    assert single[0]["files_kept"] == 1 and len(single[0]["kept"]) == 1
    assert [r["first_line"] for r in single] == [1, 2, 3, 4] and single[0]["input"] == str(filters)
    for key in ("filters", "failed", "filter_lines", "lines", "inputs"):
        assert single_summary[key] == summary[key], key
    assert single_summary["failed"] == 1 and single_summary["filters"] == 5


def test_replay_table_output_and_totals(table: Path) -> None:
    code, out, err = run("replay", "--table", str(table), "-", stdin="leaf-(EQUALS id 5)\nid < 20\n")
    assert code == 0, err
    assert "Filter replay against events" in out
    assert "1 / 20" in out and "2 / 20" in out
    assert "2 distinct filters (2 occurrences); files kept 3 / 40" in out


def test_replay_bad_table_is_exit_2(tmp_path: Path) -> None:
    code, _, err = run("replay", "--table", str(tmp_path / "missing"), "-", stdin="")
    assert code == 2
    assert "missing" in err and "Traceback" not in err


@pytest.mark.spark
def test_replay_verify_finds_no_difference(table: Path, spark) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run("replay", "--table", str(table), "--verify", "--json", "-",
                         stdin="(or leaf-(EQUALS id 5) leaf-(BETWEEN id 120 125))\nname = 'n199'\n")
    assert code == 0, err
    *docs, summary = [json.loads(line) for line in out.splitlines()]
    assert summary["summary"] is True and summary["failed"] == 0
    assert [d["verified"] for d in docs] == [True, True]
    assert [d["files_kept"] for d in docs] == [2, 1]


def test_explain_shows_forms_and_verdicts(table: Path) -> None:
    code, out, _ = run("explain", "--table", str(table), "leaf-0 = (LESS_THAN id 15), expr = leaf-0")
    assert code == 0
    assert "SearchArgument  leaf-(LESS_THAN id 15)" in out
    assert "old form        leaf-0 = (LESS_THAN id 15), expr = leaf-0" in out
    rows = re.findall(r"^│ region=\S+\s*│ (keep|skip)\s", out, flags=re.M)  # 20 files: all shown by default
    assert rows.count("skip") == 18 and rows == ["keep"] * 2 + ["skip"] * 18  # kept files first
    assert "more files not shown" not in out and "files kept 2 / 20" in out


def test_explain_summary_groups_files_by_verdict_stage_and_reason(table: Path) -> None:
    code, out, _ = run("explain", "--table", str(table), "--files", "3", "region = 'us' and id < 150")
    assert code == 0
    summary = out[out.index("verdicts of 20 files by reason"):out.index("file verdicts")]
    # statistics differ from file to file; the summary groups them by truth: 3 groups, not 20 rows
    # region = 'us' is YES: every file of the partition holds only 'us' (min = max, exact bounds)
    assert re.search(r"│\s+5 │ keep\s+│ statistics │ root is YES: some row may match; region = 'us': YES; "
                     r"id < 150: YES\s+│", summary)
    assert re.search(r"│\s+5 │ skip\s+│ statistics │ root is NO: no row can match; region = 'us': YES; "
                     r"id < 150: NO\s+│", summary)
    assert re.search(r"│\s+10 │ skip\s+│ partition\s+│ root is NO: no row can match; region = 'us': NO;", summary)
    assert summary.count("min=") == 0 and len(re.findall(r"^│\s+\d+ │", summary, flags=re.M)) == 3
    assert "file verdicts (first 3 of 20, kept files first)" in out
    assert len(re.findall(r"^│ region=\S+\s*│ keep\s", out, flags=re.M)) == 3
    assert "17 more files not shown (--files all shows every file)" in out


@pytest.mark.parametrize(("files", "shown"), [("0", 0), ("all", 20), ("25", 20)])
def test_explain_files_limit(table: Path, files: str, shown: int) -> None:
    code, out, _ = run("explain", "--table", str(table), "--files", files, "id < 15")
    assert code == 0
    assert len(re.findall(r"^│ region=\S+\s*│ (?:keep|skip)\s", out, flags=re.M)) == shown
    assert ("file verdicts" in out) == (shown > 0)
    assert ("more files not shown" in out) == (shown < 20)


def test_explain_files_must_be_a_count_or_all(table: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["explain", "--table", str(table), "--files", "some", "id < 15"])
    assert exc.value.code == 2 and "expected a number of files (0 or more) or 'all'" in capsys.readouterr().err


def test_explain_json_is_one_document(table: Path) -> None:
    code, out, _ = run("explain", "--table", str(table), "--json", "(or leaf-(LESS_THAN id 15) leaf-(EQUALS name n150))")
    assert code == 0
    doc = json.loads(out)
    assert doc["sarg"] == "(or leaf-(LESS_THAN id 15) leaf-(EQUALS name n150))"
    assert doc["sarg_old_form"].startswith("leaf-0 = (LESS_THAN id 15), leaf-1 = (EQUALS name n150)")
    assert (doc["files_total"], doc["files_kept"], doc["dropped_by_statistics"]) == (20, 3, 17)
    assert sum(g["files"] for g in doc["summary"]) == 20
    assert {"verdict": "skip", "unknown": False, "stage": "statistics",
            "reason": "root is NO: no row can match; id < 15: NO; name = 'n150': NO", "files": 17} in doc["summary"]
    assert [g["verdict"] for g in doc["summary"]] == sorted(g["verdict"] for g in doc["summary"])  # keep first
    files = doc["files"]  # --json: every file unless --files says otherwise
    assert len(files) == 20 and doc["files_omitted"] == 0
    assert [f["kept"] for f in files] == [True] * 3 + [False] * 17
    assert set(files[0]) == {"path", "partition", "kept", "unknown", "stage", "truth", "reason", "sources"}
    assert files[-1]["truth"] == "NO" and "min=" in files[-1]["reason"]
    assert files[-1]["path"].startswith(files[-1]["partition"] + "/")
    code, out, _ = run("explain", "--table", str(table), "--json", "--files", "2", "id < 15")
    doc = json.loads(out)
    assert len(doc["files"]) == 2 and doc["files_omitted"] == 18


def test_explain_unknown_leaf_keeps_its_explanation_in_the_summary(table: Path) -> None:
    code, out, _ = run("explain", "--table", str(table), "--json", "leaf-(BETWEEN id DynamicValue(a) 3)")
    assert code == 0
    [group] = json.loads(out)["summary"]
    assert group["verdict"] == "keep" and group["unknown"] and group["files"] == 20
    assert "only because of missing information" in group["reason"] and "cannot be typed" in group["reason"]


def test_explain_prints_filter_text_not_markup(table: Path) -> None:
    code, out, _ = run("explain", "--table", str(table), "--files", "1", "name = '[bold]'")
    assert code == 0
    assert "SearchArgument  leaf-(EQUALS name [bold])" in out and "name = '[bold]': NO" in out


def test_explain_bad_filter(table: Path) -> None:
    code, _, err = run("explain", "--table", str(table), "leaf-(EQUALS id")
    assert code == 1 and "line 1, column" in err


class SparkStarted(AssertionError):
    pass


def _no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything starts Spark (a new JVM, or a session on an existing one)."""
    import pyspark.java_gateway

    import hive_bridge.spark

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise SparkStarted("Spark was started")

    monkeypatch.setattr(hive_bridge.spark, "session", refuse)
    monkeypatch.setattr(pyspark.java_gateway, "launch_gateway", refuse)


@pytest.mark.parametrize("where", ["folder", "catalog"])
def test_read_bad_filter_fails_before_spark_starts(table: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    _no_spark(monkeypatch)
    target = str(table) if where == "folder" else "no_such_db.events"  # a catalog table: syntax checked first
    code, out, err = run("read", "--table", target, "--filter", "(((")
    assert code == 1
    assert "hive-bridge read: cannot read the filter: line 1, column 4: unexpected end of text" in err
    assert "Traceback" not in err and out == ""


def test_read_of_a_folder_that_is_no_hudi_table_is_a_usage_error(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _no_spark(monkeypatch)
    code, _, err = run("read", "--table", str(tmp_path), "--filter", "id = 1")
    assert code == 2 and str(tmp_path) in err and "Traceback" not in err


def test_verbose_flag_before_or_after_the_command() -> None:
    parser = build_parser()
    assert parser.parse_args(["read", "--table", "t"]).verbose is False
    assert parser.parse_args(["-v", "read", "--table", "t"]).verbose is True
    assert parser.parse_args(["--verbose", "demo"]).verbose is True
    assert parser.parse_args(["read", "--table", "t", "--verbose"]).verbose is True
    assert parser.parse_args(["replay", "--table", "t", "-v"]).verbose is True
    assert parser.parse_args(["explain", "--table", "t", "x"]).verbose is False


def test_verbose_starts_spark_without_the_quiet_profile(table: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--verbose: no quiet log4j2 profile, no filter on the JVM's standard error; default: both."""
    import hive_bridge.spark

    seen: list[str | None] = []

    def fake_session(*_args: object, **_kwargs: object) -> None:
        seen.append(os.environ.get("SPARK_SUBMIT_OPTS"))
        raise hive_bridge.spark.SparkReadError("stop here")

    launched: list[bool] = []
    monkeypatch.setattr(hive_bridge.spark, "session", fake_session)
    monkeypatch.setattr(spark_start, "_launch_filtered_gateway", lambda launch_conf=None: launched.append(True))
    monkeypatch.delenv("SPARK_SUBMIT_OPTS", raising=False)
    for verbose in (True, False):
        code, _, err = run(*(["--verbose"] if verbose else []), "read", "--table", str(table), "--filter", "id = 1")
        assert code == 1 and "stop here" in err
    opts_verbose, opts_quiet = seen
    assert opts_verbose is None and launched == [True]  # only the quiet start filters the JVM's stderr
    assert opts_quiet is not None and "-Dlog4j2.configurationFile=file:" in opts_quiet
    assert opts_quiet.endswith("hive_bridge/data/log4j2-quiet.properties")
    assert "SPARK_SUBMIT_OPTS" not in os.environ  # restored after the start


def test_quiet_jvm_options_append_to_the_users_and_restore(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_SUBMIT_OPTS", "-Dmine=1")
    with spark_start.quiet_jvm_options() as option:
        assert os.environ["SPARK_SUBMIT_OPTS"] == f"-Dmine=1 {option}"
        path = Path(option.split("=", 1)[1].removeprefix("file://"))
        assert "rootLogger.level = error" in path.read_text()
    assert os.environ["SPARK_SUBMIT_OPTS"] == "-Dmine=1"


def test_jvm_stderr_filter_drops_only_the_incubator_notice(capfd: pytest.CaptureFixture[str]) -> None:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"WARNING: Using incubator modules: jdk.incubator.vector\n"
                       b"26/11/24 02:54:06 ERROR SparkContext: a real error\nno newline at the end")
    os.close(write_fd)
    spark_start._forward(read_fd)
    assert capfd.readouterr().err == "26/11/24 02:54:06 ERROR SparkContext: a real error\nno newline at the end"


def _read_in_subprocess(table: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_SUBMIT_OPTS", "PYSPARK_GATEWAY_PORT")}
    return subprocess.run([sys.executable, "-m", "hive_bridge", *extra, "read", "--table", str(table),
                           "--filter", "id < 3"], capture_output=True, text=True, timeout=600, env=env, check=False)


CHATTER = ("WARN", "NativeCodeLoader", "log4j", "Setting default log level", "setLogLevel")


@pytest.mark.spark
def test_read_starts_spark_quietly(table: Path) -> None:
    proc = _read_in_subprocess(table)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"│ 2\s+│ n002\s+│", proc.stdout)
    noise = [line for line in proc.stderr.splitlines() if any(word in line for word in CHATTER)]
    assert noise == [], proc.stderr
    assert "read 1 of 20 files" in proc.stderr


@pytest.mark.spark
def test_read_verbose_shows_spark_start_up(table: Path) -> None:
    proc = _read_in_subprocess(table, "--verbose")
    assert proc.returncode == 0, proc.stderr
    assert "WARN" in proc.stderr and "read 1 of 20 files" in proc.stderr


def test_help_texts_are_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    commands = list(subparsers.choices)
    assert {"replay", "explain", "read", "index", "serve", "demo"} <= set(commands)
    for argv in [["--help"], *([c, "--help"] for c in commands)]:
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 0
        text = capsys.readouterr().out
        assert "usage: hive-bridge" in text
        assert "``" not in text and ":func:" not in text, argv
    main_help = parser.format_help()
    assert "hive-bridge: replay the filters" in main_help and "exit code" in main_help


def test_plain_strips_rst_markup() -> None:
    assert _plain("``hive-bridge``: see :func:`~sarg.parse` and ``a\nb``") == "hive-bridge: see sarg.parse and a\nb"


def test_index_builds_then_reads_from_index(table: Path) -> None:
    code, out, _ = run("index", "--table", str(table))
    assert code == 0 and "20 file slices (folders listing)" in " ".join(out.split())
    code, out, _ = run("index", "--table", str(table))
    assert "0 footers read, 0 base files from the metadata table, 20 from the index" in " ".join(out.split())


def test_console_script_and_module_entry_points(table: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "hive_bridge", "explain", "--table", str(table),
                           "leaf-(EQUALS id 3)"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "files kept 1 / 20" in proc.stdout


TRIPS_MDT = "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"


def test_explain_names_the_sources_of_listing_statistics_and_indexes(shared_tables: dict[str, Path],
                                                                     tmp_path: Path) -> None:
    import shutil

    shutil.copytree(shared_tables[TRIPS_MDT], tmp_path / "trips")
    shutil.rmtree(tmp_path / "trips" / ".hoodie" / ".hive_bridge", ignore_errors=True)  # another test's index
    root = str(tmp_path / "trips")
    code, out, _ = run("explain", "--table", root, "rider = 'rider-I'", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["listing_source"] == "mdt" and doc["listing_problems"] == []
    # one partition (no log file) is dropped by its partition statistics: its base file is never looked up
    assert doc["dropped_by_partition_stats"] == 1 and doc["partitions_dropped_by_stats"] == 1
    assert doc["stats_sources"] == {"metadata table": 3}  # 2 base files, 1 log file
    assert doc["index_sources"] == ["secondary index secondary_index_rider_idx + record index"]
    assert sorted(f["sources"] for f in doc["files"]) == [["metadata table"]] * 2 + [["metadata table "
                                                                                       "partition_stats"]]
    code, out, _ = run("explain", "--table", root, "rider = 'rider-I'")
    assert "listing: mdt; statistics: 3 from metadata table; answered by secondary index" in " ".join(out.split())
    assert "1 by partition statistics (1 partitions)" in " ".join(out.split())
    code, out, _ = run("explain", "--table", root, "rider = 'rider-I'", "--json", "--listing", "folders",
                       "--stats-source", "footers")
    doc2 = json.loads(out)
    assert doc2["listing_source"] == "folders"
    # footers only: no statistics of the metadata table, its partition statistics included (every file read)
    assert doc2["stats_sources"] in ({"parquet footers": 3, "log blocks": 1}, {"hive-bridge index": 4})
    assert doc2["dropped_by_partition_stats"] == 0
    assert doc2["files_kept"] == doc["files_kept"] == 1


def test_index_sources_and_replay_json(shared_tables: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "trips"
    shutil.copytree(shared_tables[TRIPS_MDT], root)
    shutil.rmtree(root / ".hoodie" / ".hive_bridge", ignore_errors=True)  # an index other tests persisted
    code, out, _ = run("index", "--table", str(root), "--source", "mdt")
    assert code == 0 and "0 footers read, 3 base files from the metadata table" in " ".join(out.split())
    assert "(mdt listing)" in out
    code, out, _ = run("index", "--table", str(root), "--source", "footers", "--listing", "folders")
    assert code == 0 and "0 footers read, 0 base files from the metadata table, 3 from the index" in " ".join(
        out.split())  # the index kept what the metadata table gave
    code, out, _ = run("index", "--table", str(root), "--source", "footers", "--listing", "folders", "--rebuild")
    assert code == 0 and "3 footers read" in " ".join(out.split())
    log = tmp_path / "filters.txt"
    log.write_text("leaf-(EQUALS uuid 3eeb61f7-c2b0-4636-99bd-5d7a5a1d2c04)\n", encoding="utf-8")
    code, out, _ = run("replay", "--json", "--table", str(root), str(log))
    row = json.loads(out.splitlines()[0])
    assert code == 0 and row["listing_source"] == "mdt" and row["index_sources"] == ["record index"]
    assert row["files_kept"] == 1 and row["stats_sources"]


def test_replay_reads_each_filters_columns_from_the_metadata_table(tmp_path: Path) -> None:
    """Replaying filters on different columns of a never-indexed table with a metadata table: each filter keeps
    what an index of every column keeps (the first filter's columns are decoded first, the others when a filter
    first needs them)."""
    import sarg
    from hive_bridge.pruning.pruner import Pruner, table_sarg_schema
    from hive_bridge.stats.index import ColumnStatsIndex
    from hive_bridge.table.table import HudiTable
    from hive_bridge.testing.mdt_writer import write_metadata_table

    root = tmp_path / "t"
    w = HudiWriter(root, version=8, partition_fields=["part"], rows_per_file=6)
    ids = list(range(120))
    w.insert(pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i:04d}" for i in ids],
                       "score": pa.array([i * 0.5 for i in ids], pa.float64()),
                       "part": [f"p{i % 2}" for i in ids]}))
    write_metadata_table(root)
    filters = ["leaf-(BETWEEN id 10 20)", "leaf-(LESS_THAN name n0030)", "(and leaf-(EQUALS id 7) "
               "leaf-(EQUALS name n0007))", "leaf-(EQUALS name n0100)"]
    log = tmp_path / "filters.txt"
    log.write_text("\n".join(filters) + "\n", encoding="utf-8")
    code, out, err = run("replay", "--json", "--table", str(root), "--listing", "mdt", "--stats-source", "mdt",
                         str(log))
    assert code == 0, err
    *rows, summary = [json.loads(line) for line in out.splitlines()]
    assert summary["summary"] is True and summary["filters"] == len(filters)
    table = HudiTable.open(root)
    eager = Pruner(table, ColumnStatsIndex(table, persist=False, source="mdt"), table.latest_file_slices())
    schema = table_sarg_schema(table)
    for text, row in zip(filters, rows, strict=True):
        want = eager.run(sarg.read_filter(text, schema))
        assert row["files_kept"] == len(want.slices) < row["files_total"], text
        assert row["stats_sources"] == {"metadata table": row["files_total"]}, row["stats_sources"]


TXNS_META = "sample_table.cow.v9_txns_simple_meta"


def test_explain_prints_bounds_in_the_columns_own_type_and_which_index_answered(
        shared_tables: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    shutil.copytree(shared_tables[TXNS_META], tmp_path / "txns")
    shutil.rmtree(tmp_path / "txns" / ".hoodie" / ".hive_bridge", ignore_errors=True)
    code, out, _ = run("explain", "--table", str(tmp_path / "txns"), "--json",
                       "amount > 100.00 and txn_date = date '2024-01-16' and txn_id = 'TXN-007'")
    doc = json.loads(out)
    assert code == 0 and doc["index_sources"]
    reasons = " ".join(f["reason"] for f in doc["files"])
    # decimal(15,2) bounds and literals as decimals, dates as dates: never unscaled integers or epoch days
    assert "max > 100.00" in reasons and "min <= 2024-01-16" in reasons and "min = max in [2024-01-16]" in reasons
    assert re.search(r"min=\d+\.\d\d, max=\d+\.\d\d", reasons)
    assert not re.search(r"max > 10000\b|<= 19738\b|\[19738\]", reasons)
    source = doc["index_sources"][0]
    # region=eu holds no 2024-01-16 (its partition statistics say so): dropped before its files are judged
    assert {f["partition"] for f in doc["files"] if f["stage"] == "partition statistics"} == {"region=eu"}
    for f in doc["files"]:
        if f["stage"] == "partition statistics":
            assert "txn_date" in f["reason"] and "2024-01-16" in f["reason"]
            continue
        assert f["stage"] == "statistics + " + ", ".join(doc["index_sources"]) and source in f["stage"]
        # both indexes answer: the secondary index on txn_date (checked against the files) and the record index
        assert f["reason"].startswith(f"root is {f['truth']} with the indexes' answers: ")
        assert "txn_id = 'TXN-007': " in f["reason"] and "txn_date = 2024-01-16: " in f["reason"]
    # a file the index excluded says so, and the statistics alone would have kept it
    excluded = [f for f in doc["files"] if f"{source}: no row of this file group has it" in f["reason"]]
    assert excluded and all(not f["kept"] for f in excluded)
    assert any("statistics alone: root is YES_NO" in f["reason"] for f in excluded)
