"""The one error type of the Hudi table layer."""

from __future__ import annotations

from hive_bridge.errors import HiveBridgeError


class HudiTableError(HiveBridgeError):
    """A Hudi table folder is missing, damaged or unsupported; the message names the file and says why."""
