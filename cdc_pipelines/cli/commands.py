"""The `cdc-pipelines` command."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from cdc_pipelines.bench.command import BENCH_HELP
from cdc_pipelines.bench.command import add_arguments as add_bench_arguments
from cdc_pipelines.bench.command import run as run_bench
from cdc_pipelines.extract.files import InputError, list_input_files
from cdc_pipelines.extract.kafka_source import KafkaSourceError, split_kafka_conf
from cdc_pipelines.extract.messages import ENVELOPES
from cdc_pipelines.formats import FORMAT_IDS, SELF_CONTAINED, OptionError, UnknownFormatError, get_codec
from cdc_pipelines.formats.registry import RegistryError
from cdc_pipelines.model.canonical import MESSAGE_COUNTS
from cdc_pipelines.model.table_filter import TableFilter
from cdc_pipelines.runtime.progress import spark_progress
from cdc_pipelines.runtime.session import parse_conf
from cdc_pipelines.runtime.settings import SettingError
from cdc_pipelines.runtime.storage import absolute, local_path
from cdc_pipelines.schema_changes.day import UnknownPolicy
from cdc_pipelines.schema_changes.policy import DEFAULT_POLICY, POLICIES, SchemaChangeRefused


def _pairs(args: argparse.Namespace, name: str) -> dict[str, str]:
    """The settings of the command's repeatable `KEY=VALUE` option `name` (`runtime.session.parse_conf`); a
    malformed one is an OptionError."""
    try:
        return parse_conf(getattr(args, name), "--" + name.replace("_", "-"))
    except ValueError as error:
        raise OptionError(str(error)) from None


def _date(text: str) -> str:
    try:
        return dt.date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a YYYY-MM-DD date: {text!r}") from None


def _spark(args: argparse.Namespace, large: bool = False, input_bytes: int = 0):
    """The process's session, with the command's `--conf` settings (after CDC_SPARK_CONF); both JIT
    compilers for a `large` run or more than `FULL_JIT_MIN_BYTES` of input (`runtime.session.full_jit`),
    and that input in equal splits (`balanced_splits`)."""
    from cdc_pipelines.runtime.session import FULL_JIT_MIN_BYTES, balanced_splits, full_jit, spark_session

    conf = balanced_splits(full_jit(_pairs(args, "conf"), large or input_bytes > FULL_JIT_MIN_BYTES), input_bytes)
    return spark_session(conf=split_kafka_conf(conf)[1])  # Kafka's settings (secrets) stay out of Spark's conf


def _local_input_bytes(inputs: list[str]) -> int:
    """The bytes of the local files among `inputs` (folders listed as the decode lists them)."""
    local = [i for i in inputs if local_path(i) is not None]
    return sum(os.path.getsize(local_path(f)) for f in list_input_files(local)) if local else 0


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return int(text)


LIMIT_HELP = "reject messages longer than N characters unparsed (default: env CDC_MAX_MESSAGE_CHARS or 16 Mi)"


CONF_HELP = "a Spark or Hadoop setting, as spark-submit takes it (repeatable), e.g. spark.hadoop.fs.s3a.endpoint=URL"
ENVELOPE_HELP = "each line wraps the message: kcat (kcat -J output: payload, key, topic, partition, offset)"


@dataclass(frozen=True)
class Command:
    """A command of `cdc-pipelines`: the library's (`COMMANDS`) and those a program built on it adds
    (`assets.cli` adds `demo`, which runs the Dagster job: the library knows nothing of Dagster's wiring).
    `arguments` declares its arguments, `run` does it and prints its result."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], None]


def _formats_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--options", action="store_true", help="under each id, its options: name=default, choices, meaning"
    )


def _decode_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", required=True, help="format id (see `cdc-pipelines formats`), or auto")
    parser.add_argument(
        "--out", type=absolute, required=True, help="output folder: changes/ and rejects/ are written there"
    )
    _message_arguments(parser, "format option")
    _engine_argument(parser)
    parser.add_argument("inputs", type=absolute, nargs="*", help="files or folders of messages, one per line (.gz too)")


