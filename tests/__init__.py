"""The test suite as one package: its modules are ``tests.kahuna.test_rules`` and so on.

Without it pytest names them by their directory alone (``kahuna.test_rules``),
and the moment any test imports the Python SDK, which registers the arena's
generated protocol code as the top-level package ``kahuna``, every
``tests/kahuna/`` module collected after it fails to import.
"""
