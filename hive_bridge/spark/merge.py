"""hudi-rs's file-group reader: merge-on-read slices (a base file merged with its log files) and base files of
formats Spark's parquet reader cannot take, conformed to the table's schema."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from hive_bridge.layout.fsview import HIVE_DEFAULT_PARTITION
from hive_bridge.stats.index import PARQUET_SUFFIX
from hive_bridge.storage.core import is_local_uri


def read_by_hudi_rs(base: str, has_logs: bool) -> bool:
    """Whether a slice is read by hudi-rs's file-group reader rather than a parquet reader: slices with log files
    (merged), log-only file groups (no base), base files of other formats (Lance)."""
    return has_logs or not base.endswith(PARQUET_SUFFIX)


def hudi_reader(root: str, storage_options: Mapping[str, str] | None = None, as_of: str | None = None) -> Any:
    """hudi-rs's file-group reader of a table (it merges a base file with its log files); a table on object
    storage gets the same endpoint and credentials as pyarrow (see :func:`hudi_rs_storage_options`).
    ``as_of``: the instant time of a state read by time travel: log blocks of later instants are skipped (a
    table version 6 log file holds the blocks of every delta commit on its slice, before and after it)."""
    import hudi

    builder = hudi.HudiTableBuilder.from_base_uri(root)
    if not is_local_uri(root):
        builder = builder.with_storage_options(hudi_rs_storage_options(root, storage_options or {}))
    options = None if as_of is None else hudi.HudiReadOptions().with_as_of_timestamp(as_of)
    return builder.build().create_file_group_reader_with_options(options)


#: hive-bridge's storage options (pyarrow's S3FileSystem names and the AWS ones) -> hudi-rs's (object_store's)
_HUDI_RS_S3_KEYS = {
    "access_key": "aws_access_key_id", "aws_access_key_id": "aws_access_key_id",
    "secret_key": "aws_secret_access_key", "aws_secret_access_key": "aws_secret_access_key",
    "session_token": "aws_session_token", "aws_session_token": "aws_session_token",
    "region": "aws_region", "aws_region": "aws_region",
    "endpoint_override": "aws_endpoint", "endpoint_url": "aws_endpoint",
    "force_virtual_addressing": "aws_virtual_hosted_style_request", "anonymous": "aws_skip_signature",
}
#: the same from the environment, when no option says otherwise
_HUDI_RS_S3_ENV = {
    "AWS_ACCESS_KEY_ID": "aws_access_key_id", "AWS_SECRET_ACCESS_KEY": "aws_secret_access_key",
    "AWS_SESSION_TOKEN": "aws_session_token", "AWS_REGION": "aws_region", "AWS_DEFAULT_REGION": "aws_region",
    "AWS_ENDPOINT_URL_S3": "aws_endpoint", "AWS_ENDPOINT_URL": "aws_endpoint",
}


def hudi_rs_storage_options(root: str, options: Mapping[str, str]) -> dict[str, str]:
    """The storage options hudi-rs needs to read an S3 table the way pyarrow does: endpoint and credentials
    from ``options`` (hive-bridge's) or the environment, ``http`` allowed when the endpoint says so, and no
    instance-metadata lookup when credentials are given."""
    scheme = root.split("://", 1)[0].lower() if "://" in root else ""
    if scheme not in ("s3", "s3a", "s3n"):
        return {}
    out: dict[str, str] = {}
    for env, key in _HUDI_RS_S3_ENV.items():
        found = os.environ.get(env)
        if found and key not in out:
            out[key] = found
    for k, v in options.items():
        mapped = _HUDI_RS_S3_KEYS.get(k)
        if mapped is not None:
            out[mapped] = str(v)
    endpoint = out.get("aws_endpoint")
    if endpoint is not None:
        if "://" not in endpoint:
            endpoint = f"{options.get('scheme') or 'https'}://{endpoint}"
            out["aws_endpoint"] = endpoint
        if endpoint.startswith("http://"):
            out["aws_allow_http"] = "true"
    if "aws_access_key_id" in out:
        out.setdefault("aws_skip_signature", "false")
    return out


def merge_with_hudi(reader: Any, base: str, logs: list[str]) -> list[pa.RecordBatch]:
    """The rows of one merge-on-read file slice (paths relative to the table root), logs merged."""
    result = reader.read_file_slice_from_paths(base, logs)
    batches = result if isinstance(result, list) else [result]
    return [b for b in batches if b.num_rows]


def conform(table: pa.Table, target: pa.Schema, partition_values: dict[str, str]) -> pa.Table:
    cols = []
    for f in target:
        if f.name in table.column_names:
            col = table.column(f.name)
            cols.append(col.cast(f.type) if col.type != f.type else col)
        elif f.name in partition_values:
            value = partition_values[f.name]
            arr = pa.array([None if value == HIVE_DEFAULT_PARTITION else value] * table.num_rows,
                           pa.string())
            cols.append(arr.cast(f.type))
        else:
            cols.append(pa.nulls(table.num_rows, f.type))
    return pa.table(cols, schema=target)

