"""The Six Arena bot protocol: message types, per-game views and events, and the Python SDK.

Imports nothing from ``arena``, so bot authors can ship it alone.
"""
