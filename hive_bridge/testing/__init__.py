"""What tests, benchmarks and the demo use to make Hudi tables, write Hudi's file formats and start Hive servers:
test encoders and writers, never the product's read path (nothing in the product imports this package; the demo
builds its sample table with it). The Hudi table writer is :class:`HudiWriter` (:mod:`~hive_bridge.testing.writer`,
copy-on-write and merge-on-read tables of versions 6 and 8, that hudi-rs reads; its parts are
:mod:`~hive_bridge.testing.table_files`, :mod:`~hive_bridge.testing.instants` and
:mod:`~hive_bridge.testing.merge_model`); :func:`write_metadata_table` (:mod:`~hive_bridge.testing.mdt_writer`,
with :mod:`~hive_bridge.testing.mdt_records`, :mod:`~hive_bridge.testing.mdt_stats` and
:mod:`~hive_bridge.testing.mdt_keys`) writes Hudi 1.0's metadata table for such a table (files, column and partition
statistics, record and secondary indexes); :mod:`~hive_bridge.testing.bloom_writer` writes Hudi's bloom filters
into base file footers; :mod:`~hive_bridge.testing.logfile_writer` and :mod:`~hive_bridge.testing.hfile_writer`
encode log blocks and HFiles; :mod:`~hive_bridge.testing.sample_table` is the demo's sample table and
:mod:`~hive_bridge.testing.servers` starts a Hive metastore and the Spark Thrift Server (HiveServer2) locally from
pyspark's jars, for integration tests; :mod:`~hive_bridge.testing.workloads` makes up large replayed workloads
(and a sample of the layout advisor's output) for the HTML report's tests and benchmark.
"""

from hive_bridge.testing.hfile_writer import write_hfile
from hive_bridge.testing.logfile_writer import (
    avro_block_content,
    delete_block_content,
    encode_block,
    parquet_block_content,
    rollback_block,
)
from hive_bridge.testing.mdt_writer import MetadataTableWrite, write_metadata_table
from hive_bridge.testing.writer import COPY_ON_WRITE, MERGE_ON_READ, HudiWriter, WriteResult, write_hudi_table

__all__ = [
    "COPY_ON_WRITE",
    "MERGE_ON_READ",
    "HudiWriter",
    "MetadataTableWrite",
    "WriteResult",
    "avro_block_content",
    "delete_block_content",
    "encode_block",
    "parquet_block_content",
    "rollback_block",
    "write_hfile",
    "write_hudi_table",
    "write_metadata_table",
]
