"""Ray's token authentication as the arena uses it: the token file, and how to tell an
open cluster from one that asks for the token.

A Ray cluster runs whatever code a connected driver sends it, as the user its
nodes run as, so every node, driver and client of an arena cluster proves it
holds the cluster's token (Ray's ``RAY_AUTH_MODE=token``). The operator makes
the token once (``arena ray-token create``: 256 random bits in a file only its
owner can read) and copies the file to each machine of the cluster, where Ray
finds it at ``$RAY_AUTH_TOKEN_PATH`` (default ``~/.ray/auth_token``).
``cluster_auth`` asks a head, without the token, for something Ray only tells
a holder of it: a head that answers runs without authentication. Nothing here
imports Ray.
"""

from __future__ import annotations

import os
import pwd
import secrets
import stat
from collections.abc import MutableMapping
from enum import Enum
from pathlib import Path

AUTH_MODE_ENV = "RAY_AUTH_MODE"
TOKEN_PATH_ENV = "RAY_AUTH_TOKEN_PATH"
TOKEN_ENV = "RAY_AUTH_TOKEN"
TLS_ENV = "RAY_USE_TLS"
TLS_FILES_ENV = ("RAY_TLS_SERVER_CERT", "RAY_TLS_SERVER_KEY", "RAY_TLS_CA_CERT")
MAKE_TOKEN = "make one with `arena ray-token create` and copy it to every machine of the cluster"


class TokenError(RuntimeError):
    """No usable token: missing, empty, another user's, or readable by other users."""


class ClusterAuth(Enum):
    TOKEN = "token"  # the head refused a caller without the token
    OPEN = "open"  # the head answered a caller without the token


def token_path(env: MutableMapping[str, str] | None = None) -> Path:
    """Where Ray reads the token: ``$RAY_AUTH_TOKEN_PATH``, else ``~/.ray/auth_token``."""
    env = os.environ if env is None else env
    configured = env.get(TOKEN_PATH_ENV)
    return Path(configured) if configured else Path.home() / ".ray" / "auth_token"


def create_token(path: Path) -> Path:
    """Write a new token to ``path`` (mode 0600, its directory made 0700 if missing);
    TokenError if the file exists: a cluster's nodes all hold the same token, so a new
    one is made only on purpose, after deleting the old file."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise TokenError(
            f"{path} already exists: copy it to the cluster's machines, or delete it to make"
            " a new token (then every node needs the new one)"
        ) from None
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_hex(32))
    return path


def token_problem(env: MutableMapping[str, str] | None = None) -> str | None:
    """Why this process could not prove it holds the cluster's token, or None."""
    env = os.environ if env is None else env
    if env.get(TOKEN_ENV, "").strip():
        return None
    path = token_path(env)
    try:
        info = path.stat()
    except FileNotFoundError:
        return f"no Ray token at {path} (${TOKEN_PATH_ENV} or ~/.ray/auth_token): {MAKE_TOKEN}"
    except OSError as error:
        return f"cannot read the Ray token {path}: {error.strerror}"
    if not stat.S_ISREG(info.st_mode):
        return f"the Ray token {path} is not a file"
    me = os.geteuid()
    if info.st_uid != me:
        return (
            f"the Ray token {path} belongs to {_user(info.st_uid)}, not to {_user(me)} who runs"
            f" this process, and its owner can read or replace it: chown {_name(me)} {path}"
            f" && chmod 600 {path}"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        what = "readable" if mode & 0o044 else "writable" if mode & 0o022 else "executable"
        return f"the Ray token {path} is {what} by other users (mode {mode:04o}): chmod 600 {path}"
    if info.st_size == 0:
        return f"the Ray token {path} is empty: {MAKE_TOKEN}"
    return None


def _name(uid: int) -> str:
    """The login name of ``uid``, or the number for a uid without one."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _user(uid: int) -> str:
    """``name (uid N)`` for a message, or ``uid N`` for a uid without a name."""
    name = _name(uid)
    return f"uid {uid}" if name == str(uid) else f"{name} (uid {uid})"


def require_token(env: MutableMapping[str, str]) -> None:
    """Turn Ray's token authentication on in ``env`` (for this process and the Ray
    processes it starts); TokenError if the token is missing or exposed, or if ``env``
    turns authentication off."""
    mode = env.get(AUTH_MODE_ENV, "token").strip().lower()
    if mode != "token":
        raise TokenError(
            f"{AUTH_MODE_ENV}={env[AUTH_MODE_ENV]} turns Ray's authentication off: unset it"
            " (or give --insecure to run an open cluster on purpose)"
        )
    problem = token_problem(env)
    if problem is not None:
        raise TokenError(problem)
    env[AUTH_MODE_ENV] = "token"


def cluster_auth(address: str, timeout_s: float = 10.0) -> ClusterAuth:
    """Whether the Ray head at ``address`` (host:port of its GCS) asks for the token:
    asks it for the cluster's id without one. ConnectionError when it cannot be asked
    (unreachable, not Ray, or TLS that does not match ``$RAY_USE_TLS``)."""
    import grpc

    if os.environ.get(TLS_ENV, "0").lower() in ("1", "true"):
        cert, key, ca = (Path(os.environ[name]).read_bytes() if os.environ.get(name) else None
                         for name in TLS_FILES_ENV)  # fmt: skip
        credentials = grpc.ssl_channel_credentials(ca, key, cert)
        channel = grpc.secure_channel(address, credentials)
    else:
        channel = grpc.insecure_channel(address)
    with channel:
        ask = channel.unary_unary(
            "/ray.rpc.NodeInfoGcsService/GetClusterId",
            request_serializer=lambda _: b"", response_deserializer=lambda raw: raw,
        )  # fmt: skip
        try:
            ask(None, timeout=timeout_s, wait_for_ready=True)
        except grpc.RpcError as error:
            code = error.code()
            if code == grpc.StatusCode.UNAUTHENTICATED:
                return ClusterAuth.TOKEN
            details = error.details()
            raise ConnectionError(f"cannot ask the Ray head at {address}: {details}") from None
    return ClusterAuth.OPEN
