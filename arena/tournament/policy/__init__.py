"""Tournament policy over the store: configuration (defaults, ranges, seeds), rounds,
results, SPRT and gauntlet formats, audits and the collusion report.

May import the store, the referee's types and seeds, and the pure layers; never
``execution``, ``orchestration`` or ``view``."""
