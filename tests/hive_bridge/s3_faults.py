"""Faults of object storage for tests: an HTTP proxy in front of a (moto) S3 server that answers chosen requests
with S3's error responses, a port nothing listens on, and a server that accepts connections and never answers.

    with FaultProxy(s3.endpoint) as proxy:
        proxy.fail("hoodie.properties", times=2, status=503)   # the next 2 requests of that key: 503 SlowDown
        ...  # use proxy.endpoint as the endpoint
        proxy.seen("hoodie.properties")                           # requests of that key (failed ones included)

Everything else is passed on to the server unchanged (method, path, query, headers: the request's signature
stays valid) and its answer handed back. Bound to 127.0.0.1 on a free port; threads, stopped on exit.
"""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

#: S3's error responses by HTTP status: (reason, S3 error code, message)
ERRORS = {
    503: ("Service Unavailable", "SlowDown", "Please reduce your request rate."),
    500: ("Internal Server Error", "InternalError", "We encountered an internal error. Please try again."),
    # what a read of an object deleted after it was listed gets
    404: ("Not Found", "NoSuchKey", "The specified key does not exist."),
}
#: headers of a hop, not passed on
_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"})


class _Rule:
    def __init__(self, key: str, times: int | None, status: int) -> None:
        self.key, self.left, self.status = key, times, status


class FaultProxy:
    """An HTTP proxy on 127.0.0.1 in front of ``upstream`` (``http://host:port``) that fails chosen requests."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._lock = threading.Lock()
        self._rules: list[_Rule] = []
        self._seen: dict[str, int] = {}
        self._paths: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:   # quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                status = proxy._fault(unquote(urlsplit(self.path).path))
                if status is not None:
                    reason, code, message = ERRORS[status]
                    xml = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
                           f"<Message>{message}</Message><RequestId>FAULT</RequestId></Error>").encode()
                    self.send_response(status, reason)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(xml) if self.command != "HEAD" else 0))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(xml)
                    return
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=120)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                    conn.request(self.command, self.path, body=body or None, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                    self.send_response(resp.status, resp.reason)
                    for k, v in resp.getheaders():
                        if k.lower() not in _HOP and k.lower() != "content-length":
                            self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data) if self.command != "HEAD"
                                                          else int(resp.getheader("Content-Length") or 0)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data)
                finally:
                    conn.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="s3-fault-proxy", daemon=True)

    def _fault(self, path: str) -> int | None:
        with self._lock:
            self._paths.append(path)
            keys = {rule.key for rule in self._rules if path.endswith(rule.key)}   # a listing's path: the bucket
            for key in keys:
                self._seen[key] += 1
            for rule in self._rules:
                if path.endswith(rule.key) and (rule.left is None or rule.left > 0):
                    if rule.left is not None:
                        rule.left -= 1
                    return rule.status
        return None

    def fail(self, key: str, times: int | None, status: int = 503) -> None:
        """Answer the next ``times`` requests whose path ends with ``key`` with ``status`` (503 SlowDown, 500
        InternalError, or 404 NoSuchKey: the object deleted after it was listed, as listings are not matched;
        ``times=None``: every one from now on)."""
        if status not in ERRORS:
            raise ValueError(f"status {status}: one of {sorted(ERRORS)}")
        with self._lock:
            self._rules.append(_Rule(key, times, status))
            self._seen.setdefault(key, 0)

    def seen(self, key: str) -> int:
        """Requests of a key with a rule (answered or failed) so far."""
        with self._lock:
            return self._seen.get(key, 0)

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()
            self._seen.clear()
            self._paths.clear()

    def paths(self) -> list[str]:
        """The paths of every request so far."""
        with self._lock:
            return list(self._paths)

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=30)


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (taken and released: a connection is refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def silent_server() -> Iterator[str]:
    """An endpoint (``http://127.0.0.1:port``) that accepts connections, reads what it is sent and never answers;
    its connections are closed on exit."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            held.append(conn)   # kept open, never written to

    thread = threading.Thread(target=accept, name="silent-s3", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=30)
        for conn in held:
            conn.close()
        listener.close()
