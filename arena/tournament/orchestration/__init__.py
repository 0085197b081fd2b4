"""Running tournaments and the ladder: rounds and games handed to an executor, their
records stored as they finish. ``base.RunnerBase`` is what both runners share (the
constructor, the lease, stopping, the guarded run); each keeps its own loop.

May import every other layer of the package (``execution``, ``policy`` and the pure
layers) but ``view``."""
