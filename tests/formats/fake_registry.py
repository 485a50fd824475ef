"""A Confluent-compatible schema registry in this process, for the fast tests: a tiny `http.server` on
127.0.0.1 serving `GET /schemas/ids/N` and `POST /subjects/S/versions` from a dict."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeRegistry:
    """A running registry: its `url`, the schemas by id, the requests' Authorization headers."""

    def __init__(self) -> None:
        self.schemas: dict[int, str] = {}
        self.subjects: dict[str, list[int]] = {}
        self.authorizations: list[str | None] = []
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _answer(self, status: int, body: dict | list) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                registry.authorizations.append(self.headers.get("Authorization"))
                parts = self.path.strip("/").split("/")
                if parts == ["subjects"]:
                    self._answer(200, sorted(registry.subjects))
                elif parts[:2] == ["schemas", "ids"] and int(parts[2]) in registry.schemas:
                    self._answer(200, {"schema": registry.schemas[int(parts[2])]})
                else:
                    self._answer(404, {"error_code": 40403, "message": "Schema not found"})

            def do_POST(self) -> None:  # noqa: N802
                registry.authorizations.append(self.headers.get("Authorization"))
                parts = self.path.strip("/").split("/")
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                schema_id = registry.add(body["schema"], parts[1])
                self._answer(200, {"id": schema_id})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def add(self, schema: str | dict, subject: str = "t-value") -> int:
        """The id of `schema` (registered now unless known): the same text, the same id."""
        text = schema if isinstance(schema, str) else json.dumps(schema)
        found = [i for i, known in self.schemas.items() if json.loads(known) == json.loads(text)]
        schema_id = found[0] if found else 100 + len(self.schemas)
        self.schemas[schema_id] = text
        self.subjects.setdefault(subject, []).append(schema_id)
        return schema_id

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
