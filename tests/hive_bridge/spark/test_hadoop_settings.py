"""pyarrow's S3 options from S3A's Hadoop settings (:mod:`hive_bridge.spark.hadoop`): per-bucket settings override
the global ones, explicit storage options win group by group, the scheme follows S3A's rules, credentials are
registered for redaction. No Spark needed: the settings are a mapping here, as ``Configuration.get`` gives them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hive_bridge.redaction import redact
from hive_bridge.spark.hadoop import merge_storage_options, s3a_storage_options, spark_scheme


def _opts(settings: dict[str, str], bucket: str = "lake") -> dict[str, str]:
    return s3a_storage_options(settings.get, bucket)


def test_endpoint_scheme_and_addressing_follow_s3a() -> None:
    assert _opts({"fs.s3a.endpoint": "127.0.0.1:9000", "fs.s3a.path.style.access": "true",
                  "fs.s3a.connection.ssl.enabled": "false"}) == {"endpoint_override": "http://127.0.0.1:9000"}
    # SSL by default; virtual-host addressing unless path style is asked for
    assert _opts({"fs.s3a.endpoint": "minio.local"}) == {"endpoint_override": "https://minio.local",
                                                         "force_virtual_addressing": "true"}
    # an endpoint with its scheme keeps it whatever the SSL setting says
    assert _opts({"fs.s3a.endpoint": "http://h:1", "fs.s3a.path.style.access": "true"})["endpoint_override"] \
        == "http://h:1"
    assert _opts({"fs.s3a.endpoint.region": "eu-west-1"}) == {"region": "eu-west-1"}
    assert _opts({}) == {}
    assert _opts({"fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"}) \
        == {"anonymous": "true"}


def test_per_bucket_settings_override_the_global_ones() -> None:
    settings = {"fs.s3a.access.key": "AKIAGLOBAL", "fs.s3a.secret.key": "global-secret-1234",
                "fs.s3a.endpoint": "http://global:1", "fs.s3a.path.style.access": "true",
                "fs.s3a.bucket.lake.secret.key": "lake-secret-5678", "fs.s3a.bucket.lake.endpoint": "http://lake:2",
                "fs.s3a.bucket.other.access.key": "AKIAOTHER"}
    assert _opts(settings, "lake") == {"access_key": "AKIAGLOBAL", "secret_key": "lake-secret-5678",
                                       "endpoint_override": "http://lake:2"}
    assert _opts(settings, "other")["access_key"] == "AKIAOTHER"
    assert _opts(settings, "other")["endpoint_override"] == "http://global:1"


def test_a_provider_list_without_s3a_s_key_providers_leaves_the_keys_unused() -> None:
    """S3A reads fs.s3a.access.key / secret.key / session.token only through its Simple and Temporary providers:
    a bucket told to take its credentials from the environment (or a profile, an instance) does not use the
    global keys, and neither does the planner (pyarrow's default chain then reads the same environment)."""
    env = "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider"
    settings = {"fs.s3a.access.key": "AKIAGLOBAL", "fs.s3a.secret.key": "global-secret-1234",
                "fs.s3a.session.token": "global-token-1234", "fs.s3a.endpoint": "http://h:1",
                "fs.s3a.path.style.access": "true", "fs.s3a.bucket.envs.aws.credentials.provider": env}
    assert _opts(settings, "envs") == {"endpoint_override": "http://h:1"}
    assert _opts(settings, "lake")["secret_key"] == "global-secret-1234"
    for keeps in ("org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
                  f"org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider, {env}"):
        got = _opts({**settings, "fs.s3a.bucket.envs.aws.credentials.provider": keeps}, "envs")
        assert got["access_key"] == "AKIAGLOBAL" and got["session_token"] == "global-token-1234", keeps
    # anonymous alone: the keys are not sent
    anonymous = {**settings, "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"}
    assert _opts(anonymous, "lake") == {"endpoint_override": "http://h:1", "anonymous": "true"}


def test_derived_credentials_are_never_shown() -> None:
    _opts({"fs.s3a.secret.key": "derived-Secret/Key+9", "fs.s3a.session.token": "derived-session-token-77"})
    assert "derived-Secret" not in redact("failed with derived-Secret/Key+9 and derived-session-token-77")
    assert "derived-session-token-77" not in redact("token derived-session-token-77")


def test_explicit_options_win_group_by_group() -> None:
    derived = {"access_key": "AKIAD", "secret_key": "sd", "session_token": "td", "endpoint_override": "http://d:1",
               "force_virtual_addressing": "true", "region": "us-east-1"}
    # an explicit key pair drops the derived session token with the derived keys
    assert merge_storage_options(derived, {"access_key": "AKIAE", "secret_key": "se"}) == {
        "access_key": "AKIAE", "secret_key": "se", "endpoint_override": "http://d:1",
        "force_virtual_addressing": "true", "region": "us-east-1"}
    # an explicit endpoint drops the derived one with its addressing; the AWS alias counts too
    assert merge_storage_options(derived, {"endpoint_url": "https://e"}) == {
        "access_key": "AKIAD", "secret_key": "sd", "session_token": "td", "region": "us-east-1",
        "endpoint_url": "https://e"}
    assert merge_storage_options(derived, {}) == derived


@given(st.dictionaries(st.sampled_from(["access_key", "secret_key", "session_token", "endpoint_override",
                                        "region", "scheme", "anonymous", "request_timeout"]),
                       st.text(min_size=1, max_size=5), max_size=5),
       st.dictionaries(st.sampled_from(["access_key", "secret_key", "endpoint_override", "region",
                                        "aws_region", "request_timeout"]),
                       st.text(min_size=1, max_size=5), max_size=4))
def test_explicit_options_are_kept_as_given(derived: dict[str, str], explicit: dict[str, str]) -> None:
    merged = merge_storage_options(derived, explicit)
    assert all(merged[k] == v for k, v in explicit.items())
    assert set(merged) <= set(derived) | set(explicit)


def test_s3_is_read_as_s3a() -> None:
    assert [spark_scheme(s) for s in ("s3", "s3n", "s3a", "gs", "hdfs")] == ["s3a", "s3a", "s3a", "gs", "hdfs"]
