"""Fail early, with a clear message, when Java 17+ (needed by PySpark 4) is missing."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys


def main() -> int:
    java = shutil.which("java")
    if java is None:
        print("hive-bridge needs Java 17 or newer for PySpark 4 and the Hive oracles: no `java` on PATH.\n"
              "Install it, e.g. `apt-get install openjdk-17-jdk-headless`.", file=sys.stderr)
        return 1
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    m = re.search(r'version "(\d+)', out)
    major = int(m.group(1)) if m else 0
    if major < 17:
        print(f"hive-bridge needs Java 17 or newer for PySpark 4; found: {out.splitlines()[0] if out else '?'}",
              file=sys.stderr)
        return 1
    if shutil.which("javac") is None:
        print("note: `javac` not found; tests that compile Hive oracles will be skipped.", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
