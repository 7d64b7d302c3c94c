"""Which Hive servers the integration tests talk to: local ones they start, or ones named by environment variables.

=============================  =====================================================================================
``HIVE_BRIDGE_METASTORE_URI``  ``thrift://host:9083`` of a running Hive Metastore: no local metastore is started
``HIVE_BRIDGE_HS2_HOST``       host of a running HiveServer2 (binary thrift, no auth): no local Thrift Server;
                               needs ``HIVE_BRIDGE_METASTORE_URI`` (the metastore that server uses)
``HIVE_BRIDGE_HS2_PORT``       its port (default 10000; only with ``HIVE_BRIDGE_HS2_HOST``)
``HIVE_BRIDGE_ORC_LOG``        a file, readable here, where that HiveServer2 logs its ORC reads (``ORC pushdown
                               predicate: …`` or ``Reading ORC rows from … sarg: …``); without it the tests that
                               collect SearchArguments skip against external servers
``HIVE_BRIDGE_DATA_DIR``       a folder seen at the same path here and by the servers (the compose stack mounts
                               it): where registered Hudi tables live; default: a pytest temporary folder
=============================  =====================================================================================

``docker/README.md`` shows the values for the compose stack.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

METASTORE_URI = "HIVE_BRIDGE_METASTORE_URI"
HS2_HOST = "HIVE_BRIDGE_HS2_HOST"
HS2_PORT = "HIVE_BRIDGE_HS2_PORT"
ORC_LOG = "HIVE_BRIDGE_ORC_LOG"
DATA_DIR = "HIVE_BRIDGE_DATA_DIR"
DEFAULT_HS2_PORT = 10000


@dataclass(frozen=True)
class ExternalEndpoints:
    """The servers named by the environment; a None field means "start a local one" (or "not given")."""

    metastore_uri: str | None = None
    hs2_host: str | None = None
    hs2_port: int | None = None
    orc_log: Path | None = None
    data_dir: Path | None = None

    @property
    def any(self) -> bool:
        return self.metastore_uri is not None or self.hs2_host is not None


def endpoints_from_env(environ: Mapping[str, str]) -> ExternalEndpoints:
    """Read the variables above; ValueError with a clear message when they are inconsistent."""

    def get(key: str) -> str | None:
        value = environ.get(key, "").strip()
        return value or None

    uri = get(METASTORE_URI)
    if uri is not None and not uri.startswith("thrift://"):
        raise ValueError(f"{METASTORE_URI} must look like thrift://host:9083, not {uri!r}")
    host, port_text = get(HS2_HOST), get(HS2_PORT)
    port: int | None = None
    if port_text is not None:
        if host is None:
            raise ValueError(f"{HS2_PORT} is set but {HS2_HOST} is not")
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ValueError(f"{HS2_PORT} must be a TCP port number, not {port_text!r}")
        port = int(port_text)
    elif host is not None:
        port = DEFAULT_HS2_PORT
    if host is not None and uri is None:
        raise ValueError(f"{HS2_HOST} needs {METASTORE_URI} too (the metastore that HiveServer2 uses)")
    orc_log, data_dir = get(ORC_LOG), get(DATA_DIR)
    return ExternalEndpoints(uri, host, port, Path(orc_log) if orc_log else None,
                             Path(data_dir) if data_dir else None)
