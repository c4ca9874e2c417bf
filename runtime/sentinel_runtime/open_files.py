"""The process's open-file limit, raised to what admission can hold open at once.

Every admitted or queued turn is a client socket, and every upstream connection another
(``MAX_INFLIGHT_TURNS`` turns, as many queued, ``LLM_MAX_CONNECTIONS`` upstream): 4,096 at
the defaults, where many hosts start a process with a soft limit of 1,024. Past it, accepting
a connection fails with EMFILE, which uvicorn logs and the client sees as a reset, the silent
failure admission exists to prevent. The soft limit may be raised to the hard one without
privileges; ``sentinel serve`` does so at start (docs/under-load.md).
"""

from __future__ import annotations

import resource
from dataclasses import dataclass

# Files the runtime holds besides sockets: the model files, the policy watch, logs, the
# index's persistence, the worker threads' pipes.
RESERVED = 256


@dataclass(frozen=True)
class OpenFiles:
    needed: int
    soft: int  # after raising
    hard: int

    @property
    def enough(self) -> bool:
        return self.soft >= self.needed


def needed(turns: int, upstream_connections: int) -> int:
    """Client sockets for the turns in flight and as many queued, the upstream pool, and
    ``RESERVED``."""
    return 2 * turns + upstream_connections + RESERVED


def raise_to(wanted: int) -> OpenFiles:
    """Raise the soft limit towards ``wanted`` (never past the hard limit, never lower)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < ceiling:
        resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
        soft = ceiling
    return OpenFiles(wanted, soft, hard)
