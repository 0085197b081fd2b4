"""Who plays whom: round-robin schedules, Swiss pairing, the ladder's pick of its next game.

Pure: imports nothing of ``arena`` but the game and the other pure layers (``rating``,
``statistics``); never the store, the referee, the sandbox, the server or the web."""
