"""Which Hudi table a scan read: from ``--table NAME=URI``, from its location, or from its name in a metastore.

A location inside a table (a partition folder, a data file) belongs to the table whose folder above holds
``.hoodie/hoodie.properties``; ``s3a://`` and ``s3n://`` are ``s3://``; ``file:/x`` is ``/x``. Answers are
cached per folder, so a folder is looked at once however many scans name it. No output of this module holds a
URI's user info (``scheme://user:secret@host``): :func:`~hive_bridge.redaction.redact` removes it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hive_bridge.redaction import AZURE_SCHEMES, split_userinfo

# the one redaction, used here and by this package's outputs
from hive_bridge.redaction import redact as redact


def normalize_location(location: str) -> str:
    """A printed Spark/Hadoop path as hive-bridge names it: ``file:`` dropped, ``s3a``/``s3n`` as ``s3``, without
    user info (``s3a://key:secret@bucket/t`` is ``s3://bucket/t``: a log's credentials are neither kept nor used;
    Azure's ``container@account`` stays)."""
    loc = location.strip()
    if not loc.lower().startswith(tuple(f"{scheme}://" for scheme in AZURE_SCHEMES)):
        loc = split_userinfo(loc)[0]
    if loc.startswith("file://"):
        loc = loc[len("file://"):]
        if not loc.startswith("/"):
            loc = "/" + loc
    elif loc.startswith("file:"):
        loc = loc[len("file:"):]
    for scheme in ("s3a://", "s3n://"):
        if loc.startswith(scheme):
            loc = "s3://" + loc[len(scheme):]
    return loc.rstrip("/") or "/"


def _parents(location: str) -> list[str]:
    """``location`` and each folder above it, nearest first (not above a bucket/authority)."""
    m = re.match(r"^([A-Za-z][\w+.-]*://[^/]*)(/.*)?$", location)
    root, path = (m.group(1), m.group(2) or "") if m else ("", location)
    parts = [p for p in path.split("/") if p]
    out = []
    for i in range(len(parts), 0, -1):
        out.append(root + "/" + "/".join(parts[:i]))
    return out


def _local_is_table(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, ".hoodie", "hoodie.properties"))


@dataclass
class TableResolver:
    """Resolves scans to table URIs. ``named``: ``NAME=URI`` pairs (NAME a table name — ``t``, ``db.t`` — or a
    location prefix); ``default``: the one ``--table URI`` every scan goes to; ``metastore``: a callable giving
    the location of ``db.t`` (or None); ``is_table``: whether a remote folder holds a Hudi table."""

    named: Mapping[str, str] = field(default_factory=dict)
    default: str | None = None
    metastore: Callable[[str], str | None] | None = None
    is_table: Callable[[str], bool] | None = None
    _cache: dict[str, str | None] = field(default_factory=dict)

    def resolve(self, table_name: str | None, locations: Sequence[str]) -> str | None:
        """The table URI of a scan of ``table_name`` (may be None) over ``locations`` (printed paths)."""
        if self.default is not None:
            return self.default
        if table_name:
            for candidate in _name_forms(table_name):
                if candidate in self.named:
                    return self.named[candidate]
        for loc in locations:
            norm = normalize_location(loc)
            for key, uri in self.named.items():
                k = normalize_location(key)
                if ("/" in key or ":" in key) and (norm == k or norm.startswith(k.rstrip("/") + "/")):
                    return uri
            found = self._resolve_location(norm)
            if found is not None:
                return found
        if table_name and self.metastore is not None:
            for candidate in _name_forms(table_name):
                if "." in candidate:
                    where = self.metastore(candidate)
                    if where:
                        return self._resolve_location(normalize_location(where)) or normalize_location(where)
        return None

    def _resolve_location(self, location: str) -> str | None:
        if location in self._cache:
            return self._cache[location]
        found: str | None = None
        local = "://" not in location
        for folder in _parents(location):
            if folder in self._cache:
                found = self._cache[folder]
                break
            try:
                hit = _local_is_table(folder) if local else bool(self.is_table and self.is_table(folder))
            except OSError:
                hit = False
            if hit:
                found = folder
                self._cache[folder] = folder
                break
        self._cache[location] = found
        return found


def _name_forms(name: str) -> list[str]:
    """``spark_catalog.db.t`` -> the names it may be given by: itself, ``db.t``, ``t``; then, for Hive sync's
    ``t_ro`` / ``t_rt`` (views of the table ``t``), the same without the suffix."""
    parts = name.strip("`").lower().split(".")
    forms = [".".join(parts[i:]) for i in range(len(parts))]
    if parts and parts[0] == "spark_catalog":
        forms = forms[1:] + forms[:1]
    if parts and parts[-1].endswith(("_ro", "_rt")):
        forms += [f[:-3] for f in forms]
    return forms


def parse_table_args(values: Sequence[str]) -> tuple[dict[str, str], str | None]:
    """``--table`` values: ``NAME=URI`` pairs and at most one plain URI (every scan's table)."""
    named: dict[str, str] = {}
    default: str | None = None
    for v in values:
        name, sep, uri = v.partition("=")
        if sep and name and uri and "://" not in name:
            name = name.strip()
            named[name if "/" in name or ":" in name else name.lower()] = uri.strip()
        elif default is None:
            default = v
        else:
            raise ValueError(f"--table {redact(v)}: only one --table may be given without NAME=")
    return named, default


def metastore_locator(uri: str) -> Callable[[str], str | None]:
    """``db.t`` -> its location in the Hive metastore at ``uri`` (None when it has no such table or cannot be
    asked; Hive sync registers ``t``, ``t_ro`` and ``t_rt`` at the same location). One connection, answers
    cached."""
    from hive_bridge.hive import MetastoreClient, MetastoreError

    cache: dict[str, str | None] = {}
    client: list[Any] = []

    def locate(name: str) -> str | None:
        if name in cache:
            return cache[name]
        db, _, table = name.rpartition(".")
        found: str | None = None
        try:
            if not client:
                client.append(MetastoreClient(uri).__enter__())
            found = client[0].get_table(db or "default", table).location
        except (MetastoreError, OSError):
            found = None
        except Exception:  # a thrift transport error: the metastore cannot be asked, the scan stays unresolved
            found = None
        cache[name] = found
        return found

    return locate
