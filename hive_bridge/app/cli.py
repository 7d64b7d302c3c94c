"""``hive-bridge``: replay the filters of real Hive/Spark logs against a Hudi table, advise on its layout, explain
a filter, read with Spark, build the statistics index, serve Hudi tables to HiveServer2 clients, or run the demo.

Bad input never ends a run: a filter that does not parse prints where and why and the run goes on; the exit code
is 1 when anything failed (2 for a usage error such as a table that cannot be opened). No Python traceback is
shown for user errors.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO, cast

from rich.console import Console
from rich.markup import escape
from rich.table import Table

import sarg
from hive_bridge.app.explain import DEFAULT_FILES_SHOWN, render_explain
from hive_bridge.app.replay import read_inputs, replay, replay_workload, write_html
from hive_bridge.errors import HiveBridgeError
from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.pruning.pruner import filter_columns
from hive_bridge.pruning.snapshot import TableSnapshot
from hive_bridge.redaction import RedactingStream, redacted_output
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.storage.core import is_local_uri, parse_storage_options
from hive_bridge.table.table import HudiTable
from hive_bridge.workload.formatting import human_bytes


class UsageError(HiveBridgeError):
    """A command-line mistake: exit code 2."""


def _storage_options(args: argparse.Namespace) -> dict[str, str]:
    """The ``--storage-option KEY=VALUE`` of a command as a mapping."""
    try:
        return parse_storage_options(getattr(args, "storage_option", None) or ())
    except HiveBridgeError as exc:
        raise UsageError(str(exc)) from None


def _open_table(path: str, listing: str = "folders", args: argparse.Namespace | None = None) -> HudiTable:
    try:
        return HudiTable.open(path, listing=listing, storage_options=_storage_options(args) if args else None)
    except HiveBridgeError as exc:
        raise UsageError(str(exc)) from None


def cmd_replay(args: argparse.Namespace, out: Console, err: Console) -> int:
    from hive_bridge.workload.accounting import LOG
    from hive_bridge.workload.sources import has_workload_lines, split_inputs
    from hive_bridge.workload.tables import TableResolver, parse_table_args

    try:
        named, default = parse_table_args(args.table or [])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    split = split_inputs(args.logs or [], args.filters)
    logs = [path for path, kind in split.texts if kind == LOG]
    # one --table and only the line forms of earlier versions (ORC readers, filterExpr, files of filters,
    # standard input): the filter-by-filter replay of earlier versions; anything else: the workload replay
    if split.events or default is None or args.metastore or named or args.html or has_workload_lines(logs):
        if not args.logs and not args.filters:
            raise UsageError("give the logs to replay (files or folders) when replaying many tables")
        resolver = TableResolver(named, default, metastore=_metastore_lookup(args.metastore))
        return replay_workload(args.logs, resolver, out=out, err=err, verify=args.verify, verbose=args.verbose,
                               as_json=args.json, query_type=args.query_type, stats_source=args.stats_source,
                               listing=args.listing, storage_options=_storage_options(args),
                               time_zone=args.time_zone, html=args.html, filters=args.filters,
                               kept_files=args.kept_files, as_of=args.as_of,
                               spark_master=(args.master or "local[2]") if args.spark or args.master else None)
    table = _open_table(default, args.listing, args)
    if args.as_of is not None:
        try:                                    # the state as of then is checked before any input is read
            table.time_travel(args.as_of, where="--as-of")
        except HiveBridgeError as exc:
            raise UsageError(str(exc)) from None
    return replay(table, read_inputs(args.logs or [], args.filters), out=out, err=err, time_zone=args.time_zone,
                  verify=args.verify, verbose=args.verbose, as_json=args.json, query_type=args.query_type,
                  stats_source=args.stats_source, as_of=args.as_of)


def cmd_advise(args: argparse.Namespace, out: Console, err: Console) -> int:
    from hive_bridge.advisor import advise_workload, print_advice, write_advice_json
    from hive_bridge.app.replay import load_workload
    from hive_bridge.workload.replay_report import input_notes, lines_summary
    from hive_bridge.workload.tables import TableResolver, parse_table_args, redact

    try:
        named, default = parse_table_args(args.table or [])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not args.logs and not args.filters:
        raise UsageError("give the logs whose filters to advise on (files or folders)")
    for option, value in (("--samples", args.samples), ("--sample-rows", args.sample_rows),
                          ("--target-file-bytes", args.target_file_bytes)):
        if value is not None and value < 1:
            raise UsageError(f"{option} must be 1 or more, not {value}")
    for name in [*args.logs, *args.filters]:
        if name != "-" and not os.path.exists(name):
            raise UsageError(f"cannot read {name}: no such file or folder")
    resolver = TableResolver(named, default, metastore=_metastore_lookup(args.metastore))
    work, problems = load_workload(args.logs, resolver, verbose=args.verbose, query_type=args.query_type,
                                   stats_source=args.stats_source, listing=args.listing,
                                   storage_options=_storage_options(args), time_zone=args.time_zone,
                                   filters=args.filters)
    wanted = [default] if default is not None else (list(dict.fromkeys(named.values())) or None)
    for uri in wanted or ():
        state = work.table(uri)       # a table no scan named is opened here, so that a bad one says why
        if state.error:
            raise UsageError(f"table {redact(uri)}: {state.error}")
    for p in problems:
        err.print(f"error: {p}", highlight=False, markup=False)
    for note in input_notes(work.accounts):
        err.print(f"note: {note}", highlight=False, markup=False)
    err.print(lines_summary(work.accounts), highlight=False, markup=False)
    # the page's other sections show every filter's listing: planned once, here, the advisor's calibration then
    # reads them instead of planning the heaviest filters again
    plan_failures = work.plan() if args.html is not None else 0
    with err.status("simulating layouts…") if err.is_terminal else _no_status():
        advice, errors = advise_workload(work, wanted, sample_rows_per_sample=args.sample_rows,
                                         samples=args.samples, target_file_bytes=args.target_file_bytes,
                                         seed=args.seed)
    for message in errors:
        err.print(f"hive-bridge advise: {message}", highlight=False, markup=False)
    if not advice and not errors:
        err.print("hive-bridge advise: the logs hold no filter of any Hudi table", highlight=False)
    if args.json:
        write_advice_json(out.file, advice, errors)
    else:
        print_advice(out, advice)
    failed = bool(errors or problems or not advice)
    if args.html is not None:
        if not write_html(args.html, work, plan_failures + len(problems), problems, err,
                          advice=advice):
            return 1
    return 1 if failed else 0


def _no_status() -> Any:
    import contextlib

    return contextlib.nullcontext()


def _metastore_lookup(uri: str | None) -> Any:
    """``db.t`` -> the table's location, through a Hive metastore (None without one)."""
    if not uri:
        return None
    from hive_bridge.workload.tables import metastore_locator

    return metastore_locator(uri)


