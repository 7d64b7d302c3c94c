"""Filters as hive-bridge judges files with them: :mod:`~hive_bridge.filters.typemap` (every type mapping between
Arrow, Hive and Spark), :mod:`~hive_bridge.filters.expression` (a SearchArgument translated into a HudiExpression,
the typed tree the pruning evaluators read) and :mod:`~hive_bridge.filters.residual` (a SearchArgument as the Spark
SQL row filter applied to the rows of the files kept). Above the statistics, below pruning.
"""

from hive_bridge.filters.expression import HudiExpression, translate
from hive_bridge.filters.residual import to_sql

__all__ = ["HudiExpression", "to_sql", "translate"]
