"""Hot reload of a mounted file: the policy (docs/contracts.md) and the keys file.

``FileReloader`` calls ``reload()`` on what holds the file (``GuardrailsState``, or the
runtime's ``KeysState``) when the file changes. It watches the file's *parent directory* with
watchdog, because the kubelet updates a mounted ConfigMap or Secret by swapping the ``..data``
symlink, an event on the directory rather than on the file. Events are debounced: the reload
runs once the directory has been quiet for ``debounce`` seconds (1 s). A slow poll of the
file's identity catches changes whose events were lost; an unchanged file never reaches the
parser.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Protocol

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from sentinel_runtime.observability import events
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 1.0
POLL_SECONDS = 30.0


def _identity(path: str) -> tuple[int, int, int, int] | None:
    """What changes when the file (or the symlink chain behind it) is replaced or edited."""
    try:
        st = os.stat(path)  # follows ..data symlinks to the real file
    except OSError:
        return None
    return (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns)


class Reloadable(Protocol):
    """What holds a reloaded file: its path, and a ``reload`` that never raises."""

    path: str

    def reload(self) -> object: ...


class _Signal(FileSystemEventHandler):
    def __init__(self, reloader: FileReloader) -> None:
        self._reloader = reloader

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in ("opened", "closed_no_write"):
            self._reloader.notify()


class FileReloader:
    def __init__(
        self,
        state: Reloadable,
        *,
        debounce: float = DEBOUNCE_SECONDS,
        poll: float = POLL_SECONDS,
        name: str = "guardrails-reloader",
        started_event: str = events.HOT_RELOAD_STARTED,
        terminated_event: str = events.RELOADER_TERMINATED,
    ) -> None:
        self._state = state
        self._started_event = started_event
        self._terminated_event = terminated_event
        self._debounce = debounce
        self._poll = poll
        self._directory = os.path.dirname(os.path.abspath(state.path))
        self._wake = threading.Condition()
        self._last_event: float | None = None
        self._stopping = False
        self._observer: Observer | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._seen = _identity(state.path)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        self._thread.join(timeout=5)
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)

    def notify(self) -> None:
        with self._wake:
            self._last_event = time.monotonic()
            self._wake.notify_all()

    def _watch(self) -> bool:
        """Start the directory watch if the directory exists; True once watching."""
        if self._observer is not None:
            return True
        if not os.path.isdir(self._directory):
            return False
        observer = Observer()
        observer.schedule(_Signal(self), self._directory, recursive=False)
        observer.daemon = True
        observer.start()
        self._observer = observer
        log_event(logger, self._started_event, path=self._state.path, directory=self._directory)
        # The directory may have changed while nobody watched: check once now.
        self.notify()
        return True

    def _due(self) -> bool:
        """Wait until a debounced reload is due, a poll is due, or we are stopping."""
        with self._wake:
            deadline = time.monotonic() + self._poll
            while not self._stopping:
                now = time.monotonic()
                if self._last_event is not None and now - self._last_event >= self._debounce:
                    self._last_event = None
                    return True
                if now >= deadline:
                    if _identity(self._state.path) != self._seen:
                        return True
                    deadline = now + self._poll  # unchanged: keep watching
                wait_until = deadline
                if self._last_event is not None:
                    wait_until = min(deadline, self._last_event + self._debounce)
                if self._observer is None:
                    wait_until = min(wait_until, now + 1.0)  # retry the watch each second
                self._wake.wait(max(0.0, wait_until - now))
                if self._observer is None and self._watch():
                    continue
            return False

    def _run(self) -> None:
        try:
            self._watch()
            while self._due():
                self._seen = _identity(self._state.path)
                self._state.reload()
        except Exception:
            log_event(logger, self._terminated_event, logging.ERROR, exc_info=True)