def _message_arguments(parser: argparse.ArgumentParser, option_help: str) -> None:
    """What `decode` and `convert` read: the topic and day, the source's options, files or a Kafka day."""
    parser.add_argument("--topic", default="default", help="source topic name (partition value)")
    parser.add_argument("--dt", type=_date, default=dt.date.today().isoformat(), help="extract date YYYY-MM-DD")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help=option_help)
    parser.add_argument("--max-message-chars", type=_positive, metavar="N", help=LIMIT_HELP)
    parser.add_argument("--envelope", choices=ENVELOPES, help=ENVELOPE_HELP)
    for flag, what in (("--include", "keep only the tables matching"), ("--exclude", "leave out the tables matching")):
        parser.add_argument(flag, action="append", metavar="GLOB", help=f"{what} GLOB on db.table (repeatable)")
    _kafka_arguments(parser)


def _convert_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from", dest="source", required=True, help="source format id, or auto")
    parser.add_argument("--to", dest="target", required=True, help="target format id")
    parser.add_argument("--target-option", action="append", default=[], metavar="KEY=VALUE", help="target option")
    parser.add_argument("--out", type=absolute, required=True, help="output folder: <to-id>/ is written there")
    _message_arguments(parser, "source format option")
    parser.add_argument("inputs", type=absolute, nargs="*", help="files or folders of messages")


def _encode_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--to", dest="target", required=True, help="target format id")
    parser.add_argument("--out", type=absolute, required=True, help="output folder: <to-id>/ is written there")
    parser.add_argument("--dt", type=_date, help="only this partition")
    parser.add_argument("--target-option", action="append", default=[], metavar="KEY=VALUE", help="target option")
    _engine_argument(parser)
    parser.add_argument("canonical", type=absolute, help="a canonical table folder (the changes/ written by decode)")


def _detect_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", type=absolute, nargs="+", help="files or folders of messages")


def _sample_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", type=absolute, required=True, help="output folder: changes/ and rejects/ are written there"
    )
    parser.add_argument("--dt", type=_date, default="2024-01-01", help="partition date YYYY-MM-DD")
    parser.add_argument(
        "--format",
        action="append",
        choices=SELF_CONTAINED,
        help="only this format's samples (repeatable; default: all)",
    )


def _quality_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--canonical", type=absolute, required=True, help="lake folder holding changes/ and rejects/")
    parser.add_argument("--dt", type=_date, required=True, help="partition date YYYY-MM-DD")
    parser.add_argument("--out", type=absolute, help="report folder (default: CANONICAL/reports)")
    parser.add_argument(
        "--no-gx", action="store_true", help="skip the Great Expectations suite and its Data Docs (saves ~10-30 s)"
    )
    _engine_argument(parser)


def _engine_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine", choices=("local", "spark", "auto"),
        help="the engine that runs the command (default: the cdc.engine setting, else auto: "
        "docs/reference/engines.md)",
    )  # fmt: skip


def _engine(args: argparse.Namespace, step: str, lake: str, out: str | None, **run) -> tuple[str, dict]:
    """The engine of the command's `step` (`engines.choice`), with the process's settings and the command's; a
    command without `--engine` takes the `cdc.engine` setting's."""
    from cdc_pipelines.engines.choice import Run, asked, choose

    conf, command_conf = _confs(args)
    engine = asked(conf, getattr(args, "engine", None))
    return choose(Run(step, lake, out, conf, command_conf, **run), engine), conf


