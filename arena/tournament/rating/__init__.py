"""Ratings (TrueSkill) and standings from finished games given as plain values.

Pure: imports nothing of ``arena`` but the game and the other pure layers (``pairing``,
``statistics``); never the store, the referee, the sandbox, the server or the web."""
