"""Reading a registered Hudi table by name: :class:`RegisteredHudiTable` (the metastore's table, the query type
its input format means, its partitions) and :class:`PartitionSelection` (the file slices a read starts from).

Hive plans a scan of a partitioned table from the metastore's partitions: those a filter may match by their
values, read from their locations. :meth:`RegisteredHudiTable.select_slices` does the same with a Hudi table's
latest file slices before files are judged by statistics (:meth:`hive_bridge.pruning.snapshot.TableSnapshot.plan`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hive_bridge.hive.model import HivePartition, HiveTable, MetastoreError

if TYPE_CHECKING:
    import sarg
    from hive_bridge.layout.fsview import FileSlice
    from hive_bridge.table.table import HudiTable

__all__ = ["PartitionSelection", "RegisteredHudiTable"]


@dataclass(frozen=True)
class PartitionSelection:
    """The file slices a read by name starts from: those of the metastore partitions a filter may match."""

    slices: list[FileSlice]
    partitions_total: int = 0
    partitions_kept: int = 0
    #: slices (and their base files' bytes) in the partitions pruned by their metastore values
    slices_dropped: int = 0
    bytes_dropped: int = 0
    #: Hudi partition paths holding live files that no metastore partition points at (Hive does not read them)
    unregistered: tuple[str, ...] = ()
    #: metastore partitions whose values differ from what the table's layout says of their folder: never pruned
    #: by their metastore values (the rows read are the files' own), judged by the Hudi table's own values
    inconsistent: tuple[str, ...] = ()


@dataclass(frozen=True)
class RegisteredHudiTable:
    """A Hudi table as the metastore registers it: the table, the query type its input format means, and its
    partitions (None: read the whole table)."""

    table: HiveTable
    query_type: str
    partitions: tuple[HivePartition, ...] | None
    old_registration: bool = False

    @property
    def location(self) -> str:
        return self.table.location

    def select_slices(self, hudi: HudiTable, filt: sarg.SearchArgument | None = None, *,
                      session_time_zone: str = "UTC", query_type: str | None = None) -> PartitionSelection:
        """The latest file slices a read of this table starts from, as Hive plans a scan of a partitioned table:
        the metastore partitions pruned by their values (the filter's leaves on partition keys, typed by the keys'
        Hive types; other leaves unknown), then the slices under the locations of those kept — which need not
        follow the table's layout, but must lie inside the Hudi table. Files are judged by statistics after
        this (:meth:`hive_bridge.pruning.snapshot.TableSnapshot.plan`). A read-optimized query starts from base files only.
        Hudi partitions no metastore partition points at are not read (as in Hive), with a ``RuntimeWarning``."""
        from hive_bridge.pruning.pruner import READ_OPTIMIZED, check_query_type, read_optimized_view

        qt = check_query_type(query_type or self.query_type)
        slices = hudi.latest_file_slices()
        if qt == READ_OPTIMIZED:
            slices = read_optimized_view(slices)
        if self.partitions is None:
            return PartitionSelection(slices)
        keys = self.table.partition_keys
        root = os.path.realpath(str(hudi.base_path))
        by_path: dict[str, list[FileSlice]] = {}
        for s in slices:
            by_path.setdefault(s.partition_path, []).append(s)
        rels: list[str] = []
        for p in self.partitions:
            where = os.path.realpath(p.location)
            rel = os.path.relpath(where, root)
            if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
                raise MetastoreError(f"partition {p.spec(keys)} of {self.table.qualified_name} is located at "
                                     f"{p.location}, outside the Hudi table at {hudi.base_path}: hive-bridge reads "
                                     "partitions of the table only")
            rels.append("" if rel == os.curdir else rel.replace(os.sep, "/"))
        keep = [True] * len(rels)
        inconsistent: list[str] = []
        if filt is not None and keys:
            by_value = _prune_by_values(self.partitions, keys, filt, hudi, session_time_zone)
            for i, (p, rel) in enumerate(zip(self.partitions, rels, strict=True)):
                if by_value[i]:
                    continue
                here = by_path.get(rel)
                if here and not _agrees(p, keys, here[0].partition_values):
                    inconsistent.append(p.spec(keys))
                    continue
                keep[i] = False
        kept_paths = {rel for rel, k in zip(rels, keep, strict=True) if k}
        dropped_paths = set(rels) - kept_paths
        chosen = [s for s in slices if s.partition_path in kept_paths]
        dropped = [s for path in dropped_paths for s in by_path.get(path, ())]
        unregistered = tuple(sorted(set(by_path) - set(rels)))
        if unregistered:
            warnings.warn(f"{self.table.qualified_name}: {len(unregistered)} partition(s) of the Hudi table at "
                          f"{hudi.base_path} are not registered in the metastore and are not read, as Hive does not "
                          f"read them (e.g. {unregistered[0]!r}): sync the table again (Hudi's Hive sync, or "
                          "MetastoreClient.sync_hudi_table)", RuntimeWarning, stacklevel=2)
        return PartitionSelection(chosen, len(self.partitions), sum(keep), len(dropped),
                                  sum(s.base_file.size for s in dropped if s.base_file is not None), unregistered,
                                  tuple(inconsistent))


def _agrees(partition: HivePartition, keys: Sequence[tuple[str, str]], path_values: Mapping[str, str]) -> bool:
    """Whether the metastore's values of a partition are what the Hudi table's layout says of its folder."""
    low = {k.lower(): v for k, v in path_values.items()}
    for (key, _), value in zip(keys, partition.values, strict=False):
        if low.get(key.lower()) != value:
            return False
    return len(partition.values) == len(keys)


def _prune_by_values(partitions: Sequence[HivePartition], keys: Sequence[tuple[str, str]],
                     filt: sarg.SearchArgument, hudi: HudiTable, session_time_zone: str) -> list[bool]:
    """Whether the filter may be true on each partition, judged on its metastore values only: the keys typed as
    Hive compares partition values (:func:`hive_bridge.filters.typemap.hive_partition_key_to_arrow`), the partitions as a
    statistics table judged by the files' rules (:func:`hive_bridge.pruning.partition_values.prune_partitions`)."""
    from hive_bridge.filters.expression import translate
    from hive_bridge.filters.typemap import hive_partition_key_to_arrow, table_sarg_schema
    from hive_bridge.pruning.partition_values import prune_partitions

    typed = [(key, hive_partition_key_to_arrow(hive_type)) for key, hive_type in keys]
    if all(typ is None for _, typ in typed):
        return [True] * len(partitions)
    return prune_partitions(translate(filt, table_sarg_schema(hudi)), typed, [p.values for p in partitions],
                            session_time_zone)
