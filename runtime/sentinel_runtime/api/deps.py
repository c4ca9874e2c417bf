"""One-line dependencies that reach the services built in the lifespan."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from sentinel_runtime.answer.services import Services


async def _services(request: Request) -> Services:
    # async: FastAPI runs a plain ``def`` dependency in a worker thread, a hop per request.
    return request.app.state.services


ServicesDep = Annotated[Services, Depends(_services)]
