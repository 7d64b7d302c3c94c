"""A counting HTTP reverse proxy for an S3-compatible server: every request is forwarded unchanged (same method,
path, headers, body) to the upstream server, and counted by client and kind, with the bytes of the answers.

Kinds: ``GET object`` (a whole object), ``GET range`` (a ``Range`` header), ``HEAD``, ``LIST`` (a GET on a bucket
with ``list-type`` / ``prefix`` / ``delimiter``, or on the bucket itself), ``other`` (PUT, POST, DELETE...).
Clients by ``User-Agent``: ``spark`` (the AWS SDK for Java, which Hadoop's S3A connector uses), ``planner``
(the AWS SDK for C++, which pyarrow's ``S3FileSystem`` uses), ``other`` (boto3, anything else)::

    with CountingProxy("http://127.0.0.1:5000") as proxy:
        ...                                     # point clients at proxy.endpoint
        counts = proxy.take()                   # {(client, kind): Count(requests, bytes)}, and zeroed
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["CLIENTS", "KINDS", "Count", "CountingProxy", "client_of", "kind_of"]

KINDS = ("GET object", "GET range", "HEAD", "LIST", "other")
CLIENTS = ("planner", "spark", "other")
_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}


@dataclass
class Count:
    requests: int = 0
    bytes: int = 0


def client_of(user_agent: str) -> str:
    ua = user_agent.lower()
    if "aws-sdk-java" in ua or "hadoop" in ua:
        return "spark"
    if "aws-sdk-cpp" in ua or "arrow" in ua:
        return "planner"
    return "other"


def kind_of(method: str, target: str, has_range: bool) -> str:
    parts = urlsplit(target)
    if method == "HEAD":
        return "HEAD"
    if method != "GET":
        return "other"
    query = parse_qs(parts.query, keep_blank_values=True)
    path = parts.path.strip("/")
    if {"list-type", "prefix", "delimiter"} & query.keys() or ("/" not in path and "uploads" not in query):
        return "LIST"   # path-style: /bucket?list-type=2&prefix=... (a bare /bucket GET lists it too)
    return "GET range" if has_range else "GET object"


class CountingProxy:
    """A threaded reverse proxy on 127.0.0.1 (a free port) in front of ``upstream`` (``http://host:port``)."""

    def __init__(self, upstream: str) -> None:
        up = urlsplit(upstream)
        self._host, self._port = up.hostname or "127.0.0.1", up.port or 80
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str], Count] = {}
        self._local = threading.local()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                status, reason, out_headers, data = proxy._upstream(self.command, self.path, body, headers)
                proxy._count(client_of(self.headers.get("User-Agent", "")),
                             kind_of(self.command, self.path, "Range" in self.headers), len(data))
                self.send_response(status, reason)
                for k, v in out_headers:   # a HEAD's Content-Length is the object's size: passed on as is
                    if k.lower() not in _HOP and (k.lower() != "content-length" or self.command == "HEAD"):
                        self.send_header(k, v)
                if self.command != "HEAD":
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread: threading.Thread | None = None

    def _upstream(self, method: str, path: str, body: bytes | None,
                  headers: Mapping[str, str]) -> tuple[int, str, list[tuple[str, str]], bytes]:
        for attempt in (0, 1):   # one connection per serving thread, kept alive; a stale one is opened again
            conn = getattr(self._local, "conn", None)
            if conn is None:
                conn = self._local.conn = http.client.HTTPConnection(self._host, self._port, timeout=300)
            try:
                conn.request(method, path, body=body, headers=dict(headers))
                resp = conn.getresponse()
                data = resp.read()
                return resp.status, resp.reason, resp.getheaders(), data
            except (http.client.HTTPException, OSError):
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _count(self, client: str, kind: str, n: int) -> None:
        with self._lock:
            c = self._counts.setdefault((client, kind), Count())
            c.requests += 1
            c.bytes += n

    def take(self) -> dict[tuple[str, str], Count]:
        """The counts since the last take (or start), zeroed."""
        with self._lock:
            out, self._counts = self._counts, {}
        return out

    def start(self) -> CountingProxy:
        self._thread = threading.Thread(target=self._server.serve_forever, name="counting-proxy", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> CountingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
