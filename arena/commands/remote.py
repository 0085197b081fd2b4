"""`arena remote`: a participant's commands against a running `arena serve` (plain or TLS)."""

from __future__ import annotations

import argparse
import contextlib
import getpass
import importlib
import io
import ipaddress
import itertools
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, TextIO

import grpc

from arena._grpc_env import untune_child_processes
from arena.bots.archive import MAX_ARCHIVE_BYTES, ArchiveError, check_bot_directory
from arena.commands.noted import (
    NotesError,
    Seen,
    commitment_arg,
    digest_arg,
    note,
    noted_commitment,
)
from arena.commands.outfile import write_whole, written_whole
from arena.commands.pathargs import given, given_path, passed_on
from arena.commands.remote_grpc import Client, Endpoint
from arena.commands.tables import fit_rows, terminal_width
from arena.commands.tokens import (
    MAX_TOKEN_ID,
    duration,
    revoked_lines,
    token_id,
    token_lines,
)
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.quoting import visible
from arena.referee import BotConfigError, load_bot, unbuilt
from arena.referee.seeds import seed_commitment
from arena.resources import PYTHON_BOT_MOUNTS, SDK_MOUNT, ResourceError
from arena.server.exports import stored_game
from arena.server.tls import TlsConfigError, check_client_tls
from arena.tournament.policy.audit import AuditReport, against_digest, against_noted, audit_parts
from arena.tournament.policy.audit_bundle import (
    MAX_BUNDLE_GAMES,
    MAX_BUNDLE_MATCHES,
    BundlePart,
    whole_bundle,
)
from arena.tournament.policy.bundle_digest import parse_digest
from arena.tournament.policy.bundle_file import BundleReadError, BundleText, loads_once, read_parts
from arena.tournament.view.committed import committed_lines
from arena.tournament.view.spectator_delay import NOT_PUBLIC

EXIT_STATUSES = """\
Every refusal is one line on standard error, and the exit status says which:

  0  done
  1  the arena failed otherwise (an internal error)
  2  bad arguments or local files (no login saved, DIR unusable, bad URL)
  3  UNAUTHENTICATED: the token is unknown, revoked or expired (log in with a new one)
  4  PERMISSION_DENIED: not yours (another user's bot, an admin-only call)
  5  NOT_FOUND: no such tournament, game or bot
  6  the arena refused the request (INVALID_ARGUMENT, FAILED_PRECONDITION,
     ALREADY_EXISTS: e.g. a bot that fails its smoke match)
  7  RESOURCE_EXHAUSTED: over a limit (archive size, streams)
  8  UNAVAILABLE or DEADLINE_EXCEEDED: the arena cannot be reached
  9  audit: the tournament fails its audit (the first difference is named)
"""
"""What each exit status of `arena remote` means: the end of every remote command's help."""

DESCRIPTION = """\
`arena remote`: a participant's commands against a running `arena serve` (plain or TLS).

  arena remote login URL          save the arena and your token (stdin, or a prompt)
  arena remote submit DIR         pack DIR, upload it, print the version and the checks
  arena remote bot list           the arena's bots (latest versions)
  arena remote leaderboard        ratings (--json for machines)
  arena remote tournament list    the arena's tournaments, newest first
  arena remote tournament show NAME   its seed commitment and the parameters it binds
                                  (list and show note each commitment on this computer:
                                  $XDG_CONFIG_HOME/kahuna-arena/commitments.json; audit
                                  holds the tournament to the one noted)
  arena remote watch NAME         a tournament's or the ladder's progress, whoever plays it
  arena remote tournament create NAME BOT...   (admin) create a tournament (--start: play it)
  arena remote tournament start|stop NAME      (admin) play it in the server, or stop it there
  arena remote token create USER  (admin) a user's token, printed once (--expires-in 30d)
  arena remote token list         (admin) the tokens: id, user, role, state, sha256 prefix
  arena remote token revoke ID    (admin) revoke a token, or every one of a user (--user NAME)
  arena remote record GAME_ID     a finished game's record (JSON; -o FILE)
  arena remote audit NAME         check a finished tournament yourself (docs/reference/VERIFY.md)
  arena remote export --out DIR   the public games as Parquet (docs/reference/export.md)
  arena remote play BOT -- CMD    host a remote bot: run CMD for every seat offered

URL is grpc://HOST:PORT or HOST:PORT (plaintext) or grpcs://HOST:PORT (TLS,
checked against the system's CA roots, or --tls-ca FILE). A plaintext login to
an address other than this machine's loopback sends the token in clear: it is
refused unless --insecure is given. The login is saved
mode 0600 in $XDG_CONFIG_HOME/kahuna-arena/remote.json (else
~/.config/kahuna-arena/remote.json); login checks the token with the arena first.
`remote play` hands the token to the connector in its environment, never in argv,
and runs at most --max-parallel bots at once (default: the CPUs).

Whatever the arena sends (names, messages, records, refusals) is printed with
its control characters shown as \\uXXXX: an arena cannot drive your terminal.

""" + EXIT_STATUSES


EXIT_OK = 0
EXIT_SERVER = 1
EXIT_USAGE = 2
EXIT_UNAUTHENTICATED = 3
EXIT_PERMISSION = 4
EXIT_NOT_FOUND = 5
EXIT_REFUSED = 6
EXIT_LIMIT = 7
EXIT_UNREACHABLE = 8
EXIT_AUDIT_FAILED = 9

CONFIG_NAME = "remote.json"
EXPORT_RESUMES = 3
"""How many times in a row `remote export` reopens a broken stream after its last game."""
EXPORT_RESUME_WAIT_S = 1.0  # times the attempt's number, before reopening
MAX_GAME_ID = 2**63 - 1  # GetGameRecordRequest.game_id is an int64
SPOOL_KEEPS_FREE = 256 << 20
"""The free bytes `remote audit` leaves on the disk that holds the bundle it receives."""
SPOOL_CHECK_BYTES = 16 << 20
"""How much of the bundle `remote audit` writes between two looks at that disk's room."""
SKIPPED_NAMES = frozenset({".git", "__pycache__", ".mypy_cache", ".pytest_cache"})


class RemoteError(Exception):
    """A refusal: one line for people, and the exit status that goes with it."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


# ------------------------------------------------------------------ server text

# ------------------------------------------------------------------ refusals

_STATUS_OF_CODE: dict[str, tuple[int, str]] = {
    "UNAUTHENTICATED": (EXIT_UNAUTHENTICATED, "the arena refuses this token"
                        " (`arena remote login URL` with a new one)"),
    "PERMISSION_DENIED": (EXIT_PERMISSION, "not allowed"),
    "NOT_FOUND": (EXIT_NOT_FOUND, "not found"),
    "INVALID_ARGUMENT": (EXIT_REFUSED, "refused"),
    "FAILED_PRECONDITION": (EXIT_REFUSED, "refused"),
    "ALREADY_EXISTS": (EXIT_REFUSED, "refused"),
    "RESOURCE_EXHAUSTED": (EXIT_LIMIT, "over a limit"),
    "UNAVAILABLE": (EXIT_UNREACHABLE, "the arena cannot be reached"),
    "DEADLINE_EXCEEDED": (EXIT_UNREACHABLE, "the arena did not answer in time"),
}  # fmt: skip


_SERVER_MESSAGE_LIMIT = re.compile(r"SERVER: Received message larger than max \((\d+) vs\. (\d+)\)")
"""gRPC's own words (no handler of the arena's ran) for a request over the server's limit."""

# What gRPC's words for a port that is not the arena's API say to do (UNAVAILABLE)
_WRONG_PORT_HINTS = (
    ("Failed parsing HTTP/2", "an HTTP/1 server answered, as the web pages' port does: log in"
     " to the arena API's port, which `arena serve` prints (50051 unless --port)"),
    ("WRONG_VERSION_NUMBER", "that port does not speak TLS: an arena that serves plaintext"
     " (`arena serve` says so) is logged in to with grpc://"),
)  # fmt: skip


