"""Find a secret in what a bot receives: every field of a message, recursively.

``Forbidden`` is what no bot may ever see (the match secret, every deal seed
of the match, the match seed, and any name saying "seed" or "secret");
``leaks`` walks a protobuf message by its descriptor, parsing every
``*_json`` string field and walking the JSON too, and returns where it found
one (an empty list: nothing found).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import dataclass

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from arena.referee.seeds import deal_seed

FORBIDDEN_NAME_PARTS = ("seed", "secret")
BIG = 1 << 20  # smaller numbers are counts and clocks, not keys


@dataclass(frozen=True)
class Forbidden:
    ints: frozenset[int]
    texts: tuple[str, ...]
    raw: tuple[bytes, ...]

    @classmethod
    def of_match(cls, secret: bytes, match_seed: int, games: int,
                 extra: Iterable[int] = ()) -> Forbidden:  # fmt: skip
        """The secret, the match seed and every deal seed a match of ``games`` games can use."""
        deal_seeds = [deal_seed(secret, k) for k in range(games)]
        ints = frozenset(n for n in [*deal_seeds, match_seed, *extra] if n >= BIG)
        texts = [secret.hex(), base64.b64encode(secret).decode(), *(str(n) for n in ints),
                 *(f"{n:x}" for n in ints)]  # fmt: skip
        raw = [secret, *(n.to_bytes(8, "big") for n in deal_seeds),
               *(n.to_bytes(8, "little") for n in deal_seeds)]  # fmt: skip
        return cls(ints, tuple(texts), tuple(raw))

    def in_text(self, text: str) -> bool:
        lowered = text.lower()
        return any(found.lower() in lowered for found in self.texts)


def leaks(message: Message, forbidden: Forbidden) -> list[str]:
    """Where ``message`` (and its serialized bytes) carry something forbidden."""
    found = [f"raw bytes hold {r.hex()}" for r in forbidden.raw if r in message.SerializeToString()]
    _walk_message(message, type(message).__name__, forbidden, found)
    return found


def _bad_name(name: str) -> bool:
    return any(part in name.lower() for part in FORBIDDEN_NAME_PARTS)


def _walk_message(message: Message, path: str, forbidden: Forbidden, found: list[str]) -> None:
    for field, value in message.ListFields():
        where = f"{path}.{field.name}"
        if _bad_name(field.name):
            found.append(f"{where}: a field named {field.name!r}")
        values = list(value) if field.is_repeated else [value]
        for index, item in enumerate(values):
            at = f"{where}[{index}]" if len(values) > 1 else where
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                _walk_message(item, at, forbidden, found)
            elif field.name.endswith("_json") and isinstance(item, str):
                _walk_json(json.loads(item), at, forbidden, found)
            else:
                _check_scalar(item, at, forbidden, found)


def _walk_json(value: object, path: str, forbidden: Forbidden, found: list[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if _bad_name(key) or forbidden.in_text(key):
                found.append(f"{path}: a key {key!r}")
            _walk_json(item, f"{path}.{key}", forbidden, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk_json(item, f"{path}[{index}]", forbidden, found)
    else:
        _check_scalar(value, path, forbidden, found)


def _check_scalar(value: object, path: str, forbidden: Forbidden, found: list[str]) -> None:
    if isinstance(value, bool):
        return
    number = int(value) if isinstance(value, float) and value.is_integer() else value
    if isinstance(number, int) and number in forbidden.ints:
        found.append(f"{path} = {value}")
    elif isinstance(value, str) and forbidden.in_text(value):
        found.append(f"{path} = {value[:80]!r}")
    elif isinstance(value, bytes) and any(r in value for r in forbidden.raw):
        found.append(f"{path}: bytes hold a secret")
