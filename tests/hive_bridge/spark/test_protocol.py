"""The JVM file index and the Python planner speak one protocol: every fixed form equal on both sides
(``Protocol.java`` and ``hive_bridge/spark/protocol.py``), each side's requests read by the other, each side's
answers read by the other, awkward values (tabs, newlines, ``%``, non-ASCII, NUL, nulls) intact."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hive_bridge.spark import protocol
from hive_bridge.spark.file_index import attach
from hive_bridge.spark.jar import JVM_PACKAGE

AWKWARD = ["plain", "a b", "tab\there", "per%cent", "ünïcödé ✓", "slash/and:colon", "semi;comma,", ""]


@pytest.fixture(scope="module")
def jvm_protocol(spark: Any) -> Any:
    attach(spark)   # the product's jar on the driver's class path
    return getattr(spark._jvm, JVM_PACKAGE).Protocol


def test_every_fixed_form_is_the_same_on_both_sides(jvm_protocol: Any) -> None:
    assert json.loads(jvm_protocol.forms()) == protocol.forms()


def test_the_jvm_s_requests_are_read_here(spark: Any, jvm_protocol: Any) -> None:
    options = {"path": "s3a://bucket/t a%b", "hoodie.query.type": "snapshot", "weird\tkey": "line\nbreak ✓"}
    jmap = spark._jvm.java.util.HashMap()
    for k, v in options.items():
        jmap.put(k, v)
    opened = protocol.read_request(jvm_protocol.openRequest(jmap, "America/Los_Angeles"))
    assert opened.verb == protocol.OPEN
    got = opened.options()
    assert got.pop(protocol.TIME_ZONE_OPTION) == "America/Los_Angeles" and got == options
    filters = '[{"op":"eq","a":"id","v":{"t":"int","v":5}}]'
    plan = protocol.read_request(jvm_protocol.planRequest("17", filters))
    assert (plan.verb, plan.arg, plan.filters()) == (protocol.PLAN, "17", json.loads(filters))
    assert protocol.read_request(jvm_protocol.planRequest("3", "[]")).filters() == []
    named = protocol.read_request(jvm_protocol.planRequest("17", "stmt-1\tx", filters))
    assert (named.pin, named.statement, named.filters()) == ("17", "stmt-1 x", json.loads(filters))
    assert (plan.pin, plan.statement) == ("17", None)
    assert jvm_protocol.planRequest("17", None, filters) == jvm_protocol.planRequest("17", filters)
    assert protocol.plan_request("17", filters, "s") == jvm_protocol.planRequest("17", "s", filters)
    refresh = protocol.read_request(jvm_protocol.refreshRequest("9"))
    assert (refresh.verb, refresh.arg) == (protocol.REFRESH, "9")
    # and what this side builds for tests is what the JVM sends
    assert protocol.plan_request("17", filters) == jvm_protocol.planRequest("17", filters)
    assert protocol.refresh_request("9") == jvm_protocol.refreshRequest("9")


def test_the_answers_made_here_are_read_by_the_jvm(jvm_protocol: Any) -> None:
    opened = protocol.Opened("42", "file:/data/t", '{"type":"struct","fields":[]}', '{"type":"struct","fields":[]}',
                             123456789012)
    read = json.loads(jvm_protocol.Opened.of(jvm_protocol.lines(opened.answer())).json())
    assert read == {"pin": "42", "root": "file:/data/t", "dataSchema": opened.data_schema,
                    "partitionSchema": opened.partition_schema, "sizeInBytes": "123456789012"}
    assert jvm_protocol.errorMessage(protocol.OK) is None
    for message in AWKWARD:
        answer = protocol.error(message + "\nsecond line")
        assert jvm_protocol.errorMessage(jvm_protocol.lines(answer)[0]) == (message or "second line")
    assert jvm_protocol.errorMessage(jvm_protocol.lines(protocol.error(""))[0]) == "error"
    assert jvm_protocol.spooledFile(protocol.spooled("/tmp/x/hive-bridge-answer-1.txt")) == \
        "/tmp/x/hive-bridge-answer-1.txt"
    assert jvm_protocol.spooledFile(protocol.OK + "\n" + protocol.file_line("file:/a", 1, 2)) is None


def test_partition_and_file_lines_keep_every_value(spark: Any, jvm_protocol: Any) -> None:
    values: list[str | None] = [*AWKWARD, None]
    line = protocol.partition_line(values)
    assert "\n" not in line
    cols = line.split(protocol.SEP)
    assert cols[0] == protocol.PARTITION
    jcols = spark.sparkContext._gateway.new_array(spark._jvm.java.lang.String, len(cols))
    for i, c in enumerate(cols):
        jcols[i] = c
    assert list(jvm_protocol.partitionValues(jcols)) == values
    for path in ["/data/t/day=2024-01-01/f 1%.parquet", "/data/t/ü/a\tb.parquet", "s3a://bucket/k ey/x#y?.parquet"]:
        fields = protocol.file_line(protocol.file_uri(path), 10, 20).split(protocol.SEP)
        assert fields[0] == protocol.FILE_LINE and fields[2:] == ["10", "20"]
        uri = spark._jvm.java.net.URI(fields[1])
        got = uri.getPath() if "://" not in path else f"{uri.getScheme()}://{uri.getAuthority()}{uri.getPath()}"
        assert got == path