def _files_arg(text: str) -> int:
    """``--files N`` or ``--files all`` (-1)."""
    if text.strip().lower() == "all":
        return -1
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a number of files (0 or more) or 'all', not {text!r}")
    return n


def _query_type_arg(text: str) -> str:
    from hive_bridge.pruning.pruner import check_query_type

    try:
        return check_query_type(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_explain(args: argparse.Namespace, out: Console, err: Console) -> int:
    from hive_bridge.filters.expression import translate

    table = _open_table(args.table, args.listing, args)
    schema = table_sarg_schema(table)
    try:
        parsed = sarg.read_filter(args.filter, schema)
    except sarg.SargError as exc:
        err.print(f"error: {exc}", highlight=False)
        return 1
    expression = translate(parsed, schema)
    index = ColumnStatsIndex(table, source=args.stats_source, mdt_columns=filter_columns(table, parsed))
    try:
        snapshot = TableSnapshot.of(table, index, as_of=args.as_of, where="--as-of")
    except HiveBridgeError as exc:
        raise UsageError(str(exc)) from None
    listing = snapshot.plan(parsed, session_time_zone=args.time_zone, explain=True, query_type=args.query_type)
    _index_notices(index, "explain", err)
    return render_explain(out, args.filter, parsed, expression, table, index, listing, args.files, args.json)


def _check_read_filter(args: argparse.Namespace) -> str | None:
    """Before Spark starts: the folder of the table to read (None for a Spark catalog table), and the filter
    read against its schema, so a table that cannot be opened or a filter that does not parse fails at once."""
    from hive_bridge.spark import SparkReadError, filter_of

    location: str | None = None
    if args.metastore:
        from hive_bridge.hive import MetastoreClient

        db, _, name = args.table.rpartition(".")
        with MetastoreClient(args.metastore) as client:
            hive_table = client.get_table(db or "default", name)
        location = hive_table.location
    elif Path(args.table).exists() or not is_local_uri(args.table):
        location = args.table
    if location is not None:
        filter_of(_open_table(location, "folders", args), args.filter)
    elif args.filter and args.filter.strip():
        try:  # the catalog's schema is only known to Spark: check the syntax now, the types once it runs
            sarg.read_filter(args.filter)
        except sarg.SargSyntaxError as exc:
            raise SparkReadError(f"cannot read the filter: {exc}") from None
        except sarg.SargError:
            pass
    return location


def cmd_read(args: argparse.Namespace, out: Console, err: Console) -> int:
    from hive_bridge.spark import read_hudi, read_table
    from hive_bridge.spark import start as spark_start

    location = _check_read_filter(args)
    spark = spark_start.start_session("hive-bridge-read", verbose=args.verbose)
    if args.metastore:
        # by name through the metastore: the table's input format (or its _ro/_rt name) says the query type,
        # unless --query-type does; its metastore partitions prune first
        read = read_table(spark, args.table, args.filter, query_type=args.query_type, metastore=args.metastore)
    elif location is not None:
        read = read_hudi(spark, location, args.filter, query_type=args.query_type or "snapshot",
                         listing=args.listing, storage_options=_storage_options(args))
        err.print(f"route: {read.route}", highlight=False)
    else:
        read = read_table(spark, args.table, args.filter, query_type=args.query_type)
    listing = read.listing
    err.print(f"read {listing.files_kept} of {listing.files_total} files "
              f"({human_bytes(listing.bytes_kept)} of {human_bytes(listing.bytes_total)})", highlight=False)
    df = read.df
    if args.output:
        df.write.mode("overwrite").parquet(args.output)
        err.print(f"wrote {args.output}", highlight=False)
    else:
        rows = df.limit(args.limit).collect()
        t = Table()
        for name in df.columns:
            t.add_column(name, overflow="fold")
        for r in rows:
            t.add_row(*[escape(str(v)) for v in r])
        out.print(t)
    return 0


def cmd_index(args: argparse.Namespace, out: Console, err: Console) -> int:
    table = _open_table(args.table, args.listing, args)
    reader = None
    master = args.master or ("local[2]" if args.spark else None)
    if master is not None:
        from hive_bridge.spark import start as spark_start
        from hive_bridge.spark.index_build import SparkStatsReader

        # started only when there is something to read (an up-to-date index needs no Spark)
        reader = SparkStatsReader(lambda: spark_start.start_session("hive-bridge-index", verbose=args.verbose,
                                                                    master=master))
    index = ColumnStatsIndex(table, source=args.source, reader=reader)
    if args.rebuild:
        index.clear()
    t0 = time.perf_counter()
    with err.status("reading statistics…"):
        stats = index.refresh()
        slices = index.hudi_table.latest_file_slices()
        index.log_table(slices)
    c = index.counters
    out.print(f"index of {table.name}: {stats.num_rows} file slices ({index.hudi_table.listing_source} listing), "
              f"{c.files_from_footers} footers read, {c.files_from_mdt} base files from the metadata table, "
              f"{c.files_from_index} from the index, {c.unreadable_footers} unreadable; log files: "
              f"{c.log_files_read} read, {c.log_files_from_mdt} from the metadata table, {c.log_files_from_index} from "
              f"the index, {c.unreadable_log_files} unknown ({time.perf_counter() - t0:.2f} s"
              f"{f', read by Spark {master}' if master else ''}) in {index.directory}",
              highlight=False)
    for problem in index.mdt_problems + index.hudi_table.listing_problems:
        err.print(f"metadata table: {problem}", highlight=False, markup=False)
    _index_notices(index, "index", err)
    return 1 if c.unreadable_footers else 0


def _index_notices(index: ColumnStatsIndex, command: str, err: Console) -> None:
    """Segments of the persisted index discarded on load (damaged, failing a check, without a checksum), on
    stderr: the run goes on with their files' statistics read again (exit code unchanged)."""
    for line in index.discard_notices():
        err.print(f"hive-bridge {command}: {line}", highlight=False, markup=False)


def cmd_serve(args: argparse.Namespace, out: Console, err: Console) -> int:
    from hive_bridge.app import serve

    def say(text: str) -> None:
        out.print(text, highlight=False, markup=False)
        out.file.flush()

    def log(text: str) -> None:
        err.print(f"hive-bridge serve: {text}", highlight=False, markup=False)
        err.file.flush()

    try:
        return serve.run(args, _storage_options(args), say, log)
    except serve.ServeError as exc:
        raise UsageError(str(exc)) from None


def cmd_demo(args: argparse.Namespace, out: Console, err: Console) -> int:
    from hive_bridge.app.demo import run_demo

    return run_demo(out, err, rebuild=args.rebuild, verbose=args.verbose)


def _plain(text: str) -> str:
    """Docstring text for --help: reStructuredText markup (``code``, :role:`x`) as plain text."""
    text = re.sub(r":[a-z:]+:`~?([^`]+)`", r"\1", text)
    return re.sub(r"``(.+?)``", r"\1", text, flags=re.S)


def _doc_paragraphs() -> tuple[str | None, str | None]:
    """(description, epilog): this module's docstring, first paragraph and the rest, as plain text."""
    if not __doc__:
        return None, None
    first, _, rest = __doc__.strip().partition("\n\n")
    return _plain(first), (_plain(rest.strip()) or None)


def _source_args(p: argparse.ArgumentParser, stats: bool = False) -> None:
    """--listing (and --stats-source): where the listing and the statistics come from; --storage-option."""
    p.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                   help="object storage setting for a table URI (s3://, gs://, hdfs://), repeatable: e.g. "
                        "endpoint_override=http://127.0.0.1:9000, region=eu-west-1, access_key=..., "
                        "secret_key=...; credentials and endpoint otherwise come from the usual AWS_* variables")
    p.add_argument("--listing", choices=("auto", "mdt", "folders"), default="auto",
                   help="where the file listing comes from: the metadata table's files partition when it is usable "
                        "(auto, the default), or the partition folders")
    if stats:
        p.add_argument("--stats-source", choices=("auto", "mdt", "footers"), default="auto",
                       help="statistics of files the index lacks: the metadata table's column_stats where it has an "
                            "entry and footers/log blocks for the rest (auto), the metadata table only, or footers "
                            "only")


