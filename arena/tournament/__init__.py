"""Tournaments and the ladder, in layers that import one way (tests/test_layers.py).

Bottom to top: ``pairing``, ``rating`` and ``statistics`` are pure (no store, no
processes); ``policy`` reads and writes the store (defaults and ranges, rounds, results,
audits); ``execution`` plays matches (executors, Ray, the node cache); ``orchestration``
runs tournaments and the ladder on an executor; ``view`` is what the API and the pages
show. A layer imports only the layers below it."""
