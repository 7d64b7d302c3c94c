"""Lets PySpark find the ``hudi-hive`` data source without ``register()``: PySpark imports every top-level
``pyspark_*`` module on the Python path and registers its ``DefaultSource``."""

from hive_bridge.spark.datasource import HudiHiveDataSource as DefaultSource

__all__ = ["DefaultSource"]
