"""The `cdc-pipelines` command line: one registry of commands."""
