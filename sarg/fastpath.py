"""The fast driver: lark's LALR table for ``sarg.lark``, run by a small loop of its own.

lark compiles ``sarg.lark`` into its LALR(1) table and terminals (``sarg.grammar``); this loop runs that same
table with the same contextual lexing (one master regex per parser state, terminals in lark's order) but without
lark's per-token objects and callback wrappers, and builds the frozen model field by field. Any lexing or parsing
error, and any error a rule callback raises, makes :func:`parse` answer None: ``sarg.parser.parse`` then reads the
text with lark's own parser (``sarg.grammar.parse_with_lark``, the reference), so errors are exactly lark's.
Nesting past ``MAX_DEPTH`` raises ``TooDeep`` at the same token as lark's parser would.

It reads lark's internals (``Lark.parser.parser.parser.parse_table``, terminals, rule shapes): with a lark whose
internals differ it is not built and lark's own parser reads everything. ``SARG_PARSER=lark`` in the environment
turns it off (see ``sarg.parser``); ``tests/sarg/test_parser_fastpath.py`` holds the two to the same answers.

Why it exists: on ``benchmarks/bench_sarg_parse.py``'s corpus (``--parser both``), lark's own parser with the
leaf cache reads 1.0-1.4 MB/s with the cache cold (CPU time; old and new printed forms), this driver 3.4-4.5 MB/s;
the target is 2 MB/s cold. Delete it (and this module) if lark alone ever meets that.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from lark import Lark

from sarg.errors import SargSyntaxError
from sarg.grammar import MAX_DEPTH, OPENS, TooDeep, grammar_text
from sarg.lark_build import build_lark
from sarg.leaves import LeafEntry, cached_leaf, number_leaf
from sarg.model import ExpressionTree, PredicateLeaf, SearchArgument, TreeOperator
from sarg.schema import ColumnType
from sarg.truth import TruthValue

_END = "$END"


def _nesting(values: list[Any]) -> int:
    """The nesting count (see ``sarg.grammar``): opening tokens on its value stack, less the ``)`` on it."""
    depth = 0
    for value in values:
        if type(value) is re.Match:
            kind = value.lastgroup
            if kind in OPENS:
                depth += 1
            elif kind == "_RPAR":
                depth -= 1
    return depth


class _Run:
    """One parse's state for the fast driver's rule callbacks."""

    __slots__ = ("entries", "leaf_ids", "leaves", "misread", "schema", "text")

    def __init__(self, text: str, schema: dict[str, ColumnType]) -> None:
        self.text = text
        self.schema = schema
        self.leaf_ids: dict[str | PredicateLeaf, int] = {}  # by body text, and by leaf (equality)
        self.leaves: list[PredicateLeaf] = []
        self.entries: list[LeafEntry] = []  # old-form entries, by leaf id
        self.misread = False  # some leaf's text may have been misread (see sarg.leaves.misreadable)


def _mstart(m: re.Match[str]) -> int:
    """Where a matched token's text starts, past the whitespace the terminal absorbed."""
    value = m.group()
    return m.start() + len(value) - len(value.lstrip())


_new = object.__new__
_set = object.__setattr__


def _tree(op: TreeOperator, children: tuple[ExpressionTree, ...], leaf: PredicateLeaf | None = None,
          leaf_id: int | None = None) -> ExpressionTree:
    """ExpressionTree(op, children, leaf, leaf_id) without the dataclass __init__'s keyword handling."""
    node: ExpressionTree = _new(ExpressionTree)
    _set(node, "operator", op)
    _set(node, "children", children)
    _set(node, "leaf", leaf)
    _set(node, "leaf_id", leaf_id)
    _set(node, "constant", None)
    return node


# Nesting depth is checked by the driver as it shifts an opening token (see _nesting), not here.
# and/or/not take the rule's values as they are on the stack (no child filtering): [open token, the list of
# ``tree+`` or the one tree, the ')' token]; _Rule checks the rules still have that shape.
def _f_and(run: _Run, kids: list[Any]) -> ExpressionTree:
    return _tree(TreeOperator.AND, tuple(kids[1]))


