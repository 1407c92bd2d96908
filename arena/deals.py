"""Where deals come from: a secret committed before play and revealed after it.

A tournament's deals derive from a secret of 256 random bits that no bot, spectator or
author can learn while its games can still be played: only its commitment (the SHA-256
of the secret's hex text) is shown while the tournament runs, and the secret itself once
it has finished, so that anyone can recompute every deal and check that the arena did
not choose them (docs/protocol.md, "Deals: committed, then revealed"). A deal's seed is
``schedule.deal_seed(secret, table, deal)``.

An organiser's own ``--seed`` keeps a tournament reproducible, and its deals derive from
that seed: they are *known* (a bot that guesses the seed, 4242 say, can derive every
hand), and the commands that take it say so.
"""

from __future__ import annotations

import hashlib
import secrets

SECRET_BYTES = 32

KNOWN_SEED_WARNING = (
    "warning: --seed {seed} makes the deals known: a bot that guesses the seed can derive every hand"
    " of every game; leave --seed out for deals from a secret, committed now and revealed when it ends"
)


def new_secret() -> str:
    """A fresh secret for a tournament's deals, as hex text."""
    return secrets.token_hex(SECRET_BYTES)


def commitment(secret: str) -> str:
    """What is published while the secret deals its games: SHA-256 of its hex text."""
    return hashlib.sha256(secret.encode()).hexdigest()


def deal_key(seed: int, secret: str | None) -> str:
    """What a tournament's deal seeds derive from: its secret, else its (known) seed."""
    return secret if secret is not None else str(seed)


def public(seed: int, commitment: str | None, revealed: str | None) -> dict[str, object]:
    """What anyone may know of a tournament's deals (its page, its JSON, ``tournament
    show``): the commitment while it runs, the secret once it has finished; or, for an
    organiser's seed, that the deals are known."""
    if commitment is None:
        return {"from": "seed", "seed": seed, "known": True}
    return {"from": "secret", "commitment": commitment, "secret": revealed, "known": revealed is not None}


def describe(seed: int, commitment: str | None, revealed: str | None) -> str:
    """``public`` in words, for a terminal."""
    if commitment is None:
        return f"from seed {seed}, chosen by the organiser: known to whoever knows the seed"
    if revealed is None:
        return f"from a secret, committed as sha256 {commitment}; revealed when the tournament ends"
    return f"from the secret {revealed} (sha256 {commitment}, as committed)"
