"""Imported first by the benchmarks (their entry point): gRPC's environment as in arena processes.

``arena.cli.main`` does the same for `arena ...`; see ``arena._grpc_env``.
"""

from arena._grpc_env import tune_this_process

tune_this_process()
