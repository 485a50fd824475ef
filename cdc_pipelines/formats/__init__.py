"""The codec registry: format id -> codec. The ids are fixed by DESIGN.md."""

from __future__ import annotations

from cdc_pipelines.formats.base import Codec, OptionError
from cdc_pipelines.formats.canal import DTS_CANAL, OMS_CANAL
from cdc_pipelines.formats.datahub_tuple import DATAHUB_TUPLE
from cdc_pipelines.formats.dataworks2 import OMS_DATAWORKS
from cdc_pipelines.formats.dataworks_json import DATAWORKS_JSON
from cdc_pipelines.formats.debezium import OMS_DEBEZIUM, OMS_DEBEZIUM_FLATTEN, OMS_DEBEZIUM_SMT
from cdc_pipelines.formats.dts_avro import DTS_AVRO
from cdc_pipelines.formats.oms_default import OMS_DEFAULT, OMS_DEFAULT_EXTEND
from cdc_pipelines.formats.shareplex import DTS_SHAREPLEX, OMS_SHAREPLEX

CODECS: dict[str, Codec] = {
    c.format_id: c
    for c in (
        OMS_DEFAULT,
        OMS_DEFAULT_EXTEND,
        OMS_CANAL,
        OMS_DATAWORKS,
        OMS_SHAREPLEX,
        OMS_DEBEZIUM,
        OMS_DEBEZIUM_FLATTEN,
        OMS_DEBEZIUM_SMT,
        DTS_AVRO,
        DTS_SHAREPLEX,
        DTS_CANAL,
        DATAWORKS_JSON,
        DATAHUB_TUPLE,
    )
}
FORMAT_IDS = tuple(CODECS)


class UnknownFormatError(KeyError):
    def __str__(self) -> str:
        return f"unknown format id {self.args[0]!r}; known: {', '.join(FORMAT_IDS)}"


def get_codec(format_id: str) -> Codec:
    try:
        return CODECS[format_id]
    except KeyError:
        raise UnknownFormatError(format_id) from None


__all__ = ["CODECS", "FORMAT_IDS", "Codec", "OptionError", "UnknownFormatError", "get_codec"]
