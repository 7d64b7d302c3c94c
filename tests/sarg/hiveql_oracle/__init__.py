"""Oracles for sarg.hiveql: Hive 2.3.10's ConvertAstToSearchArg and Spark's OrcFilters, driven from Java."""
