"""The arena on the web: the server, its pages and the replay viewer."""
