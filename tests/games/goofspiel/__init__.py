"""Goofspiel, a third game kept entirely in this folder: its rules (``rules``), wire
types (``wire``), catalog record (``record``) and a bot (``bot/``). Tests register it
with ``ARENA_GAMES=tests.games.goofspiel.record:GOOFSPIEL``; nothing outside this
folder names it, which is what it proves."""