def refusal(code: str, details: str, address: str) -> RemoteError:
    """A gRPC status (its code's name and details) as one line and an exit status; a
    port that is not the arena's API (the web pages', plaintext for grpcs://) says so."""
    status, what = _STATUS_OF_CODE.get(code, (EXIT_SERVER, "the arena failed"))
    details = " ".join((details or "").split())  # one line, whatever the server sent
    too_large = _SERVER_MESSAGE_LIMIT.search(details) if code == "RESOURCE_EXHAUSTED" else None
    if too_large is not None:
        details = (
            f"the request is {too_large[1]} bytes; the arena takes at most {too_large[2]}"
            " bytes in one message (a bot archive goes in chunks by UploadBot: upgrade"
            " the arena CLI if this was a submission)"
        )
    if code == "UNAVAILABLE":
        details = f"{address}: {details}" if details else address
        details += "".join(f" ({hint})" for words, hint in _WRONG_PORT_HINTS if words in details)
    return RemoteError(f"{what}: {details} [{code}]" if details else f"{what} [{code}]", status)


def rpc_refusal(error: grpc.RpcError, address: str) -> RemoteError:
    if isinstance(error, grpc.Call):
        return refusal(error.code().name, error.details() or "", address)
    return refusal("UNKNOWN", str(error), address)


# ------------------------------------------------------------------ the saved login


def config_dir(environ: Mapping[str, str] = os.environ) -> Path:
    base = environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "kahuna-arena"


@dataclass(frozen=True, slots=True)
class Target:
    address: str
    tls: bool


def is_loopback(address: str) -> bool:
    """Whether ``address`` (HOST:PORT) names this machine's loopback by itself.

    Only ``localhost`` and loopback IP literals count: a name is not resolved,
    since whoever answers for it decides where it leads.
    """
    host = address.rpartition(":")[0].strip("[]").lower()
    if host in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_url(url: str) -> Target:
    """``grpc://HOST:PORT``, ``HOST:PORT`` (plaintext) or ``grpcs://HOST:PORT`` (TLS)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "grpc", url
    if scheme not in ("grpc", "grpcs"):
        raise RemoteError(
            f"URL {url!r}: the scheme must be grpc:// (plaintext) or grpcs:// (TLS)", EXIT_USAGE
        )
    host, colon, port = rest.rstrip("/").rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) <= 65535:
        raise RemoteError(f"URL {url!r}: give HOST:PORT, e.g. grpcs://arena.example:50051",
                          EXIT_USAGE)  # fmt: skip
    return Target(f"{host}:{int(port)}", scheme == "grpcs")


def login_json(endpoint: Endpoint) -> str:
    fields: dict[str, object] = {"address": endpoint.address, "token": endpoint.token,
                                 "tls": endpoint.tls}  # fmt: skip
    for name in ("tls_ca", "tls_cert", "tls_key"):
        value = getattr(endpoint, name)
        if value is not None:
            fields[name] = str(Path(value).resolve())
    return json.dumps(fields, indent=2) + "\n"


def endpoint_from_json(text: str, where: Path) -> Endpoint:
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or not _usable_token(str(data["token"])):
            raise ValueError("not a saved login")
        paths = {
            k: Path(data[k]) if data.get(k) else None for k in ("tls_ca", "tls_cert", "tls_key")
        }
        return Endpoint(str(data["address"]), str(data["token"]), bool(data.get("tls")), **paths)
    except (ValueError, KeyError, TypeError):
        raise RemoteError(f"{where}: not a saved login; run `arena remote login URL` again",
                          EXIT_USAGE) from None  # fmt: skip


def save_login(endpoint: Endpoint, directory: Path) -> Path:
    """Write the login to ``directory/remote.json``, mode 0600 from its creation on."""
    path = directory / CONFIG_NAME
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), 0o600)  # an older file may have had looser bits
            out.write(login_json(endpoint))
    except OSError as error:
        raise RemoteError(f"{path}: cannot save the login ({error.strerror})", EXIT_USAGE) from None
    return path


def load_login(directory: Path) -> Endpoint:
    path = directory / CONFIG_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RemoteError("not logged in: run `arena remote login URL` first", EXIT_USAGE) from None
    except OSError as error:
        raise RemoteError(f"{path}: cannot be read ({error.strerror})", EXIT_USAGE) from None
    return endpoint_from_json(text, path)


def read_token(stdin: TextIO) -> str:
    """The token: a prompt on a terminal, else the first line of standard input."""
    token = getpass.getpass("arena token: ") if stdin.isatty() else stdin.readline()
    token = token.strip()
    if not token or any(c.isspace() for c in token):
        raise RemoteError("no token given (one word, on standard input or at the prompt)",
                          EXIT_USAGE)  # fmt: skip
    if not _usable_token(token):
        raise RemoteError("the token must be printable ASCII, as `arena token create` prints it",
                          EXIT_USAGE)  # fmt: skip
    return token


def _usable_token(token: str) -> bool:
    """Whether ``token`` can travel in a gRPC header (printable ASCII, one word)."""
    return bool(token) and token.isascii() and token.isprintable() and " " not in token


# ------------------------------------------------------------------ submit


def _skipped(path: Path) -> bool:
    return path.name in SKIPPED_NAMES or path.suffix == ".pyc"


def pack_bot(directory: Path) -> bytes:
    """``directory`` as the tar.gz SubmitBot unpacks: one top-level directory, the bot.

    Checked first as the server will (regular files, directories, links inside
    the bot; a bot.toml that loads); caches (.git, __pycache__, *.pyc) are left out.
    """
    if not directory.is_dir():
        raise RemoteError(f"{directory}: not a directory", EXIT_USAGE)
    try:
        spec = load_bot(directory)
        check_bot_directory(directory)
    except (BotConfigError, ArchiveError) as error:
        raise RemoteError(f"bot refused before upload: {error}", EXIT_USAGE) from None
    if (not_built := unbuilt(spec)) is not None:
        raise RemoteError(f"bot refused before upload: {directory}: {not_built}", EXIT_USAGE)
    buffer = _Bounded(directory)
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in _walk(directory):
            info = archive.gettarinfo(
                str(path), arcname=f"{spec.name}/{path.relative_to(directory).as_posix()}"
            )
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if info.isfile():
                with path.open("rb") as source:
                    archive.addfile(info, source)
            else:
                archive.addfile(info)
    data = buffer.getvalue()
    if len(data) > MAX_ARCHIVE_BYTES:
        raise RemoteError(
            f"{directory} packs to {len(data)} bytes; the arena takes at most {MAX_ARCHIVE_BYTES}",
            EXIT_LIMIT,
        )
    return data


class _Bounded(io.BytesIO):
    """The archive being packed: refused as soon as it passes what the arena takes, not
    once a bot directory with a multi-gigabyte file in it is packed whole in memory."""

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory

    def write(self, data: Any) -> int:
        if self.tell() + len(data) > MAX_ARCHIVE_BYTES:
            raise RemoteError(
                f"{self.directory} packs to over {MAX_ARCHIVE_BYTES} bytes; the arena takes"
                f" at most {MAX_ARCHIVE_BYTES}", EXIT_LIMIT,
            )  # fmt: skip
        return super().write(data)


def _walk(directory: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not _skipped(Path(root) / d))
        base = Path(root)
        for name in dirs:
            yield base / name
        for name in sorted(files):
            if not _skipped(base / name):
                yield base / name


def submit_request(directory: Path) -> pb.SubmitBotRequest:
    return pb.SubmitBotRequest(archive=pack_bot(directory), format=pb.ARCHIVE_FORMAT_TAR_GZ)


def submit_lines(reply: pb.SubmitBotResponse, runtime: str) -> list[str]:
    bot = reply.bot
    if not reply.created:
        return [f"{bot.name} version {bot.version}: already on the arena (the same files);"
                " nothing new to check"]  # fmt: skip
    check = ("remote bot: no smoke match (you run it: `arena remote play`)"
             if runtime == "remote" else "smoke match: passed")  # fmt: skip
    return [f"{bot.name} version {bot.version}: submitted (owner {bot.owner})",
            *conformance_lines(reply), check]  # fmt: skip


def conformance_lines(reply: pb.SubmitBotResponse) -> list[str]:
    """The conformance check's findings, when the server ran it: scenarios and timings."""
    if not reply.HasField("conformance"):
        return []
    report = reply.conformance
    passed = sum(1 for scenario in report.scenarios if scenario.passed)
    lines = [f"conformance: {passed} of {len(report.scenarios)} scenarios passed"]
    lines += [f"  failed {s.name}: {s.problem}" for s in report.scenarios if not s.passed]
    timings = []
    if report.HasField("launch_ms_median"):
        timings.append(f"launch to Hello {report.launch_ms_median:.0f} ms (median)")
    if report.HasField("decision_ms_median") and report.HasField("decision_ms_p99"):
        timings.append(
            f"per decision {report.decision_ms_median:.2f} ms median,"
            f" {report.decision_ms_p99:.2f} ms p99"
        )
    if timings:
        lines.append("  " + "; ".join(timings))
    return lines


