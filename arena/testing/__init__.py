"""Helpers for the tests, the benchmarks and the README screenshots; never the product.

Hand-built positions (``positions``), engine-played demo tournaments
(``demo_data``), chromium for the browser tests and screenshots (``browser``,
``screenshots``) and decoders of what the referee sends (``protocol``). No
module outside ``arena/testing/`` imports this package
(tests/test_architecture_doc.py checks it), and the wheel leaves it out.
"""
