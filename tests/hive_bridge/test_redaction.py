"""redact() over every form a credential takes in a URI or a message: user info of every scheme (passwords holding
``/``, ``+``, ``@``, ``=``, ``%2F``), Azure's ``container@account`` kept readable, query-string and ``key=value``
secrets, library messages that drop the scheme, registered credentials however they are encoded; texts without a
credential unchanged; hypothesis-made secrets never survive. Also the output plumbing: the redacting stream, the
logging filter, HiveBridgeError's message, the scan-report file, the HTML page's data, and Storage taking the
credentials out of a table URI."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hive_bridge.errors import HiveBridgeError
from hive_bridge.redaction import (
    MASK,
    RedactingFilter,
    RedactingStream,
    forget_secrets,
    is_secret_key,
    redact,
    redact_data,
    redacted_output,
    register_secret,
    register_secrets_in,
    split_userinfo,
)
from hive_bridge.storage.core import Storage, StorageError, parse_storage_options

#: secrets of the forms the table below is built with: what real AWS secret keys and passwords hold
SECRETS = ["wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "pa+ss=wo/rd", "p@ss/w@rd", "abc%2Fdef%3D", "s3cr3t:with:colons",
           "=leading/slash"]
SCHEMES = ["s3", "s3a", "s3n", "gs", "gcs", "hdfs", "viewfs", "http", "https", "thrift", "abfs", "abfss", "wasbs",
           "file", "oss", "webhdfs"]


@pytest.fixture(autouse=True)
def _no_registered_secrets() -> Iterator[None]:
    forget_secrets()
    yield
    forget_secrets()


def _fragments(secret: str) -> list[str]:
    """Pieces of a secret that must not appear: the secret itself, URL-decoded, and each piece between its
    separators at least 3 characters long (a password shown in part is shown)."""
    out = {secret, secret.replace("%2F", "/").replace("%3D", "=")}
    for sep in "/+=@:%":
        out.update(p for p in secret.replace(sep, " ").split() if len(p) >= 3)
    return sorted(out)


def _assert_hidden(text: str, secret: str) -> None:
    clean = redact(text)
    for piece in _fragments(secret):
        assert piece not in clean, f"{piece!r} of the secret is in {clean!r} (from {text!r})"


# --------------------------------------------------------------------------------------------- URI user info


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("context", ["{}", "error: {}: cannot read", "'{}'", '"{}"', "[{}]", "Location: {} (x)",
                                     "<td>{}</td>", "{}/.hoodie/hoodie.properties"])
def test_user_info_hidden_for_every_scheme_and_secret(scheme: str, secret: str, context: str) -> None:
    uri = f"{scheme}://AKIAIOSFODNN7EXAMPLE:{secret}@bucket.host.example/warehouse/db/t"
    _assert_hidden(context.format(uri), secret)
    assert "bucket.host.example/warehouse/db/t" in redact(context.format(uri))


@pytest.mark.parametrize(("text", "expected"), [
    ("s3://AKIAEXAMPLE:SECRETXYZ@bucket/t", "s3://bucket/t"),
    ("s3a://AKIA:wJal/rXUt+nFE=MI@bucket/t/dt=1", "s3a://bucket/t/dt=1"),
    ("s3://AKIA:abc%2Fdef@bucket/t", "s3://bucket/t"),
    ("s3://AKIA:p@ss/w@rd@bucket/t", "s3://bucket/t"),
    ("https://user:pass@host/t", "https://host/t"),
    ("hdfs://user@nn:8020/t", "hdfs://nn:8020/t"),
    ("https://ghp_0123456789abcdefghij@github.example/x", "https://github.example/x"),
    ("thrift://hive:s3cret@metastore:9083", "thrift://metastore:9083"),
    ("thrift://m1:9083,thrift://hive:pw@m2:9083", "thrift://m2:9083"),
    ("gs://svc:tok/en@bucket/t", "gs://bucket/t"),
    # the scheme dropped, as pyarrow quotes a path it was given
    ("got a URI: 'AKIAEXAMPLE:SEC/RET+XYZ@bucket/t/.hoodie/hoodie.properties'",
     "got a URI: 'bucket/t/.hoodie/hoodie.properties'"),
    ("Path does not exist: AKIA:wJal/rXUt@bucket/t", "Path does not exist: bucket/t"),
])
def test_user_info_removed(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("uri", [
    "abfs://container@account.dfs.core.windows.net/warehouse/t",
    "abfss://my-container@myaccount.dfs.core.windows.net/warehouse/t/dt=2024-01-01/f.parquet",
    "abfss://container@account.dfs.core.windows.net:443/t",
    "wasbs://container@account.blob.core.windows.net/t",
    "wasb://container@account.blob.core.windows.net/t",
])
def test_azure_container_at_account_stays_readable(uri: str) -> None:
    assert redact(uri) == uri
    assert redact(f"error: {uri}: not found") == f"error: {uri}: not found"


def test_azure_with_a_password_or_a_signature_is_hidden() -> None:
    _assert_hidden("abfss://container:Zm9vYmFyYmF6/q+w==@account.dfs.core.windows.net/t", "Zm9vYmFyYmF6/q+w==")
    text = "https://account.blob.core.windows.net/c/t?sv=2022-11-02&ss=b&sig=Ab%2Fc3D4eF%2Bg%3D&se=2030"
    assert redact(text) == "https://account.blob.core.windows.net/c/t?sv=2022-11-02&ss=b&sig=***&se=2030"


# ---------------------------------------------------------------------------------------- key=value secrets


@pytest.mark.parametrize(("text", "expected"), [
    ("https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20240101%2Fus&"
     "X-Amz-Signature=9f8e7d6c5b4a&X-Amz-Security-Token=FwoGZX/IvYXdz+EJ=",
     "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&"
     "X-Amz-Signature=***&X-Amz-Security-Token=***"),
    ("https://h/p?token=abc/def=&x=1", "https://h/p?token=***&x=1"),
    ("s3://b/t?access_key=AKIA&secret_key=a/b+c=", "s3://b/t?access_key=***&secret_key=***"),
    ("<a href='https://h/p?a=1&amp;sig=xyz%2F'>", "<a href='https://h/p?a=1&amp;sig=***'>"),
    ("--storage-option secret_access_key=wJal/rXUt=", "--storage-option secret_access_key=***"),
    ("storage option session_token='IQoJb3JpZ2lu/ZWM='", "storage option session_token='***'"),
    ("aws_secret_access_key=a=b=c aws_session_token=t/o+k", "aws_secret_access_key=*** aws_session_token=***"),
    ("fs.s3a.secret.key=wJal/rXUt fs.azure.account.key.acct.dfs.core.windows.net=Zm9v==",
     "fs.s3a.secret.key=*** fs.azure.account.key.acct.dfs.core.windows.net=***"),
    ("{'secret_key': 'a/b', 'region': 'eu-west-1'}", "{'secret_key': '***', 'region': 'eu-west-1'}"),
    ('{"password": "p\\"w/d", "user": "u"}', '{"password": "***", "user": "u"}'),
    ("Authorization: AWS4-HMAC-SHA256 Credential=AKIA/2024, SignedHeaders=host, Signature=fe5f80f77d5fa3be",
     "Authorization: ***"),
    ("header Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "header Bearer ***"),
])
def test_secret_parameters_masked(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("key", ["secret_key", "aws_secret_access_key", "secret_access_key", "session_token",
                                 "aws_session_token", "access_key", "X-Amz-Signature", "sig", "password",
                                 "fs.s3a.secret.key", "client_secret", "api_key", "sas_token"])
def test_secret_keys_named(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize("key", ["region", "endpoint_override", "request_timeout", "anonymous", "key", "scheme",
                                 "hoodie.datasource.write.recordkey.field"])
def test_other_keys_not_secret(key: str) -> None:
    assert not is_secret_key(key)


# ------------------------------------------------------------------------------------------ left unchanged


@pytest.mark.parametrize("text", [
    "s3://bucket/warehouse/t/dt=2024-01-01/f.parquet",
    "hdfs://nn:8020/warehouse/t",
    "/tmp/pytest-of-x/test_a0/table/.hoodie/hoodie.properties",
    "file:/data/lake/t/dt=2024-01-01",
    "(and leaf-(LESS_THAN id 15) leaf-(EQUALS name n150))",
    "leaf-0 = (EQUALS key 86), expr = leaf-0",
    "key = 86 and value like 'val_%'",
    "id >= 990000 and city = 'Paris' and email = 'someone@example.com'",
    "cannot read the filter: unexpected token: AND at column 7",
    "hoodie.datasource.write.recordkey.field=id, hoodie.layout.optimize.strategy=z-order",
    "index of t: 20 file slices (folders listing), 0 footers read in s3://b/t/.hoodie/.hive_bridge",
    "s3://bucket/images/logo@2x.png",
    "abfss://container@account.dfs.core.windows.net/t",
    "basic statistics at 10:30",
])
def test_texts_without_credentials_unchanged(text: str) -> None:
    assert redact(text) == text


# ------------------------------------------------------------------------------------------------ hypothesis

_SECRET_CHARS = st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+=@:%-_.~!$&*")
_HOSTS = st.sampled_from(["bucket", "my-bucket.s3.eu-west-1.amazonaws.com", "nn:8020", "metastore:9083",
                          "account.dfs.core.windows.net", "127.0.0.1:9000"])


@settings(max_examples=300, deadline=None)
@given(secret=st.text(_SECRET_CHARS, min_size=8, max_size=48), scheme=st.sampled_from(SCHEMES), host=_HOSTS,
       user=st.from_regex(r"[A-Za-z0-9_.-]{1,20}", fullmatch=True),
       context=st.sampled_from(["{}", "error: {}: cannot read (x)", "'{}'", '"{}"', "[{}]", "{} and more",
                                "{}\n{}"]))
def test_any_password_hidden(secret: str, scheme: str, host: str, user: str, context: str) -> None:
    uri = f"{scheme}://{user}:{secret}@{host}/warehouse/t"
    clean = redact(context.format(uri, uri))
    assume(secret not in context.format(f"{scheme}://{host}/warehouse/t", ""))
    assert secret not in clean
    if "%" not in secret:
        assert quote(secret, safe="") not in clean or quote(secret, safe="") == secret


@settings(max_examples=200, deadline=None)
@given(secret=st.text(_SECRET_CHARS, min_size=6, max_size=40),
       key=st.sampled_from(["secret_key", "X-Amz-Signature", "sig", "token", "access_key", "session_token",
                            "aws_secret_access_key", "password"]),
       before=st.sampled_from(["https://h/p?", "https://h/p?a=1&", "--storage-option ", "option "]))
def test_any_parameter_value_hidden(secret: str, key: str, before: str) -> None:
    assume("&" not in secret)   # a query string's value ends at '&': a raw '&' starts the next parameter
    clean = redact(f"{before}{key}={secret}")
    assert secret not in clean
    if "@" not in secret:    # with one, the user info rules may remove more (never less)
        assert clean == f"{before}{key}={MASK}"


@settings(max_examples=200, deadline=None)
@given(secret=st.text(_SECRET_CHARS, min_size=6, max_size=40),
       around=st.tuples(st.text(max_size=30), st.text(max_size=30)))
def test_registered_secret_hidden_in_any_encoding(secret: str, around: tuple[str, str]) -> None:
    forget_secrets()
    register_secret(secret)
    for form in (secret, quote(secret, safe=""), quote(secret, safe="/"), json.dumps(secret)[1:-1]):
        text = around[0] + form + around[1]
        assume(secret not in around[0] + around[1])
        assert secret not in redact(text) or secret in redact(around[0] + MASK + around[1])


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_characters="@=:", blacklist_categories=("Cs",)), max_size=200))
def test_text_without_at_equals_or_colon_unchanged(text: str) -> None:
    assert redact(text) == text


# ---------------------------------------------------------------------------------- registered credentials


def test_command_line_credentials_hidden_however_quoted() -> None:
    secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY=="
    register_secrets_in(f"s3://AKIAIOSFODNN7EXAMPLE:{quote(secret, safe='')}@bucket/t")
    register_secrets_in("secret_key=Sh0rtButLongEnough")
    for text in (f"Invalid credentials {secret}", f"signing with {quote(secret, safe='')}",
                 f'{{"k": {json.dumps(secret)}}}', "S3 said: Sh0rtButLongEnough is wrong"):
        clean = redact(text)
        assert secret not in clean and quote(secret, safe="") not in clean and "Sh0rtButLongEnough" not in clean
        assert MASK in clean


def test_short_credentials_only_hidden_by_their_form() -> None:
    register_secret("pass")
    assert redact("3 filters passed") == "3 filters passed"     # too short to hide as bare text
    assert redact("https://user:pass@host/t") == "https://host/t"


def test_azure_container_is_not_registered() -> None:
    register_secrets_in("abfss://averylongcontainername@account.dfs.core.windows.net/t")
    assert redact("container averylongcontainername") == "container averylongcontainername"


def test_split_userinfo() -> None:
    assert split_userinfo("s3://AKIA:abc/def@bucket/t") == ("s3://bucket/t", "AKIA:abc/def")
    assert split_userinfo("s3://AKIA:abc@bucket/t/x@y") == ("s3://bucket/t/x@y", "AKIA:abc")
    assert split_userinfo("s3://AKIA:a%2Fb@bucket/t") == ("s3://bucket/t", "AKIA:a%2Fb")
    assert split_userinfo("hdfs://nn:8020/p/a@b") == ("hdfs://nn:8020/p/a@b", None)
    assert split_userinfo("hdfs://hive@nn:8020/p") == ("hdfs://nn:8020/p", "hive")
    assert split_userinfo("s3://bucket/t") == ("s3://bucket/t", None)
    assert split_userinfo("/local/path@x") == ("/local/path@x", None)


# ------------------------------------------------------------------------------------------ output plumbing


def test_stream_redacts_whole_lines_even_when_written_in_pieces() -> None:
    sink = io.StringIO()
    stream = RedactingStream(sink)
    uri = "s3://AKIA:wJal/rXUt+nFE@bucket/t"
    for i in range(0, len(uri), 3):          # a URI cut between writes is redacted whole
        stream.write(uri[i:i + 3])
    stream.write(" done\nnext ")
    assert sink.getvalue() == "s3://bucket/t done\n"
    stream.flush()
    assert sink.getvalue() == "s3://bucket/t done\nnext "
    assert stream.isatty() is False and stream.getvalue() == sink.getvalue()   # the rest is the stream's


def test_redacted_output_wraps_the_process_streams_and_logging(capsys: pytest.CaptureFixture[str]) -> None:
    import sys
    import warnings

    secret = "Zq9/Wx+Yv=Ut"
    log = logging.getLogger("hive_bridge.test_redaction")
    handler_stream = io.StringIO()
    handler = logging.StreamHandler(handler_stream)
    logging.getLogger().addHandler(handler)
    try:
        with redacted_output([f"--table=s3://AKIA:{secret}@bucket/t"]), warnings.catch_warnings():
            # as Python shows a warning outside pytest: written to sys.stderr as it is then
            warnings.simplefilter("always")
            warnings.showwarning = lambda m, c, f, n, file=None, line=None: sys.stderr.write(
                warnings.formatwarning(m, c, f, n, line))
            print(f"printed s3://AKIA:{secret}@bucket/t")
            sys.stderr.write(f"bare {secret}\n")
            warnings.warn(f"warned {secret}", RuntimeWarning, stacklevel=1)
            log.warning("logged %s", f"s3://AKIA:{secret}@bucket/t")
    finally:
        logging.getLogger().removeHandler(handler)
    out, err = capsys.readouterr()
    for text in (out, err, handler_stream.getvalue()):
        assert secret not in text
    assert "printed s3://bucket/t" in out and "bare ***" in err and "warned ***" in err
    assert "logged s3://bucket/t" in handler_stream.getvalue()


def test_unexpected_error_traceback_is_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    secret = "Zq9/Wx+Yv=Ut"
    with pytest.raises(SystemExit) as exc, redacted_output():
        raise KeyError(f"s3://AKIA:{secret}@bucket/t")
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert "unexpected error" in err and "KeyError" in err and "s3://bucket/t" in err and secret not in err


def test_logging_filter_redacts_messages_and_exceptions() -> None:
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "open %s", ("s3://K:wJal/rXUt@b/t",), None)
    try:
        raise OSError("s3://K:wJal/rXUt@b/t: refused")
    except OSError:
        import sys

        record.exc_info = sys.exc_info()
    assert RedactingFilter().filter(record)
    assert record.getMessage() == "open s3://b/t"
    assert record.exc_text and "wJal" not in record.exc_text and "s3://b/t: refused" in record.exc_text


def test_hive_bridge_error_message_is_redacted() -> None:
    exc = HiveBridgeError("cannot read s3://AKIA:wJal/rXUt+nFE@bucket/t: AccessDenied")
    assert str(exc) == "cannot read s3://bucket/t: AccessDenied"
    assert "wJal" not in f"{exc}" and repr(exc) == "HiveBridgeError('cannot read s3://bucket/t: AccessDenied')"


def test_redact_data_walks_keys_and_values() -> None:
    doc = {"table": "s3://K:wJal/rXUt@b/t", "n": 3, "list": [("s3://K:wJal/rXUt@b/t", 1.5)],
           "s3://K:wJal/rXUt@b/t": None}
    assert redact_data(doc) == {"table": "s3://b/t", "n": 3, "list": [("s3://b/t", 1.5)], "s3://b/t": None}


def test_scan_report_written_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hive_bridge.spark.reports import last_scan_report, record_scan, report_file

    monkeypatch.setenv("HIVE_BRIDGE_SCAN_REPORTS", str(tmp_path))
    uri = "s3a://AKIA:wJal/rXUt+nFE=@bucket/t"
    record_scan({"path": uri, "filter": "id > 1", "files_total": 3, "why_not": f"cannot list {uri}"})
    text = Path(report_file()).read_text()
    assert "wJal" not in text and "rXUt" not in text
    report = last_scan_report(uri)        # found by the URI it was made with
    assert report is not None and report["path"] == "s3a://bucket/t"


# --------------------------------------------------------------------------------- storage: URI credentials


def test_storage_takes_s3_credentials_out_of_the_uri() -> None:
    st_ = Storage.for_uri("s3://AKIAIOSFODNN7EXAMPLE:wJal%2FrXUt+nFE@bucket/warehouse/t",
                          {"endpoint_override": "http://127.0.0.1:1"})
    assert (st_.uri, st_.root) == ("s3://bucket/warehouse/t", "bucket/warehouse/t")
    assert st_.options["access_key"] == "AKIAIOSFODNN7EXAMPLE" and st_.options["secret_key"] == "wJal/rXUt+nFE"
    # an unencoded '/' in the secret: the user info ends at the last '@'
    st_ = Storage.for_uri("s3a://AKIA:wJal/rXUt@nFE@bucket/t", {"endpoint_override": "http://127.0.0.1:1"})
    assert st_.uri == "s3a://bucket/t" and st_.options["secret_key"] == "wJal/rXUt@nFE"
    assert st_.cache_key() == Storage.for_uri("s3a://bucket/t", {"endpoint_override": "http://127.0.0.1:1",
                                                                  "access_key": "a", "secret_key": "b"}).cache_key()
    assert "wJal" not in st_.location("bucket/t/x.parquet") and "wJal" not in repr(st_)
    # credentials the options give win
    st_ = Storage.for_uri("s3://AKIA:fromuri@bucket/t", {"endpoint_override": "http://127.0.0.1:1",
                                                         "aws_access_key_id": "A", "aws_secret_access_key": "B"})
    assert "secret_key" not in st_.options and st_.uri == "s3://bucket/t"


def test_storage_user_info_elsewhere() -> None:
    with pytest.raises(StorageError, match="must be ACCESS_KEY:SECRET_KEY") as exc:
        Storage.for_uri("s3://onlyatokenhere@bucket/t")
    assert "onlyatokenhere" not in str(exc.value)
    with pytest.raises(StorageError, match="not read") as exc:
        Storage.for_uri("gs://svc:Zq9Wx-Yv-Ut@bucket/t")
    assert "Zq9Wx-Yv-Ut" not in str(exc.value) and "gs://bucket/t" in str(exc.value)
    with pytest.raises(StorageError, match="a user, not a password") as exc:
        Storage.for_uri("hdfs://hive:Zq9Wx-Yv-Ut@nn:8020/t")
    assert "Zq9Wx-Yv-Ut" not in str(exc.value)


def test_storage_option_text_never_echoed() -> None:
    with pytest.raises(StorageError, match="expected KEY=VALUE") as exc:
        parse_storage_options(["region=x", "wJalrXUtnFEMI/K7MDENG"])
    assert "wJal" not in str(exc.value) and "storage option 2" in str(exc.value)
    with pytest.raises(StorageError, match="expected KEY=VALUE") as exc:   # a secret holding '=' is no KEY=VALUE
        parse_storage_options(["wJalrXUt/nFEMI=K7MDENG"])
    assert "wJal" not in str(exc.value)
    for options in ({"wJalrXUtnFEMIK7MDENG": "x"}, {"anonymous": "wJalrXUtnFEMIK7MDENG"},
                    {"request_timeout": "wJalrXUtnFEMIK7MDENG"}):
        with pytest.raises(StorageError) as exc:
            Storage.for_uri("s3://bucket/t", options)
        assert "wJal" not in str(exc.value)
    with pytest.raises(StorageError, match="unknown S3 storage option no_such_option"):
        Storage.for_uri("s3://bucket/t", {"no_such_option": "1"})
    Storage.for_uri("s3://bucket/t", {"endpoint_override": "http://127.0.0.1:1", "access_key": "AKIA",
                                      "secret_key": "Zq9Wx+Yv/Ut=="})
    assert redact("S3 refused Zq9Wx+Yv/Ut==") == "S3 refused ***"   # options' credentials are hidden from then on
