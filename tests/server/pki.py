"""Certificates made in the test: a CA, a server certificate for localhost, a client's.

With the ``cryptography`` package (dev extras): in process, in milliseconds,
and able to make the broken files too (an encrypted key, a key of another
certificate), with nothing to install from the system.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

Key = ec.EllipticCurvePrivateKey
DAY = datetime.timedelta(days=1)


@dataclass(frozen=True)
class Issued:
    """A certificate and its key, in memory and as PEM files."""

    cert_pem: bytes
    key_pem: bytes
    cert_path: Path
    key_path: Path


@dataclass(frozen=True)
class Pki:
    """One CA with a server certificate (localhost, 127.0.0.1, ::1) and a client certificate."""

    ca: Issued
    server: Issued
    client: Issued


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _key_pem(key: Key, passphrase: bytes | None = None) -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.NoEncryption()
        if passphrase is None
        else serialization.BestAvailableEncryption(passphrase)
    )
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )


def _certificate(
    subject: str, key: Key, issuer: tuple[x509.Name, Key] | None, *, server: bool, ca: bool
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer if issuer is not None else (_name(subject), key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - DAY)
        .not_valid_after(now + DAY)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )  # fmt: skip
    else:
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if server:
        names: list[x509.GeneralName] = [
            x509.DNSName("localhost"),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("::1")),
        ]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _write(directory: Path, stem: str, cert: x509.Certificate, key: Key) -> Issued:
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = _key_pem(key)
    cert_path, key_path = directory / f"{stem}.crt", directory / f"{stem}.key"
    cert_path.write_bytes(cert_pem)
    key_path.write_bytes(key_pem)
    key_path.chmod(0o600)
    return Issued(cert_pem, key_pem, cert_path, key_path)


def make_pki(directory: Path, name: str = "test") -> Pki:
    """A fresh CA ``name`` and its two certificates, written under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _certificate(f"{name} CA", ca_key, None, server=False, ca=True)
    issuer = (ca_cert.subject, ca_key)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = _certificate("localhost", server_key, issuer, server=True, ca=False)
    client_key = ec.generate_private_key(ec.SECP256R1())
    client_cert = _certificate(f"{name} client", client_key, issuer, server=False, ca=False)
    return Pki(
        ca=_write(directory, f"{name}-ca", ca_cert, ca_key),
        server=_write(directory, f"{name}-server", server_cert, server_key),
        client=_write(directory, f"{name}-client", client_cert, client_key),
    )


def encrypted_key_pem(key_pem: bytes, passphrase: bytes = b"secret") -> bytes:
    """The same key, encrypted with a passphrase (PKCS#8)."""
    key = serialization.load_pem_private_key(key_pem, password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return _key_pem(key, passphrase)
