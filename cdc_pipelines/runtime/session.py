"""The one SparkSession of a process: exact, reproducible CDC work on Delta Lake, on any Hadoop storage.

Every place that builds a session (the CLI, the Dagster resource, the tests, the cluster test) takes its
settings from `session_conf`, so all of them have Delta's SQL extension and catalog, the jars for
Delta, S3 (`s3a://`) and OSS (`oss://`), and the same quiet console.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path

import pyspark
from pyspark.sql import SparkSession

from cdc_pipelines.runtime.storage import local_path

DEFAULT_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.shuffle.partitions": "8",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.parquet.compression.codec": "zstd",
    "spark.driver.memory": "2g",
    # A Java serialization stream keeps every object it wrote until its reset (default: each 100 objects).
    # A persisted batch is 10,000 decoded rows, so a task's whole partition stayed on the heap while it
    # was cached (1M canal messages failed the 2 GB heap in one run of two). Reset after each object.
    "spark.serializer.objectStreamReset": "1",
    "spark.sql.mapKeyDedupPolicy": "LAST_WIN",
    # a data source option whose name matches is shown redacted in plans and logs (Spark's default: url only):
    # the Kafka source's kafka.sasl.jaas.config and *.password settings
    "spark.sql.redaction.options.regex": "(?i)url|jaas|password|secret|token|credential",
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    "spark.hadoop.fs.oss.impl": "org.apache.hadoop.fs.aliyun.oss.AliyunOSSFileSystem",
    # Delta rebuilds a table's state from its log in this many tasks (default 50). The lake's logs are small
    # (a checkpoint every 10 commits): one task, not four, took a 10-row partition replacement from 4.3 to
    # 2.4 s (medians of 20, one warm session, 2 cores; docs/benchmarks-history.md, "Fixed cost and the one-pass decode")
    "spark.databricks.delta.snapshotPartitions": "1",
    # A partitioned write first sorts each task's rows by partition, holding them all: a decode task of
    # 245,000 canal events held 391 MB of execution memory and wrote its file only once its Python worker
    # was done. With one writer open per task, rows stream to their file while the partition stays the
    # same (a day's decode: all of them); a task that meets a second partition sorts the rest, as before
    "spark.sql.maxConcurrentOutputFileWriters": "1",
}
# Delta's kernel, hadoop-aws and hadoop-aliyun depend on jars the pyspark wheel already ships (in
# other versions: jackson 2.13 beside Spark's own, parquet 1.16 beside 1.17, Hadoop's client 3.4 beside
# 3.5): two copies of a class on one classpath fail at run time, so Spark's own copies are kept.
SHIPPED_WITH_SPARK = (
    "org.apache.hadoop:hadoop-client-api",
    "org.apache.hadoop:hadoop-client-runtime",
    *(
        f"org.apache.parquet:parquet-{name}"
        for name in ("column", "common", "encoding", "format-structures", "hadoop", "jackson")
    ),
    "org.apache.logging.log4j:log4j-api",
    "org.apache.logging.log4j:log4j-core",
    "org.apache.logging.log4j:log4j-slf4j2-impl",
    "org.slf4j:slf4j-api",
    "org.xerial.snappy:snappy-java",
    "com.github.luben:zstd-jni",
    "io.airlift:aircompressor",
    "com.fasterxml.jackson.core:jackson-core",
    "com.fasterxml.jackson.core:jackson-databind",
    "com.fasterxml.jackson.core:jackson-annotations",
    "org.roaringbitmap:RoaringBitmap",
    "org.roaringbitmap:shims",
    "com.google.code.findbugs:jsr305",
    "commons-pool:commons-pool",
    "org.locationtech.jts:jts-core",
    "org.jacoco:org.jacoco.agent",
)
# Spark and Hadoop settings as a JSON object, for the Dagster job and every command (a command's --conf wins)
SPARK_CONF_ENV = "CDC_SPARK_CONF"
# the Spark master (`spark://host:7077`, `yarn`, ...) of every command and the Dagster job
MASTER_ENV = "CDC_SPARK_MASTER"
# where the pyspark wheel, the resolved jars' list and the JVM's class-data archive are kept
# (default ~/.cache/cdc_pipelines)
CACHE_ENV = "CDC_CACHE_DIR"
# the folder of Spark's log file (spark.log: WARN and above) and of the logs of the jars' first fetch (jars.log)
# and of the class-data archive's run (jvm-archive.log), under the working directory by default
LOG_DIR_ENV = "CDC_LOG_DIR"
LOG4J_CONFIG = Path(__file__).resolve().parent / "log4j2.properties"
# `false`: the driver's JVM starts as Spark would start it (no class-data archive, both JIT compilers)
QUICK_START = "cdc.jvm.quick_start"
C1_ONLY = "cdc.jvm.c1_only"  # within the quick start: a local driver with the C1 compiler alone
# past this much input a local run starts with both JIT compilers (`full_jit`): a 200,000-message decode
# (89 MB) was the same either way, a 2,000,000-message one (895 MB) 0.79x with both
FULL_JIT_MIN_BYTES = 256 << 20
# and a `snapshot` of more events than this (a first day of 1,000,000 inserts: 52.0 s instead of 74.5 s)
FULL_JIT_MIN_EVENTS = 500_000
SPLIT_SETTING = "spark.sql.files.maxPartitionBytes"
DEFAULT_SPLIT_BYTES = 128 << 20  # Spark's default of SPLIT_SETTING


def jar_packages() -> list[str]:
    """The Maven coordinates Spark resolves at start (cached by Ivy in ~/.ivy2): Delta for this Spark's
    major.minor, as `delta.configure_spark_with_delta_pip` names it, Spark's Kafka source for this Spark (the
    `kafka` raw source; it brings `kafka-clients`), and Hadoop's S3A and OSS clients of the Hadoop version inside
    the pyspark wheel (they must match it)."""
    spark_minor = ".".join(pyspark.__version__.split(".")[:2])
    delta = importlib.metadata.version("delta_spark")
    jars = Path(pyspark.__file__).parent / "jars"
    found = [j.name for j in jars.glob("hadoop-client-api-*.jar")]
    if not found:
        raise RuntimeError(f"no hadoop-client-api jar in {jars}")
    hadoop = found[0].removeprefix("hadoop-client-api-").removesuffix(".jar")
    return [
        f"io.delta:delta-spark_{spark_minor}_2.13:{delta}",
        f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}",
        f"org.apache.hadoop:hadoop-aws:{hadoop}",
        f"org.apache.hadoop:hadoop-aliyun:{hadoop}",
    ]


def parse_conf(pairs: Iterable[str], flag: str = "--conf") -> dict[str, str]:
    """`KEY=VALUE` settings as `spark-submit --conf` takes them (`flag`: the option named in the error)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{flag} takes KEY=VALUE, got {pair!r}")
        out[key.strip()] = value
    return out


