"""Leaderboards from stored results: loading, tables, JSON and CSV."""
