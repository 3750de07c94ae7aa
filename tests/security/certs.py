"""A throwaway CA, a broker certificate for 127.0.0.1 and a client
certificate, made with openssl for the SASL_SSL broker's tests."""

import subprocess
from dataclasses import dataclass
from pathlib import Path

DAYS = "2"
EC_KEY = ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]


@dataclass(frozen=True)
class Certificates:
    ca: Path
    broker_keystore: Path  # key and certificate in one PEM, as Kafka's PEM keystore wants
    client_cert: Path
    client_key: Path


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


def _signed(folder: Path, name: str, ca: Path, ca_key: Path, extensions: str) -> tuple[Path, Path]:
    key, csr, cert = (folder / f"{name}.{ext}" for ext in ("key", "csr", "pem"))
    ext_file = folder / f"{name}.ext"
    ext_file.write_text(extensions)
    _openssl("genpkey", *EC_KEY, "-out", str(key))
    _openssl("req", "-new", "-key", str(key), "-subj", f"/CN={name}", "-out", str(csr))
    _openssl(
        "x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
        "-CAcreateserial", "-days", DAYS, "-extfile", str(ext_file), "-out", str(cert),
    )  # fmt: skip
    return cert, key


def make_certificates(folder: Path) -> Certificates:
    folder.mkdir(parents=True, exist_ok=True)
    ca, ca_key = folder / "ca.pem", folder / "ca.key"
    _openssl("genpkey", *EC_KEY, "-out", str(ca_key))
    _openssl(
        "req", "-x509", "-new", "-key", str(ca_key), "-subj", "/CN=kmqadmin test CA",
        "-days", DAYS, "-out", str(ca),
    )  # fmt: skip
    broker_cert, broker_key = _signed(
        folder, "broker", ca, ca_key, "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
    )
    keystore = folder / "broker-keystore.pem"
    keystore.write_text(broker_key.read_text() + broker_cert.read_text())
    client_cert, client_key = _signed(folder, "client", ca, ca_key, "extendedKeyUsage=clientAuth\n")
    return Certificates(ca, keystore, client_cert, client_key)