def env_conf() -> dict[str, str]:
    """Settings from CDC_SPARK_CONF, a JSON object of Spark/Hadoop settings."""
    text = os.environ.get(SPARK_CONF_ENV, "").strip()
    if not text:
        return {}
    conf = json.loads(text)
    if not isinstance(conf, dict):
        raise ValueError(f"{SPARK_CONF_ENV} must be a JSON object, got {text!r}")
    return {str(k): str(v) for k, v in conf.items()}


def _with_packages(conf: Mapping[str, str] | None, master: str | None) -> tuple[dict[str, str], bool, bool]:
    """The settings merged (see `session_conf`) with this project's packages; whether to start quick, and
    whether with C1 alone."""
    merged = {**DEFAULT_CONF, **env_conf(), **(conf or {})}
    merged["spark.master"] = master or merged.get("spark.master") or os.environ.get(MASTER_ENV, "local[*]")
    quick_start = merged.pop(QUICK_START, "true").lower() != "false"
    c1_only = merged.pop(C1_ONLY, "true").lower() != "false"
    # `false`: no Delta, hadoop-aws or hadoop-aliyun added to spark.jars.packages (a cluster passes its own jars)
    if merged.pop("cdc.jars.packages", "true").lower() != "false":
        listed = [p for p in merged.get("spark.jars.packages", "").split(",") if p]
        names = {p.rsplit(":", 1)[0] for p in listed}
        ours = [p for p in jar_packages() if p.rsplit(":", 1)[0] not in names]
        merged["spark.jars.packages"] = ",".join(listed + ours)
        excluded = [e for e in merged.get("spark.jars.excludes", "").split(",") if e]
        merged["spark.jars.excludes"] = ",".join(excluded + [e for e in SHIPPED_WITH_SPARK if e not in excluded])
    return merged, quick_start, c1_only