def _snapshot_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--canonical", required=True, help="lake folder holding changes/")
    _engine_argument(parser)
    day = parser.add_mutually_exclusive_group(required=True)
    day.add_argument("--dt", type=_date, help="apply this partition date YYYY-MM-DD")
    day.add_argument("--as-of", type=_date, help="print every table's state at the end of this day (JSON lines)")
    parser.add_argument("--export", help="with --as-of: write each table's state as Parquet under this folder instead")
    parser.add_argument("--out", help="snapshots folder (default: CANONICAL/snapshots)")
    parser.add_argument("--topic", action="append", help="only these source topics (default: all)")
    parser.add_argument(
        "--keys", action="append", type=_keys, default=[], metavar="DB.TABLE=COL1,COL2",
        help="key columns of a table whose format names none (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--keys-from-kafka", action="store_true",
        help="events still without key columns take them from the Kafka message key (kcat envelopes: cdc.kafka.key)",
    )  # fmt: skip
    parser.add_argument(
        "--schema-changes", choices=POLICIES, default=DEFAULT_POLICY, metavar="POLICY",
        help="what the day's DDL does: lenient (columns follow the rows), evolve (every change applied), ignore "
             "(columns as first seen) or exception (a schema change fails the day, nothing written) "
             "(docs/schema-changes.md)",
    )  # fmt: skip
    parser.add_argument(
        "--route", action="append", type=_route, default=[], metavar="REGEX=DB.TABLE",
        help="the rows of every table whose db.table matches REGEX into the one table DB.TABLE, each with its "
             "shard in _cdc_source_table (repeatable; the first match wins)",
    )  # fmt: skip


def _route(spec: str):
    from cdc_pipelines.schema_changes.routes import RouteError, parse_route

    try:
        return parse_route(spec)
    except RouteError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _jvm_archive_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--force", action="store_true", help="write it again even where one exists")


def _convert_lake_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("lake", type=absolute, help="lake folder holding changes/, rejects/ and counts/")


def _parser(commands: Sequence[Command]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cdc-pipelines", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in commands:
        command_parser = sub.add_parser(command.name, help=command.help)
        # every command takes `--conf`, as spark-submit does
        command_parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help=CONF_HELP)
        command.arguments(command_parser)
    return parser


def _sample(args: argparse.Namespace) -> dict[str, int]:
    """Every format's samples (or `--format`'s) into one lake, a topic each: by the engine `decode` would
    take (`engines.choice`)."""
    from cdc_pipelines.samples import sample_folder

    total = dict.fromkeys(MESSAGE_COUNTS, 0)
    for format_id in args.format or SELF_CONTAINED:
        folder = sample_folder(format_id)
        if folder is None:
            continue
        counts = _decode_files(args, format_id, [str(folder)], format_id)
        print(json.dumps({"format": format_id, **counts}))
        total = {k: total[k] + counts[k] for k in total}
    print(f"canonical table: {args.out}/changes  rejects: {args.out}/rejects", file=sys.stderr)
    return total


def _kafka_arguments(parser: argparse.ArgumentParser) -> None:
    """Read the day `--dt` from a Kafka topic instead of files (settings: `--conf kafka.KEY=VALUE`)."""
    parser.add_argument("--kafka", metavar="BOOTSTRAP", help="read the day from Kafka: bootstrap servers host:port,...")
    parser.add_argument("--kafka-topic", metavar="T", help="the Kafka topic (default: --topic)")
    parser.add_argument("--time-zone", default="UTC", help="the zone whose midnights bound the day (default UTC)")
    parser.add_argument(
        "--late-seconds",
        type=int,
        default=0,
        metavar="S",
        help="read on until S seconds past the day's end for its late messages (default 0)",
    )
    parser.add_argument("--allow-incomplete", action="store_true",
                        help="read the day even where a partition has no message past its end yet")  # fmt: skip


def _kafka(args: argparse.Namespace):
    """The Kafka source of a command's `--kafka` arguments (None without them); inputs and --kafka exclude
    each other."""
    if not getattr(args, "kafka", None):
        if not args.inputs:
            raise InputError("give files or folders of messages, or --kafka BOOTSTRAP")
        return None
    if args.inputs:
        raise InputError("give files or --kafka, not both")
    from cdc_pipelines.extract.kafka_source import kafka_source

    settings = split_kafka_conf(_pairs(args, "conf"))[0]
    reader = {"time_zone": args.time_zone, "late_seconds": str(args.late_seconds),
              "allow_incomplete": str(args.allow_incomplete)}  # fmt: skip
    return kafka_source(args.kafka, args.kafka_topic or args.topic, {**settings, **reader})


def _tables(args: argparse.Namespace) -> TableFilter | None:
    return TableFilter.of(args.include, args.exclude)


