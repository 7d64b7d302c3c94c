"""hive-bridge: Hive SearchArguments that prune Hudi tables by column statistics, read with Spark."""

from hive_bridge.errors import HiveBridgeError

__all__ = ["HiveBridgeError"]
__version__ = "0.1.0"
