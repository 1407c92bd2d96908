"""Where deals come from: a secret committed before play and revealed after it.

A tournament's deals derive from a secret of 256 random bits that no bot, spectator or
author can learn while its games can still be played: only its commitment (the SHA-256
of the secret's hex text) is shown while the tournament runs, and the secret itself once
it has finished, so that anyone can recompute every deal and check that the arena did
not choose them (docs/protocol.md, "Deals: committed, then revealed"). A deal's seed is
``schedule.deal_seed(secret, table, deal)``.

A ladder never ends, so its secret is a hash chain revealed an epoch at a time: epoch
``e`` (``reveal_every`` tables) deals from ``epoch_key(secret, e)``, the secret hashed
``LADDER_EPOCHS - e`` times; the commitment is ``epoch_key(secret, 0)`` hashed once
more. Once every table of epoch ``e`` has been played, its key is published: hashing it
``e + 1`` times gives the commitment, hashing it ``e - i`` times gives epoch ``i``'s
key, and nothing gives a later epoch's.

An organiser's own ``--seed`` keeps a tournament reproducible, and its deals derive from
that seed: they are *known* (a bot that guesses the seed, 4242 say, can derive every
hand), and the commands that take it say so.
"""

from __future__ import annotations

import hashlib
import secrets

SECRET_BYTES = 32

KNOWN_SEED_WARNING = (
    "--seed {seed} makes the deals known: a bot that guesses the seed can derive every hand"
    " of every game; leave --seed out for deals from a secret, committed now and revealed when it ends"
)


def new_secret() -> str:
    """A fresh secret for a tournament's deals, as hex text."""
    return secrets.token_hex(SECRET_BYTES)


def commitment(secret: str) -> str:
    """What is published while the secret deals its games: SHA-256 of its hex text."""
    return hashlib.sha256(secret.encode()).hexdigest()


LADDER_EPOCHS = 100_000
"""Epochs in a ladder's chain: at 100 tables an epoch, ten million tables."""


def hashed(key: str, times: int) -> str:
    """``key`` through ``commitment`` ``times`` times."""
    for _ in range(times):
        key = commitment(key)
    return key


def epoch_key(secret: str, epoch: int) -> str:
    """What a ladder's tables of ``epoch`` deal from (module docstring)."""
    if not 0 <= epoch < LADDER_EPOCHS:
        raise ValueError(f"a ladder has {LADDER_EPOCHS} epochs of deals; start a new ladder")
    return hashed(secret, LADDER_EPOCHS - epoch)


def ladder_commitment(secret: str) -> str:
    """A ladder's commitment: the key of its first epoch, hashed once more."""
    return commitment(epoch_key(secret, 0))


def public(
    seed: int, commitment: str | None, revealed: str | None, epochs: tuple[int, int, str | None] | None = None
) -> dict[str, object]:
    """What anyone may know of a tournament's deals (its page, its JSON, ``tournament
    show``): the commitment while it runs, the secret once it has finished; or, for an
    organiser's seed, that the deals are known. A ladder's ``epochs``: tables an epoch,
    epochs revealed, and the key of the last one revealed."""
    if commitment is None:
        return {"from": "seed", "seed": seed, "known": True}
    if epochs is not None:
        every, done, key = epochs
        return {"from": "secret", "commitment": commitment, "tables_an_epoch": every, "epochs_revealed": done,
                "last_revealed_key": key, "known": False}  # fmt: skip
    return {"from": "secret", "commitment": commitment, "secret": revealed, "known": revealed is not None}


def describe(
    seed: int, commitment: str | None, revealed: str | None, epochs: tuple[int, int, str | None] | None = None
) -> str:
    """``public`` in words, for a terminal."""
    if commitment is not None and epochs is not None:
        every, done, key = epochs
        said = f"from a hash chain committed as sha256 {commitment}, {every} tables an epoch"
        return said + (f"; epochs 0-{done - 1} revealed, the last by the key {key}" if done else "; none revealed yet")
    if commitment is None:
        return f"from seed {seed}, chosen by the organiser: known to whoever knows the seed"
    if revealed is None:
        return f"from a secret, committed as sha256 {commitment}; revealed when the tournament ends"
    return f"from the secret {revealed} (sha256 {commitment}, as committed)"
