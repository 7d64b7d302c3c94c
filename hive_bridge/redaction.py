"""No credential in any output: :func:`redact` takes credentials out of any text hive-bridge shows or writes.

Every way out goes through it:

- the ``hive-bridge`` command's standard output and error (messages, tables, JSON, warnings, log records, an
  internal error's traceback): :func:`redacted_output` wraps both streams in :class:`RedactingStream` for the
  whole run, argument parsing included;
- the HTML report: its data is redacted (:func:`redact_data`) before the page is made from it;
- the Spark data source's scan reports: each report is redacted before it is written;
- every :class:`~hive_bridge.errors.HiveBridgeError`'s message, so a library's message put into one (pyarrow's,
  a Thrift client's: they often quote the URI) is redacted with it, for programs using the Python API too.

The streams redact whole lines; a text the console folds over several lines (a long cell of a table on a narrow
terminal) is redacted where it is made as well: the reports redact the table URIs they print, and error messages
are redacted when they are made into text.

Inside, a table's URI holds no credential either: :class:`~hive_bridge.storage.core.Storage` takes the user
info out of it (S3's ``access:secret@`` becomes storage options), so the locations of its files, the cache keys
and the index's cache folder are made from the URI without it.

What :func:`redact` removes:

1. a URI's user info. ``scheme://user:password@host``: everything from ``://`` to the *last* ``@`` before the
   URI ends (at white space, a quote, ``<``, ``>`` or a backtick), as a password may hold ``/``, ``@``, ``:``,
   ``+``, ``=`` or ``%2F`` (a real AWS secret key often holds ``/``). Without a colon (``scheme://token@host``)
   it is removed too, up to the first ``/``; but for Azure (``abfs``, ``abfss``, ``wasb``, ``wasbs``), where
   ``container@account.dfs.core.windows.net`` names a container, not a credential, it stays;
2. the same without its scheme, as libraries print the path they were given (``key:secret@bucket/path``);
3. the value of a parameter named like a credential — ``k=v``, ``k='v'``, ``"k": "v"`` where ``k`` holds
   ``secret``, ``password``, ``token``, ``signature``, ``credential``, ``access_key``, ``account_key``,
   ``private_key``, ``api_key`` (``X-Amz-Signature``, ``X-Amz-Credential``, ``fs.s3a.secret.key``,
   ``aws_session_token``, …) or is ``sig``, ``sas``, ``pwd`` — is shown as ``***``; so are an
   ``Authorization`` header's value and a bearer token;
4. every credential registered (:func:`register_secret`: what the command line, the storage options and the
   URIs opened hold), wherever it appears and however it is quoted (as given, URL-decoded or -encoded, JSON- or
   HTML-escaped), so that a message quoting it some other way hides it too. A credential shorter than
   :data:`MIN_SECRET_LENGTH` characters is not hidden as bare text (it would hide common words); rules 1-3
   still hide it in a URI or a ``key=value``.

A password with an unencoded ``@`` followed by more ``@`` in the path cannot be told from the path: rule 1 then
removes up to the path's ``@`` (the URI is shown shortened, never with the password).
"""

from __future__ import annotations

import html
import json
import logging
import re
import sys
import threading
import traceback
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TextIO
from urllib.parse import quote, quote_plus, unquote

__all__ = ["AZURE_SCHEMES", "MASK", "MIN_SECRET_LENGTH", "RedactingFilter", "RedactingStream", "forget_secrets",
           "is_secret_key", "redact", "redact_data", "redacted_output", "register_options", "register_secret",
           "register_secrets_in", "split_userinfo"]

#: what a hidden value is shown as
MASK = "***"
#: a registered credential shorter than this is not hidden as bare text (rules 1-3 still hide it)
MIN_SECRET_LENGTH = 6
#: schemes whose ``name@host`` is a container of a storage account, not a credential
AZURE_SCHEMES = frozenset({"abfs", "abfss", "wasb", "wasbs"})
#: a registered colon-less user info (``scheme://name@host``) is hidden as bare text only from this length on:
#: shorter ones are user names (``hdfs://hive@nn``) rather than tokens
MIN_TOKEN_LENGTH = 16

#: characters that end a URI in a text
_END = "\\s'\"<>`"
_SCHEME = r"(?<![A-Za-z0-9+.\-])(?P<scheme>(?P<name>[A-Za-z][A-Za-z0-9+.\-]*)://)"
_URI_USERINFO = re.compile(
    _SCHEME + rf"(?:(?P<pair>[^{_END}/@:]*:[^{_END}]*)|(?P<token>[^{_END}/@:]+))@")
#: what a library may print of such a URI without its scheme: ``key:secret@bucket/...``
_BARE_USERINFO = re.compile(
    rf"(?<![\w/.:@%+-])(?P<pair>[^{_END}/@:]+:[^{_END}/][^{_END}]*)@"
    rf"(?=[A-Za-z0-9][\w.-]*(?:[/:]|[{_END}]|$))")