def _decode(args: argparse.Namespace) -> dict[str, int]:
    # options checked before any input is read, where the format is given
    options = None if args.format == "auto" else get_codec(args.format).resolve_options(_pairs(args, "option"))
    source = _kafka(args)
    if source is not None:
        return _decode_kafka(args, source)
    _check_inputs(args)
    if args.format == "auto":
        args.format = _detected(args.inputs)
        options = get_codec(args.format).resolve_options(_pairs(args, "option"))
    return _decode_files(args, args.format, args.inputs, args.topic, options, args.envelope, _tables(args))


def _decode_files(
    args: argparse.Namespace, format_id: str, inputs: list[str], topic: str, options=None, envelope=None, tables=None
) -> dict[str, int]:
    """`inputs` decoded into the day `--dt` of `--out` by the engine of the decode (`engines.choice`), with the
    run counts; the counts."""
    from cdc_pipelines.decode.pool import decode_without_spark
    from cdc_pipelines.decode.runner import decode_files, write_decoded
    from cdc_pipelines.engines.choice import DECODE, LOCAL
    from cdc_pipelines.lake.run_counts import write_counts

    engine, conf = _engine(args, DECODE, args.out, None, inputs=tuple(inputs), format_id=format_id)
    if engine == LOCAL:
        counts = decode_without_spark(format_id, inputs, topic=topic, dt=args.dt, out=args.out, conf=conf,
                                      options=options, envelope=envelope, tables=tables)  # fmt: skip
        if counts is not None:
            return counts
    spark = _spark(args, input_bytes=_local_input_bytes(inputs))
    with spark_progress(spark, "decode"):
        decoded = decode_files(spark, format_id, inputs, topic=topic, dt=args.dt, options=options, envelope=envelope,
                               tables=tables)  # fmt: skip
        counts = write_decoded(decoded, args.out)
    write_counts(spark, args.out, args.dt, {topic: counts})
    return counts


def _confs(args: argparse.Namespace) -> tuple[dict[str, str], dict[str, str]]:
    """The process's settings with the command's (CDC_SPARK_CONF, then `--conf`), and the command's alone."""
    from cdc_pipelines.runtime.session import env_conf

    command_conf = _pairs(args, "conf")
    return {**env_conf(), **command_conf}, command_conf


def _decode_kafka(args: argparse.Namespace, source) -> dict[str, int]:
    """`decode --kafka`: the day `--dt` of the topic into `--out`, at the offsets recorded there if any."""
    from cdc_pipelines.decode.kafka_day import decode_kafka_days, max_messages
    from cdc_pipelines.engines.choice import DECODE, LOCAL, asked

    if args.format == "auto":
        raise DetectError("--kafka needs --format (the format is not detected from a topic)")
    engine, conf = _engine(args, DECODE, args.out, None, kafka=source)
    print(f"reading day {args.dt} of {source.describe()}", file=sys.stderr)
    day = dict(topic=args.topic, dts=[args.dt], lake_root=args.out, options=_pairs(args, "option"),
               tables=_tables(args))  # fmt: skip
    if engine == LOCAL:
        limit = None if asked(conf, args.engine) == LOCAL else max_messages(conf)  # asked for: whatever its size
        by_day = decode_kafka_days(None, source, args.format, **day, limit=limit)
        if by_day is not None:
            return by_day[args.dt]
    spark = _spark(args)
    with spark_progress(spark, "decode"):
        return decode_kafka_days(spark, source, args.format, **day)[args.dt]


class DetectError(ValueError):
    """The first messages of an input match no format, or several."""


def _check_inputs(args: argparse.Namespace) -> None:
    """Fail before the work starts when an input is missing; inputs on a filesystem only Hadoop reaches
    are listed through the command's session (built first, with its `--conf`)."""
    if any(local_path(i) is None for i in args.inputs):
        _spark(args, input_bytes=_local_input_bytes(args.inputs))
    list_input_files(args.inputs)


def _detected(inputs: list[str]) -> str:
    from cdc_pipelines.extract.detect import detect_format

    found = detect_format(inputs)
    if found is None:
        raise DetectError("cannot tell the format of " + ", ".join(inputs) + "; pass --format")
    return found


