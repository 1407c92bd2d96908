"""Tests of real resources in the test process: bot processes through the sandbox, pipes,
SQLite; and the few computations of one layer that take seconds (statistics over
simulated games, every recorded game replayed, archives of hundreds of MiB)."""
