"""TLS for `arena serve`: the certificate, its key and an optional client CA, checked up front.

``load_server_tls(cert, key, client_ca)`` reads the PEM files once and
refuses, with a ``TlsConfigError`` naming the flag, the file and the problem,
anything the server could not use: a missing or unreadable file, a file that
is not PEM, a key encrypted with a passphrase, a key that does not belong to
the certificate, a client CA that is not a certificate. The result gives the
gRPC server its credentials (every service on the port: ArenaService, the
remote-bot gateway, health, reflection) and the web pages an
``ssl.SSLContext`` with the same certificate.

``is_loopback(host)`` says whether an address only this machine can reach is
bound: elsewhere a server without TLS sends bearer tokens in clear.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

import grpc

CERT_FLAG = "--tls-cert"
KEY_FLAG = "--tls-key"
CLIENT_CA_FLAG = "--tls-client-ca"
_CERTIFICATE_BLOCK = re.compile(rb"-----BEGIN CERTIFICATE-----")
_KEY_BLOCK = re.compile(rb"-----BEGIN (?:RSA |EC |DSA )?PRIVATE KEY-----")
_ENCRYPTED_KEY = re.compile(rb"-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED")


class TlsConfigError(ValueError):
    """A TLS flag names a file the server cannot use; the message says which and why."""


@dataclass(frozen=True)
class ServerTls:
    """Checked PEM material for the server's port (and the web pages)."""

    certificate_chain: bytes
    private_key: bytes
    client_ca: bytes | None
    context: ssl.SSLContext
    """A server-side context with the same certificate and key, for the web pages (HTTPS).

    It asks browsers for no client certificate: the client CA binds the gRPC port only.
    """

    @property
    def mutual(self) -> bool:
        """Clients must present a certificate signed by the client CA."""
        return self.client_ca is not None

    def grpc_credentials(self) -> grpc.ServerCredentials:
        return grpc.ssl_server_credentials(
            [(self.private_key, self.certificate_chain)],
            root_certificates=self.client_ca,
            require_client_auth=self.mutual,
        )


def load_server_tls(cert: Path, key: Path, client_ca: Path | None = None) -> ServerTls:
    """The server's TLS material from PEM files; TlsConfigError naming what is wrong."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    chain, private_key = _load_pair(context, cert, key)
    ca = None
    if client_ca is not None:
        ca = _read(CLIENT_CA_FLAG, client_ca)
        _check_certificates(CLIENT_CA_FLAG, client_ca, ca)
    return ServerTls(chain, private_key, ca, context)


def check_client_tls(ca: Path | None, cert: Path | None, key: Path | None) -> None:
    """A client's PEM files (`arena remote login --tls-ca/--tls-cert/--tls-key`), checked as
    the server's are: TlsConfigError naming the flag, the file and the problem. gRPC itself
    says only that the arena "cannot be reached" (failed to create a security handshaker)."""
    if ca is not None:
        _check_certificates("--tls-ca", ca, _read("--tls-ca", ca))
    if cert is not None and key is not None:
        _load_pair(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), cert, key)


def _load_pair(context: ssl.SSLContext, cert: Path, key: Path) -> tuple[bytes, bytes]:
    """The certificate chain and its key, checked and loaded into ``context``."""
    chain = _read(CERT_FLAG, cert)
    private_key = _read(KEY_FLAG, key)
    _check_certificates(CERT_FLAG, cert, chain)
    if _ENCRYPTED_KEY.search(private_key):
        raise TlsConfigError(
            f"{KEY_FLAG} {key}: the key is encrypted with a passphrase; "
            "give an unencrypted PEM key (readable by the arena's user only)"
        )
    if not _KEY_BLOCK.search(private_key):
        raise TlsConfigError(
            f"{KEY_FLAG} {key}: not a PEM private key (no '-----BEGIN PRIVATE KEY-----' block)"
        )
    try:
        context.load_cert_chain(cert, key, password=_no_passphrase)
    except ssl.SSLError as error:
        if "KEY_VALUES_MISMATCH" in str(error):
            raise TlsConfigError(
                f"{KEY_FLAG} {key} does not match the certificate in {CERT_FLAG} {cert} "
                "(the key of another certificate?)"
            ) from None
        raise TlsConfigError(
            f"{KEY_FLAG} {key}: not a usable PEM private key ({_reason(error)})"
        ) from None
    return chain, private_key


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is loopback only.

    A name counts as loopback when every address it resolves to is; a name
    that does not resolve does not.
    """
    bare = host.strip().removeprefix("[").removesuffix("]")
    if bare.startswith("unix:"):
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(bare, None)
    except OSError:
        return False
    addresses = {str(info[4][0]) for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def _read(flag: str, path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise TlsConfigError(f"{flag} {path}: no such file") from None
    except IsADirectoryError:
        raise TlsConfigError(f"{flag} {path}: is a directory, not a PEM file") from None
    except PermissionError:
        raise TlsConfigError(f"{flag} {path}: cannot be read (permission denied)") from None
    except OSError as error:
        raise TlsConfigError(f"{flag} {path}: cannot be read ({error.strerror})") from None


def _check_certificates(flag: str, path: Path, pem: bytes) -> None:
    if not _CERTIFICATE_BLOCK.search(pem):
        raise TlsConfigError(
            f"{flag} {path}: not a PEM certificate (no '-----BEGIN CERTIFICATE-----' block)"
        )
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(
            cadata=pem.decode("ascii", "replace")
        )
    except (ssl.SSLError, ValueError) as error:
        raise TlsConfigError(
            f"{flag} {path}: a certificate block does not parse ({_reason(error)})"
        ) from None


def _no_passphrase() -> bytes:
    raise TlsConfigError("the key asks for a passphrase")


def _reason(error: Exception) -> str:
    if isinstance(error, ssl.SSLError) and error.reason:
        return str(error.reason)
    return str(error) or type(error).__name__
