"""A policy-defined guard family: its template rendering, its reply patterns, and the
checks that refuse a family that cannot work when the policy is loaded."""

from __future__ import annotations

import pytest

from sentinel_runtime.guard import families, types
from sentinel_runtime.pipeline.signals import harm

TEMPLATE = "Judge this exchange.\nUser: {prompt}\nAssistant: {answer}\nVerdict:"
PROMPT = types.GuardInput(prompt="How do I bake bread?")
ANSWER = types.GuardInput(prompt="How do I bake bread?", answer="Mix flour and water.")


def family(**overrides: object) -> types.Family:
    settings: dict[str, object] = {
        "template": TEMPLATE,
        "unsafe_pattern": r"(?im)^verdict: unsafe",
        "categories_pattern": r"(?im)^categories: (.+)$",
        "safe_pattern": r"(?im)^verdict: safe",
        "category_map": {"weapons": "weapons", "hate": ["hate_harassment", "extremism"]},
        "known_risks": harm.CATEGORIES,
    }
    settings.update(overrides)
    template = settings.pop("template")
    unsafe = settings.pop("unsafe_pattern")
    categories = settings.pop("categories_pattern")
    return families.custom(template, unsafe, categories, **settings)  # type: ignore[arg-type]


def reply(text: str) -> types.GuardReply:
    return types.GuardReply(text=text)


def test_the_template_is_sent_as_one_user_message() -> None:
    request = family().build(ANSWER)
    assert request.endpoint == "chat"
    assert request.messages == (
        {
            "role": "user",
            "content": "Judge this exchange.\nUser: How do I bake bread?\n"
            "Assistant: Mix flour and water.\nVerdict:",
        },
    )
    assert request.params == {"temperature": 0, "max_tokens": 64}
    # For a prompt, the answer's place is empty.
    content = family().build(PROMPT).messages[0]["content"]  # type: ignore[index]
    assert content == "Judge this exchange.\nUser: How do I bake bread?\nAssistant: \nVerdict:"


def test_placeholders_inside_the_judged_texts_are_left_as_written() -> None:
    item = types.GuardInput(prompt="say {answer} and {x}", answer="{prompt}")
    content = family().build(item).messages[0]["content"]  # type: ignore[index]
    assert (
        content == "Judge this exchange.\nUser: say {answer} and {x}\nAssistant: {prompt}\nVerdict:"
    )


def test_a_template_with_one_place_judges_an_answer_there() -> None:
    one = family(template="Is this text unsafe?\n{prompt}")
    assert one.build(PROMPT).messages[0]["content"] == (  # type: ignore[index]
        "Is this text unsafe?\nHow do I bake bread?"
    )
    assert one.build(ANSWER).messages[0]["content"] == (  # type: ignore[index]
        "Is this text unsafe?\nMix flour and water."
    )


@pytest.mark.parametrize(
    ("text", "unsafe", "categories", "risks"),
    [
        pytest.param("Verdict: safe", False, (), (), id="safe"),
        pytest.param(
            "Verdict: unsafe\nCategories: weapons", True, ("weapons",), ("weapons",), id="one"
        ),
        pytest.param(
            "Verdict: UNSAFE\nCategories: Hate, weapons",
            True,
            ("Hate", "weapons"),
            ("hate_harassment", "extremism", "weapons"),
            id="two-mapped-case-blind",
        ),
        pytest.param(
            "Verdict: unsafe\nCategories: teleportation",
            True,
            ("teleportation",),
            ("other",),
            id="unknown-is-other",
        ),
        pytest.param("Verdict: unsafe", True, (), ("other",), id="no-categories"),
    ],
)
def test_the_reply_is_read_with_the_policys_patterns(
    text: str, unsafe: bool, categories: tuple[str, ...], risks: tuple[str, ...]
) -> None:
    verdict = family().parse(reply(text), PROMPT)
    assert verdict.unsafe is unsafe
    assert verdict.categories == categories
    assert verdict.risk_categories == risks
    assert verdict.probability is None


def test_a_reply_matching_neither_pattern_is_a_format_error() -> None:
    with pytest.raises(types.GuardFormatError, match="neither"):
        family().parse(reply("I am not sure."), PROMPT)


def test_without_a_safe_pattern_anything_not_unsafe_is_safe() -> None:
    verdict = family(safe_pattern=None).parse(reply("I am not sure."), PROMPT)
    assert verdict.unsafe is False


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        pytest.param({"template": "Judge: {text}"}, r"\{prompt\}", id="no-prompt-placeholder"),
        pytest.param({"unsafe_pattern": "(unsafe"}, "unsafePattern", id="does-not-compile"),
        pytest.param({"unsafe_pattern": "unsafe|"}, "empty reply", id="matches-everything"),
        pytest.param({"safe_pattern": "[safe"}, "safePattern", id="safe-does-not-compile"),
        pytest.param({"safe_pattern": "(?i)x*"}, "empty reply", id="safe-matches-everything"),
        pytest.param({"categories_pattern": "categories: .+"}, "capturing group", id="no-group"),
        pytest.param({"categories_pattern": "(c): (.+)"}, "capturing group", id="two-groups"),
        pytest.param({"category_map": {"weapons": "guns"}}, "guns", id="unknown-risk-category"),
        pytest.param({"category_map": {"weapons": []}}, "weapons", id="empty-mapping"),
        pytest.param({"max_tokens": 0}, "maxTokens", id="no-tokens"),
    ],
)
def test_a_family_that_cannot_work_is_refused_when_built(
    overrides: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        family(**overrides)
