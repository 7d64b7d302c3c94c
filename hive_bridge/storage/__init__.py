"""Where bytes live: a local folder or object storage (S3, GCS, Azure, HDFS) behind one small ``Storage`` API.

Knows nothing of Hudi. A ``Storage`` lists, stats and reads files (whole, or in byte ranges: one HEAD and a GET per
range on object storage), counts its requests, and never prints a credential. Storage options (endpoint, keys,
region) come from the caller or the environment, as pyarrow's file systems take them.
"""

from hive_bridge.storage.core import (
    Entry,
    RequestCounter,
    Storage,
    StorageError,
    cache_root,
    is_local_uri,
    parse_storage_options,
    split_uri,
)

__all__ = ["Entry", "RequestCounter", "Storage", "StorageError", "cache_root", "is_local_uri",
           "parse_storage_options", "split_uri"]
