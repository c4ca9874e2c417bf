"""Property: a pregated plugin's regex never matches a line its pregate would skip.

The secrets engine skips a plugin's regexes on lines without any of the plugin's
``PREGATES`` literals (case-folded for IGNORECASE plugins) and, when given, its required
characters. Python's IGNORECASE matching has traps (U+017F long s matches 's', U+212A
Kelvin sign matches 'k'), so random lines built from the literals' letters, look-alikes and
secret-shaped snippets check the claim against the regexes the engine really runs.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sentinel_runtime.guardrails.scanners.secrets import (
    VIRTUAL_FILENAME,
    builtin_plugins,
    engine,
)
from sentinel_runtime.guardrails.scanners.secrets_gates import (
    EAGER_NEEDS,
    EAGER_SELF_CONTAINED,
    PREGATES,
)

MAX_EXAMPLES = 300
# Every property here: many examples, no deadline (a busy machine), no example database.
PROPERTY = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@dataclass(frozen=True)
class Pregate:
    any_of: tuple[str, ...]
    folded: bool
    and_any_of: tuple[str, ...]

    @classmethod
    def of(cls, name: str) -> Pregate:
        literals, folded, *rest = PREGATES[name]
        return cls(tuple(literals), folded, tuple(rest[0]) if rest else ())

    def passes(self, line: str) -> bool:
        haystack = line.casefold() if self.folded else line
        return any(lit in haystack for lit in self.any_of) and (
            not self.and_any_of or any(c in line for c in self.and_any_of)
        )


def plugin_regexes(name: str) -> list[re.Pattern[str]]:
    """The regexes detect-secrets applies for plugin ``name``, as the engine gates them."""
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.keyword import (
        QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
        REGEX_BY_FILETYPE,
        KeywordDetector,
        determine_file_type,
    )

    (plugin,) = [
        p for p in engine(tuple(sorted(builtin_plugins()))).plugins if type(p).__name__ == name
    ]
    if isinstance(plugin, RegexBasedDetector):
        patterns = list(plugin.denylist)
    elif isinstance(plugin, HighEntropyStringsPlugin):
        patterns = [plugin.regex]
    else:
        assert isinstance(plugin, KeywordDetector)
        filetype = determine_file_type(VIRTUAL_FILENAME)
        patterns = list(REGEX_BY_FILETYPE.get(filetype, QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP))
    return patterns


PLUGINS = sorted(PREGATES)

CHARS = (
    "keypaswdcrtonlufhimbgvxzKEYPASWDCRTONLUFHIMBGVXZ"  # the literals' letters, both cases
    "abcdefABCDEF0123456789"  # hex and digits
    "\u017f\u212a\u0131\u0130\u00df\u00f1\u00d1"  # long s, Kelvin, dotless/dotted i, sharp s, n
    "\u0663\u0661\u0662"  # Arabic-Indic digits: \d matches them
    "'\"`=:_-./+@;[]{}() \t"
)
# Look-alikes that Python's IGNORECASE matching treats as the ASCII letter (or digit class).
LONG_S, KELVIN, DOTLESS_I = "\u017f", "\u212a", "\u0131"
ARABIC_INDIC = "".join(chr(0x660 + d) for d in range(10))
LOOKALIKES = {
    "s": LONG_S,
    "k": KELVIN,
    "i": DOTLESS_I,
    **dict(zip("0123456789", ARABIC_INDIC, strict=True)),
}
ARABIC_INDIC_DIGITS = str.maketrans("0123456789", ARABIC_INDIC)
SNIPPETS = [
    "api_key",
    "API_KEY",
    "apiKey",
    "auth-key",
    "PASSWORD",
    "passwd",
    "pwd",
    "secret",
    "contraseña",
    "contrasena",
    "db_pass",
    "private_key",
    "cloudant_password",
    "cl_key",
    "softlayer_api_key",
    "ibm_cloud_iam_key",
    "ibm_cos_hmac_secret_access_key",
    "AKC",
    "AP1",
    "-us1",
    "aws",
    "AKIA",
    "xoxb-",
    "hooks.slack.com",
    "sk_live_",
    "8.8.8.8",
    "12345678:",
    " = ",
    ": ",
    ' = "',
    '"',
    "'",
    "`",
    "=>",
    ":=",
    ";",
    '" == "',
    "...",
    "_",
    "-",
]
HEX64 = "0123456789abcdef" * 4
B64 = "a1B2c3D4e5F6g7H8i9J0a1B2c3D4e5F6g7H8i9J0"
# Secret-shaped lines for each pregated plugin; mutations then bend them towards the edges.
SHAPES: dict[str, list[str]] = {
    "KeywordDetector": [
        'password = "hunter2isgreat"',
        "api_key: 'abcd1234'",
        'db_pass => "s3cret!"',
        '"hunter2" == secret_key',
        "private_key = `k3y`;",
        "contraseña: 'clave'",
        'my_secret_token["x"]: "value1"',
        'auth_key: "Abc12345"',
        "PWD='pa55'",
    ],
    "CloudantDetector": [
        "cloudant_password = 'qmwnebrvtcyxuzialskdjfhg'",
        f"cl-api-key: {HEX64}",
        "https://user:qmwnebrvtcyxuzialskdjfhg@acct.cloudant.com",
        f"clou_token={HEX64}",
    ],
    "IbmCloudIamDetector": [
        "ibm_cloud_iam_key = 'abcdefghijABCDEFGHIJ0123456789_-abcdefghijkl'",
        "iam-api-pwd: abcdefghijABCDEFGHIJ0123456789_-abcdefghijkl",
        "cloud_password = " + "x" * 44,
    ],
    "IbmCosHmacDetector": [
        "ibm_cos_hmac_secret_access_key = '" + "0123456789abcdef" * 3 + "'",
        "cos-secret-key: " + "abcdef0123456789" * 3,
        "secret_key=" + "f" * 48,
    ],
    "SoftlayerDetector": [
        f"softlayer_api_key = {HEX64}",
        f"sl-pass: '{HEX64}'",
        f"https://api.softlayer.com/soap/v3/{HEX64}",
        f"http://api.softlayer.com/soap/v3.1/{HEX64}",
    ],
    "ArtifactoryDetector": ['x="AKCp8jQ8abcdefghij"', " AP6xxxxxxxxxxxxxxx ", '=APBabcdefgh1"'],
    "MailchimpDetector": ["0123456789abcdef0123456789abcdef-us12", "f" * 32 + "-us1"],
    "IPPublicDetector": ["host 8.8.8.8 up", "52.14.201.3:8080", "1.2.3.4", "9.9.9.9:53"],
    "AWSKeyDetector": [
        "AKIAIOSFODNN7EXAMPLE",
        "ASIAZ7VRSQ5TJN2EXAMP",
        "A3T9ABCDEFGHIJKLMNOP",
        f'aws_secret_access_key = "{B64}"',
        f"AWS pass: '{B64}'",
    ],
    "SlackDetector": [
        "xoxb-123456789012-1234567890123-AbCdEfGh",
        "xoxp-1-2-3-abc",
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXX",
    ],
    "StripeDetector": ["sk_live_4eC39HqLyjWDarjtT1zdp7dc", "rk_live_" + "a1B2" * 6],
    "Base64HighEntropyString": [f'"{B64}"', "'c2VjcmV0IHZhbHVlIGhlcmUgZm9y'", '"a+b/c=="'],
    "HexHighEntropyString": [f'"{HEX64}"', "'deadBEEF0123'", '"ab"'],
    "TelegramBotTokenDetector": [
        "1234567890:AAEhBOweik6ad9r_QXMENQjcrGbqCr4K-sQ",
        "12345678:" + "A" * 35,
    ],
    # Not pregated (they have literal prefixes), but their eager-pass skip is checked here.
    "GitHubTokenDetector": ["ghp_" + "aB3" * 12, "ghs_" + "Zz9_" * 9],
    "TwilioKeyDetector": ["SK" + "0a" * 16, "AC" + "f1" * 16],
    "DiscordBotTokenDetector": [
        "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
        "Nzk5MjI2NzM0MTk0MzM2NjQ2.X_abcd.abcdefghijklmnopqrstuvwxyz0",
    ],
}


def mutate(source: str, other_digits: bool, rate: float, rng: random.Random) -> str:
    """Flip case, swap in look-alikes, drop or insert characters at ``rate``."""
    if other_digits:  # another script's decimal digits, which \d also matches
        source = source.translate(ARABIC_INDIC_DIGITS)
    out: list[str] = []
    for c in source:
        roll = rng.random()
        if roll >= rate:
            out.append(c)
        elif roll < rate * 0.4:
            out.append(LOOKALIKES.get(c.lower(), c.swapcase()))
        elif roll < rate * 0.8:
            out.append(c.swapcase())
        elif roll < rate * 0.9:
            continue  # dropped
        else:
            out.extend((c, rng.choice(CHARS)))
    return "".join(out)


def lines_for(name: str) -> st.SearchStrategy[str]:
    own = st.sampled_from(SHAPES[name])
    every = st.sampled_from(sorted({shape for shapes in SHAPES.values() for shape in shapes}))
    core = st.builds(
        mutate,
        st.one_of(own, own, every),
        st.sampled_from((False,) * 4 + (True,)),
        st.sampled_from((0.0, 0.05, 0.2, 0.5)),
        st.integers(0, 2**32).map(random.Random),
    )
    noise = st.one_of(st.just(""), st.sampled_from(SNIPPETS), st.text(CHARS, max_size=5))
    soup = st.lists(st.one_of(st.sampled_from(SNIPPETS), st.text(CHARS, max_size=4)), max_size=8)
    return st.one_of(
        st.tuples(noise, core, noise).map("".join),
        soup.map("".join),
    )


# (any_of, folded, and_any_of, pattern source, flags with MULTILINE)
GateKey = tuple[tuple[str, ...], bool, tuple[str, ...], str, int]


@pytest.fixture(scope="module")
def engine_gates() -> set[GateKey]:
    gates: set[GateKey] = set()
    for gate in engine(tuple(sorted(builtin_plugins()))).gates:
        gates.add(
            (
                gate.any_of,
                gate.folded,
                gate.and_any_of,
                gate.regex.pattern,
                gate.regex.flags | re.MULTILINE,
            )
        )
    return gates


@pytest.mark.parametrize("name", PLUGINS)
def test_engine_gates_the_plugin_regexes_with_its_pregate(
    name: str, engine_gates: set[GateKey]
) -> None:
    gate = Pregate.of(name)
    regexes = plugin_regexes(name)
    assert regexes
    for regex in regexes:
        flags = regex.flags | re.MULTILINE
        key: GateKey = (gate.any_of, gate.folded, gate.and_any_of, regex.pattern, flags)
        assert key in engine_gates, f"{name}: {regex.pattern[:60]!r} is not gated as declared"


@pytest.mark.parametrize("name", PLUGINS)
def test_pregate_passes_whenever_a_plugin_regex_matches(name: str) -> None:
    gate = Pregate.of(name)
    regexes = plugin_regexes(name)
    matched: list[str] = []

    @PROPERTY
    @given(line=lines_for(name))
    def check(line: str) -> None:
        hits = [r.pattern[:50] for r in regexes if r.search(line)]
        if hits:
            matched.append(line)
            assert gate.passes(line), f"{name} regex {hits[0]!r} matches {line!r}; gate skips it"

    check()
    # The property is vacuous unless the strategy reaches the regexes (17 to 80 of 300 do).
    assert len(matched) >= 5, f"only {len(matched)} generated lines matched a {name} regex"


INI_FRAMES = ("{k} = {v}", "{k}: {v}", "{k}={v}", "[s]\n{k} = {v}", "{k} = '{v}'", '{k}: "{v}"')


def ini_texts(name: str) -> st.SearchStrategy[str]:
    """Answers with INI-looking settings whose values are the plugin's shapes, mutated."""
    setting = st.builds(
        lambda frame, key, value: frame.format(k=key, v=value.replace("\n", " ")),
        st.sampled_from(INI_FRAMES),
        st.sampled_from(("value", "id", "x", "bot", "a b", "AP", "n")),
        lines_for(name),
    )
    return st.lists(st.one_of(setting, st.sampled_from(SNIPPETS)), min_size=1, max_size=5).map(
        "\n".join
    )