# ------------------------------------------------------------------ rows


def bot_json(bot: pb.BotVersion) -> dict[str, object]:
    return {
        "bot": bot.name, "version": bot.version, "owner": bot.owner,
        "mu": round(bot.mu, 4), "sigma": round(bot.sigma, 4),
        "conservative": round(bot.conservative, 4), "games": bot.games, "wins": bot.wins,
        "draws": bot.draws, "losses": bot.losses, "timeout_rate": round(bot.timeout_rate, 4),
        "crash_rate": round(bot.crash_rate, 4),
        "illegal_action_rate": round(bot.illegal_action_rate, 4),
    }  # fmt: skip


def columns(
    header: Sequence[str], rows: Iterable[Sequence[str]], drop_order: Sequence[str] = ()
) -> list[str]:
    """Aligned plain-text columns: text to the left, numbers to the right; on a terminal,
    without the columns of ``drop_order`` (first dropped first) it needs to fit."""
    kept, cells = fit_rows(header, [list(row) for row in rows], drop_order, terminal_width())
    table = [kept, *cells]
    header = kept
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    numeric = [all(_number(row[i]) for row in table[1:]) and len(table) > 1
               for i in range(len(header))]  # fmt: skip
    return [
        "  ".join(cell.rjust(w) if num else cell.ljust(w)
                  for cell, w, num in zip(row, widths, numeric, strict=True)).rstrip()
        for row in table
    ]  # fmt: skip


def _number(cell: str) -> bool:
    return cell.replace(".", "", 1).replace("%", "").replace("/", "").lstrip("-").isdigit()


def bots_lines(reply: pb.ListBotsResponse) -> list[str]:
    if not reply.bots:
        return ["no bots on the arena yet: submit one with `arena remote submit DIR`"]
    rows = [
        (b.name, b.version[:10], b.owner or "-", f"{b.mu:.2f}", f"{b.sigma:.2f}", str(b.games),
         f"{b.wins}/{b.draws}/{b.losses}")
        for b in sorted(reply.bots, key=lambda b: b.name)
    ]  # fmt: skip
    return columns(("bot", "version", "owner", "mu", "sigma", "games", "W/D/L"), rows,
                   ("sigma", "mu", "version", "owner"))  # fmt: skip


def leaderboard_lines(reply: pb.GetLeaderboardResponse) -> list[str]:
    if not reply.entries:
        return ["no rated bots yet"]
    rows = []
    for entry in reply.entries:
        b = entry.bot
        rows.append((
            str(entry.rank), b.name, b.version[:10], f"{b.conservative:.2f}", f"{b.mu:.2f}",
            f"{b.sigma:.2f}", str(b.games), f"{b.wins}/{b.draws}/{b.losses}",
            f"{100 * b.timeout_rate:.1f}%", f"{100 * b.crash_rate:.1f}%",
            f"{100 * b.illegal_action_rate:.1f}%",
        ))  # fmt: skip
    header = ("#", "bot", "version", "mu-3sigma", "mu", "sigma", "games", "W/D/L",
              "timeouts", "crashes", "illegal")  # fmt: skip
    return columns(header, rows, ("illegal", "crashes", "timeouts", "sigma", "mu", "version"))


def leaderboard_json(reply: pb.GetLeaderboardResponse) -> str:
    return json.dumps([{"rank": e.rank, **bot_json(e.bot)} for e in reply.entries], indent=2)


_FORMATS = {
    pb.TOURNAMENT_FORMAT_ROUND_ROBIN: "round-robin", pb.TOURNAMENT_FORMAT_SWISS: "swiss",
    pb.TOURNAMENT_FORMAT_SPRT: "sprt", pb.TOURNAMENT_FORMAT_GAUNTLET: "gauntlet",
    pb.TOURNAMENT_FORMAT_LADDER: "ladder",
}  # fmt: skip


def tournament_json(t: pb.Tournament) -> dict[str, object]:
    return {
        "id": t.id, "name": t.name, "format": _FORMATS.get(t.format, "unspecified"),
        "status": t.status, "entrants": list(t.entrants), "games_played": t.games_played,
        "games_scheduled": t.games_scheduled, "seed_commitment": t.seed_commitment or None,
        "revealed_seed": t.revealed_seed or None,
        "committed_parameters": t.committed_parameters or None,
        "audit_digest": t.audit_digest or None,
        **({"sprt": {"verdict": t.sprt.verdict, "llr": t.sprt.llr,
                     "lower_bound": t.sprt.lower_bound, "upper_bound": t.sprt.upper_bound,
                     "decided_at": t.sprt.decided_at or None,
                     "pairs_complete": t.sprt.pairs_complete}}
           if t.HasField("sprt") else {}),
    }  # fmt: skip


def tournaments_lines(reply: pb.ListTournamentsResponse) -> list[str]:
    if not reply.tournaments:
        return ["no tournaments yet"]
    rows = [
        (str(t.id), t.name, _FORMATS.get(t.format, "-"), t.status, str(len(t.entrants)),
         f"{t.games_played}/{t.games_scheduled}", t.seed_commitment or "-")
        for t in reply.tournaments
    ]  # fmt: skip
    # as `arena tournament list`, and the seed commitment (docs/reference/VERIFY.md)
    header = ("id", "name", "format", "status", "bots", "games", "seed commitment")
    return columns(header, rows, ("seed commitment", "bots", "format"))


def tournament_lines(t: pb.Tournament) -> list[str]:
    """One tournament as `arena remote tournament show` prints it: its state, its seed
    commitment, the parameters the commitment binds (field by field and the exact text)
    and, once it is finished, whether the revealed secret and that text give the
    commitment, and its audit bundle's digest (docs/reference/VERIFY.md)."""
    head = (f"{t.name} (id {t.id}, {_FORMATS.get(t.format, '-')}, {t.status},"
            f" {t.games_played}/{t.games_scheduled} games)")  # fmt: skip
    commitment = t.seed_commitment or "- (none published)"
    text = t.committed_parameters
    if not text:
        return [head, f"seed commitment   {commitment}",
                "committed parameters: none published (a ladder, or no commitment)"]  # fmt: skip
    lines = [head, *committed_lines(commitment, text, t.revealed_seed or None)]
    if not t.revealed_seed:
        return lines
    try:
        given = seed_commitment(bytes.fromhex(t.revealed_seed), text.encode())
    except ValueError:  # not hex, or not a secret's length
        given = None
    verdict = ("the revealed secret and this text give the seed commitment"
               if given is not None and given == t.seed_commitment
               else "the revealed secret and this text do NOT give the seed commitment")
    return [*lines, verdict, *digest_lines(t.audit_digest)]  # fmt: skip


def digest_lines(digest: str) -> list[str]:
    """The finished tournament's audit bundle digest, as the arena states it, and what to do
    with it (docs/reference/VERIFY.md)."""
    if not digest:
        return []
    try:
        digest = parse_digest(digest)
    except ValueError:  # not shown: the arena's text could hold a terminal's controls
        return ["audit bundle digest: the arena sent one that is not 64 hex digits"]
    return [f"audit bundle digest {digest}",
            "(`arena remote audit` prints the digest of the bundle it checked: it must be this"
            " one, and every other participant's)"]  # fmt: skip


