"""Is a text a printed SearchArgument, or HiveQL filter text? One rule for every reader of mixed input.

What Hive prints for a SearchArgument (see ``sarg.parser``) starts, after any whitespace, in one of these ways:

- ``leaf-N = (...)``: the first entry of the old forms (``toOldString()``, Hive 0.13-1.x);
- a tree, optionally after ``expr = ``: ``leaf-`` (an inline leaf ``leaf-(...)`` or a reference ``leaf-N``),
  ``(and`` or ``(or``, or ``(not`` followed by a tree (Hive pushes NOT down to the leaves, so what follows a
  printed ``(not`` is ``leaf-``, or ``(and`` / ``(or`` / ``(not`` / a constant in text that was not normalized);
- a TruthValue constant: the whole text (``YES_NO_NULL``, ``expr = YES_NO_NULL``), or closed by the ``)`` of a
  ``(not``.

HiveQL never starts so: ``(not (a = 1))`` is HiveQL (what follows ``(not`` is not a SARG tree), as are
``expr = 5``, ``YES = 1`` and ``leaf = 1``. Texts that fit both readings (``leaf-1 > 0`` with a column named
``leaf``) are read as SearchArguments: they are what Hive prints.
"""

from __future__ import annotations

import re

_TRUTH = r"(?:YES_NO_NULL|YES_NULL|NO_NULL|YES_NO|YES|NO|NULL)"
_NOTS = r"(?:\(not\s+)*"
_TREE = rf"{_NOTS}(?:leaf-|\((?:and|or)\b|{_TRUTH}\s*(?:\)|\Z))"
_SARG_START_RE = re.compile(rf"\s*(?:leaf-\d+\s*=|(?:expr\s*=\s*)?{_TREE})")


def looks_like_sarg(text: str) -> bool:
    """True when ``text`` is a printed SearchArgument rather than HiveQL filter text (the rule is in this
    module's doc): ``(not leaf-(IS_NULL a))``, ``leaf-0 = (EQUALS a 1), expr = leaf-0``, ``expr = leaf-0`` and
    ``YES_NO_NULL`` are; ``(not (a = 1))``, ``a = 1`` and ``(a = 1) and (b = 2)`` are not."""
    return _SARG_START_RE.match(text) is not None


__all__ = ["looks_like_sarg"]
