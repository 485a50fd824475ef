"""The native Kafka client's settings (`extract.kafka_client`), without a broker: the project's Kafka
settings (Java client names) as librdkafka takes them, and those it cannot take named."""

from __future__ import annotations

import pytest

from cdc_pipelines.extract.kafka_client import UnsupportedSetting, check_settings, client_settings
from cdc_pipelines.extract.kafka_source import kafka_source

PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="reader" password="p\\"w;1";'
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule required username=u password=pw"


def test_java_names_become_librdkafka_names():
    settings = {"bootstrap.servers": "b:9092", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": PLAIN, "ssl.endpoint.identification.algorithm": "", "client.id": "c"}  # fmt: skip
    assert client_settings(settings) == {
        "bootstrap.servers": "b:9092", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
        "sasl.username": "reader", "sasl.password": 'p"w;1', "ssl.endpoint.identification.algorithm": "none",
        "client.id": "c",
    }  # fmt: skip
    scram = client_settings({"sasl.jaas.config": SCRAM, "sasl.mechanism": "SCRAM-SHA-512"})
    assert scram == {"sasl.username": "u", "sasl.password": "pw", "sasl.mechanism": "SCRAM-SHA-512"}


def test_a_login_librdkafka_cannot_take_is_refused_by_name():
    kerberos = 'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k";'
    with pytest.raises(UnsupportedSetting, match="takes PLAIN and SCRAM logins, not com.sun.security.auth"):
        client_settings({"sasl.jaas.config": kerberos})
    with pytest.raises(UnsupportedSetting, match="needs a username and a password"):
        client_settings({"sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required;"})


def test_check_settings_names_what_the_native_client_refuses(monkeypatch):
    """None where librdkafka takes every setting (a `${NAME}` not set is the read's error, not a refusal)."""
    assert check_settings(kafka_source("127.0.0.1:1", "t", {"sasl.jaas.config": PLAIN})) is None
    assert check_settings(kafka_source("127.0.0.1:1", "t", {"sasl.jaas.config": "${NOT_SET_HERE}"})) is None
    refused = check_settings(kafka_source("127.0.0.1:1", "t", {"ssl.truststore.location": "/t.jks"}))
    assert refused.startswith("the native Kafka client refuses a setting: Java TrustStores are not supported")
    assert "key.deserializer" in check_settings(kafka_source("127.0.0.1:1", "t", {"key.deserializer": "x"}))
    monkeypatch.setenv("KRB_JAAS", "com.sun.security.auth.module.Krb5LoginModule required;")
    assert "not com.sun.security.auth.module.Krb5LoginModule" in check_settings(
        kafka_source("127.0.0.1:1", "t", {"sasl.jaas.config": "${KRB_JAAS}"})
    )
