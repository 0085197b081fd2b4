"""What the API and the pages show of tournaments and the ladder: tables, the ladder's
view, and the spectator delay every public view shares.

The last layer of the package: may import every other layer of it."""