_KEY_NAME = re.compile(r"[\w.-]*?(?:secret|passw(?:or)?d|token|signature|credential|"
                       r"(?:access|account|private|api)[_.-]?key)[\w.-]*|sig|sas|pwd", re.I)
#: ``key=`` (possessive: linear in the text's length); whether the key names a credential is asked apart
_PARAM_KEY = re.compile(r"(?<![\w.-])(?P<key>[\w.-]++)=")
#: a value: quoted, up to its closing quote; else up to white space, a quote or ``&`` (the next query parameter)
_PARAM_VALUE = re.compile(rf"'[^']*+'?|\"[^\"]*+\"?|[^{_END}&]++")
#: ``"key": "value"`` (JSON), ``'key': 'value'`` (a Python mapping's repr)
_QUOTED_PARAM = re.compile(
    r"(?P<q>['\"])(?P<key>[\w.-]++)(?P=q)(?P<sep>\s*+[:=]\s*+)(?P<vq>['\"])(?P<value>(?:\\.|(?!(?P=vq))[^\\])*+)"
    r"(?P=vq)")
_AUTHORIZATION = re.compile(r"(?P<head>\bauthorization['\"]?\s*[:=]\s*['\"]?)[^\r\n'\"]+", re.I)
_BEARER = re.compile(r"(?P<head>\bbearer\s+)[A-Za-z0-9._~+/-]{16,}=*", re.I)

_lock = threading.Lock()
_known: set[str] = set()
_known_pattern: re.Pattern[str] | None = None


def _uri_userinfo(m: re.Match[str]) -> str:
    if m.group("token") is not None and m.group("name").lower() in AZURE_SCHEMES:
        return m.group(0)
    return m.group("scheme")


def _params(text: str) -> str:
    """``text`` with the value of every ``key=value`` whose key names a credential masked."""
    out: list[str] = []
    done = 0
    for m in _PARAM_KEY.finditer(text):
        if m.start() < done or not is_secret_key(m.group("key")):
            continue
        value = _PARAM_VALUE.match(text, m.end())
        if value is None:
            continue
        v = value.group()
        quote_char = v[0] if v[0] in "'\"" else ""
        closing = quote_char if len(v) > 1 and v.endswith(quote_char) else ""
        out += [text[done:m.end()], quote_char, MASK, closing]
        done = value.end()
    return "".join(out) + text[done:] if out else text


def _quoted_param(m: re.Match[str]) -> str:
    if not is_secret_key(m.group("key")):
        return m.group(0)
    return f"{m['q']}{m['key']}{m['q']}{m['sep']}{m['vq']}{MASK}{m['vq']}"


def redact(text: str) -> str:
    """``text`` without credentials (see the module's rules): ``s3://key:secret@bucket/t`` -> ``s3://bucket/t``,
    ``…?X-Amz-Signature=abc`` -> ``…?X-Amz-Signature=***``."""
    if not text:
        return text
    pattern = _known_pattern
    if pattern is not None:
        text = pattern.sub(MASK, text)
    if "@" in text:
        text = _URI_USERINFO.sub(_uri_userinfo, text)
        text = _BARE_USERINFO.sub("", text)
    if "=" in text:
        text = _params(text)
    if "'" in text or '"' in text:
        text = _QUOTED_PARAM.sub(_quoted_param, text)
    if "uthori" in text.lower():
        text = _AUTHORIZATION.sub(lambda m: m.group("head") + MASK, text)
    if "earer" in text.lower():
        text = _BEARER.sub(lambda m: m.group("head") + MASK, text)
    return text


