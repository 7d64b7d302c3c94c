"""A local S3-compatible server for tests and benchmarks: moto's server mode, with every request counted and an
optional injected latency.

Run as a script (``python tests/hive_bridge/s3_server.py --port N``): moto's own WSGI application (what
``python -m moto.server`` serves) behind a small WSGI layer that counts the S3 requests it receives by kind
(list / head / get / put / delete / other) and sleeps ``latency`` seconds before each. ``GET /_hive_bridge/
requests`` returns the counts as JSON, ``POST /_hive_bridge/reset`` zeroes them, ``POST /_hive_bridge/latency``
with a number of seconds as body sets the latency. The counts are what the server saw: the truth the
Storage request counter is compared with.

From Python, :class:`S3Server` starts it on a free 127.0.0.1 port, waits until it accepts connections, and
stops it by its PID.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

CONTROL = "/_hive_bridge/"


def _kind(method: str, query: str) -> str:
    if method == "GET":
        if "list-type=" in query or "delimiter=" in query or ("prefix=" in query and "uploadId" not in query):
            return "list"
        return "get"
    if method in ("HEAD", "PUT", "DELETE"):
        return method.lower()
    return "other"


class CountingApp:
    """WSGI middleware: counts requests by kind, sleeps the injected latency, then hands over to moto."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app
        self.counts: dict[str, int] = {}
        self.latency = 0.0
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path.startswith(CONTROL):
            return self._control(path[len(CONTROL):], environ, start_response)
        kind = _kind(environ.get("REQUEST_METHOD", ""), environ.get("QUERY_STRING", ""))
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            latency = self.latency
        if latency:
            time.sleep(latency)
        return self.app(environ, start_response)  # type: ignore[no-any-return]

    def _control(self, what: str, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        with self.lock:
            if what == "reset":
                self.counts = {}
            elif what == "latency":
                length = int(environ.get("CONTENT_LENGTH") or 0)
                self.latency = float(environ["wsgi.input"].read(length) or 0)
            body = json.dumps(self.counts).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]


def _serve(host: str, port: int) -> None:
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import run_simple

    os.environ.setdefault("MOTO_PORT", str(port))
    app = CountingApp(DomainDispatcherApplication(create_backend_app))
    run_simple(host, port, app, threaded=True, request_handler=MotoRequestHandler)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class S3Server:
    """A moto S3 server on 127.0.0.1 at a free port: ``with S3Server() as s3: s3.endpoint``."""

    def __init__(self, start_timeout: float = 60.0) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._timeout = start_timeout
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> S3Server:
        # the server's log goes to a temporary file: a pipe nobody reads fills up and blocks the server
        self._log = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--port", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=self._log, env=dict(os.environ),
        )
        deadline = time.monotonic() + self._timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                self._log.seek(0)
                err = self._log.read().decode(errors="replace")
                raise RuntimeError(f"the moto S3 server exited at start (code {self._proc.returncode}): {err[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the moto S3 server did not accept connections on port {self.port} "
                           f"within {self._timeout:.0f} s")

    def stop(self) -> None:
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        self._log.close()

    def __enter__(self) -> S3Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --------------------------------------------------------------------------------------- control

    def _call(self, what: str, body: bytes | None = None) -> dict[str, int]:
        req = urllib.request.Request(f"{self.endpoint}{CONTROL}{what}", data=body,
                                     method="POST" if body is not None else "GET")
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read())  # type: ignore[no-any-return]

    def requests(self) -> dict[str, int]:
        """Requests by kind since the last reset."""
        return self._call("requests")

    def reset(self) -> None:
        self._call("reset", b"")

    def set_latency(self, seconds: float) -> None:
        self._call("latency", str(seconds).encode())

    def client(self, access_key: str = "test", secret_key: str = "test") -> Any:
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=access_key,
                            aws_secret_access_key=secret_key, region_name="us-east-1")

    def upload_folder(self, folder: Path, bucket: str, prefix: str) -> int:
        """Upload every file under ``folder`` to ``s3://bucket/prefix/`` (the bucket is made if missing);
        returns the number of files."""
        client = self.client()
        try:
            client.create_bucket(Bucket=bucket)
        except client.exceptions.BucketAlreadyOwnedByYou:
            pass
        n = 0
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                key = f"{prefix}/{path.relative_to(folder).as_posix()}" if prefix else path.relative_to(folder).as_posix()
                client.upload_file(str(path), bucket, key)
                n += 1
        return n

    def signed_user(self, name: str = "spark") -> tuple[str, str]:
        """An IAM user allowed everything on S3, then the server told to check every request's signature (no
        request without this user's key is served from then on): (access key, secret key)."""
        return self.signed_users(name)[0]

    def signed_users(self, *names: str) -> list[tuple[str, str]]:
        """:meth:`signed_user` for several users, each with its own key: (access key, secret key) each."""
        import boto3

        iam = boto3.client("iam", endpoint_url=self.endpoint, aws_access_key_id="test",
                           aws_secret_access_key="test", region_name="us-east-1")
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:*"], "Resource": "*"}]}
        keys = []
        for name in names:
            iam.create_user(UserName=name)
            iam.put_user_policy(UserName=name, PolicyName="p", PolicyDocument=json.dumps(policy))
            key = iam.create_access_key(UserName=name)["AccessKey"]
            keys.append((key["AccessKeyId"], key["SecretAccessKey"]))
        urllib.request.urlopen(urllib.request.Request(f"{self.endpoint}/moto-api/reset-auth", data=b"0",
                                                      headers={"Content-Type": "text/plain"}, method="POST"),
                               timeout=30).close()
        return keys

if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    _serve(args.host, args.port)
