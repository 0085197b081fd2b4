"""Tournaments: schedules, Swiss pairing, standings and ratings (pure), and the runner."""
