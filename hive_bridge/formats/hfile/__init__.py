"""HFiles (version 3), the files of Hudi's metadata table: its base files, and the content of its log files'
HFILE_DATA blocks. :mod:`~hive_bridge.formats.hfile.blocks` holds the format itself (constants, block headers,
codecs, checksums, protobuf fields, varints, index and file info blocks), :mod:`~hive_bridge.formats.hfile.trailer`
the fixed trailer at a file's end, :mod:`~hive_bridge.formats.hfile.cells` the entries of data blocks as arrays
(:class:`Cells`) and their vectorised finding, and :mod:`~hive_bridge.formats.hfile.reader` the
:class:`HFileReader` that opens a file, whole or in byte ranges, through the Storage its caller hands it. HFiles
for tests are written by :mod:`hive_bridge.testing.hfile_writer`.
"""

from hive_bridge.formats.hfile.blocks import (
    BLOCK_HEADER_SIZE,
    MAGIC_DATA,
    MAGIC_FILE_INFO,
    MAGIC_INTERMEDIATE_INDEX,
    MAGIC_LEAF_INDEX,
    MAGIC_META,
    MAGIC_ROOT_INDEX,
    TRAILER_MAGIC,
    TRAILER_SIZE,
    ChecksumType,
    Codec,
    HFileError,
    crc32c,
)
from hive_bridge.formats.hfile.cells import Cells
from hive_bridge.formats.hfile.reader import HFileReader
from hive_bridge.formats.hfile.trailer import HFileTrailer, trailer_problem

__all__ = [
    "BLOCK_HEADER_SIZE",
    "MAGIC_DATA",
    "MAGIC_FILE_INFO",
    "MAGIC_INTERMEDIATE_INDEX",
    "MAGIC_LEAF_INDEX",
    "MAGIC_META",
    "MAGIC_ROOT_INDEX",
    "TRAILER_MAGIC",
    "TRAILER_SIZE",
    "Cells",
    "ChecksumType",
    "Codec",
    "HFileError",
    "HFileReader",
    "HFileTrailer",
    "crc32c",
    "trailer_problem",
]
