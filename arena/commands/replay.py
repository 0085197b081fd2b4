"""`arena replay` (check a game record) and `arena play-random` (write one).

Exit statuses of `arena replay` (docs/reference/RECORD.md): 0 valid, 1 invalid or malformed
record (nothing on standard output, one line on standard error), 2 when the
record's `result` differs from the recomputed one.
"""

from __future__ import annotations

import argparse
import json
import sys

from arena.commands.outfile import write_whole
from arena.commands.pathargs import given, given_path
from arena.commands.playflags import game_seed
from arena.kahuna import (
    MalformedRecordError,
    Variant,
    outcome_to_json,
    parse_record,
    play_random_game,
    record_to_json,
    replay,
    state_summary,
)
from arena.quoting import visible

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_RESULT_MISMATCH = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = subparsers.add_parser(
        "replay",
        help="check a kahuna-record/1 and print the state after its last action",
        description=(
            "Replay a game record (docs/reference/RECORD.md) and print the final state as JSON."
        ),
    )
    check.add_argument("record", type=given, help="path of the record, or - for standard input")
    check.add_argument(
        "--legal", action="store_true", help="also print every legal action of the seat to move"
    )
    check.set_defaults(func=run_replay)

    play = subparsers.add_parser(
        "play-random",
        help="play a random game from a seed and write its record",
        description="Play uniformly random legal actions from a seeded deal; write the record.",
    )
    play.add_argument("--seed", type=game_seed, required=True,
                      help="seed of the deal and the moves")  # fmt: skip
    play.add_argument("--strategic", action="store_true", help="Strategic variant (R8)")
    play.add_argument("--tactical", action="store_true", help="Tactical variant (R8)")
    play.add_argument("--out", type=given_path, help="file to write (default: standard output)")
    play.set_defaults(func=run_play_random)


MAX_RECORD_BYTES = 64 * 1024 * 1024
"""A full game record is some 10 KB (with the referee's metadata, tens of KB): a file past
this is no record, and reading on would never end for ``/dev/zero``."""


class RecordTooLargeError(ValueError):
    pass


def _read(source: str) -> bytes:
    if source == "-":
        data = sys.stdin.buffer.read(MAX_RECORD_BYTES + 1)
    else:
        with open(source, "rb") as stream:
            data = stream.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        raise RecordTooLargeError(f"larger than {MAX_RECORD_BYTES} bytes: not a game record")
    return data


def run_replay(args: argparse.Namespace) -> int:
    try:
        data = _read(args.record)
    except OSError as exc:
        print(f"arena replay: cannot read {visible(str(args.record))}: {exc.strerror or exc}",
              file=sys.stderr)  # fmt: skip
        return EXIT_INVALID
    except RecordTooLargeError as exc:
        print(f"arena replay: {visible(str(args.record))}: {exc}", file=sys.stderr)
        return EXIT_INVALID
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        print("arena replay: malformed record: not UTF-8 text", file=sys.stderr)
        return EXIT_INVALID
    try:
        record = parse_record(text)
        result = replay(record)
    except MalformedRecordError as exc:
        print(f"arena replay: malformed record: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_INVALID
    if result.error is not None:
        print(_one_line(result.error.message()), file=sys.stderr)
        return EXIT_INVALID
    summary = state_summary(result.state, legal=args.legal)
    status = EXIT_OK
    if record.result is not None:
        matches = record.result == result.state.outcome
        summary["result_matches"] = matches
        if not matches:
            given = json.dumps(outcome_to_json(record.result))
            computed = json.dumps(outcome_to_json(result.state.outcome))
            print(f"result mismatch: the record says {given}, the replay gives {computed}",
                  file=sys.stderr)
            status = EXIT_RESULT_MISMATCH
    print(json.dumps(summary))
    return status


def _one_line(text: str) -> str:
    return " ".join(text.split())


def run_play_random(args: argparse.Namespace) -> int:
    variant = Variant(strategic=args.strategic, tactical=args.tactical)
    record = play_random_game(args.seed, variant)
    text = json.dumps(record_to_json(record)) + "\n"
    if args.out is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        write_whole(args.out, text)  # a full disk leaves no truncated record
    except OSError as exc:
        print(f"arena play-random: cannot write {args.out}: {exc.strerror or exc}",
              file=sys.stderr)
        return EXIT_INVALID
    return EXIT_OK
