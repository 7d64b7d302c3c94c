"""One error type per layer; every user-facing error derives from HiveBridgeError."""

from __future__ import annotations

from hive_bridge.redaction import redact


class HiveBridgeError(Exception):
    """Base of every error hive_bridge raises on purpose (bad input, damaged table, failed server). Its message
    never shows a credential: ``str()`` and ``repr()`` redact it (a URI's user info, a library's message quoting
    it; see :mod:`hive_bridge.redaction`)."""

    def __str__(self) -> str:
        return redact(super().__str__())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


class HudiTableError(HiveBridgeError):
    """A Hudi table folder is missing, damaged or unsupported; the message names the file and says why."""


class MetadataTableError(HudiTableError):
    """The metadata table (or the partition a query needs) is not available, or turned out unreadable."""
