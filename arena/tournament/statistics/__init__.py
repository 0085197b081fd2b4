"""Statistics of results: pentanomial and trinomial models, SPRT, intervals, test length.

Pure: imports nothing of ``arena`` but the game and the other pure layers (``pairing``,
``rating``); never the store, the referee, the sandbox, the server or the web."""
