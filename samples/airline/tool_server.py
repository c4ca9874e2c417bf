"""The airline sample's tool server: four JSON tools over HTTP, data from ``data.json``.

    python samples/airline/tool_server.py [--port 8765] [--data samples/airline/data.json]
    python -m samples.airline.tool_server          (from the repository root)

``POST /tools/<name>`` with the JSON arguments answers with a JSON result: ``list_bookings``
(``user_id``), ``get_booking`` (``booking_id``), ``get_flight`` (``flight_id``) and the action
``refund_booking`` (``booking_id``; refuses a second refund). An unknown id is a 404. The data
lives in memory (a refund changes it until the server stops); every call is recorded in
``calls`` so tests can see what the runtime asked. Standard library only.
"""

from __future__ import annotations

import argparse
import copy
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data.json"


class NotFoundError(Exception):
    pass


class Airline:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = copy.deepcopy(data)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()
        self.tools: dict[str, Callable[[dict[str, Any]], Any]] = {
            "list_bookings": self.list_bookings,
            "get_booking": self.get_booking,
            "get_flight": self.get_flight,
            "refund_booking": self.refund_booking,
        }

    def _booking(self, booking_id: Any) -> dict[str, Any]:
        booking = self.data["bookings"].get(booking_id)
        if booking is None:
            raise NotFoundError(f"no booking {booking_id}")
        return booking

    def list_bookings(self, args: dict[str, Any]) -> Any:
        user_id = args.get("user_id")
        if user_id not in self.data["users"]:
            raise NotFoundError(f"no user {user_id}")
        return {
            "user_id": user_id,
            "bookings": [
                {"id": bid, "flight_id": b["flight_id"], "status": b["status"]}
                for bid, b in sorted(self.data["bookings"].items())
                if b["user_id"] == user_id
            ],
        }

    def get_booking(self, args: dict[str, Any]) -> Any:
        booking_id = args.get("booking_id")
        return {"id": booking_id, **self._booking(booking_id)}

    def get_flight(self, args: dict[str, Any]) -> Any:
        flight_id = args.get("flight_id")
        flight = self.data["flights"].get(flight_id)
        if flight is None:
            raise NotFoundError(f"no flight {flight_id}")
        return {"id": flight_id, **flight}

    def refund_booking(self, args: dict[str, Any]) -> Any:
        booking_id = args.get("booking_id")
        booking = self._booking(booking_id)
        if booking["refunded"]:
            return {"booking_id": booking_id, "refunded": True, "note": "already refunded"}
        booking["refunded"] = True
        return {
            "booking_id": booking_id,
            "refunded": True,
            "amount": booking["amount"],
            "refund_id": f"rf_{booking_id}",
        }

    def handle(self, name: str, args: dict[str, Any]) -> tuple[int, Any]:
        with self.lock:
            self.calls.append((name, args))
            tool = self.tools.get(name)
            if tool is None:
                return 404, {"error": f"no tool {name}"}
            try:
                return 200, tool(args)
            except NotFoundError as exc:
                return 404, {"error": str(exc)}


def make_server(
    host: str = "127.0.0.1", port: int = 8765, data: Path = DATA
) -> ThreadingHTTPServer:
    airline = Airline(json.loads(data.read_text(encoding="utf-8")))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return None

        def _send(self, status: int, body: Any) -> None:
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            if self.path == "/health":
                self._send(200, {"status": "ok", "tools": sorted(airline.tools)})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            if not self.path.startswith("/tools/"):
                self._send(404, {"error": "not found"})
                return
            length = int(self.headers.get("Content-Length", "0"))
            try:
                args = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._send(400, {"error": "the body is not JSON"})
                return
            if not isinstance(args, dict):
                self._send(400, {"error": "the arguments are not a JSON object"})
                return
            self._send(*airline.handle(self.path.removeprefix("/tools/"), args))

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    server.airline = airline  # type: ignore[attr-defined]
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The airline sample's tool server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)
    server = make_server(args.host, args.port, args.data)
    host, port = server.server_address[:2]
    print(f"airline tools on http://{host}:{port}/tools/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