def _convert(args: argparse.Namespace) -> dict[str, int]:
    from cdc_pipelines.decode.runner import CountedPass, decode_files
    from cdc_pipelines.encode.runner import encode_events, write_encoded

    target_options = get_codec(args.target).resolve_options(_pairs(args, "target_option"))
    if args.source != "auto":
        get_codec(args.source).resolve_options(_pairs(args, "option"))
    kafka = _kafka(args)
    if kafka is not None and args.source == "auto":
        raise DetectError("--kafka needs --from (the format is not detected from a topic)")
    if kafka is None:
        _check_inputs(args)
    source = _detected(args.inputs) if args.source == "auto" else args.source
    if kafka is None and _tables(args) is None:
        converted = _convert_without_spark(args, source, target_options)
        if converted is not None:
            return converted
    spark = _spark(args)
    with spark_progress(spark, "convert"):
        if kafka is not None:
            from cdc_pipelines.decode.kafka_day import decode_kafka_day

            print(f"reading day {args.dt} of {kafka.describe()}", file=sys.stderr)
            decoded = decode_kafka_day(spark, kafka, source, topic=args.topic, dt=args.dt,
                                       options=_pairs(args, "option"), tables=_tables(args)).decoded  # fmt: skip
        else:
            decoded = decode_files(
                spark, source, args.inputs, topic=args.topic, dt=args.dt, options=_pairs(args, "option"),
                envelope=args.envelope, tables=_tables(args),
            )  # fmt: skip
        passed = CountedPass(decoded)  # counted while the encode reads the events: one decode
        encoded = encode_events(passed.events, args.target, target_options)
        written = write_encoded(encoded, f"{args.out}/{args.target}", args.target)
        counts = {k: sum(c[k] for c in passed.counts().values()) for k in MESSAGE_COUNTS}
    return counts | {"written": written["written"], "skipped": written["skipped"]}


def _convert_without_spark(args: argparse.Namespace, source: str, target_options: Mapping[str, str]) -> dict | None:
    """`convert` of small local files into a local folder in this process, as `decode` and `encode` run there
    (`decode.pool`, `encode.in_process`), through a lake of the run's own that is then removed: the counts,
    or None where Spark converts them (the engine table gives the decode to Spark, or the day is too large)."""
    import tempfile

    from cdc_pipelines.decode import pool
    from cdc_pipelines.encode.in_process import encode_in_process, max_events
    from cdc_pipelines.engines.choice import DECODE, LOCAL
    from cdc_pipelines.lake.layout import CHANGES_DIR

    engine, conf = _engine(args, DECODE, args.out, None, inputs=tuple(args.inputs), format_id=source)
    workers, files = pool.local_engine(args.inputs, args.out, conf) if engine == LOCAL else (0, [])
    if workers != 1 or max_events(conf) <= 0:
        return None
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="_cdc-convert-", dir=args.out) as lake:
        counts = pool.decode_with_processes(source, files, topic=args.topic, dt=args.dt, out=lake,
                                            options=_pairs(args, "option"), envelope=args.envelope)  # fmt: skip
        by_day = encode_in_process(os.path.join(lake, CHANGES_DIR), f"{args.out}/{args.target}", args.target,
                                   [args.dt], options=target_options)  # fmt: skip
    written = {k: sum(c[k] for c in by_day.values()) for k in ("written", "skipped")}
    return counts | written


def _encode(args: argparse.Namespace) -> dict[str, int]:
    """`encode` by the engine the engine table (`engines.choice`) gives it: a local table in this process or a
    pool of processes (`encode.in_process`), else Spark."""
    from cdc_pipelines.encode.in_process import encode_in_process, encode_processes
    from cdc_pipelines.encode.runner import encode_events, encode_report, write_encoded
    from cdc_pipelines.engines.choice import ENCODE, LOCAL

    options = get_codec(args.target).resolve_options(_pairs(args, "target_option"))
    target, dts = f"{args.out}/{args.target}", [args.dt] if args.dt else None
    local = local_path(str(args.canonical))
    if local is not None and not os.path.isdir(os.path.join(local, "_delta_log")):
        raise InputError(f"no canonical Delta table at {args.canonical}")
    engine, conf = _engine(args, ENCODE, str(args.canonical), target, dts=None if dts is None else tuple(dts))
    if engine == LOCAL:
        by_day = encode_in_process(str(args.canonical), target, args.target, dts, options=options,
                                   processes=encode_processes(conf)).values()  # fmt: skip
        return encode_report({k: sum(c[k] for c in by_day) for k in ("written", "skipped", "encoded")})
    from pyspark.sql import functions as F

    from cdc_pipelines.lake.io import is_table, read_canonical

    spark = _spark(args)
    if not is_table(spark, args.canonical):
        raise InputError(f"no canonical Delta table at {args.canonical}")
    events = read_canonical(spark, args.canonical)
    if args.dt:
        events = events.where(F.col("dt") == args.dt)
    with spark_progress(spark, "encode"):
        written = write_encoded(encode_events(events, args.target, options), target, args.target)
    return encode_report(written)


