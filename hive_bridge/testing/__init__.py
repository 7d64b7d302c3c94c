"""What tests, benchmarks and the demo use to make Hudi tables and start Hive servers; not the product's read path.

- :mod:`~hive_bridge.testing.writer`: a copy-on-write Hudi writer (table versions 6 and 8) that hudi-rs reads;
- :mod:`~hive_bridge.testing.sample_table`: the demo's sample table;
- :mod:`~hive_bridge.testing.servers`: a Hive metastore and the Spark Thrift Server (HiveServer2) started locally
  from pyspark's jars, for integration tests.
"""
