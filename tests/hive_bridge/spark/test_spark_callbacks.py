"""The JVM's calls to the hive-bridge planner: py4j's callback server answers only connections that present the
gateway's secret (a raw socket on 127.0.0.1 gets no schema, no plan), also when someone else started it without
one; long answers come through a private folder the JVM reads nothing else from.

Real Spark (the shared session), real py4j sockets, a real Hudi table written by hive_bridge.testing.writer.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pytest
from py4j.protocol import get_command_part

from hive_bridge.spark import callbacks, file_index, protocol, register
from hive_bridge.spark.file_index import attach, planner
from hive_bridge.spark.jar import JVM_PACKAGE
from hive_bridge.testing.writer import HudiWriter

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore:hive-bridge set:RuntimeWarning")]

#: a column name that shows up only in the table's schema (what the planner's "open" answer holds)
SECRET_COLUMN = "only_in_the_schema"


@pytest.fixture(scope="module")
def table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    register(spark)
    root = tmp_path_factory.mktemp("callbacks") / "t"
    writer = HudiWriter(root, partition_fields=("part",), hive_style=True, record_key_fields=("k",),
                        rows_per_file=5)
    writer.insert(pa.table({"k": pa.array(range(40), pa.int64()),
                            SECRET_COLUMN: pa.array([f"v{i}" for i in range(40)]),
                            "part": pa.array([f"p{i // 10}" for i in range(40)])}))
    return root


def _gateway(spark: Any) -> Any:
    return spark.sparkContext._gateway


def _port(spark: Any) -> int:
    return int(_gateway(spark).__dict__["_callback_server"].get_listening_port())


def _planner_id(spark: Any) -> str:
    ids = [k for k, v in _gateway(spark).gateway_property.pool.dict.items() if v is planner()]
    assert ids, "the planner is not among the Python objects the JVM may call"
    return str(ids[0])


def _call_bytes(spark: Any, table: Path) -> bytes:
    """A py4j call of the planner's apply("open\\t{path}") as the JVM would send it."""
    request = protocol.open_request({"path": str(table)}, "UTC")
    return ("c\n" + _planner_id(spark) + "\napply\n" + get_command_part(request) + "e\n").encode()


def _read_all(sock: socket.socket) -> bytes:
    """What comes back until the end of py4j's one-line answer, or until the connection is closed."""
    got = b""
    try:
        while not got.endswith(b"\n") and (chunk := sock.recv(65536)):
            got += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return got


def _raw_call(spark: Any, table: Path, token: str | None, sock: socket.socket | None = None) -> tuple[bytes, bytes]:
    """(the reply to the authentication, the reply to the call) of a raw local socket; ``token`` None: no
    authentication is sent."""
    own = sock is None
    sock = sock or socket.create_connection(("127.0.0.1", _port(spark)), timeout=30)
    try:
        auth = b""
        if token is not None:
            sock.sendall(f"A\n{token}\ne\n".encode())
            auth = sock.recv(64)
        try:
            sock.sendall(_call_bytes(spark, table))
        except (BrokenPipeError, ConnectionResetError):
            return auth, b""
        return auth, _read_all(sock)
    finally:
        if own:
            sock.close()


def _secret(spark: Any) -> str:
    token = _gateway(spark).callback_server_parameters.auth_token
    assert token, "the callback server requires no secret"
    return str(token)


def _sends(spark: Any, token: str) -> bool:
    from py4j.java_gateway import JavaObject

    server = JavaObject("GATEWAY_SERVER", _gateway(spark)._gateway_client)
    return bool(getattr(spark._jvm, JVM_PACKAGE).Callbacks.sends(server, token))


def test_a_raw_local_socket_gets_nothing_without_the_secret(spark, table) -> None:  # type: ignore[no-untyped-def]
    df = spark.read.format("hudi-hive").load(str(table))
    assert df.where("k = 7").count() == 1  # a query through the callback server, which requires the secret
    secret = _secret(spark)
    assert secret == _gateway(spark).gateway_parameters.auth_token  # the gateway's own secret
    assert _sends(spark, secret)  # the JVM's callback client presents it

    # no authentication: the connection is closed, nothing of the table comes back
    auth, reply = _raw_call(spark, table, None)
    assert SECRET_COLUMN.encode() not in reply and b"OK" not in reply
    # a wrong secret: py4j's error answer, then nothing
    auth, reply = _raw_call(spark, table, "0" * 64)
    assert auth.startswith(b"!x") and SECRET_COLUMN.encode() not in reply
    # the same request with the secret is answered (the refusals above are the secret's, not the request's)
    auth, reply = _raw_call(spark, table, secret)
    assert auth.startswith(b"!y") and SECRET_COLUMN.encode() in reply
    # a plan request without the secret: no file names either
    with socket.create_connection(("127.0.0.1", _port(spark)), timeout=30) as sock:
        pin = next(reversed(planner()._pins))
        sock.sendall(("c\n" + _planner_id(spark) + "\napply\n" + get_command_part(protocol.plan_request(pin)) + "e\n")
                     .encode())
        assert b".parquet" not in _read_all(sock)
    assert df.where("k < 12").count() == 12  # queries keep working


