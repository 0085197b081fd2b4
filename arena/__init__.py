"""Kahuna Arena: rules engine, referee and tournament server for Kahuna bots.

Importing the package (or any part of it) sets nothing up: gRPC's environment
is the entry points' to set (``arena._grpc_env``).
"""

__version__ = "0.1.0"
