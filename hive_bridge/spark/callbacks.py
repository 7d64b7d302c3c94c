"""The JVM's way back to the hive-bridge planner, closed to everyone else on the machine.

The JVM file index calls the planner through py4j's callback server, a TCP port on 127.0.0.1 that any local user
can connect to. PySpark's default (pinned-thread) gateway starts that server with no secret: py4j's
``PythonClient.copyWith`` drops the secret from the JVM's callback client when PySpark tells it the server's port,
so PySpark leaves the server open (a raw socket could ask the planner for any table's schema and plans).
:func:`require_authentication` makes the server require a secret (the gateway's own, which the Python side already
shares with its JVM) and the JVM's callback client send it (``io.hivebridge.spark.Callbacks``).

Long planner answers go to the JVM through a file: :func:`answer_folder` is this process's private folder for them
(``0700``, random name); the JVM reads an answer only from there, never through a link, and deletes it.
"""

from __future__ import annotations

import atexit
import os
import re
import secrets
import shutil
import socket
import tempfile
import threading
import warnings
from typing import Any

from hive_bridge.spark.jar import JVM_PACKAGE
from hive_bridge.spark.private import open_private_folder
from hive_bridge.spark.sessions import SparkReadError

#: a secret both sides pass as it is (py4j escapes newlines and backslashes on one side only in some paths)
_PLAIN_SECRET = re.compile(r"[0-9A-Za-z]{32,}")
#: the callback server each gateway's secret was made required on (by ``id`` of the gateway)
_SECURED: dict[int, Any] = {}
_LOCK = threading.Lock()
#: the prefix and suffix of an answer file's name (the JVM reads no other name)
ANSWER_PREFIX, ANSWER_SUFFIX = "hive-bridge-answer-", ".txt"
_answers: str | None = None


def _secret(gateway: Any) -> str:
    """The secret the callback server requires: the one it has, else the gateway's own, else a new one."""
    for candidate in (gateway.callback_server_parameters.auth_token,
                      getattr(gateway.gateway_parameters, "auth_token", None)):
        if isinstance(candidate, str) and _PLAIN_SECRET.fullmatch(candidate):
            return candidate
    return secrets.token_hex(32)


def _server(gateway: Any) -> Any:
    return gateway.__dict__.get("_callback_server")  # getattr would ask the JVM for a field of that name


def require_authentication(gateway: Any) -> None:
    """Make py4j's callback server of ``gateway`` (started here if it is not running) accept only connections that
    present the secret, and the JVM's callback client present it.

    A server someone else started without a secret is secured in place rather than restarted (a py4j restart
    empties the pool of Python objects the JVM holds, breaking every listener registered before): from now on
    every connection must present the secret, and the connections it accepted while it was open are closed (the
    JVM opens new, authenticated ones on its next call; a JVM callback running at that instant fails), with a
    ``RuntimeWarning`` saying so. When the JVM's client cannot be made to present the secret, the server is left
    as it was and :class:`SparkReadError` says that the planner is not registered."""
    from py4j.java_gateway import JavaObject
    from pyspark.java_gateway import ensure_callback_server_started

    with _LOCK:
        params = gateway.callback_server_parameters
        server = _server(gateway)
        if server is not None and _SECURED.get(id(gateway)) is server and params.auth_token:
            return
        secret = _secret(gateway)
        before = params.auth_token
        was_open = server is not None and not before
        opened: list[Any] = []
        params.auth_token = secret  # read by every connection the server accepts from now on
        if server is None:
            ensure_callback_server_started(gateway)  # type: ignore[no-untyped-call]
            server = _server(gateway)
        elif was_open:
            with server.lock:
                opened = list(server.connections)
        try:
            jvm_server = JavaObject("GATEWAY_SERVER", gateway._gateway_client)
            getattr(gateway.jvm, JVM_PACKAGE).Callbacks.authenticate(jvm_server, secret)
        except Exception as exc:
            params.auth_token = before
            text = str(exc).strip()
            raise SparkReadError("the hudi-hive planner is not registered: hive-bridge cannot make py4j's callback "
                                 f"server require a secret ({text.splitlines()[0] if text else type(exc).__name__})"
                                 ) from None
        for connection in opened:  # its own thread, reading, sees the end and closes it
            sock = getattr(connection, "socket", None)
            try:
                if sock is not None:
                    sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # closed already
                continue
        if was_open:
            warnings.warn("py4j's callback server of this session was started without a secret; hive-bridge made "
                          f"it require one and closed the {len(opened)} connection(s) it had accepted without it (a "
                          "JVM callback running on one of them at that moment fails): call "
                          "hive_bridge.spark.register(spark) before starting streaming queries or listeners",
                          RuntimeWarning, stacklevel=3)
        _SECURED[id(gateway)] = server


def answer_folder() -> str:
    """This process's private folder for long answers to the JVM (made once, removed at exit; made again at the
    same path if it was removed meanwhile: the JVM was told this path)."""
    global _answers
    with _LOCK:
        if _answers is None:
            _answers = tempfile.mkdtemp(prefix="hive-bridge-answers-")
            atexit.register(shutil.rmtree, _answers, True)
        return _answers


def spool(answer: str) -> str | None:
    """``answer`` written to a new file of :func:`answer_folder` (``0600``, never through a link): its path; None
    when the folder is not private any more (the answer then goes inline)."""
    folder = answer_folder()
    try:
        dir_fd = open_private_folder(folder, "the planner's answer folder")
    except Exception:
        return None
    assert dir_fd is not None
    try:
        name = f"{ANSWER_PREFIX}{secrets.token_hex(12)}{ANSWER_SUFFIX}"
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=dir_fd)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(answer)
        return os.path.join(folder, name)
    except OSError:
        return None
    finally:
        os.close(dir_fd)
