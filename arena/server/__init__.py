"""gRPC services: the referee for bots (``referee_service``), the arena API for people."""
