"""The JVM side of the ``hudi-hive`` file index, built from the Java source in the repository (``java/``) with
``javac`` against the installed pyspark's jars, into a cache folder keyed by the source's hash and the Spark
version; no binary is kept in the repository and no Maven is needed. ``make jar`` builds it ahead of time; otherwise the first session that needs it builds it (~3 s)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hive_bridge import config
from hive_bridge.spark.sessions import SparkReadError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: the Java package of the file index (``io.hivebridge.spark``), as py4j reaches it: ``getattr(jvm, ...)``
JVM_PACKAGE = "io.hivebridge.spark"
#: the service interface whose implementations Spark looks short names up in
SERVICE = "org.apache.spark.sql.sources.DataSourceRegister"
#: the pyspark versions the jar is built and the file index's tests pass with (4.0.1, 4.1.4, 4.2.1, 4.3.0 tested;
#: ``tools/check_spark_jar.py`` builds the jar against another pyspark installation)
SUPPORTED_SPARK = ("4.0", "4.1", "4.2", "4.3")


def java_source() -> Path:
    """The Java source folder: ``HIVE_BRIDGE_JAVA_SRC`` (:mod:`hive_bridge.config`), else ``java/`` of the checkout
    (an editable install), else ``<prefix>/share/hive_bridge/java`` (where a wheel installs it:
    ``[options.data_files]`` of setup.cfg)."""
    given = config.settings().java_src
    for candidate in ([Path(given)] if given else []) + [Path(__file__).resolve().parents[2] / "java",
                                                        Path(sys.prefix) / "share" / "hive_bridge" / "java"]:
        if (candidate / "src" / "main" / "java").is_dir():
            return candidate
    raise SparkReadError("the hudi-hive file index's Java source (java/src/main/java) is not installed with "
                         "hive-bridge; set HIVE_BRIDGE_JAVA_SRC to its folder")


def _spark_home() -> tuple[Path, str]:
    import pyspark

    return Path(pyspark.__file__).parent, pyspark.__version__


def _sources(root: Path) -> list[Path]:
    return sorted(p for p in (root / "src" / "main" / "java").rglob("*.java") if p.is_file())


def cache_dir() -> Path:
    return config.settings().cache_root / "jars"


def jar_path(build: bool = True) -> Path:
    """The jar for the installed pyspark, built if it is not in the cache yet."""
    src = java_source()
    home, version = _spark_home()
    digest = hashlib.sha256(version.encode())
    for p in _sources(src):
        digest.update(str(p.relative_to(src)).encode() + b"\0" + p.read_bytes() + b"\0")
    out = cache_dir() / f"hive-bridge-spark-{version}-{digest.hexdigest()[:16]}.jar"
    if out.exists() or not build:
        return out
    return build_jar(home, version, out)


def build_jar(spark_home: Path, version: str, out: Path) -> Path:
    """Compile the Java source against the jars of the pyspark installed at ``spark_home`` (``version``) and pack
    the classes into the jar ``out`` (replaced atomically); a compile error names the Spark version."""
    src = java_source()
    javac = shutil.which("javac")
    if javac is None:
        raise SparkReadError("javac (JDK 17+) is needed to build the hudi-hive file index (apt-get install "
                             "openjdk-17-jdk-headless)")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hive-bridge-jar-") as tmp:
        classes = Path(tmp) / "classes"
        java_files = [str(p) for p in _sources(src) if p.suffix == ".java"]
        done = subprocess.run([javac, "--release", "17", "-nowarn", "-d", str(classes), "-cp",
                               str(spark_home / "jars" / "*"), *java_files], capture_output=True, text=True)
        if done.returncode != 0:
            raise SparkReadError(f"building the hudi-hive file index against pyspark {version} failed:\n"
                                 f"{done.stderr.strip()[:2000]}")
        staged = Path(tmp) / out.name
        with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nCreated-By: hive-bridge\r\n\r\n")
            for p in sorted(classes.rglob("*.class")):
                jar.write(p, str(p.relative_to(classes)))
            # how Spark's ServiceLoader finds the provider of the short name "hudi-hive"
            jar.writestr(f"META-INF/services/{SERVICE}", f"{JVM_PACKAGE}.HudiHiveProvider\n")
        os.replace(staged, out)  # atomic: a concurrent build of the same source gives the same jar
    return out


if __name__ == "__main__":
    print(jar_path())


def is_classic(spark: SparkSession) -> bool:
    """Whether ``spark`` is a classic session (a JVM in this process to call back from); Spark Connect is not."""
    return getattr(spark, "_jvm", None) is not None and getattr(spark, "_jsparkSession", None) is not None


def load_jar(jvm: Any) -> None:
    """The jar on the current thread's context class loader chain (added to the nearest loader that takes URLs,
    Spark's MutableURLClassLoader, when no loader of the chain has it)."""
    url = jvm.java.io.File(str(jar_path())).toURI().toURL()
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    first = None
    url_loader = jvm.java.lang.Class.forName("java.net.URLClassLoader")
    while loader is not None:
        if url_loader.isInstance(loader):
            if url in list(loader.getURLs()):
                return
            # Spark's MutableURLClassLoader (and its subclasses) make addURL public
            if first is None and "MutableURLClassLoader" in str(loader.getClass().getName()):
                first = loader
        loader = loader.getParent()
    if first is None:
        raise SparkReadError("cannot load the hudi-hive file index: the driver's class loader takes no jars")
    first.addURL(url)


def sound_parquet_format(spark: SparkSession) -> str | None:
    """The name ``spark.read.format`` takes for Spark's parquet reader handed only the filters that cannot lose a
    row (``SoundParquetFileFormat``, in the product's jar, loaded here), or None for a session that cannot load it
    (Spark Connect)."""
    if not is_classic(spark):
        return None
    load_jar(spark._jvm)
    return f"{JVM_PACKAGE}.SoundParquetFileFormat"
