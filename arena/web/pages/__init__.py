"""The site's pages as typed models, one module per page group: ``boards`` (the home page
and the leaderboards), ``tournaments`` (and ``gauntlets``' tests), ``games``, ``bots``,
``ladders`` and ``authors`` (an author's own pages, with ``--submissions``); ``site``
holds what they share (the database, its caches, the boards as served). The JSON API
encodes a page's model as it is; the templates read the same fields."""
