"""Filesystems for code that runs in Python workers, where Spark's JVM (and so Hadoop) is out of reach.

Only the `.avro` targets need it: Spark has no writer for raw Avro container bytes, so Python tasks
write them. `pyarrow.fs` does the I/O, configured from the same Hadoop settings the session has
(`fs.s3a.*`, `fs.oss.*`), read on the driver and shipped with the task, so one `--conf` serves both.
OSS speaks the S3 protocol with virtual-hosted buckets, so it goes through pyarrow's S3 client.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from urllib.parse import urlparse

import pyarrow.fs as pafs
from pyspark.sql import SparkSession

from cdc_pipelines.runtime.storage import local_path

S3A_KEYS = ("endpoint", "access.key", "secret.key", "session.token", "endpoint.region", "path.style.access",
            "connection.ssl.enabled")  # fmt: skip
OSS_KEYS = ("endpoint", "accessKeyId", "accessKeySecret", "securityToken")


@dataclass(frozen=True)
class WorkerFs:
    """Picklable settings to open the filesystem of one root URI in a worker."""

    scheme: str
    settings: dict[str, str] = field(default_factory=dict)

    def open(self, root: str) -> tuple[pafs.FileSystem, str]:
        """(filesystem, path of `root` inside it)."""
        local = local_path(root)
        if local is not None:
            return pafs.LocalFileSystem(), os.path.abspath(local)
        parsed = urlparse(root)
        inner = parsed.netloc + parsed.path
        if self.scheme == "s3a":
            return self._s3(), inner
        if self.scheme == "oss":
            return self._oss(), inner
        if self.scheme == "hdfs":
            return pafs.HadoopFileSystem(parsed.hostname or "default", parsed.port or 0), parsed.path
        raise ValueError(f"no Python filesystem for {root}: `.avro` targets go to local, hdfs://, s3a:// or oss://")

    def _s3(self) -> pafs.S3FileSystem:
        s = self.settings
        endpoint = s.get("endpoint", "")
        ssl = s.get("connection.ssl.enabled", "true").lower() != "false"
        scheme = urlparse(endpoint).scheme if "://" in endpoint else ("https" if ssl else "http")
        return pafs.S3FileSystem(
            access_key=s.get("access.key") or os.environ.get("AWS_ACCESS_KEY_ID"),
            secret_key=s.get("secret.key") or os.environ.get("AWS_SECRET_ACCESS_KEY"),
            session_token=s.get("session.token") or os.environ.get("AWS_SESSION_TOKEN"),
            region=s.get("endpoint.region") or os.environ.get("AWS_REGION") or "us-east-1",
            endpoint_override=endpoint.split("://", 1)[-1] or None,
            scheme=scheme,
            force_virtual_addressing=s.get("path.style.access", "false").lower() != "true" and bool(endpoint),
        )

    def _oss(self) -> pafs.S3FileSystem:
        s = self.settings
        return pafs.S3FileSystem(
            access_key=s.get("accessKeyId") or os.environ.get("ALIBABA_CLOUD_ACCESS_KEY_ID"),
            secret_key=s.get("accessKeySecret") or os.environ.get("ALIBABA_CLOUD_ACCESS_KEY_SECRET"),
            session_token=s.get("securityToken") or None,
            endpoint_override=s.get("endpoint", "").split("://", 1)[-1] or None,
            force_virtual_addressing=True,
        )


def worker_fs(spark: SparkSession, root: str) -> WorkerFs:
    """The settings a worker needs to write under `root`, from the session's Hadoop configuration."""
    scheme = "file" if local_path(root) is not None else urlparse(root).scheme
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    prefix, names = {"s3a": ("fs.s3a.", S3A_KEYS), "oss": ("fs.oss.", OSS_KEYS)}.get(scheme, ("", ()))
    values = {name: conf.get(prefix + name) for name in names}
    return WorkerFs(scheme, {name: str(value) for name, value in values.items() if value is not None})
