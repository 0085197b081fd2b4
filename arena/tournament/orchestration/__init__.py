"""Running tournaments and the ladder: rounds and games handed to an executor, their
records stored as they finish.

May import every layer of the package below it (``execution``, ``policy`` and the pure
layers); never ``view``."""
