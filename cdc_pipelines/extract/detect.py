"""Format detection: which format id the first messages of an input match.

Reads only a sample of the first lines (in the driver, a few KB), parses each with the standard
`json` module and scores it against each format's fingerprint, most specific first. Undecided or
conflicting samples give None: a wrong guess would decode everything wrongly, so the user is asked.
"""

from __future__ import annotations

import gzip
import io
import json
from collections import Counter

from cdc_pipelines.extract.files import list_input_files
from cdc_pipelines.formats.maxwell import OPS as MAXWELL_OPS
from cdc_pipelines.runtime import storage

SAMPLE_LINES = 50
MAXWELL_TYPES = frozenset(MAXWELL_OPS)
AVRO_MAGIC = b"Obj\x01"


def _has(d: dict, *keys: str) -> bool:
    return all(k in d for k in keys)


def message_format(message: object) -> str | None:
    """The format id one parsed message looks like, or None."""
    if not isinstance(message, dict):
        return None
    m = message
    if "value_b64" in m:
        return "dts-avro"
    if "recordType" in m and ("allMetaData" in m or "postStruct" in m or "prevStruct" in m):
        images = [i for i in (m.get("postStruct"), m.get("prevStruct")) if isinstance(i, dict)]
        return "oms-default-extend" if any("__light_type" in i for i in images) else "oms-default"
    if "_operation_type_" in m or "_sequence_id_" in m:
        return "datahub-tuple"
    payload = m.get("payload")
    if isinstance(payload, dict):
        if (
            "sequenceId" in payload
            or isinstance(m.get("schema"), dict)
            and ("dataColumn" in m["schema"] or "primaryKey" in m["schema"])
        ):
            return "dataworks-json"
        if payload.get("op") in ("MHEARTBEAT", "UPDATE_BEFOR", "UPDATE_AFTER"):
            return "dataworks-json"
        if m.get("version") == "2.0" or isinstance(m.get("schema"), dict) and "column" in m["schema"]:
            return "oms-dataworks"
        if "op" in payload and ("before" in payload or "after" in payload or "source" in payload):
            return "oms-debezium"
    metadata = m.get("metadata")
    if isinstance(metadata, dict) and "record-type" in metadata and "operation" in metadata:
        return "aws-dms-json"
    if "op_type" in m and "table" in m and ("before" in m or "after" in m or m.get("op_type") == "T"):
        return "ogg-json"
    # Maxwell writes canal's fields with lower-case types (`insert`, `table-alter`) and its own `xid`/`ts`
    if "isDdl" not in m and _has(m, "database", "type") and isinstance(m["type"], str) and m["type"] in MAXWELL_TYPES:
        return "maxwell-json"
    if "isDdl" in m or _has(m, "database", "table", "type") and ("data" in m or "sql" in m):
        return "dts-canal" if "id" in m or "gtid" in m else "oms-canal"
    if isinstance(m.get("meta"), dict) and "op" in m["meta"]:
        meta = m["meta"]
        dts = "userid" in meta or meta["op"] in (
            "INSERT",
            "UPDATE",
            "DELETE",
            "TRUNCATE",
            "DROP COLUMN",
            "UPDATE BEFORE",
        )
        return "dts-shareplex" if dts else "oms-shareplex"
    if "op" in m and ("before" in m or "after" in m) and "source" in m:
        return "oms-debezium-flatten"
    if "__deleted" in m:
        return "oms-debezium-smt"
    return None


def _open(path: str):
    raw = storage.open_input(path)
    return io.TextIOWrapper(gzip.open(raw) if path.endswith(".gz") else raw, encoding="utf-8", errors="replace")


def detect_format(inputs, sample_lines: int = SAMPLE_LINES) -> str | None:
    """The one format id the first messages of `inputs` agree on, or None."""
    votes: Counter[str] = Counter()
    seen = 0
    for path in list_input_files(inputs):
        with storage.open_input(path) as fh:
            if fh.read(4) == AVRO_MAGIC:
                votes["dts-avro"] += 1
                continue
        if path.lower().endswith(".csv"):
            with _open(path) as fh:
                header = fh.readline()
            if "_operation_type_" in header or "_sequence_id_" in header:
                votes["datahub-tuple"] += 1
            continue
        with _open(path) as fh:
            for line in fh:
                if seen >= sample_lines:
                    break
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                seen += 1
                found = message_format(message)
                if found:
                    votes[found] += 1
        if seen >= sample_lines:
            break
    if not votes:
        return None
    (best, count), *rest = votes.most_common()
    return best if not rest or count > 2 * rest[0][1] else None
