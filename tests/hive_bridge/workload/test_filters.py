"""Spark's printed filters read as HiveQL: every reading of raw literals tried, a conjunct kept only when every
reading has it, literals typed by the table's columns, whatever is not certain unknown (never guessed)."""

from __future__ import annotations

import sarg
from hive_bridge.workload.printed_filters import parse_list, translate_lists

TYPES = {"id": "int", "name": "string", "price": "double", "amount": "decimal(10,2)", "d": "date",
         "ts": "timestamp", "bin": "binary", "col.dot": "int", "dt": "string", "flag": "boolean"}


def hql(*lists: tuple[str, bool]) -> str | None:
    return translate_lists(list(lists), TYPES).hiveql


def test_catalyst_forms() -> None:
    assert hql(("[isnotnull(id#1), (id#1 = 5), (name#2 = a,b[c] d)]", False)) == \
        "id IS NOT NULL AND id = 5 AND name = 'a,b[c] d'"
    assert hql(("[(d#3 = 2024-01-03), (ts#4 > 2024-01-01 10:00:00), (amount#5 < 10.25)]", False)) == \
        "d = DATE '2024-01-03' AND ts > TIMESTAMP '2024-01-01 10:00:00' AND amount < 10.25"
    assert hql(("[((isnull(id#1) OR NOT (id#1 = 3)) OR (id#1 <=> 4))]", False)) == \
        "((id IS NULL OR NOT id = 3) OR id <=> 4)"
    assert hql(("[(col.dot#9 = 2), id#1L IN (1,2,3)]", False)) == "`col.dot` = 2 AND id IN (1, 2, 3)"
    assert hql(("[(flag#7 = true)]", False)) == "flag = true"


def test_what_is_not_certain_is_unknown() -> None:
    tr = translate_lists([("[(bin#1 = 0x0102), (cast(id#2 as string) = 5), StartsWith(cast(id#2 as string), ab), "
                     "dynamicpruningexpression(dt#4 IN dynamicpruning#9), (nope#5 = 1)]", False)], TYPES)
    assert tr.hiveql is None and tr.unknown == 5
    # an OR with an unknown side keeps the known side as "maybe", never drops it
    assert hql(("[(StartsWith(cast(id#2 as string), ab) OR (id#2 = 1))]", False)) == "(unknown() OR id = 1)"


def test_starts_with_is_a_like_of_its_escaped_prefix() -> None:
    assert hql((r"[isnotnull(name#3), StartsWith(name#3, a%b_c\)]", False)) == \
        r"name IS NOT NULL AND name LIKE 'a\\%b\\_c\\\\%'"
    assert hql(("[IsNotNull(name), StringStartsWith(name,ab)]", True)) == "name IS NOT NULL AND name LIKE 'ab%'"
    assert hql(("[NOT StartsWith(name#3, ab)]", False)) == "NOT name LIKE 'ab%'"
    assert hql(("[StringStartsWith(id,1)]", True)) is None          # the text of a number: unknown
    for text, v1, prefix in [(r"[isnotnull(name#3), StartsWith(name#3, a%b_c\)]", False, "a%b_c\\"),
                             ("[StringStartsWith(name,ab)]", True, "ab")]:
        parsed = sarg.parse_hiveql(hql((text, v1)) or "", TYPES)
        assert parsed.prefixes == (sarg.PrefixCondition("name", prefix),)
    negated = sarg.parse_hiveql(hql(("[NOT StartsWith(name#3, ab)]", False)) or "", TYPES)
    assert negated.prefixes == (sarg.PrefixCondition("name", "ab", negated=True),)


def test_ambiguous_literals() -> None:
    # one reading only: the literal holds ", " and a quote
    assert hql(("[(name#12 = it's, x)]", False)) == "name = 'it\\'s, x'"
    # a literal that would hold this list's own attribute reference is a misreading
    assert hql(("[(name#12 = a), (id#3 = 5)]", False)) == "name = 'a' AND id = 5"
    # V1 literals have no attribute ids: "EqualTo(name,a), EqualTo(id,5)" may be one literal: unknown
    tr = translate_lists([("[EqualTo(name,a), EqualTo(id,5)]", True)], TYPES)
    assert tr.hiveql is None and tr.unknown == 2
    assert len(parse_list("[EqualTo(name,a), EqualTo(id,5)]", True)) == 2
    # the commas of an IN of strings may belong to the values: every run of pieces is kept
    assert hql(("[name#1 IN (x,y,z)]", False)) == "name IN ('x', 'x,y', 'x,y,z', 'y', 'y,z', 'z')"


def test_v1_cross_check_adds_what_it_says_for_certain() -> None:
    tr = translate_lists([("[(cast(id#2 as string) = 5), (price#3 > 1.5)]", False),
                    ("[GreaterThan(price,1.5), In(id, [1,10,2])]", True)], TYPES)
    assert tr.conjuncts == ["price > 1.5", "id IN (1, 10, 2)"]
    assert tr.unknown == 1           # the cast, counted once (the V1 list is a cross-check)
    # a V1 timestamp is in the JVM's zone: never read
    assert translate_lists([("[GreaterThan(ts,2024-01-01 10:00:00.0)]", True)], TYPES).hiveql is None


def test_every_translation_parses_with_the_table_schema() -> None:
    for text in ["[(d#3 = 2024-01-03), (name#2 = it's \"q\" \\ x)]", "[NOT (id#1 = 3), (price#3 <= -1.0E10)]"]:
        out = hql((text, False))
        assert out is not None
        sarg.parse_hiveql(out, TYPES)
