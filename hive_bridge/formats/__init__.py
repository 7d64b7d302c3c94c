"""Byte layouts of the files a Hudi table is made of, read without knowing anything of tables.

- :mod:`~hive_bridge.formats.parquet_footer`: each column's statistics from a parquet file's footer;
- :mod:`~hive_bridge.formats.bloom`: Hudi's bloom filters over record keys and the Hadoop hashes they use;
- :mod:`~hive_bridge.formats.avro_schema`, :mod:`~hive_bridge.formats.avro_columns`: Avro schemas as Arrow, and
  Avro values decoded column by column;
- :mod:`~hive_bridge.formats.hfile`: HBase HFiles (the metadata table's base files and log blocks);
- :mod:`~hive_bridge.formats.logfile`: Hudi log files and their blocks.
"""

from hive_bridge.formats.avro_schema import arrow_to_avro_schema, avro_to_arrow_schema
from hive_bridge.formats.bloom import BloomFilter, BloomFilterError
from hive_bridge.formats.logfile import (
           BlockType,
           HeaderKey,
           LogBlock,
           LogFileContents,
           LogFormatError,
           read_log_file,
)
from hive_bridge.formats.parquet_footer import FooterStats, StatsLeaf, read_footer_stats, stat_leaves

__all__ = ["BlockType", "BloomFilter", "BloomFilterError", "FooterStats", "HeaderKey", "LogBlock",
           "LogFileContents", "LogFormatError", "StatsLeaf", "arrow_to_avro_schema", "avro_to_arrow_schema",
           "read_footer_stats", "read_log_file", "stat_leaves"]
