"""Which blocks of a merge-on-read file slice's log files a merged read applies: one definition, used by the key
check of Hudi's indexes (:mod:`hive_bridge.pruning.slice_keys`) and by the test writer's merge model.

A block counts when the instant that wrote it (its INSTANT_TIME header) completed on the data timeline and was
not rolled back (an instant older than the active timeline counts unless pending or rolled back), and no
rollback command block of a counted instant names it as its target. Command blocks themselves, and blocks Hudi's
writer marked CORRUPTED, hold no record. A damaged region of a log file (a crashed writer's half block) is skipped
by :func:`~hive_bridge.formats.logfile.read_log_file` up to the next good block, as Hudi's reader skips it.
The remaining blocks are returned in log order (the slice's log files in the order the file-system view lists
them, each file's blocks in file order), undecoded.
"""

from __future__ import annotations

from collections.abc import Callable

from hive_bridge.formats.logfile import BlockType, LogBlock, read_log_file
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.layout.timeline import Timeline
from hive_bridge.storage.core import Storage

__all__ = ["block_filter", "slice_log_blocks"]

#: block types without records of the merged rows (rollback commands are applied, not returned)
_NO_RECORDS = frozenset({BlockType.COMMAND, BlockType.CORRUPTED})


def block_filter(timeline: Timeline) -> Callable[[str | None], bool]:
    """Whether a log block written at an instant counts: its instant completed and was not rolled back
    (instants older than the active timeline count unless pending)."""
    completed = {i.timestamp for i in timeline.completed_writes}
    rolled_back = timeline.rolled_back_timestamps
    pending = {i.timestamp for i in timeline.pending}
    earliest = min(completed) if completed else None

    def ok(ts: str | None) -> bool:
        if ts is None or ts in rolled_back:
            return False
        if ts in completed:
            return True
        return earliest is not None and ts < earliest and ts not in pending

    return ok


def slice_log_blocks(ok: Callable[[str | None], bool], s: FileSlice,
                     storage: Storage | None = None) -> list[tuple[str, LogBlock]]:
    """(log file path, block) of every block of the slice's logs a merged read applies (see the module
    docstring), in log order. ``storage``: the table's (each log file read whole, once); None reads local
    files. Raises :class:`~hive_bridge.formats.logfile.LogFormatError` for a log file that cannot be read."""
    contents = [(lf.full_path, read_log_file(lf.full_path, storage=storage)) for lf in s.log_files]
    targets = {b.target_instant for _, c in contents for b in c.blocks if b.is_rollback and ok(b.instant)}
    return [(path, b) for path, c in contents for b in c.blocks
            if b.block_type not in _NO_RECORDS and ok(b.instant) and b.instant not in targets]
