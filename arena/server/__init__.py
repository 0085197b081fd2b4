"""gRPC services: the referee for bots (now ``arena.referee.endpoint``), the arena API for people."""
