"""Hudi's own Spark data source as a peer and a test oracle: a separate Python environment with the pyspark that
Hudi's Spark bundle is built for, and that bundle, kept in ``.cache/`` (git-ignored, never committed).

    python tools/hudi_peer.py          # set up what is missing (``make hudi-peer``; ``make test`` runs it)

Hudi publishes no Spark 4 bundle on Maven Central (``hudi-spark4.0-bundle_2.13`` and the like are not there), so
the peer cannot run in the product's pyspark 4.x session: it runs in ``.cache/hudi-peer/venv`` with pyspark
:data:`PYSPARK` (the newest 3.5 release; Scala 2.12 like the bundle) and the bundle :data:`BUNDLE`, fetched with
Maven into ``.cache/jars/`` and checked against :data:`BUNDLE_SHA256`. Both are pinned here only. Hudi 1.1 writes
table version 9, which hive-bridge reads.

:func:`run` hands a JSON spec to ``tools/hudi_peer_driver.py`` run by the peer's Python (one JVM a call) and
returns its JSON answer: tables written by Hudi's Spark writer, filters read by ``spark.read.format("hudi")``
with data skipping on and off (see the driver's docstring). :class:`Session` keeps one driver alive instead
(``--serve``): its writes first, then read jobs one at a time, so a caller can interleave them with its own. The tests (``tests/hive_bridge/peer/``) and
``benchmarks/bench_hudi_reader.py`` use it.

A failed set-up writes its reason to ``.cache/hudi-peer/SETUP_FAILED`` (the tests that need the peer skip saying
it, except under CI, where they fail) and exits 0: the rest of the suite still runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from maven_fetch import fetch as fetch_one
from maven_fetch import jar_name

REPO = Path(__file__).resolve().parent.parent
PEER = REPO / ".cache" / "hudi-peer"
VENV = PEER / "venv"
JARS = REPO / ".cache" / "jars"
FAILED = PEER / "SETUP_FAILED"
DRIVER = Path(__file__).resolve().parent / "hudi_peer_driver.py"
#: the newest pyspark 3.5 release (Spark 3.5 runs on Java 17, the machine's default JDK)
PYSPARK = "3.5.9"
#: Hudi's Spark 3.5 bundle (Scala 2.12, as pyspark 3.5 ships), pinned with its checksum
HUDI_VERSION = "1.1.1"
BUNDLE = f"org.apache.hudi:hudi-spark3.5-bundle_2.12:{HUDI_VERSION}"
BUNDLE_SHA256 = "5470908f0d26897fb6e0768790e6c75e3d05d2fa013f7d81c8f90c74056d1604"


class PeerError(RuntimeError):
    """The peer's driver failed (its exit code and the end of its output)."""


def python() -> Path:
    return VENV / "bin" / "python"


def jar_path() -> Path:
    return JARS / jar_name(BUNDLE)


def _venv_ready() -> bool:
    return python().is_file() and (PEER / f"pyspark-{PYSPARK}.installed").is_file()


def missing() -> list[str]:
    """What is not set up yet (empty when the peer can run)."""
    out = []
    if not _venv_ready():
        out.append(f"pyspark {PYSPARK} in {VENV}")
    if not jar_path().is_file():
        out.append(BUNDLE)
    return out


def _tail(proc: subprocess.CompletedProcess[str], n: int = 3) -> str:
    return " / ".join((proc.stdout + proc.stderr).strip().splitlines()[-n:])


