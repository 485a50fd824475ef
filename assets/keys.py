"""Asset keys: topic and format names (`oms-canal`) made into valid Dagster names (`oms_canal`)."""

import re

import dagster as dg

CANONICAL = dg.AssetKey("canonical_changes")
REPORT = dg.AssetKey("quality_report")


def asset_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def raw_key(topic: str) -> dg.AssetKey:
    return dg.AssetKey(["raw", asset_name(topic)])


def target_key(format_id: str) -> dg.AssetKey:
    return dg.AssetKey(["targets", asset_name(format_id)])


SNAPSHOTS = dg.AssetKey("table_snapshots")
