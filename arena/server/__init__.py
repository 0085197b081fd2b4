"""gRPC services: the arena API for people (the referee for bots: ``arena.referee.endpoint``)."""
