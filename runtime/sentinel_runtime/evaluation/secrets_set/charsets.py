"""Alphabets by name and the random draws built on them; every draw takes the set's
``random.Random`` so a seed gives the same bodies."""

from __future__ import annotations

import base64
import random
import re
import string
import uuid

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = LOWER + DIGITS
UPPER_ALNUM = UPPER + DIGITS
HEX = "0123456789abcdef"
B64URL = ALNUM + "-_"
BASE32 = UPPER + "234567"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
# The names the data file's token formats use for an alphabet.
CHARSETS: dict[str, str] = {
    "UPPER": UPPER,
    "LOWER": LOWER,
    "LETTERS": string.ascii_letters,
    "DIGITS": DIGITS,
    "ALNUM": ALNUM,
    "LOWER_ALNUM": LOWER_ALNUM,
    "UPPER_ALNUM": UPPER_ALNUM,
    "HEX": HEX,
    "UPPER_HEX": HEX.upper(),
    "B64URL": B64URL,
    "BASE32": BASE32,
    "BECH32": BECH32,
}
# Long digit runs read as phone or card numbers to the ``sensitive`` scanner; real hex bodies
# have them rarely, and a set that is about secrets should not depend on that scanner.
LONG_DIGIT_RUN = re.compile(r"\d{9,}")


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if not LONG_DIGIT_RUN.search(value):
            return value


def hexs(rng: random.Random, n: int) -> str:
    return rand(rng, HEX, n)


def digits(rng: random.Random, n: int) -> str:
    return rng.choice("123456789") + "".join(rng.choice(DIGITS) for _ in range(n - 1))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def rbytes(rng: random.Random, n: int) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(n))


def rb64(rng: random.Random, n: int) -> str:
    """Standard base64 of random bytes, ``n`` characters before padding."""
    while True:
        value = b64(rbytes(rng, (n * 3 + 3) // 4))[:n]
        if not LONG_DIGIT_RUN.search(value):
            return value


def ruuid(rng: random.Random) -> str:
    while True:
        value = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if not LONG_DIGIT_RUN.search(value.replace("-", "")):
            return value


def wrap(body: str, width: int) -> list[str]:
    return [body[i : i + width] for i in range(0, len(body), width)]


def url_password(rng: random.Random) -> str:
    return (
        rand(rng, ALNUM, rng.randint(14, 24))
        + rng.choice(("", "%40", "%21", "-"))
        + rand(rng, ALNUM, 4)
    )