def session_conf(conf: Mapping[str, str] | None = None, master: str | None = None) -> dict[str, str]:
    """The project's settings, then CDC_SPARK_CONF, then `conf` (later wins), and `spark.master` (`master`,
    else the settings', else CDC_SPARK_MASTER, else `local[*]`).

    Jars: `spark.jars.packages` gets Delta, hadoop-aws and hadoop-aliyun added to what the user lists;
    a cluster that supplies its own (`spark.jars`, air-gapped) sets `cdc.jars.packages=false` to skip them.
    The driver's JVM starts with `driver_java_options` unless `cdc.jvm.quick_start=false` (C1 alone unless
    `cdc.jvm.c1_only=false`).
    """
    merged, quick_start, c1_only = _with_packages(conf, master)
    # the archive is named by the packages, not where they resolved
    quick = driver_java_options(merged, c1_only) if quick_start else []
    merged = _from_resolved_jars(merged)
    java = f"-Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()} -Dcdc.log.dir={log_dir()}"
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        options = [java, *(quick if "driver" in key else ()), merged.get(key, "")]
        merged[key] = " ".join(filter(None, options))
    return merged


def log_dir() -> str:
    """The folder of the logs a terminal only points to: Spark's (spark.log) and the jars' fetch (jars.log)."""
    return os.path.abspath(os.environ.get(LOG_DIR_ENV, ".cdc_pipelines/logs"))


def _from_resolved_jars(conf: Mapping[str, str]) -> dict[str, str]:
    """`conf` with its packages swapped for the jars an earlier start resolved, where one did (`resolved_jars`):
    the same jars straight from Ivy's cache, without a resolution (a few seconds and a screen of Ivy's report
    on every start); `conf` unchanged otherwise, or where the user lists `spark.jars` of their own."""
    merged = dict(conf)
    resolved = resolved_jars(merged) if "spark.jars.packages" in merged else None
    if not resolved or "spark.jars" in merged:
        return merged
    for key in ("spark.jars.packages", "spark.jars.excludes"):
        merged.pop(key, None)
    if local_cores(merged["spark.master"]) is None:
        merged["spark.jars"] = ",".join(resolved)
    else:
        # a local master's executor is the driver's JVM: `spark.jars` would have it copy every jar
        # into the session's temporary folder (686 MB a session, most of it the AWS SDK bundle;
        # CI ran out of disk), where the driver's class path needs no copy
        paths = [local_path(j) for j in resolved]  # Ivy's `file:` URIs
        given = merged.get("spark.driver.extraClassPath")
        merged["spark.driver.extraClassPath"] = os.pathsep.join([*paths, *filter(None, [given])])
    return merged


# what a first fetch of `jar_packages` downloads into Ivy's cache (most of it the AWS SDK bundle)
JARS_DOWNLOAD = "700 MB"
# the settings of Ivy's resolution: all a child JVM needs to resolve (and `_resolution_record` to name) them
RESOLUTION_SETTINGS = ("spark.jars.packages", "spark.jars.excludes", "spark.jars.repositories", "spark.jars.ivy",
                       "spark.jars.ivySettings")  # fmt: skip


