"""Every setting of hive-bridge in one place, and one call that clears every process-wide cache.

Settings come from the environment, read each time they are asked for (never at import time, so a program may
set them after importing hive_bridge; a cache's size is read when the cache is made):

===============================  ===============================  ==================================================
variable                         default                          meaning
===============================  ===============================  ==================================================
``HIVE_BRIDGE_CACHE``            ``$XDG_CACHE_HOME/hive-bridge``  local folder for the demo table and the
                                 (else ``~/.cache/hive-bridge``)  statistics index of tables on object storage
``HIVE_BRIDGE_SNAPSHOTS``        4                                tables whose planning state a process keeps
``HIVE_BRIDGE_MDT_CACHE_MB``     512                              decoded metadata-table column statistics kept in
                                                                  memory, in MiB
``HIVE_BRIDGE_SCAN_REPORTS``     ``$XDG_CACHE_HOME/hive-bridge/   folder of the Spark data source's scan reports:
                                 scans`` (else ``~/.cache/hive-   private, created 0700; refused when it is a
                                 bridge/scans``)                  link, another user's, or writable by others
``HIVE_BRIDGE_PINS``             512                              table states the Spark file index keeps pinned
                                                                  for the DataFrames that read them
``HIVE_BRIDGE_JAVA_SRC``         ``java/`` of the checkout, else  the Java source the Spark file index's jar is
                                 the installed package's copy     built from
``HIVE_BRIDGE_MERGED_CACHE_MB``  2048                             merged merge-on-read slices the Spark file index
                                                                  keeps on disk (``<cache>/merged``), in MiB; the
                                                                  least recently used files no scan may still read
                                                                  are deleted past it
``HIVE_BRIDGE_COUNT_NANS``       ``false``                        when the index reads a footer that gives no NaN
                                                                  count for a float/double column, count the NaN
                                                                  in that column's values (reads those column
                                                                  chunks; ``false``: unknown)
``HIVE_BRIDGE_FLOAT_PROOFS``     1000                             file reads a plan may make to prove a float
                                                                  or double column's facts (NaN count, exact
                                                                  bounds) in files kept only for lack of them:
                                                                  base files' columns, log files' data blocks
                                                                  (``hive_bridge.pruning.float_proofs``; 0: off,
                                                                  facts remembered earlier unused too)
``HIVE_BRIDGE_FLOAT_PROOF_MB``   256                              column chunks and log files those reads may
                                                                  fetch per plan, in MiB (files past it are kept
                                                                  and counted)
``HIVE_BRIDGE_S3_MAX_ATTEMPTS``  5                                attempts of one S3 request by the planner's file
                                                                  system (the first and its retries) when the
                                                                  server throttles (503 SlowDown), fails (500) or
                                                                  cannot be reached; storage option
                                                                  ``max_attempts`` per table
HIVE_BRIDGE_S3_CONNECT_TIMEOUT   5                                seconds the planner's S3 file system waits for a
                                                                  connection (storage option ``connect_timeout``)
HIVE_BRIDGE_S3_REQUEST_TIMEOUT   30                               seconds an S3 request may go without receiving
                                                                  a byte (storage option ``request_timeout``)
===============================  ===============================  ==================================================

Caches register themselves with :func:`register_cache` when their module is imported; :func:`clear_caches`
empties all of them (tests, long-running processes that want the memory back, or a table rewritten in place
with the same file names, sizes and timeline).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hive_bridge.errors import HiveBridgeError

__all__ = ["ConfigError", "Settings", "clear_caches", "register_cache", "registered_caches", "settings"]


class ConfigError(HiveBridgeError):
    """A setting's value cannot be used; the message names the variable and the value."""


@dataclass(frozen=True)
class Settings:
    """The settings in effect (see the module's table)."""

    cache_root: Path
    snapshots: int
    mdt_cache_bytes: int
    scan_reports: Path
    pins: int
    java_src: Path | None
    merged_cache_bytes: int
    count_nans: bool = False
    float_proofs: int = 1000
    float_proof_bytes: int = 256 * 2**20
    s3_max_attempts: int = 5
    s3_connect_timeout: float = 5.0
    s3_request_timeout: float = 30.0


def _int(name: str, default: int, minimum: int) -> int:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        value = int(text.strip())
    except ValueError:
        raise ConfigError(f"{name}={text!r} is not a whole number") from None
    if value < minimum:
        raise ConfigError(f"{name}={text!r} is below {minimum}")
    return value


def _seconds(name: str, default: float) -> float:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        value = float(text.strip())
    except ValueError:
        raise ConfigError(f"{name}={text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise ConfigError(f"{name}={text!r} is not a positive number of seconds")
    return value


def _bool(name: str, default: bool) -> bool:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name}={text!r} is not true or false")


def settings() -> Settings:
    """The settings, read from the environment now."""
    own = os.environ.get("HIVE_BRIDGE_CACHE")
    user_cache = Path(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"))
    root = Path(own) if own else user_cache / "hive-bridge"
    # not under HIVE_BRIDGE_CACHE, which a process may set for itself after its Spark workers started: the driver
    # and the workers of a local session find the same folder
    reports = os.environ.get("HIVE_BRIDGE_SCAN_REPORTS") or user_cache / "hive-bridge" / "scans"
    return Settings(
        cache_root=root,
        snapshots=_int("HIVE_BRIDGE_SNAPSHOTS", 4, 1),
        mdt_cache_bytes=_int("HIVE_BRIDGE_MDT_CACHE_MB", 512, 0) * 2**20,
        scan_reports=Path(reports),
        pins=_int("HIVE_BRIDGE_PINS", 512, 1),
        java_src=Path(os.environ["HIVE_BRIDGE_JAVA_SRC"]) if os.environ.get("HIVE_BRIDGE_JAVA_SRC") else None,
        merged_cache_bytes=_int("HIVE_BRIDGE_MERGED_CACHE_MB", 2048, 0) * 2**20,
        count_nans=_bool("HIVE_BRIDGE_COUNT_NANS", False),
        float_proofs=_int("HIVE_BRIDGE_FLOAT_PROOFS", 1000, 0),
        float_proof_bytes=_int("HIVE_BRIDGE_FLOAT_PROOF_MB", 256, 0) * 2**20,
        s3_max_attempts=_int("HIVE_BRIDGE_S3_MAX_ATTEMPTS", 5, 1),
        s3_connect_timeout=_seconds("HIVE_BRIDGE_S3_CONNECT_TIMEOUT", 5.0),
        s3_request_timeout=_seconds("HIVE_BRIDGE_S3_REQUEST_TIMEOUT", 30.0),
    )


_lock = threading.Lock()
_caches: dict[str, Callable[[], None]] = {}


def register_cache(name: str, clear: Callable[[], None]) -> None:
    """Make a process-wide cache known to :func:`clear_caches` (``name``: the module and what it keeps)."""
    with _lock:
        _caches[name] = clear


def registered_caches() -> list[str]:
    """The names of the caches :func:`clear_caches` empties."""
    with _lock:
        return sorted(_caches)


def clear_caches() -> None:
    """Empty every process-wide cache: table snapshots, listings, decoded metadata-table files and statistics,
    footer column plans, storage handles made from the environment."""
    with _lock:
        clears = list(_caches.values())
    for clear in clears:
        clear()
