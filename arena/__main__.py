"""``python3 -m arena``: the CLI; a Ctrl-C while its modules load or while it exits ends
it with one line (``arena._loading``), never a traceback."""

try:
    from arena._loading import quit_while_loading

    quit_while_loading()
except BaseException as error:  # a Ctrl-C before that handler was set: as itself or wrapped
    import os

    from arena import caused_by_ctrl_c  # loaded already: the package came before this module

    if not caused_by_ctrl_c(error):
        raise
    os.write(2, b"arena: interrupted\n")
    os._exit(130)

from arena.cli import run  # after the handler: the import is what it covers

run()
