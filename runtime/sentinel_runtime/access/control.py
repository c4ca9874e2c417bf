"""Access control as the HTTP edge asks for it: who is this, and may they go on?

One :class:`AccessControl` per app: the scoped keys (``RUNTIME_KEYS_FILE``, held by a
:class:`KeysState` that hot-reloads), ``RUNTIME_API_KEY`` as one more key with every scope
(named ``runtime-api-key``), and the rate limiter. With neither key source every request is
``anonymous`` with every scope, as before keys existed.
"""

from __future__ import annotations

import hmac
import logging
import time
from typing import Literal

from sentinel_runtime.access import keys
from sentinel_runtime.access.limits import RateLimiter, Refusal
from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)

ReloadResult = Literal["success", "failure", "noop"]
FALLBACK_ACTION = "keep_previous_keys"
ANONYMOUS = keys.unrestricted(keys.ANONYMOUS)
API_KEY_PRINCIPAL = keys.unrestricted(keys.RUNTIME_API_KEY_NAME)


class KeysState:
    """The keyring read from ``path``: loaded at start (a bad file stops the start), swapped
    whole on reload (a bad file keeps the previous keys, logged and counted)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.keyring = keys.Keyring()
        self.file_hash = ""
        self.last_error: str | None = None  # the latest reload's error, None once one succeeds

    def load_initial(self) -> None:
        """Raises :class:`keys.KeysFileError`: a runtime never starts with keys it cannot read."""
        try:
            keyring, file_hash = keys.read_file(self.path)
        except keys.KeysFileError as exc:
            metrics.KEYS_LOADS.labels("failure").inc()
            log_event(logger, events.KEYS_INVALID, logging.ERROR, path=self.path, error=str(exc))
            raise
        self._swap(keyring, file_hash)
        metrics.KEYS_LOADS.labels("success").inc()
        log_event(logger, events.KEYS_LOADED, path=self.path, keys=keyring.names())

    def reload(self) -> ReloadResult:
        """Re-read the file; never raises (the file reloader calls this)."""
        try:
            keyring, file_hash = keys.read_file(self.path)
        except keys.KeysFileError as exc:
            self.last_error = str(exc)
            metrics.KEYS_LOADS.labels("failure").inc()
            metrics.KEYS_REJECTED.set(1)
            log_event(
                logger,
                events.KEYS_RELOAD_FAILED,
                logging.ERROR,
                path=self.path,
                error=str(exc),
                fallback_action=FALLBACK_ACTION,
                keys=self.keyring.names(),
            )
            return "failure"
        self.last_error = None
        metrics.KEYS_REJECTED.set(0)
        if file_hash == self.file_hash:
            metrics.KEYS_LOADS.labels("noop").inc()
            return "noop"
        before = self.keyring.names()
        self._swap(keyring, file_hash)
        metrics.KEYS_LOADS.labels("success").inc()
        log_event(
            logger,
            events.KEYS_RELOADED,
            path=self.path,
            keys=keyring.names(),
            added=sorted(set(keyring.names()) - set(before)),
            removed=sorted(set(before) - set(keyring.names())),
        )
        return "success"

    def _swap(self, keyring: keys.Keyring, file_hash: str) -> None:
        self.keyring = keyring  # one assignment: a request sees the old keys or the new
        self.file_hash = file_hash
        metrics.KEYS_ACTIVE.set(len(keyring.entries))


class AccessControl:
    def __init__(
        self,
        *,
        api_key: str = "",
        keys_state: KeysState | None = None,
        limiter: RateLimiter | None = None,
    ) -> None:
        self._api_key_digest = keys.digest(api_key) if api_key else None
        self.keys = keys_state
        self.limiter = limiter or RateLimiter(time.monotonic)

    @classmethod
    def from_settings(cls, api_key: str, keys_file: str) -> AccessControl:
        """Reads the keys file now: :class:`keys.KeysFileError` when it cannot be used."""
        state = None
        if keys_file:
            state = KeysState(keys_file)
            state.load_initial()
        return cls(api_key=api_key, keys_state=state)

    @property
    def required(self) -> bool:
        """Whether requests need a key at all."""
        return self._api_key_digest is not None or self.keys is not None

    @property
    def scoped(self) -> bool:
        """Whether some callers may see less than everything (a keys file is in use)."""
        return self.keys is not None

    def authenticate(self, authorization: str | None) -> keys.Principal | None:
        """The principal of an ``Authorization`` header; None: 401."""
        if not self.required:
            return ANONYMOUS
        token = _bearer(authorization)
        if token is None:
            return None
        found = None
        if self._api_key_digest is not None and hmac.compare_digest(
            self._api_key_digest, keys.digest(token)
        ):
            found = API_KEY_PRINCIPAL
        if self.keys is not None:
            scoped = self.keys.keyring.find(token)
            found = found or scoped
        return found

    def admit(self, principal: keys.Principal) -> Refusal | None:
        refusal = self.limiter.admit(principal)
        if refusal is not None:
            metrics.KEY_RATE_LIMITED.labels(principal.name, refusal.limit).inc()
        return refusal

    def charge(self, principal: keys.Principal, tokens: int) -> None:
        if principal is ANONYMOUS:
            return  # no key to charge: nobody is limited or told apart
        if tokens > 0:
            metrics.KEY_TOKENS.labels(principal.name).inc(tokens)
        self.limiter.charge(principal, tokens)


def _bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token
