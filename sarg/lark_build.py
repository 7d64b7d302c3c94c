"""Every lark parser of sarg is built here, one at a time: building one evaluates the grammar's literals with
``ast.literal_eval``, and on CPython 3.11 the AST constructor keeps its recursion depth in state shared by all
threads, so two threads building parsers at once can fail with ``SystemError: AST constructor recursion depth
mismatch`` (seen with two threads each reading their first HiveQL filter)."""

from __future__ import annotations

import threading
from typing import Any

from lark import Lark

_BUILD_LOCK = threading.Lock()


def build_lark(grammar: str, **options: Any) -> Lark:
    """``Lark(grammar, **options)``, built while no other thread builds one."""
    with _BUILD_LOCK:
        return Lark(grammar, **options)
