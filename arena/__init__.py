"""Kahuna Arena: rules engine, referee and tournament server for Kahuna bots."""

from arena import _grpc_env as _grpc_env  # before anything imports grpc

__version__ = "0.1.0"
