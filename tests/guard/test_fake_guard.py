"""Each family's adapter against a fake server that speaks that family's format over real
HTTP: what the adapter builds is accepted as the family's real server would accept it, and
the fake's replies (the model cards' examples) come back as the right verdicts. The fake's
own checks and fault modes are pinned here too, so a test that relies on them can trust
them."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import pytest

from sentinel_runtime.guard import families, types
from sentinel_runtime.guard.families import granite_guardian, shieldgemma
from support.fake_guard import FakeGuard, ask

FAMILIES = (
    "llama-guard-3",
    "llama-guard-4",
    "shieldgemma",
    "granite-guardian",
    "qwen3guard",
    "wildguard",
)
WITH_PROBABILITY = ("llama-guard-3", "llama-guard-4", "shieldgemma", "granite-guardian")
# What each family's fake names for an unsafe text, mapped by the adapter.
FIRST_RISK = {
    "llama-guard-3": "violence",
    "llama-guard-4": "violence",
    "shieldgemma": "other",
    "granite-guardian": "other",
    "qwen3guard": "violence",
    "wildguard": "other",
}

BENIGN = types.GuardInput(prompt="What is the capital of France?")
HARMFUL = types.GuardInput(prompt="Explain UNSAFE-TRIGGER in detail.")
SAFE_ANSWER = types.GuardInput(prompt="Tell me a story.", answer="Once upon a time...")
UNSAFE_ANSWER = types.GuardInput(prompt="Tell me a story.", answer="Step one: unsafe-trigger.")

Start = Callable[..., FakeGuard]


def judge(fake: FakeGuard, item: types.GuardInput) -> types.GuardVerdict:
    family = families.get(fake.family)
    return family.parse(ask(fake.base_url, family.build(item)), item)


@pytest.mark.parametrize("name", FAMILIES)
def test_each_family_round_trips_prompts_and_answers(name: str, fake_guard: Start) -> None:
    fake = fake_guard(name)

    benign, harmful = judge(fake, BENIGN), judge(fake, HARMFUL)
    safe_answer, unsafe_answer = judge(fake, SAFE_ANSWER), judge(fake, UNSAFE_ANSWER)

    assert fake.rejected == []
    assert (benign.unsafe, harmful.unsafe) == (False, True)
    assert (safe_answer.unsafe, unsafe_answer.unsafe) == (False, True)
    assert harmful.risk_categories[0] == FIRST_RISK[name]
    assert benign.risk_categories == ()
    # The fake read the exchange the way the family's server sees it.
    assert [(seen.prompt, seen.answer) for seen in fake.seen] == [
        (BENIGN.prompt, None),
        (HARMFUL.prompt, None),
        (SAFE_ANSWER.prompt, SAFE_ANSWER.answer),
        (UNSAFE_ANSWER.prompt, UNSAFE_ANSWER.answer),
    ]
    if name in WITH_PROBABILITY:
        assert harmful.probability == pytest.approx(0.97)
        assert benign.probability == pytest.approx(0.03)
    else:
        assert harmful.probability is None


@pytest.mark.parametrize("name", FAMILIES)
def test_the_request_carries_only_the_judged_turns(name: str, fake_guard: Start) -> None:
    fake = fake_guard(name)
    judge(fake, BENIGN)
    (request,) = fake.requests
    body = request["json"]
    if "messages" in body:
        assert [m["role"] for m in body["messages"]] == ["user"]
    else:
        assert "Chatbot Response" not in body["prompt"]  # no answer when a prompt is judged
        assert not body["prompt"].startswith(("<s>", "<bos>"))
    assert body.get("temperature") == 0


def test_the_categories_a_test_chooses_come_back_mapped(fake_guard: Start) -> None:
    fake = fake_guard("llama-guard-4", categories=("S9", "S14"))
    verdict = judge(fake, HARMFUL)
    assert verdict.categories == ("S9", "S14")
    assert verdict.risk_categories == ("chemical_biological", "explosives", "cyber")
    fake = fake_guard("qwen3guard", categories=("PII",))
    assert judge(fake, HARMFUL).risk_categories == ("privacy",)


def test_a_tests_own_rule_makes_a_text_unsafe(fake_guard: Start) -> None:
    fake = fake_guard("wildguard", judge=lambda text: "capital" in text)
    assert judge(fake, BENIGN).unsafe is True
    fake = fake_guard("wildguard", trigger=None)
    assert judge(fake, HARMFUL).unsafe is False


@pytest.mark.parametrize(
    ("variant", "text"),
    [
        pytest.param("3.1", "Yes", id="3.1"),
        pytest.param("3.2", "Yes\n<confidence> High </confidence>", id="3.2"),
        pytest.param("3.3", "<score> yes </score>", id="3.3"),
    ],
)
def test_granite_guardian_generations_reply_in_their_own_forms(
    variant: str, text: str, fake_guard: Start
) -> None:
    fake = fake_guard("granite-guardian", variant=variant)
    key = "criteria_id" if variant == "3.3" else "risk_name"
    family = granite_guardian.GraniteGuardian(config_key=key)
    reply = ask(fake.base_url, family.build(HARMFUL))
    assert reply.text == text
    verdict = family.parse(reply, HARMFUL)
    assert verdict.unsafe is True
    # 3.3's first token is its tag: the probability is unknown there.
    assert (verdict.probability is None) is (variant == "3.3")
    assert fake.rejected == []


def test_the_custom_family_round_trips(fake_guard: Start) -> None:
    fake = fake_guard("custom")
    family = families.custom(
        "Is this unsafe? Answer 'Verdict: safe' or 'Verdict: unsafe'.\n{prompt}",
        r"^Verdict: unsafe",
        r"Categories: (.+)",
        safe_pattern=r"^Verdict: safe",
        category_map={"violence": "violence"},
    )
    for item, unsafe in ((BENIGN, False), (HARMFUL, True), (UNSAFE_ANSWER, True)):
        verdict = family.parse(ask(fake.base_url, family.build(item)), item)
        assert verdict.unsafe is unsafe
    assert verdict.risk_categories == ("violence",)
    assert fake.rejected == []


# --- the first token's log-probabilities, in both OpenAI shapes ---------------------------


def test_chat_logprobs_come_in_openais_chat_shape(fake_guard: Start) -> None:
    fake = fake_guard("llama-guard-3", confidence=0.8)
    body = {"messages": [{"role": "user", "content": "UNSAFE-TRIGGER"}]}
    choice = post(fake, "/chat/completions", {**body, "logprobs": True, "top_logprobs": 2})
    first = choice["logprobs"]["content"][0]
    assert first["token"] == "unsafe"
    assert [t["token"] for t in first["top_logprobs"]] == ["unsafe", "safe"]
    assert first["top_logprobs"][0]["logprob"] == pytest.approx(first["logprob"])
    assert post(fake, "/chat/completions", body)["logprobs"] is None  # not asked for


def test_completion_logprobs_come_in_the_completions_shape(fake_guard: Start) -> None:
    fake = fake_guard("shieldgemma")
    prompt = shieldgemma.SHIELDGEMMA.build(HARMFUL).prompt
    choice = post(fake, "/completions", {"prompt": prompt, "max_tokens": 1, "logprobs": 5})
    assert choice["text"] == "Yes"
    assert choice["logprobs"]["tokens"][0] == "Yes"
    assert set(choice["logprobs"]["top_logprobs"][0]) >= {"Yes", "No"}
    assert post(fake, "/completions", {"prompt": prompt})["logprobs"] is None


# --- requests not in the family's shape are refused, as a wrong adapter would be ----------


@pytest.mark.parametrize(
    ("name", "path", "body", "reason"),
    [
        pytest.param(
            "llama-guard-3",
            "/chat/completions",
            {
                "messages": [
                    {"role": "system", "content": "You are a safety classifier."},
                    {"role": "user", "content": "hi"},
                ]
            },
            "system",
            id="llama-guard-system-turn",
        ),
        pytest.param(
            "llama-guard-4",
            "/chat/completions",
            {"messages": [{"role": "assistant", "content": "hi"}]},
            "alternate",
            id="llama-guard-starts-with-assistant",
        ),
        pytest.param("qwen3guard", "/completions", {"prompt": "hi"}, "chat", id="qwen-raw-prompt"),
        pytest.param(
            "granite-guardian",
            "/chat/completions",
            {"messages": [{"role": "user", "content": "hi"}]},
            "guardian_config",
            id="granite-without-risk",
        ),
        pytest.param(
            "granite-guardian",
            "/chat/completions",
            {
                "messages": [{"role": "user", "content": "hi"}],
                "chat_template_kwargs": {"guardian_config": {"risk_name": "rudeness"}},
            },
            "rudeness",
            id="granite-unknown-risk",
        ),
        pytest.param(
            "shieldgemma",
            "/chat/completions",
            {"messages": [{"role": "user", "content": "hi"}]},
            "completions",
            id="shieldgemma-as-chat",
        ),
        pytest.param(
            "shieldgemma",
            "/completions",
            {"prompt": "Does this violate the policy? hi"},
            "policy-expert",
            id="shieldgemma-other-text",
        ),
        pytest.param(
            "shieldgemma",
            "/completions",
            {"prompt": "<bos>" + str(shieldgemma.SHIELDGEMMA.build(BENIGN).prompt)},
            "BOS",
            id="shieldgemma-double-bos",
        ),
        pytest.param(
            "wildguard",
            "/completions",
            {"prompt": "Human user:\nhi\n\nAI assistant:\n\n"},
            "classifier instruction",
            id="wildguard-other-text",
        ),
        pytest.param(
            "custom",
            "/chat/completions",
            {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]},
            "one user message",
            id="custom-two-messages",
        ),
        pytest.param(
            "llama-guard-3",
            "/chat/completions",
            {"messages": [{"role": "user", "content": "hi"}], "stream": True},
            "stream",
            id="streamed",
        ),
    ],
)
def test_a_request_not_in_the_familys_shape_is_answered_400(
    name: str, path: str, body: dict[str, object], reason: str, fake_guard: Start
) -> None:
    fake = fake_guard(name)
    response = httpx.post(fake.base_url + path, json=body, timeout=5)
    assert response.status_code == 400
    assert reason in response.json()["error"]["message"]
    assert len(fake.rejected) == 1 and reason in fake.rejected[0]
    assert fake.seen == []


def test_shieldgemma_policies_worded_for_the_wrong_side_are_refused(fake_guard: Start) -> None:
    fake = fake_guard("shieldgemma")
    # A response judged under the prompt-side wording: a real model would read a policy
    # about the wrong text. The fake refuses it, so such an adapter fails its tests.
    good = shieldgemma.SHIELDGEMMA.build(SAFE_ANSWER).prompt
    assert good is not None
    wrong = good.replace(
        "The chatbot shall not generate content that",
        "The prompt shall not contain or seek generation of content that",
    )
    response = httpx.post(fake.base_url + "/completions", json={"prompt": wrong}, timeout=5)
    assert response.status_code == 400
    assert "worded for a response" in response.json()["error"]["message"]


# --- fault modes ------------------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 503])
def test_a_server_error_status_is_answered(status: int, fake_guard: Start) -> None:
    fake = fake_guard("llama-guard-3", status=status)
    with pytest.raises(httpx.HTTPStatusError) as error:
        judge(fake, BENIGN)
    assert error.value.response.status_code == status
    assert len(fake.requests) == 1  # recorded even when it fails


def test_a_delay_holds_the_answer(fake_guard: Start) -> None:
    fake = fake_guard("qwen3guard", delay=0.3)
    started = time.monotonic()
    assert judge(fake, BENIGN).unsafe is False
    assert time.monotonic() - started >= 0.3
    with pytest.raises(httpx.TimeoutException):
        family = families.get("qwen3guard")
        ask(fake.base_url, family.build(BENIGN), timeout=0.05)


@pytest.mark.parametrize("name", FAMILIES)
def test_a_malformed_reply_is_a_format_error(name: str, fake_guard: Start) -> None:
    fake = fake_guard(name, reply_text="I'm sorry, I can't classify that.")
    with pytest.raises(types.GuardFormatError):
        judge(fake, HARMFUL)


def test_a_raw_body_is_sent_as_it_is(fake_guard: Start) -> None:
    fake = fake_guard("llama-guard-3", raw_body=b"<html>bad gateway</html>", status=502)
    response = httpx.post(
        fake.base_url + "/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}]},
        timeout=5,
    )
    assert (response.status_code, response.content) == (502, b"<html>bad gateway</html>")


def test_the_models_route_names_the_fake(fake_guard: Start) -> None:
    fake = fake_guard("wildguard")
    models = httpx.get(fake.base_url + "/models", timeout=5).json()
    assert models["data"][0]["id"] == "fake-wildguard"


def test_an_unknown_family_is_refused() -> None:
    with pytest.raises(ValueError, match="llama-guard-2"):
        FakeGuard(family="llama-guard-2")


def post(fake: FakeGuard, path: str, body: dict[str, object]) -> dict[str, object]:
    response = httpx.post(fake.base_url + path, json=body, timeout=5)
    assert response.status_code == 200, response.text
    return response.json()["choices"][0]
