"""``python -m sarg``: read SearchArgument (or HiveQL filter) texts and print them in another form.

    python -m sarg '(and leaf-(EQUALS a 1) (not leaf-(IS_NULL b)))' --to old
    printf 'leaf-0 = (EQUALS a 1), expr = leaf-0\n' | python -m sarg --to json --schema 'struct<a:int>'

One text per argument, or one per line on stdin. A line that does not parse prints its error (line number,
column, caret) on stderr and the run goes on; the exit code is 1 when any text failed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from sarg import read_filter
from sarg.errors import SargError
from sarg.literals import Literal, UnknownLiteral, literal_str
from sarg.model import ExpressionTree, PredicateLeaf, SearchArgument, TreeOperator
from sarg.schema import resolve_schema


def _literal_json(value: Literal | None) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, UnknownLiteral):
        return {"unknown": value.text}
    if isinstance(value, float):
        return value if math.isfinite(value) else literal_str(value)
    return literal_str(value)


def leaf_json(leaf: PredicateLeaf) -> dict[str, Any]:
    out: dict[str, Any] = {"operator": leaf.operator.value, "type": leaf.type.value, "column": leaf.column}
    if leaf.literals is not None:
        out["literals"] = [_literal_json(v) for v in leaf.literals]
    elif leaf.literal is not None:
        out["literal"] = _literal_json(leaf.literal)
    if leaf.ambiguous:
        out["ambiguous"] = True
    return out


def tree_json(tree: ExpressionTree) -> dict[str, Any]:
    if tree.operator is TreeOperator.LEAF:
        return {"leaf": tree.leaf_id}
    if tree.operator is TreeOperator.CONSTANT:
        return {"constant": str(tree.constant)}
    return {tree.operator.value.lower(): [tree_json(kid) for kid in tree.children]}


def to_json(s: SearchArgument) -> str:
    out: dict[str, Any] = {"sarg": str(s), "leaves": [leaf_json(leaf) for leaf in s.leaves],
                           "expression": tree_json(s.expression)}
    if s.prefixes:  # LIKE prefixes of HiveQL text, which the SearchArgument itself cannot hold
        out["prefixes"] = [{"column": p.column, "prefix": p.prefix, "negated": p.negated} for p in s.prefixes]
    return json.dumps(out, ensure_ascii=False)


def to_tree(s: SearchArgument) -> str:
    lines: list[str] = []
    stack: list[tuple[ExpressionTree, int]] = [(s.expression, 0)]
    while stack:
        node, depth = stack.pop()
        pad = "  " * depth
        if node.operator is TreeOperator.LEAF:
            lines.append(f"{pad}leaf-{node.leaf_id} {node.leaf}  [{node.leaf.type if node.leaf else '?'}]")
        elif node.operator is TreeOperator.CONSTANT:
            lines.append(f"{pad}{node.constant}")
        else:
            lines.append(f"{pad}{node.operator.value}")
            stack.extend((kid, depth + 1) for kid in reversed(node.children))
    return "\n".join(lines)


FORMATS: dict[str, Callable[[SearchArgument], str]] = {
    "new": str,
    "old": lambda s: s.to_old_string(),
    "tree": to_tree,
    "json": to_json,
}


def _texts(args: argparse.Namespace) -> Iterator[tuple[int, str]]:
    source: Iterable[str] = args.text if args.text else sys.stdin
    for number, raw in enumerate(source, start=1):
        text = raw.rstrip("\n")
        if text.strip():
            yield number, text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sarg", description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("text", nargs="*", help="SearchArgument or HiveQL filter texts (default: one per line on stdin)")
    ap.add_argument("--schema", help="column types: a Hive struct type string, e.g. 'struct<a:int,b:string>'")
    ap.add_argument("--to", choices=sorted(FORMATS), default="new", help="output form (default: new)")
    args = ap.parse_args(argv)
    render = FORMATS[args.to]
    try:
        schema = resolve_schema(args.schema)
    except SargError as exc:
        print(f"error in --schema: {exc}", file=sys.stderr)
        return 2
    failed = ok = 0
    for number, text in _texts(args):
        try:
            print(render(read_filter(text, schema)))
            ok += 1
        except SargError as exc:
            failed += 1
            where = f"argument {number}" if args.text else f"stdin line {number}"
            print(f"error in {where}: {exc}", file=sys.stderr)
    if failed:
        print(f"{ok} read, {failed} failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
