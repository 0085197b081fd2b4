"""Which derivation dealt a stored match: the current one, or the arena's earlier one.

Arenas before ``arena.referee.seeds.deal_seed`` dealt each match from the tournament's
secret and the seed stored with the match (``earlier_deal_seed``). Their tournaments
are still in the data directories they upgraded: the audit bundle names such a match's
stored seed (``earlier_seed``) so its deals can be checked, and the runner resumes a
half-played one on its own deals, so that the two games of a pair still share one.
"""

from __future__ import annotations

import json

from arena.kahuna import MalformedRecordError, deal_from_seed, record_from_json
from arena.referee.seeds import MatchIdentity, deal_seed, earlier_deal_seed, match_seed_material


def dealt_earlier(
    secret: bytes, identity: MatchIdentity, match_seed: int, game_index: int, record: str
) -> bool:
    """Whether the stored game ``record`` (game ``game_index`` of the match ``identity``)
    was dealt by the earlier derivation from ``match_seed``, not by the current one."""
    try:
        parsed = record_from_json(json.loads(record))
    except (ValueError, TypeError, KeyError, MalformedRecordError):
        return False  # not a record to read: the audit names it
    meta = parsed.extra.get("match")
    meta = meta if isinstance(meta, dict) else {}
    deal_index = meta.get("deal_index", game_index // 2)
    if not isinstance(deal_index, int) or isinstance(deal_index, bool) or deal_index < 0:
        return False
    current = deal_seed(match_seed_material(secret, identity), deal_index)
    if parsed.deal == deal_from_seed(current):
        return False
    return bool(parsed.deal == deal_from_seed(earlier_deal_seed(secret, match_seed, deal_index)))