def _f_or(run: _Run, kids: list[Any]) -> ExpressionTree:
    return _tree(TreeOperator.OR, tuple(kids[1]))


def _f_not(run: _Run, kids: list[Any]) -> ExpressionTree:
    return _tree(TreeOperator.NOT, (kids[1],))


_CONSTANT_TREES = {t.name: ExpressionTree.of_constant(t) for t in TruthValue}


def _f_constant(run: _Run, m: re.Match[str]) -> ExpressionTree:
    return _CONSTANT_TREES[m.group().lstrip()]


# The fast driver's tokens are regex matches; ``m.lastindex`` is the terminal's own group (it closes last), the
# groups sarg.lark puts inside a terminal follow it.
def _f_inline_leaf(run: _Run, m: re.Match[str]) -> ExpressionTree:
    group = m.lastindex + 1  # type: ignore[operator]
    body = m.group(group)
    _, _, leaf, trees, misread = cached_leaf(run.text, run.schema, body, m.start(group))
    if misread:
        run.misread = True
    leaf_id = run.leaf_ids.get(body)
    if leaf_id is None:
        leaf_id = number_leaf(run.leaf_ids, run.leaves, body, leaf)
    node = trees.get(leaf_id)
    if node is None:  # the LEAF node of this leaf and id, shared by every parse that numbers the leaf so
        node = trees[leaf_id] = _tree(TreeOperator.LEAF, (), leaf, leaf_id)
    return node


# In the fast driver, old-form entries are kept in a list: leaf-N must be the Nth entry (anything else is an
# error, which the lark parser then reports in full: "defined twice", "numbered in order").
def _f_old_entry(run: _Run, m: re.Match[str]) -> None:
    num = m.lastindex + 1  # type: ignore[operator]
    entries = run.entries
    if int(m.group(num)) != len(entries):
        raise SargSyntaxError("old-form leaves must be numbered leaf-0, leaf-1, ... in order", run.text, 0)
    entry = cached_leaf(run.text, run.schema, m.group(num + 1), m.start(num + 1))
    entries.append(entry)
    if entry[4]:
        run.misread = True


def _f_leaf_ref(run: _Run, m: re.Match[str]) -> ExpressionTree:
    num = m.group(m.lastindex + 1)  # type: ignore[operator]
    leaf_id = int(num)
    if leaf_id >= len(run.entries):
        raise SargSyntaxError(f"leaf-{num} is not defined before expr", run.text, _mstart(m))
    entry = run.entries[leaf_id]
    trees = entry[3]
    node = trees.get(leaf_id)
    if node is None:
        node = trees[leaf_id] = _tree(TreeOperator.LEAF, (), entry[2], leaf_id)
    return node


def _f_old_form(run: _Run, kids: list[Any]) -> SearchArgument:
    if run.leaves:  # inline leaves in expr (lark's callbacks decide what that means)
        raise SargSyntaxError("inline leaves in an old-form expr", run.text, 0)
    return _search_argument(tuple([entry[2] for entry in run.entries]), kids[-1], run.misread)


def _f_start(run: _Run, item: Any) -> SearchArgument:
    if type(item) is SearchArgument:
        return item
    return _search_argument(tuple(run.leaves), item, run.misread)


def _search_argument(leaves: tuple[PredicateLeaf, ...], tree: ExpressionTree, ambiguous: bool) -> SearchArgument:
    """SearchArgument(leaves, tree, ambiguous) without the dataclass __init__'s keyword handling."""
    result: SearchArgument = _new(SearchArgument)
    _set(result, "leaves", leaves)
    _set(result, "expression", tree)
    _set(result, "ambiguous", ambiguous)
    return result


