"""Tests of the arena as a user runs it: the ``arena`` command, a server, Docker, a browser, a cluster."""