def _setup_venv() -> str:
    if _venv_ready():
        return ""
    base = shutil.which("python3") or sys.executable
    proc = subprocess.run([base, "-m", "venv", "--clear", str(VENV)], capture_output=True, text=True,
                          timeout=600, check=False)
    if proc.returncode != 0:
        return f"python3 -m venv {VENV} failed: {_tail(proc)}"
    proc = subprocess.run([str(python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           f"pyspark=={PYSPARK}"], capture_output=True, text=True, timeout=3600, check=False)
    if proc.returncode != 0:
        return f"pip install pyspark=={PYSPARK} failed (is PyPI reachable?): {_tail(proc)}"
    (PEER / f"pyspark-{PYSPARK}.installed").write_text(PYSPARK + "\n")
    return ""


def _fetch_bundle() -> str:
    return fetch_one(BUNDLE, JARS, expected_sha256=BUNDLE_SHA256)


def setup() -> str | None:
    """Set up what is missing; None when the peer can run, else why not."""
    PEER.mkdir(parents=True, exist_ok=True)
    why = _setup_venv() or _fetch_bundle()
    if why:
        FAILED.write_text(why + "\n")
        return why
    FAILED.unlink(missing_ok=True)
    return None


def run(spec: dict[str, Any], *, timeout: float = 1800) -> dict[str, Any]:
    """Run the driver on ``spec`` in the peer's Python (one Spark session, one JVM) and return its answer."""
    with tempfile.TemporaryDirectory(prefix="hudi-peer-") as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec = {"work": str(Path(tmp) / "work"), "jar": str(jar_path()), **spec}
        spec_path.write_text(json.dumps(spec))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYSPARK", "SPARK_", "PYTHONPATH", "VIRTUAL_ENV"))}
        env["PYSPARK_PYTHON"] = str(python())
        proc = subprocess.run([str(python()), str(DRIVER), str(spec_path), str(out_path)], capture_output=True,
                              text=True, timeout=timeout, env=env, check=False)
        if proc.returncode != 0 or not out_path.is_file():
            raise PeerError(f"the Hudi peer's driver failed (exit {proc.returncode}): "
                            + "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-40:]))
        out: dict[str, Any] = json.loads(out_path.read_text())
        return out


class Session:
    """A long-lived driver (``hudi_peer_driver.py --serve``): ``spec``'s writes and SQL run at start
    (:attr:`started` holds their answer), then :meth:`read` hands it one read job (the driver's ``read`` entry)
    and returns its answer, in the same Spark session and with the same DataFrames each time.

        with hudi_peer.Session({"write": [...]}) as peer:
            reads = peer.read({"path": ..., "filters": [...], "skipping": [True, False]})
    """

    def __init__(self, spec: dict[str, Any]) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="hudi-peer-")
        tmp = Path(self._tmp.name)
        spec_path = tmp / "spec.json"
        spec_path.write_text(json.dumps({"work": str(tmp / "work"), "jar": str(jar_path()), **spec}))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYSPARK", "SPARK_", "PYTHONPATH", "VIRTUAL_ENV"))}
        env["PYSPARK_PYTHON"] = str(python())
        self._log = (tmp / "stderr.log").open("w")   # a file, not a pipe: the JVM's log never blocks it
        self._proc = subprocess.Popen([str(python()), str(DRIVER), "--serve", str(spec_path)], env=env, text=True,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log)
        self.started: dict[str, Any] = self._answer()

    def _answer(self) -> Any:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if line.startswith("@@hudi-peer "):
                got = json.loads(line[len("@@hudi-peer "):])
                if isinstance(got, dict) and "error" in got:
                    raise PeerError(f"the Hudi peer's read failed: {got['error']}")
                return got
        self._proc.wait()
        self._log.flush()
        tail = Path(self._log.name).read_text().strip().splitlines()[-40:]
        raise PeerError(f"the Hudi peer's driver ended (exit {self._proc.returncode}): " + "\n".join(tail))

    def _ask(self, job: dict[str, Any]) -> Any:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(job) + "\n")
        self._proc.stdin.flush()
        return self._answer()

    def read(self, job: dict[str, Any]) -> list[dict[str, Any]]:
        """One read job (``{path, filters, skipping, rows, repeat, options}``): its answer, one entry per skipping."""
        out: list[dict[str, Any]] = self._ask(job)
        return out

    def sql(self, job: dict[str, Any]) -> dict[str, Any]:
        """One SQL job (``{sql, views: {name: path}, skipping, repeat}``): ``{rows, files, seconds_runs}``."""
        out: dict[str, Any] = self._ask(job)
        return out

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            try:
                self._proc.stdin.write("\n")
                self._proc.stdin.close()
                self._proc.wait(timeout=120)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        self._log.close()
        self._tmp.cleanup()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def main() -> int:
    why = setup()
    if why is None:
        print(f"Hudi peer ready: pyspark {PYSPARK} in {VENV}, {jar_path().name} in {JARS}")
    else:
        print(f"could not set up the Hudi peer ({why}): the tests that need it will skip", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
