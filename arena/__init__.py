"""Kahuna Arena: rules engine, referee and tournament server for Kahuna bots.

Importing the package (or any part of it) sets nothing up: gRPC's environment
is the entry points' to set (``arena._grpc_env``).
"""

__version__ = "0.1.0"


def caused_by_ctrl_c(error: BaseException) -> bool:
    """Whether a Ctrl-C caused ``error``: as itself, or wrapped by the import machinery
    (Python 3.11 raises a RuntimeError for one that lands while a class is made,
    ``__set_name__``). Here, with no import, so that ``python3 -m arena`` can ask before
    any of its modules has loaded: the package is imported before its ``__main__``."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False
