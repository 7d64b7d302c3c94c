"""The text the JVM file index and the Python planner exchange: every request and answer form, in one place on
this side (``java/.../Protocol.java`` is the one place on the other; ``tests/hive_bridge/spark/
test_protocol.py`` checks that the two agree).

Requests (JVM -> Python), one line of head, then an optional body:

- ``open<TAB><options as JSON>``: open a table for a relation; the options are the data source's, with the
  session's time zone under :data:`TIME_ZONE_OPTION`.
- ``plan<TAB><pin>[<TAB><statement>]`` (the statement: the scanning thread's Spark job group, which Spark's
  Thrift Server sets to the statement id) and a body of Spark's data source filters as JSON (``Protocol.filter``): the files one scan
  of the relation ``pin`` reads.
- ``refresh<TAB><pin>``: the relation reads the table's current state from now on.

Answers (Python -> JVM): ``OK`` and its lines, or ``ERR<TAB><message, percent-encoded>``; a long answer is
``FILE<TAB><path>`` of a file of the planner's private answer folder holding it.

- ``open``: ``OK``, then one line each: the pin, the table's root URI, the data schema and the partition
  schema as Spark's JSON, the size of the latest base files in bytes (:class:`Opened`).
- ``plan``: ``OK``, then per partition a ``P`` line (the partition's values, percent-encoded, ``\\N`` for null)
  followed by its ``F`` lines (a file's URI, size in bytes, modification time in ms).
- ``refresh``: ``OK``.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

OPEN, PLAN, REFRESH = "open", "plan", "refresh"
VERBS = (OPEN, PLAN, REFRESH)
OK, ERR, FILE = "OK", "ERR", "FILE"
#: the heads of a plan answer's lines: a partition's values, one file
PARTITION, FILE_LINE = "P", "F"
#: a null partition value
NULL = "\\N"
#: the open request's option that carries the session's time zone (no data source option can start with NUL)
TIME_ZONE_OPTION = "\0timeZone"
SEP = "\t"


def quote(text: str) -> str:
    """A field of an answer line, percent-encoded (``URLDecoder.decode`` on the JVM reads it back)."""
    return urllib.parse.quote(text, safe="/:")


@dataclass(frozen=True)
class Request:
    """One request as the planner reads it."""

    verb: str
    arg: str
    body: str

    def options(self) -> dict[str, str]:
        """An open request's options (the time zone left in, under :data:`TIME_ZONE_OPTION`)."""
        found = json.loads(self.arg)
        if not isinstance(found, dict):
            raise ValueError(f"an open request's options are not a JSON object: {self.arg[:200]!r}")
        return {str(k): str(v) for k, v in found.items()}

    @property
    def pin(self) -> str:
        """A plan or refresh request's relation."""
        return self.arg.partition(SEP)[0]

    @property
    def statement(self) -> str | None:
        """A plan request's statement (the scanning thread's Spark job group), if the JVM named one."""
        return self.arg.partition(SEP)[2] or None

    def filters(self) -> list[dict[str, Any]]:
        """A plan request's filters."""
        found = json.loads(self.body or "[]")
        if not isinstance(found, list):
            raise ValueError(f"a plan request's filters are not a JSON list: {self.body[:200]!r}")
        return found


def read_request(text: str) -> Request:
    head, _, body = text.partition("\n")
    verb, _, arg = head.partition(SEP)
    return Request(verb, arg, body)


def open_request(options: Mapping[str, str], time_zone: str) -> str:
    """What the JVM sends to open a table (built here for tests; ``Protocol.openRequest`` on the JVM)."""
    return OPEN + SEP + json.dumps({**options, TIME_ZONE_OPTION: time_zone})


def plan_request(pin: str, filters_json: str = "[]", statement: str | None = None) -> str:
    if statement:
        return PLAN + SEP + pin + SEP + statement + "\n" + filters_json
    return PLAN + SEP + pin + "\n" + filters_json


def refresh_request(pin: str) -> str:
    return REFRESH + SEP + pin


def error(message: str) -> str:
    """An error answer: the message's first line that says something (the JVM throws it as the query's error)."""
    first = next((line for line in message.splitlines() if line.strip()), "error")
    return ERR + SEP + quote(first)


def spooled(path: str) -> str:
    """The answer that says "read the answer from this file"."""
    return FILE + SEP + path


@dataclass(frozen=True)
class Opened:
    """The answer to ``open``."""

    pin: str
    root: str
    data_schema: str
    partition_schema: str
    size_in_bytes: int

    def answer(self) -> str:
        return "\n".join([OK, self.pin, self.root, self.data_schema, self.partition_schema,
                          str(self.size_in_bytes)])


def partition_line(values: Sequence[str | None]) -> str:
    """A plan answer's line of one partition's values (None: null)."""
    return SEP.join([PARTITION, *(NULL if v is None else quote(v) for v in values)])


def file_line(uri: str, size: int, mtime_ms: int) -> str:
    """A plan answer's line of one file (``uri`` as :func:`file_uri` makes it)."""
    return f"{FILE_LINE}{SEP}{uri}{SEP}{size}{SEP}{mtime_ms}"


#: the characters a URI's path holds as they are (RFC 3986 pchar and "/"): a file's URI keeps them, as Hadoop's
#: ``Path`` does, and percent-encodes the rest (spaces, "%", tabs, newlines, non-ASCII)
_URI_SAFE = "/:@!$&'()*+,;="


def file_uri(path: str) -> str:
    """A file's location as a URI string (what Java's ``new URI`` parses without decoding anything first)."""
    if "://" in path:
        scheme, _, rest = path.partition("://")
        authority, slash, key = rest.partition("/")
        return f"{scheme}://{authority}{slash}{urllib.parse.quote(key, safe=_URI_SAFE)}"
    return "file:" + urllib.parse.quote(path.removeprefix("file:"), safe=_URI_SAFE)


def forms() -> dict[str, str]:
    """Every fixed form of the protocol by name (what ``Protocol.forms()`` on the JVM must equal)."""
    return {"open": OPEN, "plan": PLAN, "refresh": REFRESH, "ok": OK, "err": ERR, "file": FILE,
            "partition": PARTITION, "fileLine": FILE_LINE, "null": NULL, "timeZoneOption": TIME_ZONE_OPTION,
            "sep": SEP}
