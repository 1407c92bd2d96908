"""Tests of one layer: no bot process, no Docker, no server; the quick loop (``pytest tests/unit``)."""
