"""The Spark session's Hadoop file systems and settings, for tables on object storage read by Spark's own parquet
reader (the ``hudi-hive`` file index, ``read_hudi``).

Which tables Spark can read: a table's files are handed to Spark when the session's Hadoop configuration has a
file system for their scheme (``FileSystem.getFileSystemClass(scheme, conf)``, asked through py4j). ``s3://`` and
``s3n://`` are read as ``s3a://``, as Hudi on Spark does: paths handed to Spark use ``s3a``, whose connector is
Hadoop's ``hadoop-aws`` (with the AWS SDK v2 ``bundle`` it declares). Without it, :func:`spark_uri` says which jar
and setting are missing and which route still works.

One configuration for both sides: the Python planner reads the timeline, the metadata table and the footers itself
through ``pyarrow.fs``; :func:`s3a_storage_options` derives its S3 options from the same Hadoop settings Spark's
S3A reader uses (``fs.s3a.endpoint``, ``fs.s3a.access.key`` / ``secret.key`` / ``session.token``,
``fs.s3a.path.style.access``, ``fs.s3a.connection.ssl.enabled``, ``fs.s3a.endpoint.region``, anonymous
credentials; no keys when ``fs.s3a.aws.credentials.provider`` lists none of the providers that read them, as S3A
then ignores them: pyarrow's default chain reads the environment, a profile or the instance's role instead),
``fs.s3a.bucket.<bucket>.<key>`` overriding ``fs.s3a.<key>`` for that bucket, as S3A does. Storage
options given explicitly (``storage.<key>`` read options, ``storage_options=``) win, group by group: an explicit
credential replaces every derived credential, an explicit endpoint the derived endpoint and its scheme. Derived
credentials are registered with :mod:`hive_bridge.redaction` before anything else is done with them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from hive_bridge.redaction import register_options
from hive_bridge.spark.sessions import SparkReadError
from hive_bridge.storage.core import LOCAL_SCHEMES, S3_SCHEMES, split_uri

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["S3A_CLASS", "S3_SDK_CLASS", "can_open", "conf_getter", "merge_storage_options", "s3a_storage_options", "session_hadoop_conf", "session_storage",
           "spark_scheme", "spark_storage", "spark_uri"]

#: Hadoop's S3A file system and a class of the AWS SDK v2 it needs (its ``bundle``)
S3A_CLASS = "org.apache.hadoop.fs.s3a.S3AFileSystem"
S3_SDK_CLASS = "software.amazon.awssdk.services.s3.S3Client"
#: the AWS SDK v2 bundle hadoop-aws declares, by Hadoop version (from hadoop-project's pom): named in messages
SDK_BUNDLE = {"3.5.0": "2.35.4"}

#: S3A's setting (after ``fs.s3a.``) -> pyarrow's S3FileSystem option; credentials are read with getPassword
_PLAIN = {"endpoint": "endpoint_override", "endpoint.region": "region"}
_SECRETS = {"access.key": "access_key", "secret.key": "secret_key", "session.token": "session_token"}
_FLAGS = ("path.style.access", "connection.ssl.enabled", "aws.credentials.provider")
_ANONYMOUS_PROVIDER = "AnonymousAWSCredentialsProvider"
#: S3A's providers that read fs.s3a.access.key / secret.key / session.token: a provider list without them makes
#: S3A ignore those settings (the other providers, the environment's, a profile's, an instance's, are pyarrow's
#: own default chain)
_KEY_PROVIDERS = ("SimpleAWSCredentialsProvider", "TemporaryAWSCredentialsProvider")
#: storage options that stand together: an explicit one replaces the derived ones of its group
_GROUPS = (frozenset({"access_key", "secret_key", "session_token", "anonymous", "aws_access_key_id",
                      "aws_secret_access_key", "aws_session_token"}),
           frozenset({"endpoint_override", "scheme", "force_virtual_addressing", "endpoint_url", "aws_endpoint_url",
                      "endpoint"}),
           frozenset({"region", "aws_region", "region_name"}))


def spark_scheme(scheme: str) -> str:
    """The scheme whose Hadoop file system Spark reads a table's files with: ``s3``/``s3n`` are read as ``s3a``."""
    return "s3a" if scheme in S3_SCHEMES else scheme


