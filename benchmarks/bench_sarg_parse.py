"""Parse speed of sarg.parse over a generated corpus of typed SearchArguments, in MB/s and SARGs/s.

Runs each printed form (Hive's toString and toOldString) with a schema (typed: a resolved column -> type
mapping; struct: the struct type string, as log replays pass it) and without (inferred), each
with the leaf cache cold (emptied before every pass: every distinct leaf of the pass is typed once) and warm
(kept from the pass before: what a long log replay sees, the same leaves over and over). Figures are the best of
nine passes (this machine's speed wanders by half from one pass to the next), in CPU time
(``time.process_time``: what the parser costs, even on a loaded machine) and in wall time. Peer in the same run:
the cost of just scanning the text with Python's `re` (the floor for any Python parser); the last column says
how many times that floor each row costs, a figure that does not move with the machine's speed.

``--parser`` picks the reader: ``fast`` (the default: sarg.fastpath, what ``sarg.parse`` uses), ``lark`` (lark's
own parser, the reference, as ``SARG_PARSER=lark`` makes ``sarg.parse`` use; same leaf cache) or ``both``. The
fast driver is kept while lark alone stays under 2 MB/s cold on this corpus.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus

import sarg
from sarg import parser as sarg_parser
from sarg.parser import clear_cache

REPEAT = 9


def _time(fn: Callable[[], object], before: Callable[[], object] | None = None) -> tuple[float, float]:
    """Best CPU and best wall seconds of REPEAT runs of ``fn`` (``before`` runs untimed before each)."""
    cpu, wall = [], []
    for _ in range(REPEAT):
        if before is not None:
            before()
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return min(cpu), min(wall)


def main(argv: list[str] | None = None) -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    args.add_argument("--parser", choices=("fast", "lark", "both"), default="fast",
                      help="the reader to measure (default: fast, the one sarg.parse uses)")
    parsers = ("fast", "lark") if (which := args.parse_args(argv).parser) == "both" else (which,)
    sargs = corpus.generate(3000)
    forms = {"new (toString)": [str(s) for s in sargs], "old (toOldString)": [s.to_old_string() for s in sargs]}
    schema = sarg.resolve_schema(corpus.STRUCT)
    print(f"corpus: {len(sargs)} SearchArguments, "
          f"{sum(len(s.leaves) for s in sargs) / len(sargs):.1f} leaves each on average; best of {REPEAT} passes")
    print(f"{'form':20} {'parser':6} {'schema':6} {'cache':5} {'MB/s cpu':>9} {'SARGs/s cpu':>12} {'MB/s wall':>10} "
          f"{'peak MiB':>9} {'re scan / parse':>16}")
    token = re.compile(r"leaf-\(|\(and|\(or|\(not|\)|[^\s()]+|\s+")
    for name, texts in forms.items():
        size = sum(len(t.encode()) for t in texts)
        print(f"{name:20} {size / len(texts):.0f} bytes per SearchArgument")
        floor, _ = _time(lambda texts=texts, token=token: [token.findall(t) for t in texts])
        for driver in parsers:
            sarg_parser.DRIVER = driver
            for label, sch in (("typed", schema), ("struct", corpus.STRUCT), ("infer", None)):
                for t in texts[:50]:
                    sarg.parse(t, sch)  # warm-up (grammar load)
                for cache in ("cold", "warm"):
                    cpu, wall = _time(lambda texts=texts, sch=sch: [sarg.parse(t, sch) for t in texts],
                                      clear_cache if cache == "cold" else None)
                    clear_cache()
                    tracemalloc.start()  # memory measured in a separate pass: tracing slows Python down
                    for t in texts:
                        sarg.parse(t, sch)
                    _, peak = tracemalloc.get_traced_memory()
                    tracemalloc.stop()
                    print(f"{name:20} {driver:6} {label:6} {cache:5} {size / cpu / 1e6:9.2f} {len(texts) / cpu:12.0f} "
                          f"{size / wall / 1e6:10.2f} {peak / 2**20:9.1f} {cpu / floor:15.1f}x")
        print(f"{name:20} {'re scan':19} {size / floor / 1e6:9.2f} {len(texts) / floor:12.0f}"
              "   (floor: tokenize only, in the same run; the last column compares with it)")


if __name__ == "__main__":
    main()
