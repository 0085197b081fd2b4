"""Persistence: SQLite in a data directory (see ``arena.store.paths``).

The query functions below are the interface the CLI, the gRPC service and the
web pages code against (documented in docs/CONTRACTS.md, ``arena.store``).
"""

from arena.store.bots import add_bot_version, bot_spec, get_bot, get_version, leaderboard, list_bots
from arena.store.db import AlreadyExistsError, NotFoundError, Store, StoreError
from arena.store.games import game_record, get_game, list_games, record_game
from arena.store.models import (
    BotDetail,
    BotSummary,
    BotVersionRow,
    GameRow,
    LeaderboardRow,
    MatchRow,
    Principal,
    RatingPoint,
    TournamentConfig,
    TournamentRow,
)
from arena.store.paths import ADMIN_TOKEN_NAME, ENV_DATA_DIR, resolve_data_dir
from arena.store.schema import CURRENT_VERSION, SchemaError
from arena.store.tokens import check_token, create_token, ensure_admin_token
from arena.store.tournaments import (
    add_round,
    create_tournament,
    get_tournament,
    list_matches,
    list_tournaments,
    set_status,
    tournament_byes,
    tournament_crosstable,
    tournament_standings,
)

__all__ = [
    "ADMIN_TOKEN_NAME",
    "CURRENT_VERSION",
    "ENV_DATA_DIR",
    "AlreadyExistsError",
    "BotDetail",
    "BotSummary",
    "BotVersionRow",
    "GameRow",
    "LeaderboardRow",
    "MatchRow",
    "NotFoundError",
    "Principal",
    "RatingPoint",
    "SchemaError",
    "Store",
    "StoreError",
    "TournamentConfig",
    "TournamentRow",
    "add_bot_version",
    "add_round",
    "bot_spec",
    "check_token",
    "create_token",
    "create_tournament",
    "ensure_admin_token",
    "game_record",
    "get_bot",
    "get_game",
    "get_tournament",
    "get_version",
    "leaderboard",
    "list_bots",
    "list_games",
    "list_matches",
    "list_tournaments",
    "record_game",
    "resolve_data_dir",
    "set_status",
    "tournament_byes",
    "tournament_crosstable",
    "tournament_standings",
]
