"""Sixes, the Spanish shedding game: everything the arena knows of it, in one folder."""
