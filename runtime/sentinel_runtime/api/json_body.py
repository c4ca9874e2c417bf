"""A JSON response rendered by orjson, for answers that are already JSON-ready dicts.

A route that returns a dict goes through FastAPI's ``jsonable_encoder`` (a recursive walk in
Python) and then the standard ``json`` encoder; a chat answer, with its ``sentinel`` report,
is the largest body the runtime sends on every request. Returning this response skips the
walk and encodes in C. The body holds the same JSON values as Starlette's ``JSONResponse``
(compact, UTF-8, no ASCII escaping; floats may be spelt differently, ``1e-7`` for
``1e-07``); a value orjson does not know falls back to ``jsonable_encoder``.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.encoders import jsonable_encoder
from starlette.responses import JSONResponse

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


class OrjsonResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, default=jsonable_encoder, option=_OPTIONS)
