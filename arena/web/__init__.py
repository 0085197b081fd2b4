"""The web interface: leaderboard, tournaments, bots and the replay viewer.

``create_web_server(store_or_data_dir, host, port) -> (server, port)`` is all
``arena serve`` needs: it starts a ``ThreadingHTTPServer`` in a background
thread (port 0 picks a free port) and ``server.stop()`` ends it.
"""

from arena.web.server import WebLimits, WebServer, create_web_server

__all__ = ["WebLimits", "WebServer", "create_web_server"]