def _bucket(uri: str) -> str:
    return urlsplit(uri).hostname or ""


def s3a_storage_options(get: Callable[[str], str | None], bucket: str) -> dict[str, str]:
    """pyarrow S3 options from S3A's settings: ``get(name)`` returns a Hadoop setting's value (None when unset);
    ``fs.s3a.bucket.<bucket>.<key>`` overrides ``fs.s3a.<key>``."""
    def setting(key: str) -> str | None:
        for name in (f"fs.s3a.bucket.{bucket}.{key}", f"fs.s3a.{key}") if bucket else (f"fs.s3a.{key}",):
            value = get(name)
            if value is not None and value.strip():
                return value.strip() if key not in _SECRETS else value
        return None

    out: dict[str, str] = {}
    for key, option in {**_PLAIN, **_SECRETS}.items():
        value = setting(key)
        if value is not None:
            out[option] = value
    provider = setting("aws.credentials.provider") or ""
    providers = [p.strip().rsplit(".", 1)[-1] for p in provider.split(",") if p.strip()]
    if providers and not any(p in _KEY_PROVIDERS for p in providers):
        for option in _SECRETS.values():   # S3A does not use them: neither does the planner
            out.pop(option, None)
    if _ANONYMOUS_PROVIDER in provider and not {"access_key", "secret_key"} & out.keys():
        out["anonymous"] = "true"
    endpoint = out.get("endpoint_override")
    if endpoint is not None:
        if "://" not in endpoint:   # S3A: the scheme from fs.s3a.connection.ssl.enabled (default true)
            ssl = (setting("connection.ssl.enabled") or "true").lower() != "false"
            out["endpoint_override"] = f"{'https' if ssl else 'http'}://{endpoint}"
        # S3A addresses buckets as host names unless path style is asked for; pyarrow does so with an endpoint
        # only when forced
        if (setting("path.style.access") or "false").lower() != "true":
            out["force_virtual_addressing"] = "true"
    register_options(out)
    return out


def merge_storage_options(derived: Mapping[str, str], explicit: Mapping[str, str]) -> dict[str, str]:
    """``derived`` options with ``explicit`` ones winning: an explicit option drops every derived option of its
    group (credentials, endpoint, region), so that no derived session token is sent with an explicit key."""
    given = {k.lower() for k in explicit}
    out = {k: v for k, v in derived.items()
           if not any(k in group and group & given for group in _GROUPS) and k.lower() not in given}
    out.update(explicit)
    return out


def session_hadoop_conf(spark: SparkSession | None = None) -> Any:
    """The Hadoop configuration Spark's file sources read with: the session's ``sessionState().newHadoopConf()``
    (the SparkContext's configuration with the session's SQL settings over it). ``spark`` None: the active (else
    default) session of the driver; None when there is no Spark context."""
    if spark is not None:
        return spark._jsparkSession.sessionState().newHadoopConf()
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is None or sc._jvm is None:
        return None
    jvm: Any = sc._jvm
    try:
        return jvm.org.apache.spark.sql.SparkSession.active().sessionState().newHadoopConf()
    except Exception:   # no session (a bare context): the context's own configuration
        return sc._jsc.hadoopConfiguration()


def _jvm() -> Any:
    from pyspark import SparkContext

    return SparkContext._jvm


def conf_getter(conf: Any) -> Callable[[str], str | None]:
    jvm = _jvm()

    def get(name: str) -> str | None:
        if name.rsplit(".", 2)[-2:] in (["access", "key"], ["secret", "key"], ["session", "token"]):
            chars = conf.getPassword(name)   # Hadoop credential providers first, as S3A reads them
            return None if chars is None else str(jvm.java.lang.String(chars))
        value = conf.getTrimmed(name)
        return None if value is None else str(value)
    return get


