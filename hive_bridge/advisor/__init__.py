"""The layout advisor: which data layout a table's own workload would read least from, and the Hudi settings
that produce it.

``sample`` reads a sample of a table's rows spread over its files and partitions (a few row groups of a few
files, not the whole table); ``curves`` orders rows by one column or along a Z-order or Hilbert curve over
several columns' ranks; ``simulate`` cuts the ordered sample into files of the table's file size, computes their
statistics in the statistics contract and judges every filter with the project's vectorized evaluator;
``advise`` picks the candidates from the workload's filters, compares them with today's layout over several
samples and recommends one with its settings (:func:`advise_workload`, :class:`Advice`); ``report`` prints it.
"""

from hive_bridge.advisor.advice_report import print_advice, write_advice_json
from hive_bridge.advisor.advise import (
    Advice,
    AdviceError,
    Candidate,
    advise_table,
    advise_workload,
    candidate_columns,
    candidate_layouts,
    settings_for,
    sql_for,
    target_size,
)
from hive_bridge.advisor.curves import curve_order, hilbert_index, linear_order, ranks, z_index
from hive_bridge.advisor.sample import Sample, sample_rows
from hive_bridge.advisor.simulate import Layout, SimulatedFiles, judge, simulate

__all__ = [
    "Advice",
    "AdviceError",
    "Candidate",
    "Layout",
    "Sample",
    "SimulatedFiles",
    "advise_table",
    "advise_workload",
    "candidate_columns",
    "candidate_layouts",
    "curve_order",
    "hilbert_index",
    "judge",
    "linear_order",
    "print_advice",
    "ranks",
    "sample_rows",
    "settings_for",
    "simulate",
    "sql_for",
    "target_size",
    "write_advice_json",
    "z_index",
]