@pytest.mark.parametrize("name", sorted({*EAGER_NEEDS, *EAGER_SELF_CONTAINED}))
def test_skipping_the_eager_pass_never_loses_a_finding(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The eager INI pass is skipped when ``_eager_pass_can_find`` says it cannot find
    anything: on INI-looking answers, the plugin's findings must be those of always
    running it."""
    scanner = engine((name,))
    outcomes: list[tuple[bool, bool]] = []

    @PROPERTY
    @given(text=ini_texts(name))
    def check(text: str) -> None:
        skipped = scanner.find(text)
        with monkeypatch.context() as patch:
            patch.setattr(type(scanner), "_eager_pass_can_find", lambda self, text: True)
            always = scanner.find(text)
        assert sorted(map(repr, skipped)) == sorted(map(repr, always)), text
        outcomes.append((scanner._eager_pass_can_find(text), bool(always)))

    check()
    # Vacuous unless the pass is both run and skipped, and the plugin finds something.
    runs = [run for run, _ in outcomes]
    assert any(runs) and not all(runs) and any(found for _, found in outcomes)


@pytest.mark.parametrize("name", sorted(EAGER_NEEDS))
def test_every_match_holds_what_the_eager_pass_skip_needs(name: str) -> None:
    """The eager INI pass is skipped for a text without ``EAGER_NEEDS[name]``: every match
    of the plugin's regexes must hold it, or the skip would lose a finding."""
    regexes = plugin_regexes(name)
    matched: list[str] = []

    @PROPERTY
    @given(line=lines_for(name))
    def check(line: str) -> None:
        for regex in regexes:
            for m in regex.finditer(line):
                matched.append(m.group())
                assert EAGER_NEEDS[name].search(m.group()), (name, m.group())

    check()
    assert len(matched) >= 5, f"only {len(matched)} generated lines matched a {name} regex"


@pytest.mark.parametrize(
    ("name", "line"),
    [
        pytest.param(
            "KeywordDetector", f'pa{LONG_S}{LONG_S}word = "hunter2isgreat"', id="keyword-long-s"
        ),
        pytest.param("KeywordDetector", f'api_{KELVIN}ey = "hunter2isgreat"', id="keyword-kelvin"),
        pytest.param(
            "SoftlayerDetector", f"{LONG_S}oftlayer_api_key = {'a' * 64}", id="softlayer-long-s"
        ),
        pytest.param(
            "AWSKeyDetector", f'aw{LONG_S}_secret_key = "{"A" * 40}"', id="aws-keyword-long-s"
        ),
        pytest.param(
            "SlackDetector",
            f"https://hook{LONG_S}.{LONG_S}lack.com/services/T1/B2/c3",
            id="slack-webhook-long-s",
        ),
        pytest.param(
            "TelegramBotTokenDetector",
            f"{ARABIC_INDIC[1:9]}:{'A' * 35}",
            id="telegram-arabic-indic-digits",
        ),
    ],
)
def test_known_traps_pass_the_gate(name: str, line: str) -> None:
    assert any(r.search(line) for r in plugin_regexes(name)), "the trap must match the regex"
    assert Pregate.of(name).passes(line)
