"""The test suite is an entry point too: gRPC's environment as in arena processes.

Tests run referees in this process (``run_match``), as ``arena match`` does
in its own: tune gRPC before any test module imports it (``arena._grpc_env``).
"""

from arena._grpc_env import tune_this_process

tune_this_process()
