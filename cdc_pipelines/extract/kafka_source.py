"""Where a topic's messages come from when they are read from Kafka: the broker, the Kafka topic, and
the consumer settings (security among them), kept apart from anything that is logged.

Settings come from the catalog's `kafka.options`, or from `--conf kafka.KEY=VALUE` on the command line,
in the Java client's names (Spark's Kafka source takes them as `kafka.KEY`; the local engine's native client
in librdkafka's, `extract.kafka_client.client_settings`). Passwords, JAAS configs and keys must never reach a
log, the quality report or Dagster's metadata: `redacted` is the only form any of those sees.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from cdc_pipelines.runtime.environment import expand

KAFKA_CONF_PREFIX = "kafka."
# the settings that read as secrets (Kafka's own *.password, sasl.jaas.config, ssl.key*, tokens; a schema
# registry's `basic-auth.user-info` and `bearer-auth.token`, options of debezium-avro-confluent)
_SECRET = re.compile(
    r"(password|secret|jaas|token|credential|user-info|ssl\.key|sasl\.oauthbearer|keystore\.key)", re.I
)
REDACTED = "*****"
# reader settings of ours (not Kafka's): taken out of the options before they reach the consumer
ZONE, LATE_SECONDS, ALLOW_INCOMPLETE, TIMEOUT_MS = "time_zone", "late_seconds", "allow_incomplete", "timeout_ms"
READER_SETTINGS = (ZONE, LATE_SECONDS, ALLOW_INCOMPLETE, TIMEOUT_MS)


class KafkaSourceError(RuntimeError):
    """The Kafka source cannot give the day: broker unreachable, topic missing, authentication failed,
    offsets deleted by retention, or the day not complete. The message names the topic and the cause."""


@dataclass(frozen=True)
class KafkaSource:
    """One Kafka topic to read: `options` are consumer settings without the `kafka.` prefix
    (`security.protocol`, `sasl.mechanism`, `sasl.jaas.config`, ...)."""

    bootstrap_servers: str
    topic: str
    options: Mapping[str, str] = field(default_factory=dict)
    time_zone: str = "UTC"
    late_seconds: int = 0
    allow_incomplete: bool = False
    timeout_ms: int = 30000

    def consumer_settings(self) -> dict[str, str]:
        """The settings of a consumer of this source (the lookups' own, and Spark's without `kafka.`), each
        `${NAME}` in a value replaced by the environment variable NAME (read now, never stored)."""
        return {**{k: _expand(v) for k, v in self.options.items()}, "bootstrap.servers": self.bootstrap_servers}

    def spark_options(self) -> dict[str, str]:
        """The options of Spark's Kafka source for this source (offsets are added by the reader)."""
        return {KAFKA_CONF_PREFIX + k: v for k, v in self.consumer_settings().items()}

    def describe(self) -> str:
        """The source as a log line may show it: broker, topic and redacted settings."""
        settings = ", ".join(f"{k}={v}" for k, v in sorted(redacted(self.options).items()))
        return f"kafka topic {self.topic} at {self.bootstrap_servers}" + (f" ({settings})" if settings else "")

    def error(self, what: str, cause: str) -> KafkaSourceError:
        """The error of a failed lookup or read, by either client: what failed and the client's words, with
        every secret of the settings (as the client saw them, `${NAME}` expanded) blanked out."""
        try:
            settings = self.consumer_settings()
        except KafkaSourceError:
            settings = dict(self.options)
        cause = scrub(cause, settings)
        return KafkaSourceError(f"kafka topic {self.topic} at {self.bootstrap_servers}: {what}: {cause}")


def _expand(value: str) -> str:
    def missing(name: str) -> KafkaSourceError:
        return KafkaSourceError(f"the Kafka settings name the environment variable {name}, which is not set")

    return expand(value, missing)


def is_secret(key: str) -> bool:
    return bool(_SECRET.search(key))


def redacted(settings: Mapping[str, str]) -> dict[str, str]:
    """`settings` with the value of every secret-looking key replaced by `*****`."""
    return {k: (REDACTED if is_secret(k) else v) for k, v in settings.items()}


def scrub(text: str, settings: Mapping[str, str]) -> str:
    """`text` (an error from the client, say) with every secret value of `settings` blanked out."""
    for key, value in settings.items():
        if is_secret(key) and value:
            text = text.replace(value, REDACTED)
    return text


def split_kafka_conf(conf: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(`kafka.*` settings without the prefix, the rest): Kafka's settings stay out of the Spark
    session's configuration, which Spark logs and shows in its UI."""
    kafka = {k.removeprefix(KAFKA_CONF_PREFIX): v for k, v in conf.items() if k.startswith(KAFKA_CONF_PREFIX)}
    rest = {k: v for k, v in conf.items() if not k.startswith(KAFKA_CONF_PREFIX)}
    return kafka, rest


def kafka_source(bootstrap: str, topic: str, options: Mapping[str, str] | None = None) -> KafkaSource:
    """A source from a broker, a topic and settings, where our reader settings (`time_zone`,
    `late_seconds`, `allow_incomplete`, `timeout_ms`) sit beside the consumer's."""
    settings = dict(options or {})
    reader = {k: settings.pop(k) for k in READER_SETTINGS if k in settings}
    try:
        late = int(reader.get(LATE_SECONDS, 0))
        timeout = int(reader.get(TIMEOUT_MS, 30000))
    except ValueError as exc:
        raise KafkaSourceError(f"kafka topic {topic}: {exc}") from None
    allow = str(reader.get(ALLOW_INCOMPLETE, "false")).lower() in ("true", "1", "yes")
    if not bootstrap or not topic:
        raise KafkaSourceError("a Kafka source needs bootstrap servers and a topic")
    return KafkaSource(bootstrap, topic, settings, str(reader.get(ZONE, "UTC")), late, allow, timeout)