def with_fetched_jars(conf: Mapping[str, str]) -> dict[str, str]:
    """`conf` (of `session_conf`) ready to start a session: where its packages were never resolved, they are
    resolved first in a child JVM whose output (Ivy's listing, its download and proxy warnings) goes to
    `jars.log`, so the terminal gets one progress line; the child records the jars as any start would
    (`remember_jars`). Raises, naming the log, when the child fails or records nothing."""
    if "spark.jars.packages" not in conf or "spark.jars" in conf:
        return dict(conf)
    log = Path(log_dir()) / "jars.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    print(f"fetching Spark's jars, once: {JARS_DOWNLOAD} (log: {log})", file=sys.stderr, flush=True)
    settings = {k: conf[k] for k in RESOLUTION_SETTINGS if k in conf}
    child = (
        "import json, sys; from cdc_pipelines.runtime.session import resolve_in_this_jvm as resolve; "
        "resolve(json.loads(sys.argv[1]))"
    )
    with open(log, "w", encoding="utf-8") as out:
        done = subprocess.run([sys.executable, "-c", child, json.dumps(settings)], stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0 or resolved_jars(settings) is None:
        raise RuntimeError(f"fetching Spark's jars failed (exit {done.returncode}); Ivy's log: {log}")
    return _from_resolved_jars(conf)


def resolve_in_this_jvm(settings: Mapping[str, str]) -> None:
    """`with_fetched_jars`'s child: a session of the resolution's settings alone, started (Ivy resolves) and stopped."""
    builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    session = builder.config(map=dict(settings)).getOrCreate()
    remember_jars(settings, session)
    session.stop()


# the samples whose decode loads the classes the archive keeps: one of each path the JVM takes (lines,
# split updates brought together by a shuffle, Avro containers); the other formats differ in Python only
ARCHIVE_FORMATS = ("oms-canal", "oms-shareplex", "dts-avro")


def write_class_archive(conf: Mapping[str, str] | None = None, force: bool = False) -> Path:
    """Write the driver's class-data archive (see `driver_java_options`) for these settings, unless one
    is there (or `force`): a JVM that decodes the `ARCHIVE_FORMATS` samples dumps the classes it loaded as
    it exits (JDK 17's dynamic archive), under a temporary name first, so no run maps a half-written one.
    That JVM's output goes to `jvm-archive.log` (the log folder's), which a failure names."""
    merged = _with_packages(conf, None)[0]
    archive = class_archive(merged)
    if archive.exists() and not force:
        return archive
    with_fetched_jars(_from_resolved_jars(merged))  # the fetch's progress line here, the child's output in a log
    archive.parent.mkdir(parents=True, exist_ok=True)
    log = Path(log_dir()) / "jvm-archive.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    partial = archive.with_suffix(f".{os.getpid()}.partial")
    with tempfile.TemporaryDirectory(prefix="cdc-jvm-archive-") as scratch:
        dump = f"-XX:ArchiveClassesAtExit={partial} -XX:TieredStopAtLevel=1"
        settings = [f"--conf={k}={v}" for k, v in (conf or {}).items()]
        settings += ["--conf", "cdc.jvm.quick_start=false", "--conf", f"spark.driver.extraJavaOptions={dump}"]
        formats = [f"--format={f}" for f in ARCHIVE_FORMATS]
        command = [sys.executable, "-m", "cdc_pipelines.cli", "sample", "--out", scratch, *formats, *settings]
        with open(log, "w", encoding="utf-8") as out:
            child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            if child.wait() != 0:
                raise RuntimeError(f"the sample decode that loads the classes failed (exit {child.returncode}; {log})")
        deadline = time.monotonic() + 300  # the JVM writes the archive as it exits, after the Python process
        while time.monotonic() < deadline:
            try:
                os.killpg(child.pid, 0)  # a process of the child's group is left
            except ProcessLookupError:
                break
            time.sleep(0.2)
    if not partial.exists():
        raise RuntimeError(f"the JVM wrote no class-data archive at {partial}")
    os.replace(partial, archive)
    return archive


def driver_java_options(conf: Mapping[str, str], c1_only: bool = True) -> list[str]:
    """JVM flags that take seconds off a driver's start, measured on the 2-core machine (docs/benchmarks-history.md):

    - the class-data archive (`class_archive`, made by `cdc-pipelines jvm-archive`), where one exists for
      this Spark and these jars: the classes a run loads are mapped from it, not parsed from the jars;
    - with `c1_only` (not for a long run: `full_jit`), on a local master (whose JVM does all of Spark's work),
      only the C1 compiler: a short run spends a core on C2 compiling code it soon leaves (a 3-line decode
      1.06-1.75x faster; a 200k message decode unchanged, 0.89-1.06x: the Python workers do its work). A
      cluster's executors keep C2. C1 alone gets a tierless JVM's code cache (48 MB), which a long run of
      many plans (a snapshot day of 10 tables) fills and then runs interpreted, so it gets about a tiered
      JVM's (256 MB; address space reserved, used only as it fills).
    """
    options = []
    archive = class_archive(conf)
    if archive.exists():
        options.append(f"-XX:SharedArchiveFile={archive}")
    if c1_only and conf.get("spark.master", "").startswith("local"):
        options += ["-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=256m"]
    return options


def full_jit(conf: Mapping[str, str], large: bool = True) -> dict[str, str]:
    """`conf` with `cdc.jvm.c1_only=false` for a `large` run (a local decode of more than
    `FULL_JIT_MIN_BYTES`, a snapshot of more than `FULL_JIT_MIN_EVENTS`, a Dagster run; the benchmark): its
    local driver keeps the class-data archive and gets both JIT compilers, unless `conf` or CDC_SPARK_CONF
    set either setting. C1 alone slows the JVM's share of a long run (2,000,000 canal messages, 895 MB:
    112.9 s with it, 88.9 s without) and halves the bench's Spark floors, all JVM work (docs/benchmarks-history.md)."""
    given = {**env_conf(), **conf}
    if not large or QUICK_START in given or C1_ONLY in given:
        return dict(conf)
    return {**conf, C1_ONLY: "false"}


def local_cores(master: str) -> int | None:
    """The task slots of a local master (`local`, `local[N]`, `local[N,F]`, `local[*]`); None for a cluster's."""
    if master == "local":
        return 1
    if not master.startswith("local[") or not master.endswith("]"):
        return None
    slots = master[len("local[") : -1].split(",")[0]
    return os.cpu_count() or 1 if slots == "*" else int(slots) if slots.isdigit() else None


def balanced_splits(conf: Mapping[str, str], input_bytes: int) -> dict[str, str]:
    """`conf` with the split size (SPLIT_SETTING) that cuts a local run's `input_bytes` into equal splits, a
    whole number of them per core, unless `conf` or CDC_SPARK_CONF sets it or the master is a cluster's.

    Spark cuts an input larger than its cores x 128 MiB into 128 MiB splits and a remainder: 2,000,000
    canal messages (895 MB) into 7 splits on 2 cores, the seventh decoded alone on one core for 9.5 s at
    the end of the run. Eight splits of 112 MB take the same waves with no core idle (91.5-91.9 s -> 79.5-83.7 s,
    one run each; docs/benchmarks-history.md, *the decode's tail work*)."""
    given = {**env_conf(), **conf}
    cores = local_cores(given.get("spark.master") or os.environ.get(MASTER_ENV) or "local[*]")
    if SPLIT_SETTING in given or cores is None or input_bytes <= cores * DEFAULT_SPLIT_BYTES:
        return dict(conf)
    waves = -(-input_bytes // (cores * DEFAULT_SPLIT_BYTES))
    return {**conf, SPLIT_SETTING: str(-(-input_bytes // (cores * waves)))}


def class_archive(conf: Mapping[str, str]) -> Path:
    """Where the driver's class-data archive for this Java, Spark and jars is (or would be) kept.

    A JVM maps an archive only where its class path and Java match those of the JVM that wrote it (and
    runs without it otherwise, with a warning), so the name holds what they depend on: the class path
    names the jars' folder of this pyspark install (another checkout's virtual environment has its own).
    """
    java = os.path.realpath(shutil.which("java") or os.environ.get("JAVA_HOME", "java"))
    spark_home = str(Path(pyspark.__file__).resolve().parent)
    # the jars' place on the class path too (the driver's own for a local master, see `session_conf`)
    place = "driver class path" if local_cores(conf.get("spark.master", "")) is not None else "spark.jars"
    parts = [java, pyspark.__version__, spark_home, conf.get("spark.jars", ""), conf.get("spark.jars.packages", ""),
             place]  # fmt: skip
    if conf.get("spark.jars.ivy"):  # another Ivy folder puts the same jars at other paths on the class path
        parts.append(conf["spark.jars.ivy"])
    key = "\n".join(parts)
    folder = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "cdc_pipelines") / "jvm"
    return folder / (hashlib.sha256(key.encode()).hexdigest()[:16] + ".jsa")


def spark_session(master: str | None = None, conf: Mapping[str, str] | None = None) -> SparkSession:
    """Get or build the process's SparkSession (`local[*]` unless a master is given).

    Python workers must run this interpreter: `mapInArrow` fails on a machine whose system Python
    lacks pyarrow, so PYSPARK_PYTHON is pinned to `sys.executable` before the JVM starts.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    merged = with_fetched_jars(session_conf(conf, master))
    builder = SparkSession.builder.appName("cdc_pipelines").master(merged.pop("spark.master"))
    session = builder.config(map=merged).getOrCreate()
    remember_jars(merged, session)
    ship_package(session)
    return session


def active_spark() -> SparkSession:
    """The process's session, for reaching a filesystem that only Hadoop knows (a URI input)."""
    return SparkSession.getActiveSession() or spark_session()


def _resolution_record(conf: Mapping[str, str]) -> Path:
    """Where the jars resolved for these packages are listed (beside Ivy's cache, one file per set)."""
    key = "\n".join(conf.get(k, "") for k in ("spark.jars.packages", "spark.jars.excludes", "spark.jars.repositories"))
    ivy = Path(conf.get("spark.jars.ivy") or Path.home() / ".ivy2.5.2")
    return ivy / "cdc_pipelines" / (hashlib.sha256(key.encode()).hexdigest()[:16] + ".json")


def resolved_jars(conf: Mapping[str, str]) -> list[str] | None:
    """The jars an earlier start resolved for `conf`'s packages, when every one is still in the cache."""
    record = _resolution_record(conf)
    try:
        jars = json.loads(record.read_text())
    except (OSError, ValueError):
        return None
    return jars if jars and all(os.path.isfile(j.removeprefix("file:")) for j in jars) else None


def jars_resolved(conf: Mapping[str, str] | None = None) -> bool:
    """Whether an earlier start resolved the jars of these settings' packages (`resolved_jars`)."""
    merged = _with_packages(conf, None)[0]
    return "spark.jars.packages" not in merged or resolved_jars(merged) is not None


def remember_jars(conf: Mapping[str, str], session: SparkSession) -> None:
    """After a start that resolved `spark.jars.packages`, list the jars Ivy gave (see `resolved_jars`)."""
    if "spark.jars.packages" not in conf:
        return
    jars = [j for j in session.sparkContext.getConf().get("spark.jars", "").split(",") if j]
    if jars:
        record = _resolution_record(conf)
        record.parent.mkdir(parents=True, exist_ok=True)
        tmp = record.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(jars))
        os.replace(tmp, record)


_SHIPPED: set[str] = set()


def ship_package(session: SparkSession) -> None:
    """On a cluster, send this process's `cdc_pipelines` to the executors (once per application).

    Python workers import the codecs the driver's functions name. Without this they import whatever
    package a worker machine has installed, or fail where it has none: on the test cluster that was
    another checkout's editable install, a different version of the code. The zip is served by the
    driver (`addPyFile`), so no shared filesystem is needed for it, and it comes first on the workers'
    `sys.path`. Local masters share the driver's interpreter setup and need nothing.
    """
    context = session.sparkContext
    if context.master.startswith("local") or context.applicationId in _SHIPPED:
        return
    context.addPyFile(str(package_zip()))
    _SHIPPED.add(context.applicationId)


def package_zip() -> Path:
    """`cdc_pipelines` (sources and package data, no bytecode) as a fresh zip in a temporary folder."""
    package = Path(__file__).resolve().parents[1]  # cdc_pipelines/, this module being in cdc_pipelines/runtime/
    folder = tempfile.mkdtemp(prefix="cdc_pipelines-")
    atexit.register(shutil.rmtree, folder, True)  # the driver serves it until the application ends
    target = Path(folder) / "cdc_pipelines.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, Path(package.name) / path.relative_to(package))
    return target
