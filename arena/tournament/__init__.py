"""Tournaments: schedules, Swiss pairing, standings, ratings and statistics (pure); the policy
(``config``: defaults, ranges, seeds; ``rounds``; ``results``) and the runner with its executors
(``runner``, ``executor``, ``local_executor``). The store writes what this layer gives it."""
