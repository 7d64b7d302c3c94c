"""Run Hive's own SearchArgument classes (``HiveSargOracle.java`` against pyspark's jars) and read their answers.

The Java source is compiled once per test session into a pytest temporary folder; every run is one JVM that
prints one JSON object per line (see the Java file for the modes and the literal encoding).
"""

from __future__ import annotations

import datetime as dt
import json
import struct
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property
from pathlib import Path
from typing import Any

import sarg
from sarg import Literal, Timestamp, TruthValue, Type

SOURCE = Path(__file__).with_name("HiveSargOracle.java")
MAIN_CLASS = "HiveSargOracle"
JVM_FLAGS = ("-Duser.timezone=UTC", "-Xss16m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")

# The column names HiveSargOracle.java uses, with their SARG types (one schema fits every generated SARG).
COLUMNS: dict[str, Type] = {
    "id": Type.LONG, "n": Type.LONG, "s1.count": Type.LONG, "_col0": Type.LONG,
    "f": Type.FLOAT, "price": Type.FLOAT, "s1.ratio": Type.FLOAT,
    "name": Type.STRING, "s": Type.STRING, "s1.label": Type.STRING, "Title": Type.STRING,
    "d": Type.DATE, "day": Type.DATE,
    "amount": Type.DECIMAL, "dec": Type.DECIMAL,
    "ts": Type.TIMESTAMP, "s1.at": Type.TIMESTAMP,
    "flag": Type.BOOLEAN, "b": Type.BOOLEAN,
}
# The same schema with Hive type names, and as the struct string Spark's ORC reader logs (nested struct s1).
HIVE_NAMES: dict[str, str] = {
    "id": "bigint", "n": "int", "s1.count": "smallint", "_col0": "tinyint",
    "f": "double", "price": "float", "s1.ratio": "double",
    "name": "string", "s": "varchar(10)", "s1.label": "char(5)", "Title": "string",
    "d": "date", "day": "date", "amount": "decimal(10,2)", "dec": "decimal(38,18)",
    "ts": "timestamp", "s1.at": "timestamp", "flag": "boolean", "b": "boolean",
}
STRUCT_SCHEMA = (
    "struct<id:bigint,n:int,_col0:tinyint,f:double,price:float,name:string,s:varchar(10),Title:string,"
    "d:date,day:date,amount:decimal(10,2),dec:decimal(38,18),ts:timestamp,flag:boolean,b:boolean,"
    "s1:struct<count:smallint,ratio:double,label:char(5),at:timestamp>>"
)


def decode_literal(type_: Type, raw: Any) -> Literal | None:
    """A typed literal from the oracle's lossless JSON encoding."""
    if raw is None:
        return None
    if type_ is Type.LONG:
        return int(raw)
    if type_ is Type.FLOAT:
        return float(struct.unpack("<d", struct.pack("<q", int(raw)))[0])
    if type_ is Type.STRING:
        return str(raw)
    if type_ is Type.DATE:
        return dt.date.fromisoformat(raw)
    if type_ is Type.DECIMAL:
        return Decimal(raw)
    if type_ is Type.TIMESTAMP:
        return Timestamp(int(raw[0]), int(raw[1]))
    if type_ is Type.BOOLEAN:
        assert isinstance(raw, bool)
        return raw
    raise AssertionError(type_)


def encode_literal(type_: Type, value: Literal | None) -> Any:
    """The oracle's JSON encoding of a Python literal (for script mode)."""
    if value is None:
        return None
    if type_ is Type.LONG:
        return str(value)
    if type_ is Type.FLOAT:
        assert isinstance(value, float)
        return str(struct.unpack("<q", struct.pack("<d", value))[0])
    if type_ in (Type.STRING, Type.DATE, Type.DECIMAL):
        return str(value)
    if type_ is Type.TIMESTAMP:
        assert isinstance(value, Timestamp)
        return [value.seconds, value.nanos]
    return value


def java_key(value: Literal | None) -> object:
    """Equality with Java's semantics and the exact class: Double.equals (NaN equal, -0.0 unlike 0.0),
    HiveDecimal by value."""
    from sarg.literals import literal_key

    return (type(value).__name__, literal_key(value))


