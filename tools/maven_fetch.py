"""One Maven artifact copied into a cache folder: the fetch the test tools share (``s3a_jars.py``, ``hudi_peer.py``).

``mvn dependency:copy`` puts ``artifact-version.jar`` into the folder; a pinned checksum is checked and a jar that
fails it removed. The answer is ``""`` when the jar is there, else why not (the end of Maven's output), so each tool
writes its own ``FETCH_FAILED`` / ``SETUP_FAILED`` record and the suite still runs.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path


def jar_name(coordinates: str) -> str:
    """``group:artifact:version`` → ``artifact-version.jar``."""
    _, artifact, version = coordinates.split(":")
    return f"{artifact}-{version}.jar"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch(coordinates: str, folder: Path, *, expected_sha256: str | None = None) -> str:
    """Copy ``coordinates`` into ``folder`` unless a (checksum-valid) jar is there: ``""``, or why it is not."""
    jar = folder / jar_name(coordinates)
    if jar.is_file() and (expected_sha256 is None or sha256(jar) == expected_sha256):
        return ""
    jar.unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    mvn = shutil.which("mvn")
    if mvn is None:
        return "Maven (mvn) is not on PATH"
    proc = subprocess.run([mvn, "-q", "-B", "dependency:copy", f"-Dartifact={coordinates}",
                           f"-DoutputDirectory={folder}", "-Dmdep.overWriteReleases=false"],
                          capture_output=True, text=True, timeout=3600, check=False)
    if proc.returncode != 0 or not jar.is_file():
        tail = " / ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
        return f"mvn dependency:copy {coordinates} failed (is Maven Central reachable?): {tail}"
    if expected_sha256 is not None:
        got = sha256(jar)
        if got != expected_sha256:
            jar.unlink()
            return f"{jar.name}: sha256 {got}, expected {expected_sha256} (removed)"
    return ""
