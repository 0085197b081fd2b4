"""gRPC services: the referee for bots (now ``arena.referee.endpoint``), the API for people."""
