"""Dagster definitions: assets and checks that wire library calls together, nothing more."""
