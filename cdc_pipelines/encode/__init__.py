"""Canonical events -> messages of a target format, on Spark (JSON lines, `.avro` containers)."""
