"""Where a table's files live: a local folder or object storage (S3, GCS, HDFS, ...), through one interface.

    storage = Storage.for_uri("s3://bucket/warehouse/events", {"endpoint_override": "http://127.0.0.1:9000"})
    storage.list_dir(storage.join(storage.uri, ".hoodie"))     # one listing request (paged by 1,000 on S3)
    storage.read_bytes(storage.join(storage.uri, ".hoodie", "hoodie.properties"))
    storage.requests.counts()                                 # {"list": 1, "head": 1, "get": 1, ...}

A *location* is how the rest of hive-bridge names a file: for a local table an absolute path (exactly as
before object storage was supported), for any other table a URI under the table's URI (``s3://bucket/t/p/f``).
``Storage.fs_path`` turns a location into the path of the ``pyarrow.fs`` file system.

Local tables keep their fast paths (``os.scandir``, ``os.pread`` of footers, memory-mapped index segments);
what changes for object storage is that listings are ``get_file_info(FileSelector)`` calls, one per folder,
and files are read through ``pyarrow.fs`` with the size the listing already gave when there is one (parquet
footers and index segments need no HEAD request then).

Credentials, endpoint and region come from the usual environment variables (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``/``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL_S3``/
``AWS_ENDPOINT_URL``; Google's application default credentials; HDFS's ``HADOOP_*`` settings), overridden by
storage options (``--storage-option k=v``, ``storage_options=``): the keyword arguments of the pyarrow file
system (``S3FileSystem(endpoint_override=..., region=..., access_key=..., ...)``) or their AWS aliases
(``aws_access_key_id``, ``aws_secret_access_key``, ``aws_session_token``, ``aws_region``, ``endpoint_url``).
An S3 URI may hold them too (``s3://ACCESS_KEY:SECRET_KEY@bucket/path``, the secret URL-encoded if it holds a
``/``: ``%2F``): they are taken out of the URI (the table's URI, its files' locations and cache keys never hold
them) and used as ``access_key``/``secret_key`` unless the options give credentials. No credential is ever
printed (see :mod:`hive_bridge.redaction`).
Set ``AWS_EC2_METADATA_DISABLED=true`` where no EC2 metadata service exists, so that a credential lookup never
waits on the network.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from hive_bridge import config
from hive_bridge.errors import HiveBridgeError
from hive_bridge.redaction import AZURE_SCHEMES, register_options, register_secret, split_userinfo

#: schemes read as local paths
LOCAL_SCHEMES = ("", "file")
#: schemes of S3-compatible object storage (Hadoop names them s3a/s3n; pyarrow reads them all as S3)
S3_SCHEMES = ("s3", "s3a", "s3n")
GCS_SCHEMES = ("gs", "gcs")
HDFS_SCHEMES = ("hdfs", "viewfs")
#: schemes Spark's own (Hadoop) file systems open without extra jars: their files can be handed to Spark's
#: parquet reader; any other table is read through pyarrow.fs in Spark's Python workers
SPARK_NATIVE_SCHEMES = ("", "file", "hdfs", "viewfs")
#: keys of an S3 listing page: one ListObjectsV2 request returns at most this many keys and prefixes
S3_LIST_PAGE = 1000
#: bytes pyarrow's parquet reader reads from a file's end first (the footer, when it is shorter)
_FOOTER_READ = 64 * 1024
#: the part size of pyarrow's S3 uploads
_UPLOAD_PART = 10 * 1024 * 1024

#: what an option's name looks like (a text that does not may be a credential, and is never shown)
_OPTION_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
#: storage options read as booleans / integers / floats (the rest stay strings)
_BOOL_OPTIONS = frozenset({"anonymous", "background_writes", "allow_bucket_creation", "allow_bucket_deletion",
                           "force_virtual_addressing", "allow_delayed_open",
                           "check_directory_existence_before_creation"})
_NUMBER_OPTIONS = frozenset({"request_timeout", "connect_timeout", "max_attempts", "port", "load_frequency", "buffer_size",
                             "replication", "default_block_size", "retry_time_limit"})
_S3_ALIASES = {
    "aws_access_key_id": "access_key",
    "aws_secret_access_key": "secret_key",
    "aws_session_token": "session_token",
    "aws_region": "region",
    "region_name": "region",
    "endpoint_url": "endpoint_override",
    "aws_endpoint_url": "endpoint_override",
    "endpoint": "endpoint_override",
}


class StorageError(HiveBridgeError):
    """A storage URI or option that cannot be used, or a storage request that failed; says which and why."""


class Entry(NamedTuple):
    """One entry of a folder listing: its name, its size (None for folders), whether it is a folder, its
    modification time in seconds."""

    name: str
    size: int | None
    is_dir: bool
    mtime: float


@dataclass
class RequestCounter:
    """Requests a Storage made, by kind: ``list`` (listing requests: one per 1,000 keys on S3), ``head``
    (metadata of one object: what pyarrow does before reading a file it does not know the size of), ``get``
    (reads: one ranged read each), ``put``, ``delete``. Thread-safe."""

    list: int = 0
    head: int = 0
    get: int = 0
    put: int = 0
    delete: int = 0
    #: multipart-upload bookkeeping (create, complete) of large writes
    other: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, kind: str, n: int = 1) -> None:
        with self._lock:
            setattr(self, kind, getattr(self, kind) + n)

    @property
    def total(self) -> int:
        return self.list + self.head + self.get + self.put + self.delete + self.other

    def counts(self) -> dict[str, int]:
        """The counts now, with their ``total``."""
        with self._lock:
            out = {"list": self.list, "head": self.head, "get": self.get, "put": self.put, "delete": self.delete,
                   "other": self.other}
        out["total"] = sum(out.values())
        return out

    def since(self, before: Mapping[str, int]) -> dict[str, int]:
        """The requests made since ``before`` (a snapshot)."""
        now = self.counts()
        return {k: now[k] - before.get(k, 0) for k in now}


def _option_value(key: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if key in _BOOL_OPTIONS:
        low = value.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise StorageError(f"storage option {key}: not a boolean (use true or false)")
    if key in _NUMBER_OPTIONS:
        try:
            return float(value) if "." in value else int(value)
        except ValueError:
            raise StorageError(f"storage option {key}: not a number") from None
    return value


def _option_named(exc: TypeError, options: Mapping[str, Any]) -> str:
    """The option a file system refused, for a message: its name when it looks like one (lower case, ``_``),
    else its place: a key that is no option name may be a credential given without its key (a secret key
    holding ``=`` parses as ``KEY=VALUE``)."""
    names = [k for k in options if f"'{k}'" in str(exc)]
    if not names:
        return "(not shown: it may be a credential)"
    if _OPTION_NAME.fullmatch(names[0]) and names[0].islower():
        return names[0]
    return f"number {list(options).index(names[0]) + 1} (not shown: it may be a credential)"


def parse_storage_options(items: Iterable[str]) -> dict[str, str]:
    """``k=v`` texts (the CLI's repeatable ``--storage-option``) as a mapping; a text without ``=`` is refused
    (the error says which by its number, not its text)."""
    out: dict[str, str] = {}
    for n, item in enumerate(items, start=1):
        key, sep, value = item.partition("=")
        if not sep or not _OPTION_NAME.fullmatch(key.strip()):   # not shown: it may be a credential
            raise StorageError(f"storage option {n} ({len(item)} characters, not shown): expected KEY=VALUE, "
                               "KEY an option name such as endpoint_override")
        out[key.strip()] = value
    return out


def split_uri(uri: str) -> tuple[str, str]:
    """(scheme in lower case, the rest) of a URI; ("", path) for a plain path. A Windows drive letter is no
    scheme."""
    if "://" not in uri and not uri.startswith("file:"):
        return "", uri
    parts = urlsplit(uri)
    if len(parts.scheme) <= 1:
        return "", uri
    return parts.scheme.lower(), uri


def is_local_uri(uri: str | os.PathLike[str]) -> bool:
    """Whether a table URI or path names a local folder (a plain path or ``file:``)."""
    return split_uri(os.fspath(uri))[0] in LOCAL_SCHEMES


def _s3_endpoint(kwargs: Mapping[str, Any]) -> str | None:
    """The endpoint of S3 requests as ``scheme://host[:port]`` (for messages; None: AWS's own)."""
    endpoint = kwargs.get("endpoint_override") or os.environ.get("AWS_ENDPOINT_URL_S3") \
        or os.environ.get("AWS_ENDPOINT_URL")
    if not endpoint:
        return None
    text = str(endpoint).rstrip("/")
    return text if "://" in text else f"{kwargs.get('scheme') or 'https'}://{text}"


def _s3_kwargs(options: Mapping[str, Any]) -> dict[str, Any]:
    """pyarrow S3FileSystem's keyword arguments for hive-bridge's storage options: the AWS aliases renamed, the
    endpoint split into scheme and host, the region and endpoint from the environment, the timeouts and the number
    of attempts from :func:`hive_bridge.config.settings` unless the options give them (``max_attempts``: a
    bounded retry of throttled and failed requests)."""
    kwargs: dict[str, Any] = {}
    for key, value in options.items():
        name = _S3_ALIASES.get(key.lower(), key)
        kwargs[name] = _option_value(name, value)
    endpoint = _s3_endpoint(kwargs)
    if endpoint:
        # pyarrow's S3FileSystem() ignores the AWS_ENDPOINT_URL variables (only from_uri reads them), and wants
        # the scheme apart
        scheme, _, host = endpoint.partition("://")
        kwargs.setdefault("scheme", scheme)
        kwargs["endpoint_override"] = host
    # a small write is then one PutObject instead of a multipart upload (create, part, complete)
    kwargs.setdefault("allow_delayed_open", True)
    if "region" not in kwargs:
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        if region:
            kwargs["region"] = region
    defaults = config.settings()
    kwargs.setdefault("connect_timeout", defaults.s3_connect_timeout)
    kwargs.setdefault("request_timeout", defaults.s3_request_timeout)
    attempts = kwargs.pop("max_attempts", defaults.s3_max_attempts)
    if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1:
        raise StorageError("storage option max_attempts: not a whole number from 1 on")
    kwargs["retry_strategy"] = pafs.AwsStandardS3RetryStrategy(max_attempts=attempts)
    return kwargs


def _s3_filesystem(options: Mapping[str, Any]) -> pafs.FileSystem:
    kwargs = _s3_kwargs(options)
    try:
        return pafs.S3FileSystem(**kwargs)
    except TypeError as exc:
        raise StorageError(f"unknown S3 storage option {_option_named(exc, kwargs)} (options are "
                           "pyarrow.fs.S3FileSystem's keyword arguments or aws_access_key_id, aws_secret_access_key, "
                           "aws_session_token, aws_region, endpoint_url, max_attempts)") from None
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise StorageError(f"cannot set up S3 access: {exc}") from None


def without_userinfo(scheme: str, uri: str, options: dict[str, str]) -> tuple[str, dict[str, str]]:
    """The URI without its user info, and the storage options with what the user info says: for S3
    ``s3://KEY:SECRET@bucket/t`` is ``s3://bucket/t`` with ``access_key`` and ``secret_key`` (URL-decoded; unless
    the options give credentials); for HDFS ``hdfs://user@nn`` is ``hdfs://nn`` as ``user``. Azure's
    ``container@account`` is no user info. A password is hidden in every output from then on."""
    if scheme in AZURE_SCHEMES:
        return uri, options
    bare, userinfo = split_userinfo(uri)
    if userinfo is None:
        return uri, options
    user, colon, password = userinfo.partition(":")
    register_secret(password)
    if scheme in S3_SCHEMES and colon:
        if not {_S3_ALIASES.get(k.lower(), k) for k in options} & {"access_key", "secret_key"}:
            options = {**options, "access_key": unquote(user), "secret_key": unquote(password)}
        return bare, options
    if scheme in HDFS_SCHEMES and not colon:
        return bare, {"user": unquote(user), **options}
    if scheme in S3_SCHEMES:
        why = "the user info of an S3 URI must be ACCESS_KEY:SECRET_KEY"
    elif scheme in HDFS_SCHEMES:
        why = "an HDFS URI may name a user, not a password"
    else:
        why = f"credentials in a {scheme}:// URI are not read"
    raise StorageError(f"{bare}: {why} (credentials can be given as storage options)")


def _filesystem(scheme: str, uri: str, options: Mapping[str, Any]) -> tuple[pafs.FileSystem, str]:
    """The pyarrow file system of a URI and the URI's path in it."""
    parts = urlsplit(uri)
    if scheme in S3_SCHEMES:
        if not parts.netloc:
            raise StorageError(f"{uri}: no bucket in the URI (expected {scheme}://bucket/path)")
        return _s3_filesystem(options), f"{parts.netloc}{unquote(parts.path)}".rstrip("/")
    if scheme in GCS_SCHEMES:
        if not parts.netloc:
            raise StorageError(f"{uri}: no bucket in the URI (expected gs://bucket/path)")
        kwargs = {k: _option_value(k, v) for k, v in options.items()}
        try:
            fs: pafs.FileSystem = pafs.GcsFileSystem(**kwargs)
        except TypeError as exc:
            raise StorageError(f"unknown GCS storage option {_option_named(exc, kwargs)}") from None
        return fs, f"{parts.netloc}{unquote(parts.path)}".rstrip("/")
    if scheme in HDFS_SCHEMES:
        kwargs = {k: _option_value(k, v) for k, v in options.items()}
        host = kwargs.pop("host", None) or (f"{scheme}://{parts.hostname}" if parts.hostname else "default")
        port = kwargs.pop("port", None) or parts.port or 0
        try:
            fs = pafs.HadoopFileSystem(host, int(port), **kwargs)
        except TypeError as exc:
            raise StorageError(f"unknown HDFS storage option {_option_named(exc, kwargs)}") from None
        except (OSError, pa.ArrowException) as exc:
            raise StorageError(f"{uri}: cannot connect to HDFS: {exc}") from None
        return fs, unquote(parts.path).rstrip("/") or "/"
    try:
        if options:
            raise StorageError(f"{uri}: storage options are not supported for {scheme}:// (only s3, gs, hdfs)")
        fs, path = pafs.FileSystem.from_uri(uri)
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise StorageError(f"{uri}: no file system for {scheme}:// URIs: {exc}") from None
    return fs, path.rstrip("/")


#: what pyarrow's message of an S3 request the server throttled or failed holds (retried, up to max_attempts)
_RETRIED = re.compile(r"SLOW_DOWN|THROTTL|INTERNAL_FAILURE|SERVICE_UNAVAILABLE|HTTP status 5\d\d|SlowDown|"
                      r"InternalError|ServiceUnavailable")
#: ... of one that never reached the server or got no answer
_UNREACHED = re.compile(r"NETWORK_CONNECTION|curlCode|Timeout was reached|Could not connect|Couldn't connect")


@dataclass(frozen=True)
class Reach:
    """How a Storage reaches object storage, for its error messages: the endpoint (None: the provider's own),
    the attempts of one request, the connect and request timeouts in seconds."""

    endpoint: str | None = None
    attempts: int = 1
    connect_timeout: float | None = None
    request_timeout: float | None = None

    def explain(self, text: str) -> str:
        """What to add to a failure's message: the attempts made, the endpoint that was not reached."""
        where = f"the endpoint {self.endpoint}" if self.endpoint else "the default S3 endpoint"
        if _UNREACHED.search(text):
            return (f"; {where} was not reached or did not answer (gave up after {self.attempts} attempt(s), "
                    f"connect timeout {self.connect_timeout:g} s, request timeout {self.request_timeout:g} s)")
        if _RETRIED.search(text):
            return (f"; {where} throttled or failed every attempt (gave up after {self.attempts} attempt(s): "
                    "HIVE_BRIDGE_S3_MAX_ATTEMPTS or storage option max_attempts)")
        return ""


def _arrow_error(location: str, doing: str, exc: BaseException, reach: Reach | None = None) -> OSError:
    """An OSError naming the location for a pyarrow failure (FileNotFoundError / PermissionError kept); for a
    request that was retried or did not reach the server, how often and where (``reach``)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    # pyarrow's "When reading information for key 'k' in bucket 'b': " repeats the location
    text = re.sub(r"^When [a-z ]+ (?:for )?key '[^']*' in bucket '[^']*': ", "", text)
    if isinstance(exc, FileNotFoundError) or any(w in text for w in ("NoSuchKey", "RESOURCE_NOT_FOUND",
                                                                      "does not exist", "HTTP status 404")):
        return FileNotFoundError(f"{location}: {doing}: not found ({text})")
    if isinstance(exc, PermissionError) or any(w in text for w in ("AccessDenied", "ACCESS_DENIED", "Access Denied",
                                                                   "Forbidden", "HTTP status 403")):
        return PermissionError(f"{location}: {doing}: access denied ({text})")
    return OSError(f"{location}: {doing}: {text}{reach.explain(text) if reach else ''}")


class _RangeReader(io.RawIOBase):
    """A read-only, seekable file over ``read(offset, length)`` (:meth:`Storage.ranges`: one counted GET a call)."""

    def __init__(self, size: int, read: Callable[[int, int], bytes]) -> None:
        super().__init__()
        self._size, self._read, self._pos = size, read, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        length = min(len(buffer), self._size - self._pos)
        if length <= 0:
            return 0
        data = self._read(self._pos, length)
        buffer[:len(data)] = data
        self._pos += len(data)
        return len(data)


@dataclass(frozen=True, eq=False)
class Storage:
    """A table's file system: a ``pyarrow.fs`` FileSystem, the table root's path in it and the table's URI (an
    absolute path for a local table), and the requests made through it (``requests``)."""

    fs: pafs.FileSystem
    root: str
    uri: str
    scheme: str = ""
    options: Mapping[str, str] = field(default_factory=dict, repr=False)
    requests: RequestCounter = field(default_factory=RequestCounter, repr=False)
    #: the endpoint, attempts and timeouts of object storage (for error messages)
    reach: Reach = field(default_factory=Reach, repr=False)

    # --------------------------------------------------------------------------------------------- making

    @classmethod
    def for_uri(cls, uri: str | os.PathLike[str], options: Mapping[str, str] | None = None) -> Storage:
        """The storage of a table URI (``s3://bucket/path``, ``gs://``, ``hdfs://``, ``file:``) or local path."""
        text = os.fspath(uri)
        scheme, _ = split_uri(text)
        opts = dict(options or {})
        register_options(opts)
        if scheme in LOCAL_SCHEMES:
            if opts:
                raise StorageError(f"{text}: storage options are for object storage, not a local folder")
            path = unquote(urlsplit(text).path) if scheme == "file" else text
            root = str(Path(path).absolute())
            return cls(pafs.LocalFileSystem(), root, root, "")
        # the URI kept (locations, cache keys, the index's cache folder) holds no credential
        text, opts = without_userinfo(scheme, text, opts)
        fs, root = _filesystem(scheme, text, opts)
        reach = Reach()
        if scheme in S3_SCHEMES:
            kwargs = _s3_kwargs(opts)
            reach = Reach(_s3_endpoint(kwargs) if kwargs.get("endpoint_override") else None,
                          kwargs["retry_strategy"].max_attempts, kwargs["connect_timeout"], kwargs["request_timeout"])
        return cls(fs, root, text.rstrip("/"), scheme, opts, reach=reach)

    @classmethod
    def local(cls, path: str | os.PathLike[str]) -> Storage:
        return cls.for_uri(os.fspath(path))

    # -------------------------------------------------------------------------------------------- naming

    @property
    def is_local(self) -> bool:
        return self.scheme in LOCAL_SCHEMES

    @property
    def spark_readable(self) -> bool:
        """Whether Spark's own (Hadoop) file systems open this table's files without extra jars."""
        return self.scheme in SPARK_NATIVE_SCHEMES

    def join(self, base: str, *parts: str) -> str:
        """A location under ``base``, ``/``-joined (empty parts skipped)."""
        out = base.rstrip("/") if base not in ("/", "") else base
        for p in parts:
            p = p.strip("/")
            if p:
                out = f"{out}/{p}" if out not in ("", "/") else f"{out}{p}"
        return out

    def fs_path(self, location: str | os.PathLike[str]) -> str:
        """The file system path of a location (the identity for local tables)."""
        loc = os.fspath(location)
        if self.is_local:
            return loc
        uri = self.uri
        if loc == uri:
            return self.root
        if loc.startswith(uri + "/"):
            return self.root + loc[len(uri):]
        scheme, _ = split_uri(loc)
        if scheme:
            parts = urlsplit(loc)
            if scheme in HDFS_SCHEMES:
                return unquote(parts.path)
            return f"{parts.netloc}{unquote(parts.path)}"
        return loc

    def location(self, fs_path: str) -> str:
        """The location of a file system path (inverse of :meth:`fs_path` under the table's root)."""
        if self.is_local:
            return fs_path
        if fs_path == self.root:
            return self.uri
        if fs_path.startswith(self.root + "/"):
            return self.uri + fs_path[len(self.root):]
        return f"{self.scheme}://{fs_path.lstrip('/')}" if self.scheme not in HDFS_SCHEMES else fs_path

    def cache_key(self) -> str:
        """A short stable name of this table for local cache folders (hash of its URI)."""
        return hashlib.sha256(self.uri.encode("utf-8")).hexdigest()[:24]

    # ------------------------------------------------------------------------------------------- listing

    def list_infos(self, location: str) -> list[pafs.FileInfo]:
        """The entries of one folder as pyarrow FileInfo objects (paths in the file system's terms): one
        ``get_file_info(FileSelector)`` call. Raises FileNotFoundError for a folder that is not there (on object
        storage: no object under the prefix), OSError naming the folder for any other failure."""
        path = self.fs_path(location)
        try:
            infos: list[pafs.FileInfo] = self.fs.get_file_info(pafs.FileSelector(path))
        except FileNotFoundError:
            self.requests.add("list")
            raise FileNotFoundError(f"{location}: no such folder") from None
        except (OSError, pa.ArrowException) as exc:
            self.requests.add("list")
            raise _arrow_error(location, "cannot list", exc, self.reach) from None
        self.requests.add("list", self._list_pages(len(infos)))
        return infos

    def _list_pages(self, entries: int) -> int:
        if self.scheme in S3_SCHEMES:
            return max(1, -(-entries // S3_LIST_PAGE))
        return 1

    def list_dir(self, location: str) -> list[Entry]:
        """The entries of one folder (files with their sizes, folders), from one listing."""
        if self.is_local:
            self.requests.add("list")
            out: list[Entry] = []
            with os.scandir(location) as it:
                for e in it:
                    if e.is_dir():
                        out.append(Entry(e.name, None, True, 0.0))
                    elif e.is_file():
                        st = e.stat()
                        out.append(Entry(e.name, st.st_size, False, st.st_mtime))
            return out
        infos = self.list_infos(location)
        dir_type = pafs.FileType.Directory
        return [Entry(i.base_name, i.size, i.type == dir_type, (i.mtime_ns or 0) / 1e9) for i in infos]

    def file_names(self, location: str) -> list[str]:
        """The names of the files (not folders) of one folder."""
        if self.is_local:
            self.requests.add("list")
            with os.scandir(location) as it:
                return [e.name for e in it if e.is_file()]
        return [e.name for e in self.list_dir(location) if not e.is_dir]

    def has_files(self, location: str) -> bool:
        """Whether a folder holds at least one file (False when it is not there or cannot be listed)."""
        try:
            return bool(self.file_names(location))
        except OSError:
            return False

    def is_file(self, location: str) -> bool:
        """Whether a file exists (one HEAD request on object storage)."""
        if self.is_local:
            return os.path.isfile(location)
        self.requests.add("head")
        try:
            info = self.fs.get_file_info(self.fs_path(location))
        except (OSError, pa.ArrowException):
            return False
        return bool(info.type == pafs.FileType.File)

    # ------------------------------------------------------------------------------------------- reading

    def read_bytes(self, location: str) -> bytes:
        """A whole file (on object storage: a HEAD for its size, one GET). Raises FileNotFoundError /
        PermissionError / OSError naming the location."""
        if self.is_local:
            self.requests.add("get")
            with open(location, "rb") as fh:
                return fh.read()
        self.requests.add("head")
        try:
            with self.fs.open_input_file(self.fs_path(location)) as f:
                self.requests.add("get")
                return bytes(f.read())
        except (OSError, pa.ArrowException) as exc:
            raise _arrow_error(location, "cannot read", exc, self.reach) from None

    def read_tail(self, location: str, length: int) -> tuple[bytes, int]:
        """The last ``length`` bytes of a file (fewer when it is shorter) and the file's size."""
        if self.is_local:
            self.requests.add("get")
            with open(location, "rb") as fh:
                size = fh.seek(0, os.SEEK_END)
                fh.seek(max(0, size - length))
                return fh.read(), size
        self.requests.add("head")
        try:
            with self.fs.open_input_file(self.fs_path(location)) as f:
                size = f.size()
                self.requests.add("get")
                return bytes(f.read_at(min(length, size), max(0, size - length))), size
        except (OSError, pa.ArrowException) as exc:
            raise _arrow_error(location, "cannot read", exc, self.reach) from None

    def ranges(self, location: str) -> tuple[int, Callable[[int, int], bytes]]:
        """A file's size and a function reading ``length`` bytes at ``offset`` of it (one GET a call; opening it
        is one HEAD on object storage). Both raise FileNotFoundError / PermissionError / OSError naming the
        location."""
        if self.is_local:
            size = os.stat(location).st_size

            def read_local(offset: int, length: int) -> bytes:
                self.requests.add("get")
                with open(location, "rb") as fh:
                    fh.seek(offset)
                    return fh.read(length)

            return size, read_local
        self.requests.add("head")
        try:
            f = self.fs.open_input_file(self.fs_path(location))
            size = int(f.size())
        except (OSError, pa.ArrowException) as exc:
            raise _arrow_error(location, "cannot read", exc, self.reach) from None
        lock = threading.Lock()

        def read_remote(offset: int, length: int) -> bytes:
            self.requests.add("get")
            try:
                with lock:
                    return bytes(f.read_at(length, offset))
            except (OSError, pa.ArrowException) as exc:
                raise _arrow_error(location, "cannot read", exc, self.reach) from None

        return size, read_remote

    def size(self, location: str) -> int:
        """A file's size (one HEAD request on object storage). Raises FileNotFoundError / OSError."""
        if self.is_local:
            return os.stat(location).st_size
        self.requests.add("head")
        try:
            info = self.fs.get_file_info(self.fs_path(location))
        except (OSError, pa.ArrowException) as exc:
            raise _arrow_error(location, "cannot read", exc, self.reach) from None
        if info.type != pafs.FileType.File or info.size is None:
            raise FileNotFoundError(f"{location}: not found")
        return int(info.size)

    def parquet_fragment(self, location: str, size: int | None = None) -> Any:
        """A pyarrow dataset fragment of one parquet file; with ``size`` (from the listing) opening it needs no
        HEAD request."""
        import pyarrow.dataset as ds

        return ds.ParquetFileFormat().make_fragment(self.fs_path(location), filesystem=self.fs, file_size=size)

    def counted_parquet_fragment(self, location: str, size: int | None = None) -> Any:
        """A pyarrow dataset fragment of one parquet file whose every request is counted (reads of columns, not
        only of the footer): on object storage one HEAD to open it and one GET per range pyarrow reads (footer,
        column chunks), as the server sees them; locally :meth:`parquet_fragment`."""
        if self.is_local:
            return self.parquet_fragment(location, size)
        import pyarrow.dataset as ds

        total, read = self.ranges(location)
        return ds.ParquetFileFormat().make_fragment(pa.PythonFile(_RangeReader(total, read), mode="r"))

    def parquet_metadata(self, location: str, size: int) -> Any:
        """The parquet footer (``pyarrow.parquet.FileMetaData``) of a file of ``size`` bytes (the listed size:
        no HEAD request): one ranged GET of the file's last 64 KiB, a second one when the footer is longer (Hudi
        keeps a bloom filter in it). Raises OSError naming the location, or pyarrow's error for a damaged
        file."""
        try:
            md = self.parquet_fragment(location, size).metadata
        except OSError as exc:
            self.requests.add("get")
            raise _arrow_error(location, "cannot read parquet footer", exc, self.reach) from None
        except Exception:
            self.requests.add("get")
            raise
        self.requests.add("get", 1 + (md.serialized_size + 8 > min(size, _FOOTER_READ)))
        return md

    # ------------------------------------------------------------------------------------------- writing

    def write_bytes(self, location: str, data: bytes) -> None:
        """Write a whole file at once: on object storage one PUT (an object appears whole or not at all);
        locally a temporary file renamed into place. Raises PermissionError / OSError naming the location."""
        if self.is_local:
            self.requests.add("put")
            folder, _, name = location.rpartition("/")
            os.makedirs(folder, exist_ok=True)
            tmp = f"{folder}/.tmp-{name}"
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, location)
            return
        # with allow_delayed_open (set for S3 here), a write shorter than one part is a single PutObject;
        # a longer one a multipart upload: create, one PUT per part, complete
        parts = -(-len(data) // _UPLOAD_PART) if self.scheme in S3_SCHEMES else 1
        self.requests.add("put", max(1, parts))
        if parts > 1:
            self.requests.add("other", 2)
        try:
            with self.fs.open_output_stream(self.fs_path(location)) as out:
                out.write(data)
        except (OSError, pa.ArrowException) as exc:
            raise _arrow_error(location, "cannot write", exc, self.reach) from None

    def delete(self, location: str) -> None:
        """Delete a file (missing is fine)."""
        self.requests.add("delete")
        try:
            if self.is_local:
                os.unlink(location)
            else:
                self.fs.delete_file(self.fs_path(location))
        except FileNotFoundError:
            pass
        except (OSError, pa.ArrowException) as exc:
            raise _arrow_error(location, "cannot delete", exc, self.reach) from None


#: file systems made from the environment, by scheme and bucket
_FROM_ENV: dict[tuple[str, str], Storage] = {}
config.register_cache("storage: storages opened from the environment", _FROM_ENV.clear)
_OPEN_LOCK = threading.Lock()


def environment_storage(location: str | os.PathLike[str]) -> Storage | None:
    """A Storage for a location of which nothing but the location is known: None for a local path (read with
    plain OS calls); for a URI, one made from the environment for its bucket (credentials and endpoint as
    pyarrow's file systems take them), made once per bucket. For readers in worker processes, which are handed
    file locations only; a reader in the process that opened the table is handed the table's own Storage."""
    loc = os.fspath(location)
    scheme, _ = split_uri(loc)
    if scheme in LOCAL_SCHEMES:
        return None
    parts = urlsplit(loc)
    key = (scheme, parts.netloc)
    with _OPEN_LOCK:
        found = _FROM_ENV.get(key)
    if found is None:
        found = Storage.for_uri(f"{scheme}://{parts.netloc}")
        with _OPEN_LOCK:
            _FROM_ENV[key] = found
    return found


def cache_root() -> Path:
    """The local cache folder of hive-bridge: ``$HIVE_BRIDGE_CACHE``, else ``$XDG_CACHE_HOME/hive-bridge``, else
    ``~/.cache/hive-bridge``."""
    return config.settings().cache_root


__all__ = [
    "Entry",
    "RequestCounter",
    "Storage",
    "StorageError",
    "cache_root",
    "environment_storage",
    "is_local_uri",
    "parse_storage_options",
    "split_uri",
    "without_userinfo",
]
