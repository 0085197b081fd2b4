"""What the API and the pages show of tournaments and the ladder: tables, the ladder's
view, and the spectator delay every public view shares.

The top of the package: may import every layer of it."""
