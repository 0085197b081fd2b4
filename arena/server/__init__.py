"""gRPC services: the arena API for people (the referee for bots is arena.referee.endpoint)."""
