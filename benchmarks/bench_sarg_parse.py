"""Parse speed of sarg.parse over a generated corpus of typed SearchArguments, in MB/s and SARGs/s.

Runs each printed form (Hive's toString and toOldString) with a schema (typed) and without (inferred).
Peer in the same run: the same texts through lark's Earley parser would be far slower; the baseline printed here
is the cost of just scanning the text with Python's `re` (the floor for any Python parser).
"""

from __future__ import annotations

import re
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus

import sarg


def _time(fn, repeat: int = 5) -> float:
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def main() -> None:
    sargs = corpus.generate(3000)
    forms = {"new (toString)": [str(s) for s in sargs], "old (toOldString)": [s.to_old_string() for s in sargs]}
    schema = sarg.resolve_schema(corpus.STRUCT)
    print(f"corpus: {len(sargs)} SearchArguments, "
          f"{sum(len(s.leaves) for s in sargs) / len(sargs):.1f} leaves each on average")
    print(f"{'form':20} {'schema':8} {'MB/s':>7} {'SARGs/s':>9} {'peak MiB':>9}")
    for name, texts in forms.items():
        size = sum(len(t.encode()) for t in texts)
        for label, sch in (("typed", schema), ("infer", None)):
            for t in texts[:50]:
                sarg.parse(t, sch)  # warm-up (grammar load)
            seconds = _time(lambda texts=texts, sch=sch: [sarg.parse(t, sch) for t in texts])
            tracemalloc.start()  # memory measured in a separate pass: tracing slows Python down
            for t in texts:
                sarg.parse(t, sch)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            print(f"{name:20} {label:8} {size / seconds / 1e6:7.2f} {len(texts) / seconds:9.0f} "
                  f"{peak / 2**20:9.1f}")
        token = re.compile(r"leaf-\(|\(and|\(or|\(not|\)|[^\s()]+|\s+")
        floor = _time(lambda texts=texts, token=token: [token.findall(t) for t in texts])
        print(f"{name:20} {'re scan':8} {size / floor / 1e6:7.2f} {len(texts) / floor:9.0f}   (floor: tokenize only)")


if __name__ == "__main__":
    main()
