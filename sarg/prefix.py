"""LIKE patterns as prefixes: the literal part of a pattern before its first wildcard, and back.

``col LIKE 'abc%'`` holds only for strings starting with ``abc``; any LIKE pattern implies that its literal part
before the first unescaped ``%`` or ``_`` is a prefix of a matching value (``'a_c%'`` implies the prefix ``a``,
``'abc'`` the prefix ``abc``, ``'%x'`` the empty prefix). The escape character is ``\\`` as in Spark's and Hive's
LIKE: ``\\%``, ``\\_`` and ``\\\\`` stand for the character itself. A backslash before anything else (an error in
Spark, a literal in Hive) or at the end of the pattern ends the prefix there, which is a prefix under either
reading. LIKE is case-sensitive; no case folding happens here.
"""

from __future__ import annotations

ESCAPE = "\\"
_WILDCARDS = frozenset("%_")
_ESCAPABLE = frozenset("%_\\")


def like_prefix(pattern: str) -> tuple[str, bool]:
    """The prefix every value matching the LIKE ``pattern`` starts with (see the module doc), and whether the
    pattern matches exactly the strings with that prefix (the rest of it is ``%`` only: ``'abc%'``, not
    ``'abc'``, ``'a_c%'`` or ``'ab%c'``). Only an exact prefix may be negated (``NOT LIKE``)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c in _WILDCARDS:
            break
        if c == ESCAPE:
            if i + 1 < n and pattern[i + 1] in _ESCAPABLE:
                out.append(pattern[i + 1])
                i += 2
                continue
            break
        out.append(c)
        i += 1
    rest = pattern[i:]
    return "".join(out), bool(rest) and not rest.strip("%")


def like_pattern(prefix: str) -> str:
    """The LIKE pattern matching exactly the strings that start with ``prefix`` (``ab%`` for ``ab``; wildcards
    and the escape character escaped)."""
    return "".join(ESCAPE + c if c in _ESCAPABLE else c for c in prefix) + "%"


__all__ = ["ESCAPE", "like_pattern", "like_prefix"]
