"""The names the Spark reads and the data sources share: data source options and read routes."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["AS_OF_OPTION", "QUERY_TYPE_OPTION", "ROUTE_SPARK", "ROUTE_WORKERS", "SLICES_OPTION", "STORAGE_OPTION_PREFIX",
           "storage_options_of"]

#: the data source option that chooses the query type, as Hudi's Spark data source names it
QUERY_TYPE_OPTION = "hoodie.datasource.query.type"

#: the data source option that reads the table as of an instant or time (time travel), as Hudi's Spark data
#: source names it
AS_OF_OPTION = "as.of.instant"

#: HiveRead.route values
ROUTE_SPARK = "spark parquet reader"
ROUTE_WORKERS = "pyarrow.fs in Spark's Python workers"
#: the hudi-hive data source's option holding the slices to read (JSON), set by read_slices_in_workers
SLICES_OPTION = "hive_bridge.slices"
#: data source options starting with this are storage options (``storage.endpoint_override``, ...)
STORAGE_OPTION_PREFIX = "storage."


def storage_options_of(options: Mapping[str, str]) -> dict[str, str]:
    """The storage options among a data source's options (``storage.<key>``)."""
    return {k[len(STORAGE_OPTION_PREFIX):]: v for k, v in options.items() if k.startswith(STORAGE_OPTION_PREFIX)}
