"""The site's pages as typed models, one module per page group: ``boards`` (the home page
and the leaderboards), ``tournaments`` (and gauntlets), ``games``, ``bots``, ``ladders``;
``site`` holds what they share (the database, its caches, the boards as served). The JSON
API encodes a page's model as it is; the templates read the same fields."""