def _query_type_args(p: argparse.ArgumentParser, by_name: bool = False) -> None:
    p.add_argument("--query-type", type=_query_type_arg, default=None if by_name else "snapshot",
                   metavar="snapshot|read_optimized",
                   help="snapshot (default): base files merged with log files, judged by both; read_optimized: base "
                        "files only (Hive sync's <t>_ro)" + ("; a table read by name: as its input format / _ro or "
                                                             "_rt name says" if by_name else ""))


def build_parser() -> argparse.ArgumentParser:
    description, epilog = _doc_paragraphs()
    ap = argparse.ArgumentParser(prog="hive-bridge", description=description, epilog=epilog)
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="show Spark's start-up output and warnings (quiet by default)")
    sub = ap.add_subparsers(dest="command", required=True)
    # also accepted after the command; SUPPRESS keeps a global --verbose from being reset by the subcommand
    verbose = argparse.ArgumentParser(add_help=False)
    verbose.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                         help="show Spark's start-up output and warnings (quiet by default)")

    def command(name: str, text: str, spark: bool = False) -> argparse.ArgumentParser:
        text = _plain(text)
        return sub.add_parser(name, help=text, description=text[:1].upper() + text[1:] + ".",
                              parents=[verbose] if spark else [])

    p = command("replay", "find the filters in Hive/Spark logs and replay them against a Hudi table", spark=True)
    p.add_argument("--table", action="append", default=[], metavar="[NAME=]URI",
                   help="the Hudi table's folder or URI (s3://bucket/path, ...): every filter is replayed against "
                        "it; or NAME=URI (repeatable): scans of the table NAME (t, db.t) or under the location "
                        "NAME go to URI. Without --table, a scan's table is the folder holding .hoodie/ above its "
                        "location")
    p.add_argument("--metastore", default=None, metavar="thrift://HOST:PORT",
                   help="a Hive metastore: a scan's table name (db.t, Hive sync's _ro/_rt) resolved to its location")
    p.add_argument("logs", nargs="*", help="log files or folders: Spark event logs (any codec, rolled folders, a "
                                           "History Server's folder), text logs, files of filters (told by what "
                                           "they hold; gzip'd or not; default or '-': standard input)")
    p.add_argument("--filters", action="append", default=[], metavar="FILE",
                   help="a file of filters, one per line (HiveQL or a SearchArgument; blank lines and lines starting "
                        "# or -- are passed over): every other line is replayed or reported as failed with its "
                        "line (repeatable; '-': standard input)")
    p.add_argument("--json", action="store_true", help="JSON Lines: one object per table and distinct filter, "
                                                       "then a summary object")
    p.add_argument("--kept-files", action="store_true",
                   help="with --json, each filter's kept files in its object (\"kept\": paths relative to the "
                        "table); the filter-by-filter replay of one --table always lists them")
    p.add_argument("--html", default=None, metavar="PATH",
                   help="also write the report as one self-contained HTML page (opens offline): bytes read per "
                        "table, the costliest filters, columns, a heat map of the files read, what could not be "
                        "read")
    p.add_argument("--verify", action="store_true", help="read each filter pruned and unpruned with Spark")
    p.add_argument("--as-of", default=None, metavar="INSTANT",
                   help="replay against the table's state as of a completed instant or a time (time travel): "
                        "yyyyMMddHHmmssSSS, yyyyMMddHHmmss, 'yyyy-MM-dd HH:mm:ss[.SSS]' or yyyy-MM-dd, in the "
                        "table's timeline time zone (an archived instant is read from the archived timeline); an "
                        "instant that is unknown, pending, cleaned, before the first commit or in the future is an "
                        "error")
    p.add_argument("--spark", action="store_true",
                   help="read the event logs' applications on Spark executors in parallel (default master "
                        "local[2]); the same result as reading them here")
    p.add_argument("--master", default=None, metavar="URL", help="Spark master URL for --spark (implies it)")
    p.add_argument("--time-zone", default="UTC", help="session time zone for timestamp literals of text logs "
                                                      "(default UTC; event logs say their own)")
    _query_type_args(p)
    _source_args(p, stats=True)
    p.set_defaults(func=cmd_replay)

    p = command("advise", "which layout the logs' own filters would read least from, and the Hudi settings for it")
    p.add_argument("--table", action="append", default=[], metavar="[NAME=]URI",
                   help="the Hudi table to advise on (every filter of the logs goes to it), or NAME=URI "
                        "(repeatable) as replay takes it; without --table, every table the logs' scans resolve to")
    p.add_argument("--metastore", default=None, metavar="thrift://HOST:PORT",
                   help="a Hive metastore: a scan's table name resolved to its location")
    p.add_argument("logs", nargs="*", help="log files or folders, as replay reads them")
    p.add_argument("--filters", action="append", default=[], metavar="FILE",
                   help="a file of filters, one per line, as replay reads it (repeatable)")
    p.add_argument("--json", action="store_true", help="one JSON document: {\"advice\": [...], \"errors\": [...]}")
    p.add_argument("--html", default=None, metavar="PATH",
                   help="also write the workload report with the advisor's section as one self-contained HTML page "
                        "(plans every filter with the pruner, as replay --html does)")
    p.add_argument("--sample-rows", type=int, default=200_000, metavar="N",
                   help="rows per sample (default 200000); a table with fewer rows is read whole")
    p.add_argument("--samples", type=int, default=3, metavar="N",
                   help="independent samples, for the spread of the estimate (default 3)")
    p.add_argument("--target-file-bytes", type=int, default=None, metavar="BYTES",
                   help="the file size layouts are cut at and the clustering writes (default: the table's mean "
                        "base file size, or Hudi's 120 MiB when that mean is below Hudi's 100 MiB small-file limit)")
    p.add_argument("--seed", type=int, default=0, help="the first sample's random seed (default 0)")
    p.add_argument("--time-zone", default="UTC", help="session time zone for timestamp literals of text logs")
    _query_type_args(p)
    _source_args(p, stats=True)
    p.set_defaults(func=cmd_advise)

    p = command("explain", "a filter's SearchArgument, HudiExpression, a summary of the files' verdicts by reason, "
                           "and each file's verdict")
    p.add_argument("--table", required=True)
    p.add_argument("filter", help="SearchArgument text (any printed form) or HiveQL filter text")
    p.add_argument("--as-of", default=None, metavar="INSTANT",
                   help="plan the table's state as of a completed instant or a time (time travel): "
                        "yyyyMMddHHmmssSSS, yyyyMMddHHmmss, 'yyyy-MM-dd HH:mm:ss[.SSS]' or yyyy-MM-dd, in the "
                        "table's timeline time zone (an archived instant is read from the archived timeline); an "
                        "instant that is unknown, pending, cleaned, before the first commit or in the future is an "
                        "error")
    p.add_argument("--time-zone", default="UTC")
    p.add_argument("--files", type=_files_arg, default=None, metavar="N|all",
                   help=f"how many per-file verdicts to print, kept files first (default {DEFAULT_FILES_SHOWN}; "
                        "with --json all)")
    p.add_argument("--json", action="store_true",
                   help="one JSON document: the filter's forms, the counts, the summary and the per-file verdicts")
    _query_type_args(p)
    _source_args(p, stats=True)
    p.set_defaults(func=cmd_explain)

    p = command("read", "read a Hudi table through the pruned Hive-on-Spark path", spark=True)
    p.add_argument("--table", required=True, help="a folder, a Spark catalog table, or db.table with --metastore")
    p.add_argument("--filter", default=None,
                   help="SearchArgument text (any printed form) or HiveQL filter text; checked before Spark starts")
    p.add_argument("--metastore", default=None, help="thrift://host:port of a Hive metastore")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--limit", type=int, default=20)
    g.add_argument("--output", default=None, help="write the rows as parquet to this folder")
    _source_args(p)
    _query_type_args(p, by_name=True)
    p.set_defaults(func=cmd_read)

    p = command("index", "build or refresh the column-statistics index", spark=True)
    p.add_argument("--table", required=True)
    p.add_argument("--spark", action="store_true",
                   help="read the footers and log files the index lacks on Spark executors in parallel (default "
                        "master local[2]); the index holds the same rows as a local build")
    p.add_argument("--master", default=None, metavar="URL",
                   help="Spark master URL (implies --spark; default local[2]); on a cluster the table's files must "
                        "be readable by the executors at the paths the driver lists, and hive-bridge installed in "
                        "their Python")
    p.add_argument("--source", choices=("auto", "mdt", "footers"), default="auto",
                   help="for files the index lacks: the metadata table's column_stats where it has an entry, "
                        "footers and log blocks for the rest (auto); the metadata table only (mdt); footers and log "
                        "blocks only (footers)")
    p.add_argument("--rebuild", action="store_true",
                   help="forget the persisted index first (every file's statistics read again from --source)")
    _source_args(p)
    p.set_defaults(func=cmd_index)

    p = command("serve", "a HiveServer2 endpoint (Spark's Thrift Server) over the Hudi tables of lake folders and a "
                         "Hive metastore, for beeline, JDBC/ODBC and BI tools", spark=True)
    from hive_bridge.app.serve import add_arguments

    add_arguments(p)
    p.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                   help="object storage setting for lake URIs (s3://, gs://), repeatable, as the other commands "
                        "take them")
    p.set_defaults(func=cmd_serve)

    p = command("demo", "build a sample table, replay a sample log, compare pruned and full reads", spark=True)
    p.add_argument("--rebuild", action="store_true", help="rebuild the cached sample table")
    p.set_defaults(func=cmd_demo)
    return ap


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """The ``hive-bridge`` command. No credential in any output: all it prints (messages, tables, JSON, argparse's
    errors, warnings, log records) goes through :func:`~hive_bridge.redaction.redact`, and the credentials its
    arguments hold are hidden however a library quotes them (see :mod:`hive_bridge.redaction`)."""
    streams = [None if s is None else cast(TextIO, RedactingStream(s)) for s in (stdout, stderr)]
    with redacted_output(sys.argv[1:] if argv is None else argv):
        try:
            return _run(argv, streams[0], streams[1])
        finally:
            for stream in streams:
                if stream is not None:
                    stream.flush()


def _run(argv: Sequence[str] | None, stdout: TextIO | None, stderr: TextIO | None) -> int:
    args = build_parser().parse_args(argv)
    target = stdout or sys.stdout
    # a pipe or file gets wide lines (nothing to wrap for); a terminal gets its own width
    out = Console(file=target, soft_wrap=False, width=None if target.isatty() else 160)
    # messages are not wrapped at 80 columns in a pipe (a caret under a long log line stays under its column)
    err = Console(file=stderr or sys.stderr, stderr=stderr is None, soft_wrap=True)
    try:
        return int(args.func(args, out, err))
    except UsageError as exc:
        err.print(f"hive-bridge {args.command}: {exc}", highlight=False)
        return 2
    except HiveBridgeError as exc:
        err.print(f"hive-bridge {args.command}: {exc}", highlight=False)
        return 1
    except KeyboardInterrupt:
        err.print("interrupted", highlight=False)
        return 130
    except BrokenPipeError:  # e.g. `hive-bridge replay --json … | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
