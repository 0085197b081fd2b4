"""``python3 -m arena``: the CLI; a Ctrl-C while its modules load ends it with one line
(``arena._loading``), never an import traceback."""

import sys

from arena._loading import quit_while_loading

quit_while_loading()

from arena.cli import main  # noqa: E402  (after the handler: the import is what it covers)

sys.exit(main())
