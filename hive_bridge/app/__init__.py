"""The application: the ``hive-bridge`` command (:mod:`~hive_bridge.app.cli`), the explain rendering
(:mod:`~hive_bridge.app.explain`), the filter replay that drives the workload readers and prints their reports
(:mod:`~hive_bridge.app.replay`) and the demo (:mod:`~hive_bridge.app.demo`). The top layer: it may import every
layer below it, and nothing in the product imports it.
"""

from hive_bridge.app.cli import main

__all__ = ["main"]