@dataclass(frozen=True)
class JavaLeaf:
    operator: sarg.Operator
    type: Type
    column: str
    literal: Literal | None
    literals: tuple[Literal | None, ...] | None

    @classmethod
    def from_json(cls, raw: Sequence[Any]) -> JavaLeaf:
        op, type_name, column, literal, literals = raw
        type_ = Type[type_name]
        return cls(sarg.Operator[op], type_, column, decode_literal(type_, literal),
                   None if literals is None else tuple(decode_literal(type_, v) for v in literals))

    def matches(self, leaf: sarg.PredicateLeaf) -> bool:
        """Same operator, type, column and literal(s), compared as Java compares them."""
        if (leaf.operator, leaf.type, leaf.column) != (self.operator, self.type, self.column):
            return False
        if java_key(leaf.literal) != java_key(self.literal):
            return False
        if (leaf.literals is None) != (self.literals is None):
            return False
        if self.literals is None or leaf.literals is None:
            return True
        return [java_key(v) for v in leaf.literals] == [java_key(v) for v in self.literals]


@dataclass(frozen=True)
class Case:
    """One SearchArgument built by Hive: the calls, both printed forms, the leaves, evaluate() samples."""

    script: list[list[Any]]
    new: str | None
    old: str | None
    raw_leaves: list[list[Any]]
    evals: list[tuple[list[str], str]]
    error: str | None

    @classmethod
    def from_json(cls, line: str) -> Case:
        raw = json.loads(line)
        return cls(raw["script"], raw.get("new"), raw.get("old"), raw.get("leaves", []),
                   [(vs, r) for vs, r in raw.get("evals", [])], raw.get("error"))

    @cached_property
    def leaves(self) -> list[JavaLeaf]:
        return [JavaLeaf.from_json(raw) for raw in self.raw_leaves]

    def evaluations(self) -> Iterable[tuple[list[TruthValue], TruthValue]]:
        for values, result in self.evals:
            yield [TruthValue[v] for v in values], TruthValue[result]


def replay(script: Sequence[Sequence[Any]]) -> sarg.SearchArgument:
    """Run the oracle's builder calls through ``sarg.builder()``."""
    b = sarg.builder()
    for call in script:
        name = call[0]
        if name == "startAnd":
            b.start_and()
        elif name == "startOr":
            b.start_or()
        elif name == "startNot":
            b.start_not()
        elif name == "end":
            b.end()
        elif name == "literal":
            b.literal(TruthValue[call[1]])
        else:
            column, type_ = call[1], Type[call[2]]
            if name == "isNull":
                b.is_null(column, type_)
            elif name == "in":
                b.in_(column, type_, *(decode_literal(type_, v) for v in call[3]))
            elif name == "between":
                b.between(column, type_, decode_literal(type_, call[3]), decode_literal(type_, call[4]))
            else:
                method = {"equals": b.equals, "nullSafeEquals": b.null_safe_equals,
                          "lessThan": b.less_than, "lessThanEquals": b.less_than_equals}[name]
                method(column, type_, decode_literal(type_, call[3]))
    return b.build()


class HiveOracle:
    """The compiled oracle: ``truth_tables()``, ``random(seed, count)``, ``scripts([...])``."""

    def __init__(self, java: str, classpath: str) -> None:
        self.java = java
        self.classpath = classpath

    def _run(self, *args: str, stdin: str | None = None) -> list[str]:
        proc = subprocess.run([self.java, *JVM_FLAGS, "-cp", self.classpath, MAIN_CLASS, *args],
                              input=stdin, capture_output=True, text=True, encoding="utf-8", timeout=300,
                              check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"HiveSargOracle {' '.join(args)} failed:\n{proc.stderr[-4000:]}")
        return [line for line in proc.stdout.splitlines() if line.strip()]

    def truth_tables(self) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self._run("truth")[0])
        return result

    def random(self, seed: int, count: int) -> list[Case]:
        return [Case.from_json(line) for line in self._run("random", str(seed), str(count))]

    def scripts(self, scripts: Sequence[Sequence[Sequence[Any]]]) -> list[Case]:
        text = "".join(json.dumps(s, ensure_ascii=True) + "\n" for s in scripts)
        return [Case.from_json(line) for line in self._run("script", stdin=text)]


_COMPILED: dict[tuple[str, str], HiveOracle] = {}


def compile_oracle(javac: str, java: str, jars: Path, workdir: Path) -> HiveOracle:
    """javac HiveSargOracle.java into ``workdir`` (once per session) against pyspark's jars."""
    key = (javac, str(jars))
    if key not in _COMPILED:
        storage_api = sorted(jars.glob("hive-storage-api-*.jar"))
        # hive-storage-api first: it is the one jar that must answer for org.apache.hadoop.hive.ql.io.sarg
        classpath = ":".join([*(str(j) for j in storage_api), str(jars / "*")])
        proc = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-d", str(workdir), "-cp", classpath,
                               str(SOURCE)], capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"javac failed:\n{proc.stderr[-4000:]}")
        _COMPILED[key] = HiveOracle(java, f"{workdir}:{classpath}")
    return _COMPILED[key]
