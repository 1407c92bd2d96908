"""The 6 nimmt! game: everything the arena knows of it, in one folder."""