def _unsecure_like_pyspark(spark: Any) -> None:
    """What PySpark's pinned-thread gateway leaves when it starts the callback server: the server takes every
    connection, the JVM's callback client presents no secret."""
    gw = _gateway(spark)
    gw.callback_server_parameters.auth_token = None
    jvm = spark._jvm
    from py4j.java_gateway import JavaObject

    server = JavaObject("GATEWAY_SERVER", gw._gateway_client)
    old = server.getGateway().getCallbackClient()
    client = jvm.py4j.PythonClient(server.getGateway(), None, old.getPort(), old.getAddress(),
                                   jvm.py4j.CallbackClient.DEFAULT_MIN_CONNECTION_TIME,
                                   jvm.java.util.concurrent.TimeUnit.SECONDS,
                                   jvm.javax.net.SocketFactory.getDefault(), server)
    field = jvm.java.lang.Class.forName("py4j.Gateway").getDeclaredField("cbClient")
    field.setAccessible(True)
    field.set(server.getGateway(), client)
    old.shutdown()


def test_a_server_started_without_a_secret_is_secured_in_place(spark, table) -> None:  # type: ignore[no-untyped-def]
    df = spark.read.format("hudi-hive").load(str(table))
    assert df.where("k = 3").count() == 1
    secret = _secret(spark)
    pool_before = dict(_gateway(spark).gateway_property.pool.dict)
    _unsecure_like_pyspark(spark)
    try:
        assert not _sends(spark, secret)
        # an intruder connects while the server is open: its connection is answered
        intruder = socket.create_connection(("127.0.0.1", _port(spark)), timeout=30)
        _, reply = _raw_call(spark, table, None, intruder)
        assert SECRET_COLUMN.encode() in reply
        with pytest.warns(RuntimeWarning, match=r"started without a secret.*closed the \d+ connection"):
            attach(spark)
        # the intruder's open connection was closed; a new one without the secret is refused
        _, reply = _raw_call(spark, table, None, intruder)
        assert SECRET_COLUMN.encode() not in reply
        intruder.close()
        _, reply = _raw_call(spark, table, None)
        assert SECRET_COLUMN.encode() not in reply
        assert _secret(spark) == secret and _sends(spark, secret)
        # the Python objects the JVM held before are still there (a py4j restart would have dropped them)
        assert all(_gateway(spark).gateway_property.pool.dict.get(k) is v for k, v in pool_before.items())
        assert df.where("k < 12").count() == 12
    finally:
        attach(spark)
    assert _sends(spark, _secret(spark))


def test_long_answers_come_through_the_private_folder(spark, table, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(file_index, "SPOOL_CHARS", 10)  # every answer through a file
    written: list[tuple[str, int]] = []

    def spool(answer: str) -> str | None:
        path = callbacks.spool(answer)
        assert path is not None
        written.append((path, stat.S_IMODE(os.stat(path).st_mode)))
        return path

    monkeypatch.setattr(file_index, "spool", spool)
    folder = Path(callbacks.answer_folder())
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and folder.stat().st_uid == os.geteuid()
    df = spark.read.format("hudi-hive").load(str(table))
    assert sorted(r.k for r in df.where("k < 12 or k = 39").collect()) == [*range(12), 39]
    assert written and all(Path(p).parent == folder and mode == 0o600 for p, mode in written)
    assert list(folder.iterdir()) == []  # the JVM read and deleted each answer


class _Answers:
    """A planner that answers every plan request with ``FILE\\t<path>``."""

    answer: ClassVar[str] = ""

    class Java:
        implements: ClassVar[list[str]] = ["java.util.function.Function"]

    def apply(self, request: str) -> str:
        return planner().apply(request) if request.startswith("open") else self.answer


def test_the_jvm_reads_answers_only_from_the_private_folder(spark, table, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = Path(callbacks.answer_folder())
    victim = tmp_path / "victim.txt"
    victim.write_text("OK\nF\tfile:/etc/passwd\t1\t1\n")
    link = folder / f"{callbacks.ANSWER_PREFIX}planted{callbacks.ANSWER_SUFFIX}"
    jvm_planner = getattr(spark._jvm, JVM_PACKAGE).Planner
    fake = _Answers()
    jvm_planner.register(fake, 60_000, str(folder))
    try:
        df = spark.read.format("hudi-hive").load(str(table))
        # a file outside the answer folder: refused, neither read nor deleted
        _Answers.answer = "FILE\t" + str(victim)
        with pytest.raises(Exception, match="not an answer file") as info:
            df.where("k = 1").collect()
        assert str(table) in str(info.value) and victim.exists()
        # a link in the answer folder, named as answers are: not followed, the target stays
        link.symlink_to(victim)
        _Answers.answer = "FILE\t" + str(link)
        with pytest.raises(Exception, match="not a regular file"):
            df.where("k = 2").collect()
        assert victim.read_text().startswith("OK\n")
        # a name the planner does not give: refused
        _Answers.answer = "FILE\t" + str(folder / "other.txt")
        with pytest.raises(Exception, match="not an answer file"):
            df.where("k = 3").collect()
    finally:
        jvm_planner.register(planner(), 300_000, str(folder))
        link.unlink(missing_ok=True)
    assert spark.read.format("hudi-hive").load(str(table)).where("k = 4").count() == 1
