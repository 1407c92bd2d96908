"""The ``arena`` command: one module per command group."""
