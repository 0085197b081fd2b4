"""gRPC services and their wiring: the arena API for people, the remote-bot gateway."""
