"""Playing matches: the executor interface, the local process pool, Ray (tasks, token
authentication, node slots, the bot bundle cache), CPU placement and the live feed.

May import the referee, the sandbox, the store, ``policy`` and the pure layers; never
``orchestration`` or ``view``."""
