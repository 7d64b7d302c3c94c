"""docker/docker-compose.yml is correct by construction (no Docker engine here): parsed and checked structurally.

Also checks that the integration tests pick the compose stack's endpoints up from the environment.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.integration.endpoints import DEFAULT_HS2_PORT, ExternalEndpoints, endpoints_from_env

DOCKER = Path(__file__).resolve().parents[2] / "docker"
COMPOSE = DOCKER / "docker-compose.yml"


def load_yaml(text: str) -> Any:
    """PyYAML if installed, else strictyaml (installed with pyiceberg, the bench extra), else skip."""
    try:
        import yaml
    except ImportError:
        pass
    else:
        return yaml.safe_load(text)
    try:
        import strictyaml
    except ImportError:
        pytest.skip("neither PyYAML nor strictyaml is installed: cannot parse docker-compose.yml")
    # strictyaml reads every scalar as a string and refuses anchors: the compose file uses neither on purpose.
    return strictyaml.dirty_load(text, allow_flow_style=True).data


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = load_yaml(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_services_are_a_metastore_and_hiveserver2(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"metastore", "hiveserver2"}
    assert services["metastore"]["environment"]["SERVICE_NAME"] == "metastore"
    assert services["hiveserver2"]["environment"]["SERVICE_NAME"] == "hiveserver2"
    assert "-Dhive.metastore.uris=thrift://metastore:9083" in services["hiveserver2"]["environment"]["SERVICE_OPTS"]
    # The HiveServer2 container must not re-initialize the metastore schema.
    assert str(services["hiveserver2"]["environment"]["IS_RESUME"]).lower() == "true"


def test_images_are_pinned_apache_hive_4(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        image = service["image"]
        repo, _, tag = image.partition(":")
        assert repo == "apache/hive", name
        assert re.fullmatch(r"4\.\d+\.\d+", tag), f"{name}: image {image!r} is not pinned to a Hive 4 release"
        assert "latest" not in image


def test_ports_are_published_on_loopback_only(compose: dict[str, Any]) -> None:
    expected = {"metastore": {"9083"}, "hiveserver2": {"10000", "10002"}}
    for name, service in compose["services"].items():
        published = set()
        for port in service["ports"]:
            text = str(port) if not isinstance(port, dict) else f"{port['host_ip']}:{port['published']}:{port['target']}"
            host_ip, published_port, target = text.rsplit(":", 2)
            assert host_ip == "127.0.0.1", f"{name}: {text!r} is published beyond loopback"
            assert published_port == target
            published.add(target)
        assert published == expected[name]


def test_health_checks_probe_the_service_ports(compose: dict[str, Any]) -> None:
    for name, port in (("metastore", 9083), ("hiveserver2", 10000)):
        check = compose["services"][name]["healthcheck"]
        test = check["test"]
        assert test[0] == "CMD" and f"/dev/tcp/127.0.0.1/{port}" in " ".join(test), test
        for key in ("interval", "timeout", "retries", "start_period"):
            assert key in check, f"{name}: healthcheck without {key}"


def test_hiveserver2_waits_for_a_healthy_metastore(compose: dict[str, Any]) -> None:
    depends = compose["services"]["hiveserver2"]["depends_on"]
    assert depends == {"metastore": {"condition": "service_healthy"}}


def _mounts(service: dict[str, Any]) -> dict[str, str]:
    """target -> source of every volume of a service (short syntax)."""
    out = {}
    for volume in service["volumes"]:
        parts = re.split(r":(?![^{]*})", str(volume))  # split on colons outside ${VAR:-default}
        out[parts[1]] = parts[0]
    return out


def test_the_hudi_data_folder_is_mounted_at_the_same_path_in_both(compose: dict[str, Any]) -> None:
    data = "${HIVE_BRIDGE_DATA_DIR:-/tmp/hive-bridge-data}"
    for name in ("metastore", "hiveserver2"):
        mounts = _mounts(compose["services"][name])
        assert mounts.get(data) == data, f"{name}: the Hudi data folder is not mounted at its own path"
        assert mounts.get("/opt/hive/data/warehouse") == "warehouse"
        assert mounts.get("/opt/hive/conf/hive-site.xml") == "./conf/hive-site.xml"
    assert "warehouse" in compose["volumes"]
    assert _mounts(compose["services"]["hiveserver2"]).get("/opt/hive/logs") == "./logs"


def test_mounted_files_exist_and_enable_orc_pushdown_logging() -> None:
    site = (DOCKER / "conf" / "hive-site.xml").read_text(encoding="utf-8")
    assert re.search(r"<name>hive\.optimize\.index\.filter</name>\s*<value>true</value>", site)
    log4j = (DOCKER / "conf" / "hive-log4j2.properties").read_text(encoding="utf-8")
    assert "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat" in log4j
    assert "/opt/hive/logs/orc-reader.log" in log4j
    assert (DOCKER / "README.md").is_file()


def test_readme_names_the_variables_the_tests_read() -> None:
    readme = (DOCKER / "README.md").read_text(encoding="utf-8")
    for var in ("HIVE_BRIDGE_METASTORE_URI", "HIVE_BRIDGE_HS2_HOST", "HIVE_BRIDGE_HS2_PORT", "HIVE_BRIDGE_ORC_LOG",
                "HIVE_BRIDGE_DATA_DIR"):
        assert var in readme


# ----------------------------------------------------------------------------- endpoints from the environment


def test_no_variables_means_local_servers() -> None:
    ext = endpoints_from_env({})
    assert ext == ExternalEndpoints() and not ext.any


def test_the_compose_stack_variables() -> None:
    ext = endpoints_from_env({
        "HIVE_BRIDGE_METASTORE_URI": "thrift://127.0.0.1:9083",
        "HIVE_BRIDGE_HS2_HOST": "127.0.0.1",
        "HIVE_BRIDGE_HS2_PORT": "10000",
        "HIVE_BRIDGE_ORC_LOG": "/repo/docker/logs/orc-reader.log",
        "HIVE_BRIDGE_DATA_DIR": "/tmp/hive-bridge-data",
    })
    assert ext == ExternalEndpoints("thrift://127.0.0.1:9083", "127.0.0.1", 10000,
                                    Path("/repo/docker/logs/orc-reader.log"), Path("/tmp/hive-bridge-data"))
    assert ext.any


def test_defaults_and_partial_settings() -> None:
    ext = endpoints_from_env({"HIVE_BRIDGE_METASTORE_URI": "thrift://h:9083", "HIVE_BRIDGE_HS2_HOST": "h"})
    assert ext.hs2_port == DEFAULT_HS2_PORT
    only_metastore = endpoints_from_env({"HIVE_BRIDGE_METASTORE_URI": "thrift://h:9083", "HIVE_BRIDGE_HS2_PORT": ""})
    assert only_metastore.metastore_uri == "thrift://h:9083" and only_metastore.hs2_host is None


@pytest.mark.parametrize(("env", "message"), [
    ({"HIVE_BRIDGE_METASTORE_URI": "h:9083"}, "must look like thrift://"),
    ({"HIVE_BRIDGE_HS2_PORT": "10000"}, "HIVE_BRIDGE_HS2_HOST is not"),
    ({"HIVE_BRIDGE_METASTORE_URI": "thrift://h:9083", "HIVE_BRIDGE_HS2_HOST": "h", "HIVE_BRIDGE_HS2_PORT": "x"},
     "TCP port"),
    ({"HIVE_BRIDGE_HS2_HOST": "h"}, "needs HIVE_BRIDGE_METASTORE_URI"),
])
def test_inconsistent_variables_are_rejected(env: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        endpoints_from_env(env)
