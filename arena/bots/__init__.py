"""Checks a bot passes before it is stored: its archive (``archive``) and a smoke match (``smoke``).

Used by `arena bot add` and the arena API's SubmitBot and UploadBot alike; neither gRPC nor
the CLI lives here.
"""
