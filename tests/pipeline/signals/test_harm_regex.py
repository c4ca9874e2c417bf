"""``harm_regex``: ``trie`` builds an alternation that matches what a flat one does, and
``read`` gives a pattern's tree as Python's ``re`` parser shapes it, or refuses.

The trees below are written out by hand from how ``re`` parses each source (a group without
flags unpacked, the first items all alternatives share moved in front, single characters
made one class). ``test_harm_equivalence`` checks the trees where they matter: the trigger
index built from them answers as a plain search for every pattern of the lexicon.
"""

from __future__ import annotations

import re

import pytest

from sentinel_runtime.pipeline.signals import harm_regex


def lit(text: str) -> list[tuple[str, int]]:
    return [("LITERAL", ord(char)) for char in text]


SPACE = ("IN", [("CATEGORY", "CATEGORY_SPACE")])
WORD = ("IN", [("CATEGORY", "CATEGORY_WORD")])
BOUNDARY = ("AT", "AT_BOUNDARY")


@pytest.mark.parametrize(
    ("source", "tree"),
    [
        pytest.param("kill", lit("kill"), id="literals"),
        pytest.param(
            r"\bkill(?:s|ing)?\s+",
            [
                BOUNDARY,
                *lit("kill"),
                ("MAX_REPEAT", (0, 1, [("BRANCH", (None, [lit("s"), lit("ing")]))])),
                ("MAX_REPEAT", (1, None, [SPACE])),
            ],
            id="group-unpacked-into-repeat",
        ),
        pytest.param(
            r"(?:\bab)|(?:\bac)",
            [BOUNDARY, *lit("a"), ("IN", lit("bc"))],
            id="shared-first-items-moved-out-and-one-class",
        ),
        pytest.param(
            r"\s+a|\s+b",
            [
                (
                    "BRANCH",
                    (
                        None,
                        [
                            [("MAX_REPEAT", (1, None, [SPACE])), *lit("a")],
                            [("MAX_REPEAT", (1, None, [SPACE])), *lit("b")],
                        ],
                    ),
                )
            ],
            id="repeats-are-never-shared",
        ),
        pytest.param(
            r"[\w'-]+[^.?!]{0,60}[a-c]",
            [
                ("MAX_REPEAT", (1, None, [("IN", [WORD[1][0], *lit("'-")])])),
                (
                    "MAX_REPEAT",
                    (0, 60, [("IN", [("NEGATE", None), *lit(".?!")])]),
                ),
                ("IN", [("RANGE", (ord("a"), ord("c")))]),
            ],
            id="classes",
        ),
        pytest.param(r"[^?]x[y]", [("NOT_LITERAL", ord("?")), *lit("xy")], id="one-char-classes"),
        pytest.param(
            r"a{x}b{,2}?c{3}",
            [*lit("a{x}"), ("MIN_REPEAT", (0, 2, lit("b"))), ("MAX_REPEAT", (3, 3, lit("c")))],
            id="braces-and-lazy-repeats",
        ),
        pytest.param(
            r"(?-i:[A-Z])(?!\s+up\b)",
            [
                ("SUBPATTERN", (None, 0, re.IGNORECASE, [("IN", [("RANGE", (65, 90))])])),
                ("ASSERT_NOT", (1, [("MAX_REPEAT", (1, None, [SPACE])), *lit("up"), BOUNDARY])),
            ],
            id="scoped-flags-and-lookahead",
        ),
        pytest.param(
            "^\\s*(?:was|is)$|\\u2019\\.\\\\",
            [
                (
                    "BRANCH",
                    (
                        None,
                        [
                            [
                                ("AT", "AT_BEGINNING"),
                                ("MAX_REPEAT", (0, None, [SPACE])),
                                ("BRANCH", (None, [lit("was"), lit("is")])),
                                ("AT", "AT_END"),
                            ],
                            lit("\u2019.\\"),
                        ],
                    ),
                )
            ],
            id="anchors-and-escapes",
        ),
    ],
)
def test_read_gives_the_tree_re_parses(source: str, tree: list) -> None:
    re.compile(source)  # a valid pattern
    assert harm_regex.read(source) == tree


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(r"(\w)\1", id="back-reference"),
        pytest.param(r"(?P<name>x)", id="named-group"),
        pytest.param(r"(?x) a b", id="global-flags"),
        pytest.param(r"(?s:.)", id="dotall-group"),
        pytest.param(r"(?>ab)", id="atomic-group"),
        pytest.param(r"\N{EM DASH}", id="named-character"),
        pytest.param(r"a)", id="unbalanced"),
        pytest.param(r"a**", id="multiple-repeat"),
    ],
)
def test_read_refuses_other_syntax(source: str) -> None:
    with pytest.raises(ValueError):
        harm_regex.read(source)


def test_a_trie_matches_what_the_flat_alternation_matches() -> None:
    phrases = {"kill", "kills", "killing", "kill off", "kit", "k", "a-b", "a.b"}
    shaped = re.compile(rf"\b{harm_regex.trie(phrases)}\b")
    flat = re.compile(r"\b(?:" + "|".join(map(re.escape, phrases)).replace(r"\ ", r"\s+") + r")\b")
    texts = ["kill", "killing it", "kill  off", "kits", "k", "a-b", "a.b", "axb", "skill", "kit"]
    assert [bool(shaped.search(t)) for t in texts] == [bool(flat.search(t)) for t in texts]
    assert [m[0] for m in shaped.finditer("kill off killing")] == ["kill off", "killing"]
