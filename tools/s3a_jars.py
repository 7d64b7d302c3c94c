"""Hadoop's S3A connector for the tests that read tables on S3 through Spark's own parquet reader: the jars,
fetched once with Maven into ``.cache/jars/`` (git-ignored, never committed), skipped when present.

    python tools/s3a_jars.py          # fetch what is missing (``make s3a-jars``; ``make test`` runs it)

The versions are pinned here only: hadoop-aws matches the Hadoop client jars the installed pyspark ships
(pyspark 4.3.0: Hadoop 3.5.0), the AWS SDK v2 ``bundle`` is the version hadoop-aws 3.5.0 declares (its parent pom,
``hadoop-project``: ``aws-java-sdk-v2.version``), and ``analyticsaccelerator-s3`` is hadoop-aws's other compile
dependency. A failed fetch writes its reason to ``.cache/jars/FETCH_FAILED`` (the tests that need the jars skip
saying it, except under CI, where they fail) and exits 0: the rest of the suite still runs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".cache" / "jars"
FAILED = CACHE / "FETCH_FAILED"
#: Maven coordinates, pinned
ARTIFACTS = (
    "org.apache.hadoop:hadoop-aws:3.5.0",
    "software.amazon.awssdk:bundle:2.35.4",
    "software.amazon.s3.analyticsaccelerator:analyticsaccelerator-s3:1.3.1",
)


def jar_name(coordinates: str) -> str:
    _, artifact, version = coordinates.split(":")
    return f"{artifact}-{version}.jar"


def jar_paths() -> list[Path]:
    """The connector's jars in the cache (all of them, or the missing ones are not listed)."""
    return [CACHE / jar_name(a) for a in ARTIFACTS if (CACHE / jar_name(a)).is_file()]


def missing() -> list[str]:
    return [a for a in ARTIFACTS if not (CACHE / jar_name(a)).is_file()]


def fetch() -> str | None:
    """Fetch the missing jars; None when all are there, else why not."""
    todo = missing()
    if not todo:
        FAILED.unlink(missing_ok=True)
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    mvn = shutil.which("mvn")
    if mvn is None:
        why = "Maven (mvn) is not on PATH"
    else:
        why = ""
        for artifact in todo:
            proc = subprocess.run([mvn, "-q", "-B", "dependency:copy", f"-Dartifact={artifact}",
                                   f"-DoutputDirectory={CACHE}", "-Dmdep.overWriteReleases=false"],
                                  capture_output=True, text=True, timeout=3600, check=False)
            if proc.returncode != 0 or not (CACHE / jar_name(artifact)).is_file():
                tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
                why = f"mvn dependency:copy {artifact} failed: {' / '.join(tail)}"
                break
    if why:
        FAILED.write_text(why + "\n")
        return why
    FAILED.unlink(missing_ok=True)
    return None


def main() -> int:
    why = fetch()
    if why is None:
        print(f"S3A connector jars in {CACHE}: {', '.join(jar_name(a) for a in ARTIFACTS)}")
    else:
        print(f"could not fetch the S3A connector jars ({why}): the tests that need them will skip", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
