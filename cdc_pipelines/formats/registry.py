"""A Confluent-compatible schema registry client: writer schemas by id, registration under a subject.

The only I/O a codec does, kept here: `GET {url}/schemas/ids/{id}` for a message's writer schema and
`POST {url}/subjects/{subject}/versions` for an encoder's, over the standard library's HTTP client.
Both are cached per process (a schema id names one schema for ever). Credentials are the options
`basic-auth.user-info` (`user:password`) and `bearer-auth.token`, each `${NAME}` in them read from
the environment when a request is made; an error never shows them (`_scrub`).

A registry that cannot be reached, or refuses us, is a `RegistryError` (the run stops, exit 2,
nothing committed); a schema id it does not know is a verdict on the message (`Reject`).
"""

from __future__ import annotations

import base64
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping

import fastavro

from cdc_pipelines.formats.base import Reject
from cdc_pipelines.runtime.environment import expand

URL, USER_INFO, TOKEN = "url", "basic-auth.user-info", "bearer-auth.token"
TIMEOUT_S = 30
REDACTED = "*****"
_CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
_LOCK = threading.Lock()
_SCHEMAS: dict[tuple[str, int], tuple[dict, object]] = {}  # (url, id) -> (schema JSON, parsed schema)
_REGISTERED: dict[tuple[str, str, str], int] = {}  # (url, subject, schema text) -> id


class RegistryError(RuntimeError):
    """The schema registry cannot be reached or refuses the request; the message names the registry."""


def _expand(value: str) -> str:
    unset = "the schema registry settings name the environment variable {}, which is not set"
    return expand(value, lambda name: RegistryError(unset.format(name)))


def _scrub(text: str, options: Mapping[str, str]) -> str:
    """`text` (an error from the HTTP client or the registry) with the credentials blanked out, as given
    and as sent (`${NAME}` read), as `extract.kafka_source.scrub` blanks Kafka's secrets."""
    for key in (USER_INFO, TOKEN):
        given = options.get(key) or ""
        try:
            sent = _expand(given)
        except RegistryError:
            sent = given
        for value in {given, sent, sent.partition(":")[2] if key == USER_INFO else ""} - {""}:
            text = text.replace(value, REDACTED)
    return text


def _request(options: Mapping[str, str], path: str, body: dict | None = None) -> tuple[int, dict]:
    """(HTTP status, JSON body) of one request; RegistryError when the registry is not reached."""
    url = options.get(URL, "").rstrip("/")
    if not url:
        raise RegistryError("no schema registry: the format's option `url` is not set")
    headers = {"Accept": _CONTENT_TYPE}
    user_info, token = options.get(USER_INFO) or "", options.get(TOKEN) or ""
    if user_info:
        headers["Authorization"] = "Basic " + base64.b64encode(_expand(user_info).encode()).decode()
    elif token:
        headers["Authorization"] = "Bearer " + _expand(token)
    data = None
    if body is not None:
        data, headers["Content-Type"] = json.dumps(body).encode(), _CONTENT_TYPE
    request = urllib.request.Request(url + path, data=data, headers=headers, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310 - the configured registry
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        try:
            answer = json.loads(exc.read() or b"{}")
        except ValueError:
            answer = {}
        return exc.code, answer if isinstance(answer, dict) else {}
    except (urllib.error.URLError, OSError, ValueError) as exc:
        cause = _scrub(str(getattr(exc, "reason", exc)), options)
        raise RegistryError(f"schema registry {url} cannot be reached: {cause}") from None


def _refused(options: Mapping[str, str], what: str, status: int, answer: dict) -> RegistryError:
    said = _scrub(str(answer.get("message") or ""), options)
    return RegistryError(f"schema registry {options.get(URL)}: {what}: HTTP {status}{' ' if said else ''}{said}")


def check_reachable(options: Mapping[str, str]) -> None:
    """RegistryError unless the registry answers (`GET {url}/subjects`) and takes the credentials."""
    status, answer = _request(options, "/subjects")
    if status != 200:
        raise _refused(options, "list subjects", status, answer)


def writer_schema(options: Mapping[str, str], schema_id: int) -> tuple[dict, object]:
    """(schema JSON, fastavro's parsed schema) of `schema_id`; Reject when the registry has no such id."""
    url = options.get(URL, "")
    cached = _SCHEMAS.get((url, schema_id))
    if cached is not None:
        return cached
    status, answer = _request(options, f"/schemas/ids/{schema_id}")
    if status == 404:
        raise Reject(f"schema id {schema_id} is not in the schema registry")
    if status != 200 or not isinstance(answer.get("schema"), str):
        raise _refused(options, f"schema id {schema_id}", status, answer)
    if answer.get("schemaType", "AVRO") != "AVRO":
        raise Reject(f"schema id {schema_id} is a {answer['schemaType']} schema, not Avro")
    try:
        schema = json.loads(answer["schema"])
        parsed = fastavro.parse_schema(schema)
    except Exception as exc:  # noqa: BLE001 - a schema fastavro cannot read is a verdict on its messages
        raise Reject(f"schema id {schema_id} is no Avro schema fastavro can read: {exc}") from None
    with _LOCK:
        _SCHEMAS[(url, schema_id)] = (schema, parsed)
    return schema, parsed


def register(options: Mapping[str, str], subject: str, schema: dict) -> int:
    """The id of `schema` under `subject`, registered there unless the registry has it already."""
    text = json.dumps(schema, separators=(",", ":"))
    key = (options.get(URL, ""), subject, text)
    found = _REGISTERED.get(key)
    if found is not None:
        return found
    quoted = urllib.request.quote(subject, safe="")
    status, answer = _request(options, f"/subjects/{quoted}/versions", {"schema": text, "schemaType": "AVRO"})
    if status != 200 or not isinstance(answer.get("id"), int):
        raise _refused(options, f"register a schema under subject {subject}", status, answer)
    with _LOCK:
        _REGISTERED[key] = answer["id"]
        _SCHEMAS.setdefault((key[0], answer["id"]), (schema, fastavro.parse_schema(schema)))
    return answer["id"]


def forget() -> None:
    """Empty the per-process caches (tests that restart a registry)."""
    with _LOCK:
        _SCHEMAS.clear()
        _REGISTERED.clear()
