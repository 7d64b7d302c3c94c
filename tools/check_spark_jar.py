"""Build the hudi-hive file index's jar against another pyspark installation (a pyspark version this checkout's
environment does not run), to check that the one Java source compiles with that Spark's classes.

    python tools/check_spark_jar.py /path/to/venv/bin/python [...]

Each argument is a Python interpreter with pyspark installed (hive-bridge need not be); the jar is compiled
against that pyspark's jars into a temporary folder and then deleted. Exit status 1 if any build fails. Running
the file index's tests under that pyspark needs hive-bridge installed there too (docs/spark.md says how).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hive_bridge.errors import HiveBridgeError
from hive_bridge.spark.jar import build_jar

_WHERE = "import os, pyspark; print(os.path.dirname(pyspark.__file__)); print(pyspark.__version__)"


def check(python: str) -> bool:
    found = subprocess.run([python, "-c", _WHERE], capture_output=True, text=True)
    if found.returncode != 0:
        print(f"{python}: no pyspark there: {found.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return False
    home, version = found.stdout.split()
    with tempfile.TemporaryDirectory(prefix="hive-bridge-jar-check-") as tmp:
        try:
            build_jar(Path(home), version, Path(tmp) / "hive-bridge-spark.jar")
        except HiveBridgeError as exc:
            print(f"pyspark {version} ({home}): FAILED\n{exc}", file=sys.stderr)
            return False
    print(f"pyspark {version} ({home}): the jar builds")
    return True


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    results = [check(python) for python in argv]
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