def _quality(args: argparse.Namespace) -> dict[str, bool]:
    """Rules -> passed; failing rules still exit 0 (the report says why), missing inputs exit 2."""
    from cdc_pipelines.engines.choice import QUALITY, Run, asked, engine_for
    from cdc_pipelines.quality.daily_report import write_day_report

    conf, command_conf = _confs(args)
    engine = engine_for(Run(QUALITY, args.canonical, args.out, conf, command_conf), asked(conf, args.engine),
                        lambda: _spark(args))  # fmt: skip
    report = write_day_report(engine, args.canonical, args.dt, args.out, great_expectations=not args.no_gx)
    print(f"quality report: {report.html}", file=sys.stderr)
    return report.rules


def _keys(text: str) -> tuple[str, list[str]]:
    table, _, columns = text.rpartition("=")
    names = [c.strip() for c in columns.split(",") if c.strip()]
    if not table or not names:
        raise argparse.ArgumentTypeError(f"expected DB.TABLE=COL1,COL2, got {text!r}")
    return table, names


def _snapshot(args: argparse.Namespace) -> dict:
    """The day's figures; every later day already applied is re-applied after it (named on stderr). With
    `--as-of`, each table's state at the end of that day: rows as JSON lines on stdout, or Parquet under
    `--export`."""
    from cdc_pipelines.engines.choice import LOCAL, SNAPSHOTS

    if args.as_of:
        from cdc_pipelines.snapshots.as_of import export_as_of, print_as_of

        spark = None if _engine(args, SNAPSHOTS, args.canonical, args.out)[0] == LOCAL else _spark(args)
        if args.export:
            return export_as_of(spark, args.canonical, args.as_of, args.export, out=args.out)
        return print_as_of(spark, args.canonical, args.as_of, sys.stdout, out=args.out)
    from cdc_pipelines.lake.delta_rs import partition_counts
    from cdc_pipelines.lake.layout import CHANGES_DIR
    from cdc_pipelines.runtime.storage import join
    from cdc_pipelines.snapshots import snapshot_days

    engine = _engine(args, SNAPSHOTS, args.canonical, args.out, dts=(args.dt,))[0]
    changes = join(args.canonical, CHANGES_DIR)
    options = dict(out=args.out, topics=args.topic, keys=dict(args.keys), kafka_keys=args.keys_from_kafka,
                   schema_changes=args.schema_changes, routes=args.route)  # fmt: skip
    rows_by_day = partition_counts(changes, "dt") or {}
    missing = f"partition dt={args.dt} was never decoded into {args.canonical}/{CHANGES_DIR}"
    if engine == LOCAL:
        if not rows_by_day.get(args.dt):
            raise InputError(missing)
        days = snapshot_days(None, args.canonical, [args.dt], **options)
    else:
        from pyspark.sql import functions as F

        from cdc_pipelines.lake.io import read_canonical
        from cdc_pipelines.runtime.session import FULL_JIT_MIN_EVENTS

        # the events of the day and of every later one decoded (a rerun re-applies those applied), all topics
        spark = _spark(args, large=sum(n for d, n in rows_by_day.items() if d and d >= args.dt) > FULL_JIT_MIN_EVENTS)
        if read_canonical(spark, changes).where(F.col("dt") == args.dt).isEmpty():
            raise InputError(missing)
        with spark_progress(spark, "snapshot"):
            days = snapshot_days(spark, args.canonical, [args.dt], **options)
    if len(days) > 1:
        print(f"re-applied the later days {sorted(days)[1:]} on top of {args.dt}", file=sys.stderr)
    day = days[args.dt]
    print(f"snapshots: {day['path']}", file=sys.stderr)
    return {
        **{k: day[k] for k in ("tables", "rows", "applied", "anomalies")},
        "skipped_tables": [s["table"] for s in day["skipped_tables"]],
        "per_table": {
            name: {k: t.get(k) for k in ("rows", "current", "history", "current_version", "history_version")}
            for name, t in day["per_table"].items()
        },
    }


