"""Spark session settings changed for a while and put back: the one helper the Spark test modules share."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any


@contextmanager
def session_conf(spark: Any, settings: Mapping[str, str], *, keep: tuple[str, ...] = ()) -> Iterator[None]:
    """Set `settings` in the session; afterwards every one of them and of `keep` (settings something inside may
    change, e.g. ``register``) is back to what it was (unset if it was unset)."""
    old = {key: spark.conf.get(key, None) for key in (*settings, *keep)}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
