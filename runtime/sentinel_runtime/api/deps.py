"""One-line dependencies that reach the services built in the lifespan."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from sentinel_runtime.answer.services import Services


def _services(request: Request) -> Services:
    return request.app.state.services


ServicesDep = Annotated[Services, Depends(_services)]
