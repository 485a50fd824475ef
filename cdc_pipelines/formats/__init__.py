"""The codec registry: format id -> codec. The ids are fixed (the format table of docs/formats/index.md): the CLI, the
catalog and the tests use exactly these.

Codec modules are imported when first asked for, so a run pays only for the formats it reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import import_module

from cdc_pipelines.formats.base import Codec, OptionError, Reject

_WHERE = {
    "oms-default": ("oms_default", "OMS_DEFAULT"),
    "oms-default-extend": ("oms_default", "OMS_DEFAULT_EXTEND"),
    "oms-canal": ("canal", "OMS_CANAL"),
    "oms-dataworks": ("dataworks2", "OMS_DATAWORKS"),
    "oms-shareplex": ("shareplex", "OMS_SHAREPLEX"),
    "oms-debezium": ("debezium", "OMS_DEBEZIUM"),
    "oms-debezium-flatten": ("debezium", "OMS_DEBEZIUM_FLATTEN"),
    "oms-debezium-smt": ("debezium", "OMS_DEBEZIUM_SMT"),
    "debezium-avro-confluent": ("debezium_avro", "DEBEZIUM_AVRO"),
    "dts-avro": ("dts_avro", "DTS_AVRO"),
    "dts-shareplex": ("shareplex", "DTS_SHAREPLEX"),
    "dts-canal": ("canal", "DTS_CANAL"),
    "dataworks-json": ("dataworks_json", "DATAWORKS_JSON"),
    "datahub-tuple": ("datahub_tuple", "DATAHUB_TUPLE"),
    "maxwell-json": ("maxwell", "MAXWELL_JSON"),
    "ogg-json": ("ogg", "OGG_JSON"),
    "aws-dms-json": ("aws_dms", "AWS_DMS_JSON"),
}
FORMAT_IDS = tuple(_WHERE)
# formats whose messages cannot be read without a service beside them (a schema registry holds the writer
# schemas): they have no built-in sample, no demo topic, and no seat in the tests that run every sample
NEEDS_REGISTRY = ("debezium-avro-confluent",)
# the formats a message file alone decodes: the samples, the demo, the all-pairs conversions
SELF_CONTAINED = tuple(f for f in FORMAT_IDS if f not in NEEDS_REGISTRY)
# the order format detection tries the codecs' `recognise` in, first match wins: a format's test may
# also match the messages of a more specific format (DataWorks 2.0's those of DataWorks Kafka JSON, canal's
# Maxwell's, Debezium SMT's `__deleted` any row's), which must therefore be tried before it
DETECTION_ORDER = (
    "dts-avro",
    "oms-default",
    "oms-default-extend",
    "datahub-tuple",
    "dataworks-json",
    "oms-dataworks",
    "oms-debezium",
    "aws-dms-json",
    "ogg-json",
    "maxwell-json",
    "oms-canal",
    "dts-canal",
    "oms-shareplex",
    "dts-shareplex",
    "oms-debezium-flatten",
    "oms-debezium-smt",
)


class UnknownFormatError(KeyError):
    def __str__(self) -> str:
        return f"unknown format id {self.args[0]!r}; known: {', '.join(FORMAT_IDS)}"


def get_codec(format_id: str) -> Codec:
    try:
        module, name = _WHERE[format_id]
    except KeyError:
        raise UnknownFormatError(format_id) from None
    return getattr(import_module(f"cdc_pipelines.formats.{module}"), name)


@cache
def codec_of(format_id: str | None) -> Codec | None:
    """The codec of an event's `source_format`, None for an id no codec has: what a rule judging events one by
    one asks per event, so looked up once per format."""
    return get_codec(format_id) if format_id in _WHERE else None


@dataclass(frozen=True)
class ResolvedCodec:
    """A codec with its options checked and defaulted, once: what a run passes around instead of an id."""

    codec: Codec
    options: Mapping[str, str]

    @property
    def format_id(self) -> str:
        return self.codec.format_id


def resolve_codec(format_id: str, options: Mapping[str, str] | None = None) -> ResolvedCodec:
    """The codec of `format_id` with `options` checked (OptionError, UnknownFormatError)."""
    codec = get_codec(format_id)
    return ResolvedCodec(codec, codec.resolve_options(dict(options or {})))


__all__ = [
    "DETECTION_ORDER", "FORMAT_IDS", "NEEDS_REGISTRY", "SELF_CONTAINED",
    "Codec", "OptionError", "Reject", "ResolvedCodec", "UnknownFormatError",
    "get_codec", "resolve_codec",
]  # fmt: skip
