"""Kahuna Arena: rules engine, referee and tournament server for Kahuna bots."""

__version__ = "0.1.0"
