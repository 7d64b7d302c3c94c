"""hive-bridge: Hive SearchArguments that prune Hudi tables by column statistics, read with Spark.

The package is in layers, bottom first (``tests/architecture/test_layers.py`` checks them): ``errors``,
``config`` and ``redaction``; ``storage`` (where bytes live); ``formats`` (file byte layouts); ``layout`` (Hudi's table layout);
``mdt`` (the metadata table); ``table`` (the ``HudiTable`` facade); ``stats`` (the statistics index);
``filters`` (typemap, expression, residual); ``pruning``; ``hive`` (handler, metastore); ``spark``;
``workload`` (log sources for replay); ``advisor``; ``app`` (the command). ``testing`` holds the test writers and encoders.
"""

from hive_bridge.errors import HiveBridgeError, HudiTableError, MetadataTableError

__all__ = ["HiveBridgeError", "HudiTableError", "MetadataTableError"]
__version__ = "0.1.0"
