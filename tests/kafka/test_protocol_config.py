"""protocol_config: a cluster's librdkafka settings as kafka-python's, or a
clear refusal naming what cannot be carried over."""

import pytest

from kmqadmin.kafka.client.security.cluster import ClusterSecurity
from kmqadmin.kafka.protocol.config import UnsupportedSetting, protocol_config


def test_scram_over_tls_is_carried_over(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / name).write_text("pem")
    monkeypatch.setenv("PW", "secret")
    security = ClusterSecurity(
        cluster="c",
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-256",
        sasl_username="app",
        sasl_password="env:PW",
        ssl_ca_file=str(tmp_path / "ca.pem"),
        ssl_cert_file=str(tmp_path / "cert.pem"),
        ssl_key_file=str(tmp_path / "key.pem"),
    )
    config = protocol_config("a:9093,b:9093", security.librdkafka(), timeout_s=2.5)
    assert config["bootstrap_servers"] == ["a:9093", "b:9093"]
    assert config["security_protocol"] == "SASL_SSL"
    assert config["sasl_mechanism"] == "SCRAM-SHA-256"
    assert (config["sasl_plain_username"], config["sasl_plain_password"]) == ("app", "secret")
    assert config["ssl_cafile"] == str(tmp_path / "ca.pem")
    assert config["ssl_certfile"] == str(tmp_path / "cert.pem")
    assert config["ssl_keyfile"] == str(tmp_path / "key.pem")
    assert config["request_timeout_ms"] == config["bootstrap_timeout_ms"] == 2500


def test_plaintext_takes_tuning_it_does_not_need_without_complaint() -> None:
    config = protocol_config("h:9092", {"socket.keepalive.enable": True}, timeout_s=1)
    assert "sasl_mechanism" not in config and config.get("security_protocol") is None


def test_oauthbearer_is_refused_by_name() -> None:
    with pytest.raises(UnsupportedSetting, match="SASL mechanism OAUTHBEARER is not supported"):
        protocol_config("h:9092", {"sasl.mechanism": "OAUTHBEARER"}, timeout_s=1)


def test_an_unknown_security_setting_is_refused_not_dropped() -> None:
    with pytest.raises(UnsupportedSetting, match=r"'ssl\.keystore\.location'"):
        protocol_config("h:9092", {"ssl.keystore.location": "/k.p12"}, timeout_s=1)


def test_hostname_verification_can_be_turned_off_as_in_librdkafka() -> None:
    config = protocol_config(
        "h:9092", {"ssl.endpoint.identification.algorithm": "none"}, timeout_s=1
    )
    assert config["ssl_check_hostname"] is False