def _json(command: Callable[[argparse.Namespace], object]) -> Callable[[argparse.Namespace], None]:
    """`command`, its result printed as one JSON line (the last line of stdout)."""
    return lambda args: print(json.dumps(command(args)))


def _formats(args: argparse.Namespace) -> None:
    """Every format id, each followed by its options (indented) with `--options`."""
    for format_id in FORMAT_IDS:
        print(format_id)
        for option in get_codec(format_id).options if args.options else ():
            choices = f" ({'|'.join(option.choices)})" if option.choices else ""
            print(f"  {option.name}={option.default}{choices}  {option.description}")


def _detect(args: argparse.Namespace) -> None:
    _check_inputs(args)
    print(_detected(args.inputs))


def _jvm_archive(args: argparse.Namespace) -> None:
    from cdc_pipelines.runtime.session import write_class_archive

    print(write_class_archive(_pairs(args, "conf"), force=args.force))


def _convert_lake(args: argparse.Namespace) -> dict:
    from cdc_pipelines.lake.convert import convert_lake

    return convert_lake(_spark(args), args.lake)


# every command of the library, in the order `--help` lists them
COMMANDS = (
    Command("formats", "print every supported format id, one per line", _formats_arguments, _formats),
    Command("decode", "decode raw messages into the canonical change table", _decode_arguments, _json(_decode)),
    Command(
        "convert", "decode messages of one format and re-encode them in another", _convert_arguments, _json(_convert)
    ),
    Command("encode", "re-encode an existing canonical table in a target format", _encode_arguments, _json(_encode)),
    Command("detect", "print the format id the first messages of INPUT match", _detect_arguments, _detect),
    Command(
        "sample", "decode the built-in sample messages of every format into OUT", _sample_arguments, _json(_sample)
    ),
    Command(
        "quality", "run the data-quality rules on one partition and write a report", _quality_arguments, _json(_quality)
    ),
    Command(
        "snapshot",
        "MERGE one day of changes into the table snapshots (or read a day's state)",
        _snapshot_arguments,
        _json(_snapshot),
    ),
    Command(
        "jvm-archive",
        "write the class-data archive that takes seconds off every Spark start",
        _jvm_archive_arguments,
        _jvm_archive,
    ),
    Command(
        "convert-lake",
        "convert a lake of plain Parquet (earlier versions) to Delta in place",
        _convert_lake_arguments,
        _json(_convert_lake),
    ),
    Command("bench", BENCH_HELP, add_bench_arguments, _json(run_bench)),
)


def main(argv: list[str] | None = None, extra: Sequence[Command] = ()) -> int:
    """Run one command of COMMANDS or of `extra`, the commands of the program built on the library."""
    commands = {command.name: command for command in (*extra, *COMMANDS)}
    args = _parser(list(commands.values())).parse_args(argv)
    if getattr(args, "max_message_chars", None):
        # CDC_MAX_MESSAGE_CHARS: the longest message decoded, in characters (16 Mi unless set); longer ones are
        # rejected unparsed. The decoders read it from the environment, as the Dagster job does
        os.environ["CDC_MAX_MESSAGE_CHARS"] = str(args.max_message_chars)
    try:
        commands[args.command].run(args)
    except (UnknownFormatError, OptionError, SettingError, InputError, DetectError, KafkaSourceError, RegistryError,
            SchemaChangeRefused, UnknownPolicy) as exc:  # fmt: skip
        print(f"cdc-pipelines: error: {exc}", file=sys.stderr)
        return 2
    return 0
