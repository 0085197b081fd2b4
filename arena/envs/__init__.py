"""The game in reinforcement-learning toolkits: ``kahuna_v0``, a PettingZoo AEC environment.

Imports PettingZoo, gymnasium and numpy (the ``rl`` extra); nothing in the arena
imports this package, so the referee, the store and the bots never need them.
"""
