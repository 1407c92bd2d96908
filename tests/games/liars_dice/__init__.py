"""Liar's dice, a game kept in the tests and registered from outside (``ARENA_GAMES``):
sequential turns, private dice, a variable number of decisions a round, a score in
chips. It plays through every command as the built-in games do."""
