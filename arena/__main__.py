"""``python3 -m arena``: the CLI; a Ctrl-C while its modules load or while it exits ends
it with one line (``arena._loading``), never a traceback."""

from arena._loading import quit_while_loading

quit_while_loading()

from arena.cli import run  # noqa: E402  (after the handler: the import is what it covers)

run()
