"""Persistence: SQLite in a data directory (see ``arena.store.paths``).

The query functions below are the interface the CLI, the gRPC service and the
web pages code against (documented in docs/CONTRACTS.md, ``arena.store``).
"""

from arena.store.bots import add_bot_version, bot_spec, get_bot, get_version, leaderboard, list_bots
from arena.store.db import AlreadyExistsError, NotFoundError, Store, StoreError
from arena.store.games import find_game, game_record, get_game, list_games, record_game
from arena.store.live import (
    add_live_actions,
    end_live_game,
    get_live_game,
    list_live_games,
    live_entries,
    start_live_game,
)
from arena.store.models import (
    BotDetail,
    BotSummary,
    BotVersionRow,
    GameRow,
    LeaderboardRow,
    LiveEntry,
    LiveGameRow,
    MatchRow,
    Principal,
    RatingPoint,
    SeatOfferRow,
    TournamentConfig,
    TournamentRow,
)
from arena.store.paths import ADMIN_TOKEN_NAME, ENV_DATA_DIR, resolve_data_dir
from arena.store.remote import (
    REMOTE_RUNTIME,
    SeatRefusedError,
    add_seat_offer,
    close_seat_offers,
    open_seat_offers,
    register_remote_bot,
    take_seat_offer,
)
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
    "REMOTE_RUNTIME",
    "AlreadyExistsError",
    "BotDetail",
    "BotSummary",
    "BotVersionRow",
    "GameRow",
    "LeaderboardRow",
    "LiveEntry",
    "LiveGameRow",
    "MatchRow",
    "NotFoundError",
    "Principal",
    "RatingPoint",
    "SchemaError",
    "SeatOfferRow",
    "SeatRefusedError",
    "Store",
    "StoreError",
    "TournamentConfig",
    "TournamentRow",
    "add_bot_version",
    "add_live_actions",
    "add_round",
    "add_seat_offer",
    "bot_spec",
    "check_token",
    "close_seat_offers",
    "create_token",
    "create_tournament",
    "end_live_game",
    "ensure_admin_token",
    "find_game",
    "game_record",
    "get_bot",
    "get_game",
    "get_live_game",
    "get_tournament",
    "get_version",
    "leaderboard",
    "list_bots",
    "list_games",
    "list_live_games",
    "list_matches",
    "list_tournaments",
    "live_entries",
    "open_seat_offers",
    "record_game",
    "register_remote_bot",
    "resolve_data_dir",
    "set_status",
    "start_live_game",
    "take_seat_offer",
    "tournament_byes",
    "tournament_crosstable",
    "tournament_standings",
]