_Callback = Callable[[_Run, Any], Any]
_RAW_CALLBACKS: dict[str, tuple[_Callback, tuple[int, ...], tuple[bool, ...]]] = {
    # rule -> callback over the raw values, and the (kept, spliced) children shape it expects
    "and_node": (_f_and, (0, 1), (False, True)), "or_node": (_f_or, (0, 1), (False, True)),
    "not_node": (_f_not, (0, 1), (False, False)),
}
_LAST_CHILD_CALLBACKS: dict[str, _Callback] = {"old_form": _f_old_form}  # they read only the last value
_ONE_CHILD_CALLBACKS: dict[str, _Callback] = {  # rules of one child: the callback takes it, not a list
    "constant": _f_constant, "inline_leaf": _f_inline_leaf, "leaf_ref": _f_leaf_ref, "old_entry": _f_old_entry,
    "start": _f_start,
}


# How the driver reduces a rule (lark's child filtering: terminals named ``_X`` dropped, the lists of the
# helper rules lark makes for ``x*``/``x+`` spliced into their parent, ``?rule`` with one child passed through).
_PASS, _CALL_ONE, _CALL_RAW, _LIST_NEW, _LIST_APPEND, _LIST = range(6)
_SHIFT, _APPEND = -1, -2  # the fast driver's shifts: push a state, or add an item to the list on top


class _Rule:
    """One grammar rule as the fast driver reduces it."""

    __slots__ = ("callback", "goto", "keep", "mode", "size", "splice")

    def __init__(self, rule: Any) -> None:
        expansion = rule.expansion
        self.size: int = len(expansion)
        self.goto: str = str(rule.origin.name)
        keep: list[int] = []
        splice: list[bool] = []
        for i, sym in enumerate(expansion):
            if sym.is_term and sym.filter_out:
                continue
            keep.append(i)
            splice.append(not sym.is_term and sym.name.startswith("_"))
        self.keep = tuple(keep)
        self.splice = tuple(splice)
        name: str = rule.alias or rule.origin.name
        plain = keep == list(range(self.size)) and not any(splice)  # children are the values as they are
        self.callback: _Callback | None = None
        if name.startswith("_"):
            if plain and self.size == 1:
                self.mode = _LIST_NEW
            elif keep == [0, 1] and self.size == 2 and splice == [True, False]:
                self.mode = _LIST_APPEND
            else:
                self.mode = _LIST
        elif rule.options.expand1 and not rule.alias and self.size == 1 and plain:
            self.mode = _PASS
        elif name in _ONE_CHILD_CALLBACKS:
            if not (plain and self.size == 1):
                raise TypeError(f"rule {name} changed shape: it should have one child")
            self.callback = _ONE_CHILD_CALLBACKS[name]
            self.mode = _CALL_ONE
        elif name in _RAW_CALLBACKS:
            self.callback, want_keep, want_splice = _RAW_CALLBACKS[name]
            if (self.size, self.keep, self.splice) != (3, want_keep, want_splice):
                raise TypeError(f"rule {name} changed shape")
            self.mode = _CALL_RAW
        else:
            self.callback = _LAST_CHILD_CALLBACKS[name]
            if not keep or keep[-1] != self.size - 1 or splice[-1]:
                raise TypeError(f"rule {name} changed shape: its last child should be kept as it is")
            self.mode = _CALL_RAW

    def children(self, values: list[Any]) -> list[Any]:
        keep, splice = self.keep, self.splice
        if splice and splice[0]:  # a left-recursive helper list: extended in place, as lark does
            out: list[Any] = values[keep[0]]
            start = 1
        else:
            out = []
            start = 0
        for j in range(start, len(keep)):
            if splice[j]:
                out.extend(values[keep[j]])
            else:
                out.append(values[keep[j]])
        return out


_Match = Callable[[str, int], "re.Match[str] | None"]
_Unit = Callable[[_Run, Any], Any]
_UNIT_MODES = (_PASS, _CALL_ONE, _LIST_NEW)


def _listed(run: _Run, value: Any) -> list[Any]:
    return [value]


def _compose(units: Sequence[tuple[int, _Callback | None]]) -> _Unit | None:
    """One function applying a chain of one-child reductions to a value (None when they all pass it on)."""
    fns = [callback if mode == _CALL_ONE else _listed for mode, callback in units if mode != _PASS]
    if not fns:
        return None
    if len(fns) == 1:
        return fns[0]

    def chain(run: _Run, value: Any) -> Any:
        for fn in fns:
            value = fn(run, value)  # type: ignore[misc]
        return value
    return chain


