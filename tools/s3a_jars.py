"""Hadoop's S3A connector for the tests that read tables on S3 through Spark's own parquet reader: the jars,
fetched once with Maven into ``.cache/jars/`` (git-ignored, never committed), skipped when present.

    python tools/s3a_jars.py          # fetch what is missing (``make s3a-jars``; ``make test`` runs it)

The versions are pinned here only: hadoop-aws matches the Hadoop client jars the installed pyspark ships
(pyspark 4.3.0: Hadoop 3.5.0), the AWS SDK v2 ``bundle`` is the version hadoop-aws 3.5.0 declares (its parent pom,
``hadoop-project``: ``aws-java-sdk-v2.version``), and ``analyticsaccelerator-s3`` is hadoop-aws's other compile
dependency; each jar's sha256 is pinned beside it and checked. A failed fetch writes its reason to
``.cache/jars/FETCH_FAILED`` (the tests that need the jars skip saying it, except under CI, where they fail) and
exits 0: the rest of the suite still runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from maven_fetch import fetch as fetch_one
from maven_fetch import jar_name

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".cache" / "jars"
FAILED = CACHE / "FETCH_FAILED"
#: Maven coordinates and the sha256 of each jar, pinned
ARTIFACTS = {
    "org.apache.hadoop:hadoop-aws:3.5.0": "66bd9eefb938b1a1657487324b63c13df2d8b17164a1dd24e0ef37b905bc5baa",
    "software.amazon.awssdk:bundle:2.35.4": "db4b55f24ad1b4e70f17eb1717a4de76a8dadc5a27d764be7c44ff67b2c1c677",
    "software.amazon.s3.analyticsaccelerator:analyticsaccelerator-s3:1.3.1":
        "4959a9747cbb479c73c3ffbcd479bee5b014f8b2880994585a8693fb9d24675e",
}



def jar_paths() -> list[Path]:
    """The connector's jars in the cache (all of them, or the missing ones are not listed)."""
    return [CACHE / jar_name(a) for a in ARTIFACTS if (CACHE / jar_name(a)).is_file()]


def missing() -> list[str]:
    return [a for a in ARTIFACTS if not (CACHE / jar_name(a)).is_file()]


def fetch() -> str | None:
    """Fetch the missing jars (and those failing their checksum); None when all are there, else why not."""
    why = ""
    for artifact, sha in ARTIFACTS.items():
        why = fetch_one(artifact, CACHE, expected_sha256=sha)
        if why:
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
