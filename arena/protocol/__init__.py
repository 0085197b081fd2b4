"""The one place that turns game objects into protobuf messages and back.

The generated code lives in ``arena.protocol.gen`` (``scripts/gen-proto``);
the conversions in ``arena.protocol.convert``.
"""