def _missing(scheme: str, uri: str, conf: Any) -> str | None:
    """Why Spark's Hadoop configuration cannot open ``scheme://`` (None when it can)."""
    jvm = _jvm()
    try:
        cls = jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, conf)
    except Exception as exc:   # py4j's error: the Java exception's first line says what is missing
        text = str(getattr(exc, "java_exception", exc)).strip().splitlines()
        return text[0] if text else type(exc).__name__
    if str(cls.getName()) == S3A_CLASS and conf.getClassByNameOrNull(S3_SDK_CLASS) is None:
        return f"{S3A_CLASS} is there but not the AWS SDK v2 ({S3_SDK_CLASS} not found)"
    return None


def _how_to_add(scheme: str, conf: Any) -> str:
    if scheme != "s3a":
        return (f"add the jar of a Hadoop file system for {scheme}:// with spark.jars.packages or spark.jars when "
                "the session starts")
    jvm = _jvm()
    version = str(jvm.org.apache.hadoop.util.VersionInfo.getVersion())
    bundle = SDK_BUNDLE.get(version, "the version hadoop-aws declares")
    return (f"add Hadoop's S3A connector when the session starts: spark.jars.packages="
            f"org.apache.hadoop:hadoop-aws:{version} (Ivy brings the AWS SDK v2 bundle it declares, "
            f"software.amazon.awssdk:bundle:{bundle}), or both jars with spark.jars")


def spark_uri(uri: str, conf: Any) -> str:
    """The URI Spark reads the table at (``s3://`` as ``s3a://``; a local path as it is), after checking that the
    session's Hadoop configuration has a file system for it; a clear error saying what is missing if not."""
    scheme, _ = split_uri(uri)
    if scheme in LOCAL_SCHEMES:
        return uri
    target = spark_scheme(scheme)
    out = target + uri[len(scheme):] if target != scheme else uri
    why = _missing(target, out, conf)
    if why is not None:
        raise SparkReadError(
            f"hudi-hive {uri}: Spark's Hadoop file systems cannot open {target}:// here ({why}); "
            f"{_how_to_add(target, conf)}. Without it, read the table with hive_bridge.spark.read_hudi() or "
            "format('hudi-hive-python') (pyarrow.fs in Spark's Python workers, no connector needed)")
    return out


def spark_storage(uri: str, explicit: Mapping[str, str], conf: Any) -> tuple[str, dict[str, str]]:
    """(the URI Spark reads, the storage options the Python side reads it with): for S3 the session's S3A
    settings with ``explicit`` options winning; raises :class:`SparkReadError` when Spark cannot open it."""
    target = spark_uri(uri, conf)
    scheme, _ = split_uri(target)
    if scheme != "s3a":
        return target, dict(explicit)
    derived = s3a_storage_options(conf_getter(conf), _bucket(target))
    return target, merge_storage_options(derived, explicit)


def session_storage(uri: str, explicit: Mapping[str, str], spark: SparkSession | None = None
                    ) -> tuple[str, dict[str, str]]:
    """:func:`spark_storage` with the session's Hadoop configuration (``spark`` None: the driver's active or
    default session). A local table needs nothing of the JVM and asks it nothing: called from the planner's
    py4j callback, a call into the JVM would travel back over the connection the request came in on (py4j's
    pinned threads), which is not always the JVM's own."""
    if split_uri(uri)[0] in LOCAL_SCHEMES:
        return uri, dict(explicit)
    conf = session_hadoop_conf(spark)
    if conf is None:
        raise SparkReadError(f"hudi-hive {uri}: no Spark session in this driver to read it with")
    return spark_storage(uri, explicit, conf)


def can_open(uri: str, conf: Any) -> bool:
    """Whether the session's Hadoop configuration has a file system for the table's files."""
    scheme, _ = split_uri(uri)
    return scheme in LOCAL_SCHEMES or (conf is not None and _missing(spark_scheme(scheme), uri, conf) is None)
