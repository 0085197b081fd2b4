"""Tournaments and the ladder, in layers that import one way (tests/test_layers.py).

In the order of docs/design/ARCHITECTURE.md's picture: ``rating``, ``statistics`` and
``pairing`` are pure (no store, no processes); ``policy`` reads and writes the store
(defaults and ranges, rounds, results, audits); ``execution`` plays matches (executors,
Ray, the node cache); ``orchestration`` runs tournaments and the ladder on an executor;
``view`` is what the API and the pages show. A layer imports only layers listed before
it."""
