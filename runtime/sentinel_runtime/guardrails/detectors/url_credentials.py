"""The password in ``scheme://user:password@host`` (database URLs, pip index URLs, git
remotes): only the password goes, so the answer still says which host and user."""

from __future__ import annotations

from collections.abc import Iterator

import regex

from sentinel_runtime.guardrails.detectors import values
from sentinel_runtime.guardrails.detectors.base import Detection, trailing_run_start

NAME = "url_credentials"
USERINFO = regex.compile(
    r"://(?P<user>[^\s:/@?#'\"<>`]{0,128}):(?P<password>[^\s/@?#'\"<>`]{1,256})@"
    r"(?=[A-Za-z0-9\[])"
)


def find(text: str) -> Iterator[Detection]:
    at = text.find("://")
    while at != -1:
        m = USERINFO.match(text, at)
        if m is not None and not values.is_placeholder(m.group("password")):
            yield Detection(NAME, m.start("password"), m.end("password"))
        at = text.find("://", at + 3)


def hold(text: str) -> int:
    """URL credentials hold no whitespace: only the last run of non-whitespace can
    still become one."""
    return trailing_run_start(text, 512)