def run_tournament_show(args: argparse.Namespace) -> int:
    endpoint = load_login(config_dir())
    with _calls(endpoint) as client:
        reply = client.tournaments()
    found = [t for t in reply.tournaments if args.name in (t.name, str(t.id))]
    if not found:
        raise RemoteError(f"no tournament named {args.name!r} (see `arena remote tournament"
                          " list`)", EXIT_NOT_FOUND)  # fmt: skip
    note_commitments(endpoint, found[:1])
    if args.json:
        _say_json(tournament_json(found[0]))
    else:
        _say([*tournament_lines(found[0]), *noted_lines(endpoint, found[0].name)])
    return EXIT_OK


def noted_lines(endpoint: Endpoint, name: str) -> list[str]:
    """Which commitment `arena remote audit NAME` will hold the tournament to, and when this
    computer noted it (``arena.commands.noted``); none when the notes cannot be read."""
    try:
        noted = noted_commitment(config_dir(), endpoint.address, name)
    except NotesError:
        return []  # note_commitments has said why
    if noted is None:
        return []
    return [f"noted on this computer {noted.when()}: {noted.commitment}",
            "(`arena remote audit` holds the tournament to it)"]  # fmt: skip


def assemble_bundle(parts: Iterable[pb.GetAuditBundleResponse]) -> dict[str, Any]:
    """The whole audit bundle from GetAuditBundle's parts (``audit_parts_of``)."""
    return whole_bundle(audit_parts_of(parts))


def audit_parts_of(parts: Iterable[pb.GetAuditBundleResponse]) -> Iterator[BundlePart]:
    """GetAuditBundle's parts as the audit reads them, one at a time: the head, then each
    match and its games (RemoteError, exit 1, when the arena sends them out of that
    order, or a head with its matches or a match with its games inside)."""
    head = match = False
    for part in parts:
        kind = part.WhichOneof("part")
        if kind == "head_json" and not head:
            head = True
            yield "head", _bundle_part(kind, part.head_json, "matches")
        elif kind == "match_json" and head:
            match = True
            yield "match", _bundle_part(kind, part.match_json, "played")
        elif kind == "game_json" and match:
            yield "game", _bundle_part(kind, part.game_json)
        else:
            raise RemoteError(f"the arena sent the audit bundle out of order ({kind})",
                              EXIT_SERVER)  # fmt: skip
    if not head:
        raise RemoteError("the arena sent no audit bundle", EXIT_SERVER)


def _bundle_part(kind: str, text: str, sent_apart: str | None = None) -> dict[str, Any]:
    """One part of the audit bundle, a JSON object without ``sent_apart`` (the parts
    that follow it), else RemoteError, exit 1."""
    try:
        part = loads_once(text)
    except (ValueError, RecursionError) as error:
        part, why = None, f" ({error})" if "given twice" in str(error) else ""
    else:
        why = ""
    if not isinstance(part, dict):
        raise RemoteError(f"the arena sent an audit bundle part ({kind}) that is not a JSON"
                          f" object{why}: {text[:60]!r}", EXIT_SERVER)  # fmt: skip
    if sent_apart is not None and sent_apart in part:
        raise RemoteError(f"the arena sent an audit bundle part ({kind}) with {sent_apart!r}"
                          " inside: they come as parts of their own", EXIT_SERVER)  # fmt: skip
    return part


def ranked_by(t: pb.Tournament) -> str:
    """What a standing's ``points`` are: a ladder ranks by the conservative rating."""
    return "mu-3sigma" if t.format == pb.TOURNAMENT_FORMAT_LADDER else "points"


def ranking_value(t: pb.Tournament, points: float) -> str:
    return f"{points:.2f}" if t.format == pb.TOURNAMENT_FORMAT_LADDER else f"{points:g}"


def watch_line(event: pb.WatchTournamentResponse) -> str:
    """One progress event as a plain line (stdout not a terminal)."""
    t = event.tournament
    game = f" (game {event.game_id})" if event.game_id else ""
    leader = ""
    if event.standings:
        top = event.standings[0]
        value = ranking_value(t, top.points)
        leader = (f"; leader {top.bot} (mu-3sigma {value})"
                  if t.format == pb.TOURNAMENT_FORMAT_LADDER
                  else f"; leader {top.bot} {value} pts")  # fmt: skip
    return (f"{t.name}: {t.games_played}/{t.games_scheduled} games, {t.status}:"
            f" {event.message}{game}{leader}")  # fmt: skip


def standings_lines(event: pb.WatchTournamentResponse) -> list[str]:
    t = event.tournament
    rows = [(str(s.rank), s.bot, ranking_value(t, s.points), str(s.games),
             f"{s.wins}/{s.draws}/{s.losses}") for s in event.standings]  # fmt: skip
    return columns(("#", "bot", ranked_by(t), "games", "W/D/L"), rows) if rows else []


def record_text(reply: pb.GetGameRecordResponse) -> str:
    """The record as sent, its control characters but newlines and tabs made visible
    (inside a JSON string, ``\\u001b`` is the same character, escaped)."""
    text = visible(reply.record_json, keep="\n\t")
    return text if text.endswith("\n") else text + "\n"


TOKEN_ENV = "KAHUNA_USER_TOKEN"  # where the connector reads the user token


def play_argv(
    endpoint: Endpoint,
    bot: str,
    command: Sequence[str],
    max_seats: int | None = None,
    max_parallel: int | None = None,
) -> list[str]:
    """The SDK connector's arguments (kahuna_bot.remote) for ``bot`` on ``endpoint``.

    The token is not among them: the connector reads it from ``$KAHUNA_USER_TOKEN``.
    """
    if not command:
        raise RemoteError("give the bot's command after --, e.g. -- python3 bot.py", EXIT_USAGE)
    if shutil.which(command[0]) is None:
        raise RemoteError(f"the bot's command {command[0]!r}: no such program", EXIT_USAGE)
    argv = ["--arena", endpoint.address, "--bot", bot]
    if max_seats is not None:
        if max_seats < 1:
            raise RemoteError(f"--max-seats must be at least 1, got {max_seats}", EXIT_USAGE)
        argv += ["--max-seats", str(max_seats)]
    parallel = default_parallel() if max_parallel is None else max_parallel
    if parallel < 1:
        raise RemoteError(f"--max-parallel must be at least 1, got {parallel}", EXIT_USAGE)
    argv += ["--max-parallel", str(parallel)]
    if endpoint.tls:
        argv.append("--tls")
    for flag, value in (("--tls-ca", endpoint.tls_ca), ("--tls-cert", endpoint.tls_cert),
                        ("--tls-key", endpoint.tls_key)):  # fmt: skip
        if value is not None:
            argv += [flag, str(value)]
    return [*argv, "--", *command]


# ------------------------------------------------------------------ the commands


