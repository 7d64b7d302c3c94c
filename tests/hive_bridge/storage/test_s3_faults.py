"""Object storage faults met by the planner's S3 file system, against a real S3-compatible server (moto) behind a
fault-injecting proxy: throttled and failed requests retried up to a bound, persistent failures and unreachable
endpoints reported naming the object, the endpoint and the attempts (never a credential), an object gone
between listing and reading reported by name."""

from __future__ import annotations

import threading
import traceback
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hive_bridge import config
from hive_bridge.errors import HiveBridgeError
from hive_bridge.table.table import HudiTable
from tests.conftest import SHARED_TABLES
from tests.hive_bridge.s3_faults import FaultProxy, closed_port, silent_server
from tests.hive_bridge.s3_server import S3Server

pytest.importorskip("moto")
pytest.importorskip("boto3")

MOR = "sample_table.mor.avro.v9_txns_simple_meta"
BUCKET = "hive-bridge-faults"
PREFIX = "t"
URI = f"s3://{BUCKET}/{PREFIX}"
SECRET = "faults-Secret/Key+0123456789abcdef"
PROPS = f"{PREFIX}/.hoodie/hoodie.properties"


@pytest.fixture(scope="module")
def local_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (SHARED_TABLES / f"{MOR}.zip").is_file():
        pytest.skip(f"shared Hudi tables not found in {SHARED_TABLES}")
    dest = tmp_path_factory.mktemp("faults")
    with zipfile.ZipFile(SHARED_TABLES / f"{MOR}.zip") as zf:
        zf.extractall(dest, [m for m in zf.namelist() if not m.startswith("__MACOSX/") and "/._" not in m])
    (root,) = [p.parent.parent for p in dest.glob("*/.hoodie/hoodie.properties")]
    return root


@pytest.fixture(scope="module")
def proxy(local_table: Path) -> Iterator[FaultProxy]:
    with S3Server() as s3, FaultProxy(s3.endpoint) as fault_proxy:
        s3.upload_folder(local_table, BUCKET, PREFIX)
        yield fault_proxy


@pytest.fixture(autouse=True)
def _fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    config.clear_caches()
    yield
    config.clear_caches()


def _options(endpoint: str, **more: str) -> dict[str, str]:
    return {"endpoint_override": endpoint, "access_key": "test", "secret_key": SECRET, "region": "us-east-1",
            **more}


def _slices(table: HudiTable) -> list[str]:
    return sorted(map(str, table.latest_file_slices()))


def _plan(endpoint: str, **more: str) -> list[str]:
    config.clear_caches()
    return _slices(HudiTable.open(URI, storage_options=_options(endpoint, **more)))


def _failure(endpoint: str, **more: str) -> HiveBridgeError:
    """The error planning gets, from a thread joined with a bound: a hang fails the test instead of blocking."""
    out: list[BaseException | None] = []

    def run() -> None:
        try:
            _plan(endpoint, **more)
            out.append(None)
        except BaseException as exc:   # handed to the test
            out.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=240)
    assert not thread.is_alive(), "planning did not return"
    (exc,) = out
    assert isinstance(exc, HiveBridgeError), repr(exc)
    return exc


def _text(exc: BaseException) -> str:
    return "\n".join([str(exc), repr(exc), "".join(traceback.format_exception(exc))])


@pytest.mark.parametrize("status", [503, 500])
def test_throttled_requests_are_retried_within_the_bound(proxy: FaultProxy, status: int) -> None:
    proxy.clear()
    want = _plan(proxy.endpoint)
    proxy.clear()
    proxy.fail(PROPS, times=2, status=status)
    assert _plan(proxy.endpoint, max_attempts="3") == want
    assert proxy.seen(PROPS) >= 3   # two failed attempts, then the answer


@pytest.mark.parametrize("status", [503, 500])
def test_persistent_errors_name_the_object_and_the_attempts(proxy: FaultProxy, status: int) -> None:
    proxy.clear()
    proxy.fail(PROPS, times=None, status=status)
    exc = _failure(proxy.endpoint, max_attempts="3")
    assert f"{URI}/.hoodie/hoodie.properties" in str(exc)
    assert "gave up after 3 attempt(s)" in str(exc) and proxy.endpoint in str(exc)
    assert proxy.seen(PROPS) == 3
    assert SECRET not in _text(exc) and "Traceback" not in str(exc)


def test_a_closed_port_stops_planning_with_the_endpoint_named(proxy: FaultProxy) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    exc = _failure(endpoint, max_attempts="2", connect_timeout="1")
    assert endpoint in str(exc) and "was not reached or did not answer" in str(exc)
    assert SECRET not in _text(exc)


def test_a_server_that_never_answers_stops_planning_within_the_timeout(proxy: FaultProxy) -> None:
    with silent_server() as endpoint:
        exc = _failure(endpoint, max_attempts="2", connect_timeout="1", request_timeout="2")
    assert endpoint in str(exc) and "request timeout 2 s" in str(exc)
    assert SECRET not in _text(exc)


def test_a_commit_file_gone_between_listing_and_reading_is_an_error_naming_it(proxy: FaultProxy,
                                                                            local_table: Path) -> None:
    commits = sorted(p for p in (local_table / ".hoodie" / "timeline").glob("*.replacecommit"))
    assert commits, "the fixture has no replacecommit"
    key = f"{PREFIX}/.hoodie/timeline/{commits[-1].name}"
    proxy.clear()
    proxy.fail(key, times=None, status=404)   # listed, then NoSuchKey: deleted in between
    exc = _failure(proxy.endpoint)
    assert f"s3://{BUCKET}/{key}" in str(exc) and "not found" in str(exc)
    assert proxy.seen(key) >= 1


def test_settings_of_attempts_and_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    from hive_bridge.storage.core import Storage, StorageError

    monkeypatch.setenv("HIVE_BRIDGE_S3_MAX_ATTEMPTS", "7")
    monkeypatch.setenv("HIVE_BRIDGE_S3_CONNECT_TIMEOUT", "2.5")
    storage = Storage.for_uri(URI, {"endpoint_override": "http://127.0.0.1:9", "region": "us-east-1"})
    assert (storage.reach.attempts, storage.reach.connect_timeout, storage.reach.request_timeout) == (7, 2.5, 30.0)
    storage = Storage.for_uri(URI, {"endpoint_override": "http://127.0.0.1:9", "max_attempts": "2",
                                    "request_timeout": "4"})
    assert (storage.reach.attempts, storage.reach.request_timeout) == (2, 4)
    with pytest.raises(StorageError, match="max_attempts"):
        Storage.for_uri(URI, {"max_attempts": "0"})
    monkeypatch.setenv("HIVE_BRIDGE_S3_REQUEST_TIMEOUT", "-1")
    with pytest.raises(config.ConfigError, match="HIVE_BRIDGE_S3_REQUEST_TIMEOUT"):
        config.settings()