class _Engine:
    """lark's LALR table and per-state lexers for sarg.lark, in plain dicts and compiled regexes.

    One step further than lark's own loop: a state whose every action reduces by the same one-child rule (the
    state after a leaf token, a ``?tree`` pass-through, the first item of a ``tree+`` list) needs no lookahead, so
    the reductions that follow a shift or a goto into it are chained ahead of time: one table entry gives the
    state the chain ends in and one function that applies the chain's callbacks. Tokens are still lexed with the
    lexer of the state lark lexes them in (the state right after the shift), so tokens are lark's."""

    def __init__(self, parser: Lark) -> None:
        table = parser.parser.parser.parser.parse_table  # lark's ParsingFrontend -> LALR_Parser -> _Parser
        terminals = {t.name: t for t in parser.terminals}
        flags = parser.lexer_conf.g_regex_flags
        rule_index: dict[Any, int] = {}
        self.rules: list[tuple[int, int, str, _Callback | None, _Rule]] = []

        def index(rule: Any) -> int:
            if rule not in rule_index:
                rule_index[rule] = len(self.rules)
                r = _Rule(rule)
                self.rules.append((r.mode, r.size, r.goto, r.callback, r))
            return rule_index[rule]

        lexers: dict[Any, _Match | None] = {}
        by_terms: dict[frozenset[str], _Match | None] = {}
        default: dict[Any, int] = {}  # state -> the one-child rule it reduces by whatever comes next
        appends: set[Any] = set()  # states that reduce ``list: list item`` whatever comes next
        for state, acts in table.states.items():
            names = frozenset(n for n in acts if n in terminals)  # as lark's ContextualLexer picks them
            if names not in by_terms:
                terms = sorted((terminals[n] for n in names),  # as lark's BasicLexer orders them
                               key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
                by_terms[names] = re.compile("|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in terms),
                                             flags).match if terms else None
            lexers[state] = by_terms[names]
            reduces = {arg for action, arg in acts.values() if action.name != "Shift"}
            if acts and len(reduces) == 1 and all(action.name != "Shift" for action, _ in acts.values()):
                r = index(next(iter(reduces)))
                if self.rules[r][0] in _UNIT_MODES and self.rules[r][1] == 1:
                    default[state] = r
                elif self.rules[r][0] == _LIST_APPEND:
                    appends.add(state)
        self.start_state = table.start_states["start"]
        self.end_state = table.end_states["start"]

        def settle(base: Any, target: Any) -> tuple[Any, _Unit | None, bool]:
            """Where a push of ``target`` over ``base`` ends after its lookahead-free one-child reductions, and
            whether it then ends as an item of the list held in ``base``: reducing ``list: list item`` pops the
            item and the list and goes from the state under them on ``list``, which is ``base`` again."""
            units: list[tuple[int, _Callback | None]] = []
            while target in default and target != self.end_state:
                mode, _, goto, callback, _ = self.rules[default[target]]
                units.append((mode, callback))
                target = table.states[base][goto][1]
            if target in appends:
                return base, _compose(units), True
            return target, _compose(units), False

        # actions[state][terminal] = (state to push, unit chain, how: _SHIFT or _APPEND, or the rule to reduce
        # by, lexer of the next token); gotos[state][rule name] = (state to push, unit chain, whether to append)
        self.actions: dict[Any, dict[str, tuple[Any, _Unit | None, int, _Match | None]]] = {}
        self.gotos: dict[Any, dict[str, tuple[Any, _Unit | None, bool]]] = {}
        for state, acts in table.states.items():
            encoded: dict[str, tuple[Any, _Unit | None, int, _Match | None]] = {}
            gotos: dict[str, tuple[Any, _Unit | None, bool]] = {}
            for symbol, (action, arg) in acts.items():
                name = str(symbol)  # plain str keys: lark's are Tokens, slower to compare
                if action.name != "Shift":
                    encoded[name] = (None, None, index(arg), None)
                elif name in terminals:
                    target, chain, append = settle(state, arg)
                    encoded[name] = (target, chain, _APPEND if append else _SHIFT, lexers[arg])
                else:
                    gotos[name] = settle(state, arg)
            self.actions[state] = encoded
            self.gotos[state] = gotos
        self.first_lexer = lexers[self.start_state]

    def parse(self, text: str, run: _Run) -> SearchArgument | None:
        """The SearchArgument of ``text`` (already right-stripped), or None at a lexing or parsing error; TooDeep at
        the first opening token past the nesting limit."""
        actions = self.actions
        gotos = self.gotos
        rules = self.rules
        end_state = self.end_state
        states: list[Any] = [self.start_state]
        values: list[Any] = []
        size = len(text)
        lexer = self.first_lexer
        pos = 0
        while True:
            if pos < size:  # the next token, lexed in the state right after the last shift (as lark does)
                m = lexer(text, pos) if lexer is not None else None
                if m is None:
                    return None
                kind: str = m.lastgroup  # type: ignore[assignment]
                pos = m.end()
            else:
                kind = _END
                m = None
            while True:
                act = actions[states[-1]].get(kind)
                if act is None:
                    return None
                target, chain, r, lexer = act
                if r < 0:  # shift, then the chain of lookahead-free reductions
                    value: Any = m if chain is None else chain(run, m)
                    if r == _APPEND:  # ... that ends as the next item of the list on top
                        values[-1].append(value)
                        break
                    if target == end_state:
                        return value if pos >= size else None
                    states.append(target)
                    values.append(value)
                    # MAX_DEPTH nested opening tokens put at least MAX_DEPTH + 1 states on the stack: only then count
                    if len(states) > MAX_DEPTH and kind in OPENS and _nesting(values) >= MAX_DEPTH:
                        raise TooDeep(_mstart(m))  # type: ignore[arg-type]
                    break
                mode, n, goto, callback, rule = rules[r]
                if mode == _PASS:
                    del states[-1]
                    value = values.pop()
                elif mode == _CALL_ONE:
                    del states[-1]
                    value = callback(run, values.pop())  # type: ignore[misc]
                elif mode == _LIST_APPEND:
                    del states[-2:]
                    value = values.pop()
                    values[-1].append(value)
                    value = values.pop()
                else:
                    kids = values[-n:]
                    del states[-n:]
                    del values[-n:]
                    if mode == _CALL_RAW:
                        value = callback(run, kids)  # type: ignore[misc]
                    elif mode == _LIST_NEW:
                        value = kids
                    else:
                        value = rule.children(kids)
                target, chain, append = gotos[states[-1]][goto]
                if chain is not None:
                    value = chain(run, value)
                if append:
                    values[-1].append(value)
                    continue
                if target == end_state:
                    return value if kind == _END else None
                states.append(target)
                values.append(value)



_lock = threading.Lock()
_engine: _Engine | None = None
_engine_failed = False


def engine() -> _Engine | None:
    """The fast driver, built once, or None when this lark's internals are not the ones it reads."""
    global _engine, _engine_failed
    if _engine is None and not _engine_failed:
        with _lock:
            if _engine is None and not _engine_failed:
                parser = build_lark(grammar_text(), parser="lalr", lexer="contextual", maybe_placeholders=False)
                try:
                    _engine = _Engine(parser)
                except (AttributeError, KeyError, TypeError, ValueError):  # pragma: no cover - another lark
                    _engine_failed = True
    return _engine


def parse(text: str, columns: dict[str, ColumnType]) -> SearchArgument | None:
    """The SearchArgument of ``text`` (``columns``: resolved), or None when lark's own parser must read it: a
    lexing or parsing error, an error a callback raised, or no fast driver for this lark. Raises TooDeep at the
    first opening token past the nesting limit (lark's parser stops at the same one)."""
    driver = _engine or engine()
    if driver is None:
        return None
    try:
        return driver.parse(text.rstrip(), _Run(text, columns))
    except SargSyntaxError:  # a callback ran before lark would have seen a syntax error: lark decides
        return None


__all__ = ["engine", "parse"]
