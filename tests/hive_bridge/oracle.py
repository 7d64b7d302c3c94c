"""hudi-rs (the `hudi` package) as the reference for latest file slices."""

from __future__ import annotations

from pathlib import Path

from hive_bridge.layout.fsview import FileSlice

SliceKey = tuple[str, str, str, str, int, tuple[str, ...]]


def reference_slices(path: Path, as_of: str | None = None) -> list[SliceKey]:
    from hudi import HudiReadOptions, HudiTable

    table = HudiTable(str(path))
    slices = table.get_file_slices(HudiReadOptions().with_as_of_timestamp(as_of)) if as_of \
        else table.get_file_slices()
    return sorted(
        (s.partition_path, s.file_id, s.creation_instant_time, s.base_file_relative_path(), s.base_file_size,
         tuple(sorted(s.log_file_names)))
        for s in slices
    )


def our_slices(slices: list[FileSlice]) -> list[SliceKey]:
    out = []
    for s in slices:
        assert s.base_file is not None
        out.append((s.partition_path, s.file_id, s.base_instant, s.base_file.path, s.base_file.size,
                    tuple(sorted(lf.name for lf in s.log_files))))
    return sorted(out)
