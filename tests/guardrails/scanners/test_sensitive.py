"""``sensitive`` scanner: email, phone, Luhn-checked credit card and IP address placeholders."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from sentinel_runtime.guardrails.scanners import REGISTRY
from sentinel_runtime.guardrails.scanners.base import ScanResult
from sentinel_runtime.guardrails.scanners.sensitive import (
    ALL_DETECTORS,
    SCANNER,
    SensitiveParams,
    luhn_valid,
)
from support.scanners import scanning

scan = scanning(SCANNER)


def test_registered_under_seed_name() -> None:
    assert REGISTRY["sensitive"] is SCANNER


def test_default_detectors_are_all_four() -> None:
    params = SensitiveParams.model_validate({})
    assert set(params.detectors) == {"email", "phone", "credit_card", "ip_address"}
    assert set(ALL_DETECTORS) == set(params.detectors)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Mail jane.doe@example.com today", "Mail <EMAIL> today", id="email"),
        pytest.param(
            "Mail j.d+tag@mail.example.co.uk.", "Mail <EMAIL>.", id="email-plus-subdomains"
        ),
        pytest.param("Call +1 (555) 123-4567 now", "Call <PHONE> now", id="phone-us-plus"),
        pytest.param("Call 555-123-4567 now", "Call <PHONE> now", id="phone-dashes"),
        pytest.param("Call +44 20 7946 0958.", "Call <PHONE>.", id="phone-uk"),
        pytest.param("Card 4111 1111 1111 1111.", "Card <CREDIT_CARD>.", id="card-spaces"),
        pytest.param("Card 4111-1111-1111-1111.", "Card <CREDIT_CARD>.", id="card-dashes"),
        pytest.param("Card 4111111111111111.", "Card <CREDIT_CARD>.", id="card-plain"),
        pytest.param("Amex 378282246310005", "Amex <CREDIT_CARD>", id="card-15-digits"),
        pytest.param("Host 192.168.0.1 is up", "Host <IP_ADDRESS> is up", id="ipv4-private"),
        pytest.param("Dial 8.8.8.8:53", "Dial <IP_ADDRESS>:53", id="ipv4-with-port"),
        pytest.param("Net 10.0.0.0/8", "Net <IP_ADDRESS>/8", id="ipv4-cidr"),
    ],
)
def test_each_kind_is_replaced_with_its_placeholder(text: str, expected: str) -> None:
    result = scan(text)
    assert result == ScanResult(expected, False, 1.0)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Card 4111111111111112 declined", id="luhn-invalid-16-digits"),
        pytest.param("Card 4111 1111 1111 1112 declined", id="luhn-invalid-with-spaces"),
        pytest.param("Order 1234567890 shipped", id="bare-order-number"),
        pytest.param("Epoch 1700000000123 ms", id="bare-timestamp"),
        pytest.param("Bad address 999.1.1.1 here", id="octet-over-255"),
        pytest.param("Version 1.2.3.4.5 out", id="five-parts"),
        pytest.param("Short 1.2.3 only", id="three-parts"),
        pytest.param("user at example dot com", id="obfuscated-email"),
        pytest.param("Released 2024-05-01.", id="iso-date"),
        pytest.param("Stamp 2024-01-15T10:30:00Z", id="iso-datetime"),
    ],
)
def test_non_sensitive_text_is_clean(text: str) -> None:
    assert scan(text) == ScanResult(text, True, -1.0)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Run at 2024-01-15 10:30:00 UTC", id="date-and-time"),
        pytest.param("Released 2024-01-15 1234567", id="date-then-digits"),
        pytest.param("ISBN 978-3-16-148410-0 is the book", id="isbn-13"),
    ],
)
def test_timestamps_and_isbns_are_not_phone_numbers(text: str) -> None:
    assert scan(text).valid


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("call (555) 123-4567 today", "call <PHONE> today", id="parenthesised-area"),
        pytest.param("call +1 (555) 123-4567", "call <PHONE>", id="plus-and-parens"),
        pytest.param("ring +14155552671.", "ring <PHONE>.", id="e164"),
    ],
)
def test_phone_shapes_are_redacted_whole(text: str, expected: str) -> None:
    assert scan(text).text == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "Host 2001:0db8:85a3:0000:0000:8a2e:0370:7334 is up",
            "Host <IP_ADDRESS> is up",
            id="ipv6-full",
        ),
        pytest.param("Host 2001:db8::8a2e:370:7334.", "Host <IP_ADDRESS>.", id="ipv6-compressed"),
        pytest.param("Gateway FE80::1FF:FE23:4567:890A", "Gateway <IP_ADDRESS>", id="ipv6-upper"),
        pytest.param("Loopback ::1 only", "Loopback <IP_ADDRESS> only", id="ipv6-loopback"),
        pytest.param("Prefix 2001:db8:: here", "Prefix <IP_ADDRESS> here", id="ipv6-trailing-gap"),
        pytest.param("Mapped ::ffff:192.0.2.128.", "Mapped <IP_ADDRESS>.", id="ipv6-ipv4-mapped"),
        pytest.param("Mapped ::ffff:c000:280", "Mapped <IP_ADDRESS>", id="ipv6-mapped-hex"),
        pytest.param(
            "URL http://[2001:db8::1]:8080/", "URL http://[<IP_ADDRESS>]:8080/", id="ipv6-url"
        ),
        pytest.param("Net 2001:db8::/32", "Net <IP_ADDRESS>/32", id="ipv6-cidr"),
        pytest.param("Link fe80::1%eth0", "Link <IP_ADDRESS>%eth0", id="ipv6-zone-kept"),
        pytest.param(
            "Use fe80::1: it is local", "Use <IP_ADDRESS>: it is local", id="ipv6-colon-after"
        ),
        pytest.param("(2001:db8::1, 2001:db8::2)", "(<IP_ADDRESS>, <IP_ADDRESS>)", id="ipv6-two"),
    ],
)
def test_ipv6_addresses_are_replaced(text: str, expected: str) -> None:
    assert scan(text, detectors=["ip_address"]) == ScanResult(expected, False, 1.0)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Meet at 10:30:00 UTC", id="time"),
        pytest.param("Stamp 2024-01-15T10:30:00.123Z", id="iso-datetime-fraction"),
        pytest.param("Run 12:00:00.000 done", id="time-with-millis"),
        pytest.param("Ratio 1:2:3 holds", id="ratio"),
        pytest.param("NIC 00:1A:2B:3C:4D:5E", id="mac-address"),
        pytest.param("EUI 00:1a:2b:ff:fe:3c:4d:5e", id="eui-64-bytes"),
        pytest.param("SSH 43:51:43:a1:b5:fc:8b:b7:0a:3a:a9:b1:0f:66:73:a8", id="md5-fingerprint"),
        pytest.param(
            "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            id="hex-hash",
        ),
        pytest.param("std::vector<int> v = ab::cd(); dead::beef", id="cpp-scopes"),
        pytest.param("The :: operator and a::b", id="bare-double-colon"),
        pytest.param("Bad 1::2::3 twice", id="two-gaps"),
        pytest.param("Too many 1:2:3:4:5:6:7:8:9", id="nine-groups"),
        pytest.param("Group 12345::1 too long", id="five-digit-group"),
        pytest.param("Host 2001:db8::1.example", id="inside-a-hostname"),
    ],
)
def test_ipv6_look_alikes_are_clean(text: str) -> None:
    assert scan(text) == ScanResult(text, True, -1.0)


def test_ipv6_in_a_long_colon_run_costs_one_pass() -> None:
    # Not an address, and no backtracking over the run: a quadratic pattern took seconds.
    text = "a:" * 50_000 + "z"
    assert scan(text).valid


def test_luhn_check() -> None:
    assert luhn_valid("4111111111111111")
    assert luhn_valid("79927398713")
    assert not luhn_valid("4111111111111112")
    assert not luhn_valid("79927398710")


def test_all_kinds_in_one_text() -> None:
    text = "Mail a@b.io, call +1 555 123 4567, card 5500 0000 0000 0004, host 172.16.5.4."
    result = scan(text)
    assert result.text == ("Mail <EMAIL>, call <PHONE>, card <CREDIT_CARD>, host <IP_ADDRESS>.")


def test_detectors_subset_leaves_other_kinds() -> None:
    text = "Mail a@b.io or call 555-123-4567 from 10.1.2.3"
    result = scan(text, detectors=["email"])
    assert result.text == "Mail <EMAIL> or call 555-123-4567 from 10.1.2.3"


def test_detectors_subset_without_a_match_is_clean() -> None:
    text = "call 555-123-4567"
    assert scan(text, detectors=["email", "ip_address"]).valid


def test_detector_names_are_case_insensitive() -> None:
    assert scan("host 10.1.2.3", detectors=["IP_Address"]).text == "host <IP_ADDRESS>"


def test_block_action_leaves_text_unchanged() -> None:
    text = "Mail a@b.io"
    assert scan(text, rewrite=False) == ScanResult(text, False, 1.0)


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({"detectors": []}, id="empty-list"),
        pytest.param({"detectors": ["ssn"]}, id="unknown-detector"),
        pytest.param({"detectors": "email"}, id="not-a-list"),
        pytest.param({"detectors": [1]}, id="not-a-string"),
    ],
)
def test_invalid_config_is_rejected(config: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SensitiveParams.model_validate(config)