def redact_data(value: Any) -> Any:
    """Plain data (dicts, lists, tuples, strings, numbers) with every string, keys included, redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {redact_data(k): redact_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_data(v) for v in value)
    return value


# ------------------------------------------------------------------------------------------- known credentials


def _forms(secret: str) -> set[str]:
    """The ways a credential may be printed: as given, URL-decoded and -encoded, JSON-, HTML-, repr-escaped."""
    out: set[str] = set()
    for raw in {secret, unquote(secret)}:
        out.update({raw, quote(raw, safe=""), quote(raw, safe="/"), quote_plus(raw), json.dumps(raw)[1:-1],
                    html.escape(raw), repr(raw)[1:-1]})
    return out


def register_secret(secret: str | None) -> None:
    """Hide ``secret`` (and its encodings) wherever it appears in output from now on, in this process."""
    global _known_pattern
    if not secret:
        return
    new = {f for f in _forms(secret) if len(f) >= MIN_SECRET_LENGTH} - _known
    if not new:
        return
    with _lock:
        _known.update(new)
        _known_pattern = re.compile("|".join(re.escape(s) for s in sorted(_known, key=len, reverse=True)))


def forget_secrets() -> None:
    """Forget every registered credential (tests; a long-lived process done with a table's credentials)."""
    global _known_pattern
    with _lock:
        _known.clear()
        _known_pattern = None


def is_secret_key(key: str) -> bool:
    """Whether a parameter or storage option named ``key`` holds a credential (``secret_key``,
    ``aws_session_token``, ``X-Amz-Signature``, ``sig``, …)."""
    return _KEY_NAME.fullmatch(key.strip()) is not None


def register_options(options: Mapping[str, Any]) -> None:
    """Register the values of the storage options that hold credentials."""
    for key, value in options.items():
        if isinstance(key, str) and isinstance(value, str) and is_secret_key(key):
            register_secret(value)


def register_secrets_in(text: str) -> None:
    """Register the credentials a text (a command-line argument) holds: a URI's password (or token), the value
    of a ``key=value`` whose key names a credential (``--storage-option secret_key=…``, a query string's
    ``sig=…``)."""
    for m in _URI_USERINFO.finditer(text):
        if m.group("pair") is not None:
            register_secret(m.group("pair").partition(":")[2])
        elif m.group("name").lower() not in AZURE_SCHEMES and len(m.group("token")) >= MIN_TOKEN_LENGTH:
            register_secret(m.group("token"))
    for m in _BARE_USERINFO.finditer(text):
        register_secret(m.group("pair").partition(":")[2])
    for m in _PARAM_KEY.finditer(text):
        value = _PARAM_VALUE.match(text, m.end())
        if value is not None and is_secret_key(m.group("key")):
            register_secret(value.group().strip("'\""))
    for m in _QUOTED_PARAM.finditer(text):
        if is_secret_key(m.group("key")):
            register_secret(m.group("value"))


def split_userinfo(uri: str) -> tuple[str, str | None]:
    """(the URI without its user info, the user info as written, or None). The user info ends at the last ``@``
    of the authority; when the authority has none but looks like ``user:pass`` (not ``host:port``) and an ``@``
    follows, the password held an unencoded ``/`` and the user info ends at the last ``@`` of the URI (so
    ``s3://KEY:abc/def@bucket/t`` is ``s3://bucket/t`` with ``KEY:abc/def``)."""
    m = re.match(r"([A-Za-z][A-Za-z0-9+.\-]*://)(.*)\Z", uri, re.S)
    if not m:
        return uri, None
    scheme, rest = m.groups()
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    at = authority.rfind("@")
    if at < 0:
        if ":" not in authority or "@" not in rest or re.fullmatch(r"[^:]*:\d*", authority):
            return uri, None
        at = rest.rfind("@")
    return scheme + rest[at + 1:], rest[:at]


# ----------------------------------------------------------------------------------------------- output


class RedactingStream:
    """A text stream that redacts what is written to it before handing it on, a whole line at a time (a URI
    is never split between two redactions); what is left of a line goes on at :meth:`flush`. Anything else
    (``isatty``, ``encoding``, ``fileno``) is the wrapped stream's."""

    #: a line longer than this goes on before its end is written (bounded memory)
    MAX_PENDING = 1 << 20

    def __init__(self, target: TextIO) -> None:
        self.target = target
        self._pending = ""
        self._write_lock = threading.RLock()

    def write(self, text: str) -> int:
        with self._write_lock:
            self._pending += text
            cut = self._pending.rfind("\n") + 1
            if cut == 0 and len(self._pending) < self.MAX_PENDING:
                return len(text)
            if cut == 0:
                cut = len(self._pending)
            ready, self._pending = self._pending[:cut], self._pending[cut:]
            self.target.write(redact(ready))
        return len(text)

    def writelines(self, lines: Sequence[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        with self._write_lock:
            ready, self._pending = self._pending, ""
            if ready:
                self.target.write(redact(ready))
            self.target.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts a record's message (and its exception's text) before any handler formats
    it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return True


@contextmanager
def redacted_output(args: Sequence[str] = ()) -> Iterator[None]:
    """While inside: the credentials ``args`` hold are registered, ``sys.stdout`` and ``sys.stderr`` redact what
    is written to them, so do the root logger's handlers; an unexpected exception's traceback is printed
    redacted and ends the run with exit code 1 (SystemExit)."""
    for arg in args:
        register_secrets_in(arg)
    saved = {name: getattr(sys, name) for name in ("stdout", "stderr")}
    wrappers = {name: RedactingStream(stream) for name, stream in saved.items() if stream is not None}
    for name, wrapper in wrappers.items():
        setattr(sys, name, wrapper)
    log_filter = RedactingFilter()
    handlers = [*logging.getLogger().handlers, *([logging.lastResort] if logging.lastResort else [])]
    for handler in handlers:
        handler.addFilter(log_filter)
    try:
        yield
    except Exception:   # a bug: its traceback, without credentials, instead of the interpreter's own
        sys.stderr.write("hive-bridge: unexpected error:\n" + redact(traceback.format_exc()))
        raise SystemExit(1) from None
    finally:
        for handler in handlers:
            handler.removeFilter(log_filter)
        for name, wrapper in wrappers.items():
            if getattr(sys, name) is wrapper:
                setattr(sys, name, saved[name])
            try:
                wrapper.flush()
            except (BrokenPipeError, ValueError):   # a closed pipe or stream: nothing more can be shown
                pass
