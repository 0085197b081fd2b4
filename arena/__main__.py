"""``python3 -m arena``: the CLI; a Ctrl-C while its modules load or while it exits ends
it with one line (``arena._loading``), never a traceback."""

try:
    from arena._loading import quit_while_loading

    quit_while_loading()
except BaseException as error:  # a Ctrl-C before that handler was set: as itself or wrapped
    import os

    cause: BaseException | None = error  # the import machinery may wrap it (__set_name__)
    while cause is not None and not isinstance(cause, KeyboardInterrupt):
        cause = cause.__cause__ or cause.__context__
    if cause is None:
        raise
    os.write(2, b"arena: interrupted\n")
    os._exit(130)

from arena.cli import run  # after the handler: the import is what it covers

run()