def default_parallel() -> int:
    """The CPUs this process may use: how many bots `remote play` runs at once by default."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _say(lines: Iterable[str], out: TextIO | None = None) -> None:
    """Print ``lines``, one each, with control characters made visible (see ``visible``)."""
    stream = out or sys.stdout
    for line in lines:
        print(visible(line), file=stream)
    stream.flush()


def _say_json(value: object) -> None:
    _say(json.dumps(value, indent=2).splitlines())


def _client(endpoint: Endpoint) -> Client:
    try:
        return Client(endpoint)
    except OSError as error:
        raise RemoteError(f"a TLS file of the saved login cannot be read: {error}",
                          EXIT_USAGE) from None  # fmt: skip


@contextlib.contextmanager
def _calls(endpoint: Endpoint) -> Iterator[Client]:
    """A client whose gRPC refusals become RemoteError (one line, an exit status)."""
    with _client(endpoint) as client:
        try:
            yield client
        except grpc.RpcError as error:
            raise rpc_refusal(error, endpoint.address) from None


def run_login(args: argparse.Namespace) -> int:
    target = parse_url(args.url)
    tls = target.tls or bool(args.tls or args.tls_ca or args.tls_cert or args.tls_key)
    if not tls and not is_loopback(target.address):
        if not args.insecure:
            raise RemoteError(
                f"{target.address} is not this machine and the URL is plaintext: the token"
                " would cross the network in clear; use grpcs:// (TLS), or give --insecure"
                " if the network is yours", EXIT_USAGE,
            )  # fmt: skip
        _say([f"warning: plaintext to {target.address}: anyone on the path can read your"
              " token (--insecure)"], sys.stderr)  # fmt: skip
    if (args.tls_cert is None) != (args.tls_key is None):
        raise RemoteError("--tls-cert and --tls-key go together: give both, or neither",
                          EXIT_USAGE)  # fmt: skip
    try:
        check_client_tls(args.tls_ca, args.tls_cert, args.tls_key)
    except TlsConfigError as error:
        raise RemoteError(str(error), EXIT_USAGE) from None
    token = read_token(sys.stdin)
    endpoint = Endpoint(target.address, token, tls, args.tls_ca, args.tls_cert, args.tls_key)
    with _calls(endpoint) as client:
        try:  # the token works before it is saved
            bots = f"{len(client.list_bots().bots)} bots"
        except grpc.RpcError as error:
            if not _not_public_yet(error):
                raise
            bots = "its bots not public yet: the spectator delay"  # the token was let in
    path = save_login(endpoint, config_dir())
    security = "TLS" if tls else "plaintext"
    _say([f"logged in to {target.address} ({security}; {bots}); saved {path}"])
    return EXIT_OK


def _not_public_yet(error: grpc.RpcError) -> bool:
    """Whether ``error`` is a view refused until the spectator delay has passed: the arena
    checked the token first, so the token works."""
    code, details = error.code(), error.details()
    return code is grpc.StatusCode.UNAVAILABLE and str(details).startswith(NOT_PUBLIC)


def run_submit(args: argparse.Namespace) -> int:
    directory = Path(args.directory)
    request = submit_request(directory)  # a bot that cannot go is refused before the login
    endpoint = load_login(config_dir())
    from rich.console import Console

    spec = load_bot(directory)
    # before the wait, on standard error: standard output is what the arena stored
    _say([submit_notice(spec.name, spec.runtime, len(request.archive))], sys.stderr)
    err = Console(stderr=True)
    waiting = (err.status(f"{spec.name}: the arena is checking it", refresh_per_second=4)
               if err.is_terminal else contextlib.nullcontext())  # fmt: skip
    with _calls(endpoint) as client, waiting:
        reply = client.submit(request)
    _say(submit_lines(reply, spec.runtime))
    return EXIT_OK


def submit_notice(name: str, runtime: str, size: int) -> str:
    """What a submission is about to wait for, said before the wait (it can be a minute)."""
    from arena.bots.smoke import SMOKE_GAMES

    checks = ("no smoke match: you run a remote bot" if runtime == "remote" else
              f"the submission scenarios of `arena bot check`, then a {SMOKE_GAMES}-game smoke"
              " match: up to a few minutes")  # fmt: skip
    return (f"uploading {name} ({size / 1024:.0f} KiB); the arena checks it before storing it:"
            f" {checks}")  # fmt: skip


def run_bots(args: argparse.Namespace) -> int:
    endpoint = load_login(config_dir())
    with _calls(endpoint) as client:
        reply = client.list_bots()
    if args.json:
        _say_json([bot_json(b) for b in reply.bots])
    else:
        _say(bots_lines(reply))
    return EXIT_OK


def note_commitments(
    endpoint: Endpoint, tournaments: Iterable[pb.Tournament], every: bool = False
) -> None:
    """Note each listed tournament's seed commitment (``arena.commands.noted``), and warn on
    standard error of one that is not the commitment noted before, of a noted one missing
    from ``every`` tournament the arena lists, or of notes that cannot be kept: the listing
    itself goes on."""
    seen = [Seen(t.name, t.seed_commitment, t.status, t.games_played) for t in tournaments]
    try:
        warnings = note(config_dir(), endpoint.address, seen, every=every)
    except NotesError as error:
        warnings = [f"warning: {error}: the seed commitments shown are not noted"]
    _say(warnings, sys.stderr)


def run_tournaments(args: argparse.Namespace) -> int:
    endpoint = load_login(config_dir())
    with _calls(endpoint) as client:
        reply = client.tournaments()
    note_commitments(endpoint, reply.tournaments, every=True)
    if args.json:
        _say_json([tournament_json(t) for t in reply.tournaments])
    else:
        _say(tournaments_lines(reply))
    return EXIT_OK


def run_leaderboard(args: argparse.Namespace) -> int:
    endpoint = load_login(config_dir())
    with _calls(endpoint) as client:
        reply = client.leaderboard(pb.GetLeaderboardRequest(latest_only=args.latest))
    _say(leaderboard_json(reply).splitlines() if args.json else leaderboard_lines(reply))
    return EXIT_OK


def run_record(args: argparse.Namespace) -> int:
    if not 0 < args.game_id <= MAX_GAME_ID:
        raise RemoteError(f"GAME_ID must be a positive game id, at most {MAX_GAME_ID},"
                          f" got {args.game_id}", EXIT_USAGE)  # fmt: skip
    endpoint = load_login(config_dir())
    with _calls(endpoint) as client:
        reply = client.game_record(pb.GetGameRecordRequest(game_id=args.game_id))
    if args.output is None:
        sys.stdout.write(record_text(reply))
        return EXIT_OK
    try:
        write_whole(Path(args.output), record_text(reply))  # never a truncated record
    except OSError as error:
        raise RemoteError(f"{args.output}: cannot be written ({error.strerror})",
                          EXIT_USAGE) from None  # fmt: skip
    _say([f"game {args.game_id}: record written to {args.output}"], sys.stderr)
    return EXIT_OK


def of_asked(report: AuditReport, sent: object, asked: str) -> AuditReport:
    """``report``, failed when the arena sent another tournament's bundle than the one
    ``asked`` by name (an id, all digits, is not a name the bundle carries)."""
    if sent == asked or asked.isdigit():
        return report
    return replace(report, ok=False, checked=(), problem=(
        f"the arena sent the audit bundle of tournament {str(sent)[:80]!r},"
        f" not of {asked!r}"))  # fmt: skip


def against_this_computers(report: AuditReport, address: str) -> AuditReport:
    """``report`` held to the commitment this computer noted for its tournament
    (``arena.commands.noted``): failed naming both when they differ; a pass says when it
    was noted and what that shows, or that none was noted."""
    try:
        noted = noted_commitment(config_dir(), address, report.tournament)
    except NotesError as error:
        noted, unread = None, f" ({error})"
    else:
        unread = ""
    if noted is None:
        if not report.ok:
            return report
        return replace(report, checked=(*report.checked, (
            "not checked: that the commitment was published before play, since none was given"
            " (--commitment HEX) and this computer noted none for this tournament" + unread
            + " (`arena remote tournament list` and `tournament show` note each commitment"
            " they show before the tournament is finished)")))  # fmt: skip
    if report.commitment != noted.commitment:
        return replace(report, ok=False, checked=(), problem=(
            f"the published commitment is {report.commitment}, not the {noted.commitment} this"
            f" computer noted {noted.when()}: the tournament was created again or its"
            " commitment changed since (--commitment HEX audits against another)"))  # fmt: skip
    if not report.ok:
        return report
    return replace(report, checked=(*report.checked, (
        f"the commitment is the one this computer noted {noted.when()}{noted.proves()}")))


def spool_bundle(
    parts: Iterable[pb.GetAuditBundleResponse], out: BinaryIO, where: str | None = None
) -> None:
    """Write the bundle GetAuditBundle sends to ``out`` as its JSON text (a saved
    bundle's), a part at a time: the stream is received whole within its deadline, and
    audited from the file after, however long the audit takes. RemoteError (exit 1)
    for parts out of order or past the audit's limits, or once the disk holding ``out``
    (in directory ``where``: the temporary directory) would keep less than
    SPOOL_KEEPS_FREE bytes free: an arena's stream does not fill the user's disk."""
    where = tempfile.gettempdir() if where is None else where
    text = BundleText()
    most = MAX_BUNDLE_MATCHES + MAX_BUNDLE_GAMES + 1
    written = checked = 0
    try:
        for count, (kind, part) in enumerate(audit_parts_of(parts), 1):
            if count > most:
                raise RemoteError(f"the arena sent more than {MAX_BUNDLE_MATCHES} matches and"
                                  f" {MAX_BUNDLE_GAMES} games, the most an audit reads",
                                  EXIT_SERVER)  # fmt: skip
            piece = text.piece(kind, part).encode("ascii")
            if written + len(piece) >= checked + SPOOL_CHECK_BYTES:
                checked = written
                _keep_free(out, where, written + len(piece))
            out.write(piece)
            written += len(piece)
        out.write(text.end().encode("ascii"))
        out.flush()
    except OSError as error:
        raise RemoteError(f"the audit bundle cannot be kept in {where} after {written} bytes"
                          f" ({error.strerror}): set TMPDIR to a directory with room for it",
                          EXIT_SERVER) from None  # fmt: skip


def _keep_free(out: BinaryIO, where: str, after: int) -> None:
    """RemoteError when writing up to ``after`` bytes of the bundle to ``out`` would leave
    its disk less than SPOOL_KEEPS_FREE bytes free."""
    out.flush()
    disk = os.fstatvfs(out.fileno())
    free = disk.f_bavail * disk.f_frsize
    if free - (after - out.tell()) < SPOOL_KEEPS_FREE:
        raise RemoteError(
            f"the arena's audit bundle has reached {after} bytes and would leave {where}"
            f" less than {SPOOL_KEEPS_FREE >> 20} MiB free (SPOOL_KEEPS_FREE): set TMPDIR"
            " to a directory with room for it", EXIT_SERVER)  # fmt: skip


def audited_spool(spool: BinaryIO, save: Path | None) -> AuditReport:
    """The audit of the bundle ``spool_bundle`` wrote to ``spool``, and the bundle
    copied to ``save`` (whole, or not at all) when given."""
    spool.seek(0)
    try:
        report = audit_parts(read_parts(spool))
    except BundleReadError as error:
        raise RemoteError(f"the arena's audit bundle: {error}", EXIT_SERVER) from None
    if save is not None:
        spool.seek(0)
        try:
            with written_whole(save) as out:
                while chunk := spool.read(1 << 20):
                    out.write(chunk.decode("ascii"))
        except OSError as error:
            raise RemoteError(f"{save}: cannot be written ({error.strerror})",
                              EXIT_USAGE) from None  # fmt: skip
    return report


def run_audit(args: argparse.Namespace) -> int:
    endpoint = load_login(config_dir())
    with tempfile.TemporaryFile() as spool:
        with _calls(endpoint) as client:
            spool_bundle(client.audit_bundle(pb.GetAuditBundleRequest(name=args.name)), spool)
        report = audited_spool(spool, None if args.save is None else Path(args.save))
    report = of_asked(against_digest(report, args.expect_digest), report.tournament, args.name)
    if args.commitment is not None:
        report = against_noted(report, report.commitment, args.commitment)
    else:
        report = against_this_computers(report, endpoint.address)
    if args.json:
        _say_json(report.to_json())
    elif report.ok:
        _say([report.text()])
    else:
        _say([report.text()], sys.stderr)
    return EXIT_OK if report.ok else EXIT_AUDIT_FAILED


def exported_games(client: Client, tournament: str) -> Iterator[pb.ExportGamesResponse]:
    """ExportGames' games, each once and in id order (else RemoteError): a stream that
    breaks (UNAVAILABLE) is reopened after the last game received, up to EXPORT_RESUMES
    times in a row without a game between."""
    after = resumes = 0
    while True:
        request = pb.ExportGamesRequest(tournament=tournament, after_game_id=after)
        try:
            for message in client.export_games(request):
                if message.game_id <= after:
                    raise RemoteError(f"the arena sent game {message.game_id} after game"
                                      f" {after}: not in id order", EXIT_SERVER)  # fmt: skip
                after, resumes = message.game_id, 0
                yield message
            return
        except grpc.RpcError as error:
            if error.code() is not grpc.StatusCode.UNAVAILABLE or resumes >= EXPORT_RESUMES:
                raise
            resumes += 1
            time.sleep(EXPORT_RESUME_WAIT_S * resumes)


def run_export(args: argparse.Namespace) -> int:
    try:
        from arena.export.writer import write_games
    except ImportError as error:
        raise RemoteError("arena remote export needs pyarrow (pip install"
                          f" 'kahuna-arena[data]'): {error}", EXIT_USAGE) from None  # fmt: skip
    out: Path = args.out
    if out.exists() and not out.is_dir():
        raise RemoteError(f"--out {out} is not a directory", EXIT_USAGE)
    endpoint = load_login(config_dir())
    with _calls(endpoint) as client:
        stream = exported_games(client, args.tournament or "")
        first = next(stream, None)  # a refusal comes before any file is made
        sent = stream if first is None else itertools.chain([first], stream)
        games = (stored_game(message) for message in sent)
        try:
            summary = write_games(games, out)
        except OSError as error:
            raise RemoteError(f"cannot write under {out}: {error.strerror or error}",
                              EXIT_USAGE) from None  # fmt: skip
        except ValueError as error:  # a seat list or a record that is not one
            raise RemoteError("the arena sent a game that cannot be exported:"
                              f" {visible(str(error))}", EXIT_SERVER) from None  # fmt: skip
    if args.json:
        _say_json({"games": summary.games, "decisions": summary.decisions,
                   "games_path": str(summary.games_path),
                   "decisions_path": str(summary.decisions_path)})  # fmt: skip
        return EXIT_OK
    _say([f"{summary.games} games and {summary.decisions} decisions written to"
          f" {summary.games_path} and {summary.decisions_path}"])  # fmt: skip
    return EXIT_OK


def run_watch(args: argparse.Namespace) -> int:
    endpoint = load_login(config_dir())
    with _calls(endpoint) as client:
        events = client.watch(pb.WatchTournamentRequest(name=args.name))
        if sys.stdout.isatty():
            _watch_live(events)
        else:
            last = None
            for event in events:
                _say([watch_line(event)])
                last = event
            if last is not None:
                _say(standings_lines(last))
    return EXIT_OK


_REMOTE_FORMATS = {
    "round-robin": pb.TOURNAMENT_FORMAT_ROUND_ROBIN, "swiss": pb.TOURNAMENT_FORMAT_SWISS,
    "sprt": pb.TOURNAMENT_FORMAT_SPRT, "gauntlet": pb.TOURNAMENT_FORMAT_GAUNTLET,
}  # fmt: skip


def create_request(args: argparse.Namespace) -> pb.CreateTournamentRequest:
    """CreateTournament's request from `arena remote tournament create`'s flags (unset: 0,
    the server's default; an unset bank is left out, so that ``--bank-ms 0`` is no bank).
    A count given as 0 or less is refused (RemoteError, exit 2): sent, 0 would be read as
    unset and the tournament made with the server's default instead."""
    for flag, value in (("--games", args.games), ("--rounds", args.rounds),
                        ("--action-ms", args.action_ms), ("--max-pairs", args.max_pairs)):
        if value is not None and value < 1:
            raise RemoteError(f"{flag} must be at least 1, got {value}", EXIT_USAGE)
    request = pb.CreateTournamentRequest(
        name=args.name, format=_REMOTE_FORMATS[args.format], bots=args.bots,
        games_per_match=args.games or 0, rounds=args.rounds or 0, seed=args.seed or 0,
        action_ms=args.action_ms or 0, bank_ms=args.bank_ms, start=args.start,
    )  # fmt: skip
    if args.sprt is not None or args.elo0 is not None or args.elo1 is not None:
        sprt = request.sprt
        sprt.preset = args.sprt or ""
        if args.elo0 is not None:
            sprt.elo0 = args.elo0
        if args.elo1 is not None:
            sprt.elo1 = args.elo1
        sprt.max_pairs = args.max_pairs or 0
    return request


def tournament_line(verb: str, t: pb.Tournament) -> str:
    """One line for a tournament just created, started or stopped."""
    line = (f"{verb} tournament {t.name!r} (id {t.id}, {_FORMATS.get(t.format, '-')},"
            f" {len(t.entrants)} entrants): {t.status}, {t.games_played}/{t.games_scheduled}"
            " games")  # fmt: skip
    if t.interrupted_reason:
        line += f"; {t.interrupted_reason}"
    if t.seed_commitment and verb == "created":
        line += f"; seed commitment {t.seed_commitment}"
    return line


def run_tournament_create(args: argparse.Namespace) -> int:
    request = create_request(args)  # its flags refused before the login is looked for
    endpoint = load_login(config_dir())
    with _calls(endpoint) as client:
        reply = client.create_tournament(request)
    _say([tournament_line("created", reply.tournament)])
    return EXIT_OK


def run_tournament_start(args: argparse.Namespace) -> int:
    endpoint = load_login(config_dir())
    with _calls(endpoint) as client:
        reply = client.start_tournament(args.name)
    _say([tournament_line("started", reply.tournament)])
    return EXIT_OK


def run_tournament_stop(args: argparse.Namespace) -> int:
    endpoint = load_login(config_dir())
    with _calls(endpoint) as client:
        reply = client.stop_tournament(args.name)
    _say([tournament_line("stopped", reply.tournament)])
    return EXIT_OK


def remote_token_json(token: pb.UserToken) -> dict[str, object]:
    """A token the arena lists, as `arena token list --json` prints a stored one."""
    return {"id": token.id, "user": token.user, "role": token.role, "state": token.state,
            "created_at": token.created_at, "expires_at": token.expires_at or None,
            "revoked_at": token.revoked_at or None,
            "sha256_prefix": token.sha256_prefix}  # fmt: skip


def revoke_request(args: argparse.Namespace) -> pb.RevokeUserTokenRequest:
    """RevokeUserToken's request from `arena remote token revoke` (ID, or --user NAME)."""
    if args.user is not None:
        return pb.RevokeUserTokenRequest(user=args.user)
    if not 0 < args.id <= MAX_TOKEN_ID:
        raise RemoteError(f"ID must be a positive token id, at most {MAX_TOKEN_ID},"
                          f" got {args.id}", EXIT_USAGE)  # fmt: skip
    return pb.RevokeUserTokenRequest(id=args.id)


def run_token_create(args: argparse.Namespace) -> int:
    lifetime = args.expires_in
    request = pb.CreateUserTokenRequest(
        user=args.user, expires_in_s=0 if lifetime is None else int(lifetime.total_seconds())
    )
    with _calls(load_login(config_dir())) as client:
        reply = client.create_token(request)
    _say([reply.token])
    return EXIT_OK


def run_token_list(args: argparse.Namespace) -> int:
    with _calls(load_login(config_dir())) as client:
        reply = client.list_tokens(args.user or "")
    rows = [remote_token_json(token) for token in reply.tokens]
    _say(json.dumps(rows, indent=2).splitlines() if args.json else token_lines(rows))
    return EXIT_OK


def run_token_revoke(args: argparse.Namespace) -> int:
    request = revoke_request(args)
    with _calls(load_login(config_dir())) as client:
        reply = client.revoke_tokens(request)
    _say(revoked_lines([remote_token_json(token) for token in reply.revoked]))
    return EXIT_OK


def _watch_live(events: Iterable[pb.WatchTournamentResponse]) -> None:
    from rich.live import Live
    from rich.table import Table
    from rich.text import Text

    def table(event: pb.WatchTournamentResponse) -> Table:
        # Text, not str: rich would read the arena's names as markup.
        view = Table(title=Text(visible(watch_line(event))))
        for header in ("#", "bot", ranked_by(event.tournament), "games", "W/D/L"):
            view.add_column(header, justify="left" if header == "bot" else "right")
        for s in event.standings:
            view.add_row(str(s.rank), Text(visible(s.bot)),
                         ranking_value(event.tournament, s.points), str(s.games),
                         f"{s.wins}/{s.draws}/{s.losses}")  # fmt: skip
        return view

    with Live(refresh_per_second=4) as live:
        for event in events:
            live.update(table(event))


def run_play(args: argparse.Namespace) -> int:
    endpoint = load_login(config_dir())
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    elif command[:1] and command[0].startswith("-"):
        raise RemoteError(
            f"{command[0]}: options of `arena remote play` go before BOT, the bot's command"
            " after --", EXIT_USAGE,
        )  # fmt: skip
    argv = play_argv(endpoint, args.bot, command, args.max_seats, args.max_parallel)
    try:
        sdk = SDK_MOUNT.host_dir()
        entries = [mount.path_entry(sandboxed=False) for mount in PYTHON_BOT_MOUNTS]
    except ResourceError as error:
        raise RemoteError(str(error), EXIT_USAGE) from None
    if str(sdk) not in sys.path:
        sys.path.insert(0, str(sdk))
    # The bot finds what a sandboxed Python bot finds on its PYTHONPATH (kahuna_bot,
    # kahuna.v1, arena.kahuna): the very bot you would upload plays unchanged.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [*entries, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    )
    os.environ[TOKEN_ENV] = endpoint.token  # not argv: the connector strips it from the bot's
    untune_child_processes()  # the arena's gRPC tuning is not the bot's (its gRPC may not know it)
    connector = importlib.import_module("kahuna_bot.remote")

    def refused(error: Any) -> int:
        """The arena refused the connector: one line, and the status of the table above."""
        why = refusal(error.code or "UNKNOWN", error.details or str(error), endpoint.address)
        _say([f"arena remote: {why.message}"], sys.stderr)
        return why.status

    return int(connector.main(argv, refused=refused))


def _handled(run: Any) -> Any:
    def handler(args: argparse.Namespace) -> int:
        try:
            return int(run(args))
        except RemoteError as error:
            _say([f"arena remote: {error.message}"], sys.stderr)
            return error.status

    return handler


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    remote = subparsers.add_parser(
        "remote", help="a participant's commands against a running `arena serve`",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    commands = remote.add_subparsers(dest="remote_command", metavar="SUBCOMMAND")
    commands.required = True

    def sub(
        name: str,
        help_text: str,
        under: argparse._SubParsersAction[argparse.ArgumentParser] = commands,
        *,
        listed: bool = True,
    ) -> argparse.ArgumentParser:
        description = f"{help_text}.\n\n{EXIT_STATUSES}"
        raw = argparse.RawDescriptionHelpFormatter
        if not listed:  # no help: left out of the list, an alias kept working
            return under.add_parser(name, description=description, formatter_class=raw)
        return under.add_parser(name, help=help_text, description=description, formatter_class=raw)

    def group(name: str, help_text: str) -> argparse._SubParsersAction[argparse.ArgumentParser]:
        nouns = commands.add_parser(name, help=help_text, description=f"{help_text}.")
        verbs = nouns.add_subparsers(dest=f"remote_{name}_command", metavar="SUBCOMMAND")
        verbs.required = True
        return verbs

    login = sub("login", "save an arena's address and your token (read from stdin or a prompt)")
    login.add_argument("url", help="grpc://HOST:PORT or HOST:PORT (plaintext), grpcs://HOST:PORT")
    login.add_argument("--tls", action="store_true", help="TLS with the system's CA roots")
    login.add_argument(
        "--tls-ca",
        type=given_path,
        metavar="FILE",
        help="check the arena's certificate with this PEM CA (implies TLS)",
    )
    login.add_argument(
        "--tls-cert",
        type=given_path,
        metavar="FILE",
        help="your PEM client certificate, for mutual TLS (implies TLS)",
    )
    login.add_argument("--tls-key", type=given_path, metavar="FILE", help="the key of --tls-cert")
    login.add_argument(
        "--insecure", action="store_true",
        help="allow a plaintext URL to another machine (the token crosses the network in clear)",
    )  # fmt: skip
    login.set_defaults(func=_handled(run_login))

    submit = sub("submit", "pack a bot directory, upload it, print its version and checks")
    submit.add_argument("directory", metavar="DIR", type=given,
                        help="the bot's directory (with bot.toml)")  # fmt: skip
    submit.set_defaults(func=_handled(run_submit))

    bot_commands = group("bot", "the arena's bots (as `arena bot` on the server)")
    for bots in (
        sub("list", "list the arena's bots (latest versions)", bot_commands),
        sub("bots", "list the arena's bots (latest versions)", listed=False),
    ):
        bots.add_argument("--json", action="store_true", help="JSON instead of a table")
        bots.set_defaults(func=_handled(run_bots))

    board = sub("leaderboard", "the arena's ratings (TrueSkill, by mu - 3 sigma)")
    board.add_argument("--json", action="store_true", help="JSON instead of a table")
    board.add_argument("--latest", action="store_true", help="only each bot's latest version")
    board.set_defaults(func=_handled(run_leaderboard))

    tournament_commands = group(
        "tournament", "the arena's tournaments: list them; the admin creates, starts and stops"
        " them in the server",
    )  # fmt: skip
    for tournaments in (
        sub("list", "list the arena's tournaments, newest first (and note each one's seed"
            " commitment on this computer, for `arena remote audit`)", tournament_commands),
        sub("tournaments", "list the arena's tournaments, newest first (and note each one's"
            " seed commitment on this computer)", listed=False),
    ):
        tournaments.add_argument("--json", action="store_true", help="JSON instead of a table")
        tournaments.set_defaults(func=_handled(run_tournaments))
    show = sub("show", "one tournament: its seed commitment and the parameters it binds"
               " (time control, variant, who deals afresh), from creation; the commitment is"
               " noted on this computer, for `arena remote audit`", tournament_commands)
    show.add_argument("name", metavar="NAME", help="the tournament's name (or id)")
    show.add_argument("--json", action="store_true", help="JSON instead of text")
    show.set_defaults(func=_handled(run_tournament_show))
    _register_tournament(tournament_commands)  # (admin) create, start, stop

    _register_token(group("token", "the arena's API tokens (the admin's, as `arena token`"
                          " on the server)"))  # fmt: skip

    watch = sub("watch", "follow a tournament's or the ladder's progress until it ends,"
                " whichever process plays it")  # fmt: skip
    watch.add_argument("name", metavar="NAME",
                       help="the tournament's name (or id), or the ladder's (ladder)")  # fmt: skip
    watch.set_defaults(func=_handled(run_watch))


    record = sub("record", "fetch a finished game's record (JSON)")
    record.add_argument("game_id", metavar="GAME_ID", type=int, help="the game's id")
    record.add_argument("-o", "--output", type=given_path, metavar="FILE", help="write it to FILE")
    record.set_defaults(func=_handled(run_record))

    export = sub("export", "write the arena's public games to Parquet (games and decisions,"
                 " docs/reference/export.md); needs pip install 'kahuna-arena[data]'")  # fmt: skip
    export.add_argument(
        "--tournament", metavar="NAME",
        help="only this tournament's or ladder's games (default: every game)",
    )  # fmt: skip
    export.add_argument(
        "--out", metavar="DIR", required=True, type=given_path,
        help="directory to write into (created; its two files replaced)",
    )  # fmt: skip
    export.add_argument("--json", action="store_true", help="print a JSON summary")
    export.set_defaults(func=_handled(run_export))

    audit = sub("audit", "check a finished tournament from what the arena publishes: its"
                " commitment, revealed secret, records, results and rating updates")  # fmt: skip
    audit.add_argument("name", metavar="NAME", help="the tournament's name (or id)")
    audit.add_argument("--commitment", metavar="HEX", type=commitment_arg,
                       help="the seed commitment you noted when the tournament was created"
                       " (64 hex digits): it must be the one published now"
                       " (default: the one `tournament list` or `show` first noted on this"
                       " computer)")  # fmt: skip
    audit.add_argument("--save", type=given_path, metavar="FILE",
                       help="also write the audit bundle (JSON) to FILE")  # fmt: skip
    audit.add_argument("--expect-digest", metavar="HEX", type=digest_arg,
                       help="the bundle digest another participant's audit printed (64 hex"
                       " digits): fail unless this bundle's is the same")  # fmt: skip
    audit.add_argument("--json", action="store_true", help="the verdict as JSON")
    audit.set_defaults(func=_handled(run_audit))

    play = sub(
        "play",
        "host a remote bot: run COMMAND for every seat the arena offers it (options before"
        " BOT; the exit status is the SDK connector's: 0 done, 2 refused by the arena)",
    )
    play.add_argument("bot", metavar="BOT", help='the remote bot\'s name (runtime = "remote")')
    play.add_argument("--max-seats", type=int, metavar="N", help="stop after N seats")
    play.add_argument(
        "--max-parallel", type=int, metavar="N",
        help=f"run at most N bots at once (default: the CPUs, here {default_parallel()})",
    )  # fmt: skip
    play.add_argument(
        "command", nargs=argparse.REMAINDER, metavar="-- COMMAND...", type=passed_on,
        help="the bot's command line",
    )  # fmt: skip
    play.set_defaults(func=_handled(run_play))


def _register_token(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`arena remote token create|list|revoke`: `arena token`'s words, through the API."""

    def sub(name: str, help_text: str) -> argparse.ArgumentParser:
        return commands.add_parser(
            name, help=help_text, description=f"{help_text}.\n\n{EXIT_STATUSES}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )  # fmt: skip

    create = sub("create", "create a user's token and print it (shown once)")
    create.add_argument("user", help="user name (letters, digits, - _ .)")
    create.add_argument(
        "--expires-in", type=duration, metavar="DURATION",
        help="the token is refused after this long (e.g. 30d, 12h; default: never)",
    )  # fmt: skip
    create.set_defaults(func=_handled(run_token_create))

    listing = sub("list", "the stored tokens: id, user, role, state")
    listing.add_argument("--user", help="only this user's tokens")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(func=_handled(run_token_list))

    revoke = sub("revoke", "revoke a token (by id) or all of a user's; never the token of"
                 " your login (`arena token revoke` on the server does)")  # fmt: skip
    which = revoke.add_mutually_exclusive_group(required=True)
    which.add_argument("id", nargs="?", type=token_id,
                       help="the token's id (arena remote token list)")
    which.add_argument("--user", help="revoke every token of this user")
    revoke.set_defaults(func=_handled(run_token_revoke))


def _register_tournament(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`arena remote tournament create|start|stop`, beside `list` (the admin's)."""
    create = commands.add_parser(
        "create", help="create a tournament of stored bots (each plays its latest version)",
        description="Create a tournament of stored bots; --start plays it in the server at"
        f" once.\n\n{EXIT_STATUSES}", formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    create.add_argument("name", metavar="NAME", help="tournament name (letters, digits, - _ .)")
    create.add_argument("bots", nargs="+", metavar="BOT", help="stored bots (latest versions)")
    create.add_argument("--format", choices=sorted(_REMOTE_FORMATS), default="round-robin")
    create.add_argument("--games", type=int, metavar="N", help="games per match (server: 2)")
    create.add_argument("--rounds", type=int, metavar="N",
                        help="Swiss rounds (default ceil(log2 n) + 1)")  # fmt: skip
    create.add_argument(
        "--seed", type=int,
        help="a label stored with the tournament; the deals come from the arena's committed"
        " secret whatever it is",
    )  # fmt: skip
    create.add_argument("--action-ms", type=int, metavar="MS", help="per-action limit")
    create.add_argument("--bank-ms", type=int, metavar="MS",
                        help="time bank per game (server: 30000; 0: none)")  # fmt: skip
    create.add_argument("--sprt", metavar="PRESET", help="--format sprt: preset bounds"
                        " (nonreg or gain)")  # fmt: skip
    create.add_argument("--elo0", type=float, metavar="E0", help="--format sprt: Elo of H0")
    create.add_argument("--elo1", type=float, metavar="E1", help="--format sprt: Elo of H1")
    create.add_argument("--max-pairs", type=int, metavar="N",
                        help="--format sprt: deal pairs at most")  # fmt: skip
    create.add_argument("--start", action="store_true", help="play it in the server at once")
    create.set_defaults(func=_handled(run_tournament_create))
    for name, help_text, run in (
        ("start", "play (or resume) a tournament in the server", run_tournament_start),
        ("stop", "stop a tournament the server plays (resume it later with start)",
         run_tournament_stop),
    ):  # fmt: skip
        command = commands.add_parser(
            name, help=help_text, description=f"{help_text}.\n\n{EXIT_STATUSES}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )  # fmt: skip
        command.add_argument("name", metavar="NAME", help="the tournament's name (or id)")
        command.set_defaults(func=_handled(run))
