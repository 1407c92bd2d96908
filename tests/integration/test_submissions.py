"""The submission tables over a real SQLite file: authors and their tokens (kept only as
hashes), who owns a bot name, the pipeline's states, fairness between authors, the rate
limit and browser sessions."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.store import Store
from arena.store.submissions import (
    ACTIVE,
    BUILDING,
    CHECKING,
    RECEIVED,
    REJECTED,
    RETIRED,
    SubmissionError,
    Submissions,
    token_hash,
)

from ..conftest import SAMPLES

DIGEST = "a" * 64


@pytest.fixture
def subs(tmp_path: Path) -> Iterator[Submissions]:
    with Store(tmp_path / "arena.db") as store:
        yield Submissions(store)


def refused(status: int, call: object, *args: object) -> str:
    with pytest.raises(SubmissionError) as caught:
        call(*args)  # type: ignore[operator]
    assert caught.value.status == status, caught.value.message
    return caught.value.message


def test_a_token_is_kept_only_as_its_hash(subs: Submissions, tmp_path: Path) -> None:
    author, token = subs.add_author("ada")
    assert token.startswith("sa_") and len(token) > 40
    assert subs.author_for(token) == author
    with sqlite3.connect(tmp_path / "arena.db") as connection:
        dump = "\n".join(connection.iterdump())
    assert token not in dump and token_hash(token) in dump


def test_no_token_a_wrong_one_or_a_revoked_one_is_401(subs: Submissions) -> None:
    _, token = subs.add_author("ada")
    for wrong in ("", token[:-1], token + "x", "sa_" + "A" * 43):
        refused(401, subs.author_for, wrong)
    cookie, _ = subs.open_session(subs.author("ada"))
    assert subs.session(cookie) is not None
    subs.revoke("ada")
    refused(401, subs.author_for, token)
    assert subs.session(cookie) is None, "revoking ends the author's browser sessions"


def test_author_names_are_checked_and_unique(subs: Submissions) -> None:
    subs.add_author("ada")
    refused(409, subs.add_author, "ada")
    refused(400, subs.add_author, "Ada Lovelace")
    refused(404, subs.revoke, "nobody")


def test_a_bot_name_belongs_to_whoever_submitted_it_first(subs: Submissions) -> None:
    ada, _ = subs.add_author("ada")
    bob, _ = subs.add_author("bob")
    first = subs.submit(ada, "nimble", "1.0", DIGEST, b"tar")
    assert (first.state, first.author, first.ref, first.size) == (RECEIVED, "ada", "nimble:1.0", 3)
    assert subs.owner("nimble") == ada.id
    assert "belongs to another author" in refused(403, subs.submit, bob, "nimble", "2.0", DIGEST, b"tar")
    assert subs.submit(ada, "nimble", "2.0", "b" * 64, b"tar2").version == "2.0"


def test_a_version_is_submitted_once(subs: Submissions) -> None:
    ada, _ = subs.add_author("ada")
    subs.submit(ada, "nimble", "1.0", DIGEST, b"tar")
    assert "raise `version`" in refused(409, subs.submit, ada, "nimble", "1.0", "b" * 64, b"other")
    same = refused(409, subs.submit, ada, "nimble", "1.0", DIGEST, b"tar")
    assert "with this same code: nothing to send again" in same and "raise `version` in bot.toml" in same


def test_a_rejected_version_may_be_submitted_again(subs: Submissions) -> None:
    ada, _ = subs.add_author("ada")
    first = subs.submit(ada, "nimble", "1.0", DIGEST, b"tar")
    subs.set_state(first.id, REJECTED, {"error": "it crashed"})
    again = subs.submit(ada, "nimble", "1.0", "b" * 64, b"fixed")
    assert again.id != first.id and subs.get(first.id).report == {"error": "it crashed"}  # type: ignore[union-attr]


def test_an_author_may_submit_so_many_an_hour(subs: Submissions) -> None:
    ada, _ = subs.add_author("ada")
    bob, _ = subs.add_author("bob")
    for n in range(3):
        subs.submit(ada, "nimble", f"1.{n}", f"{n}" * 64, b"tar", per_hour=3)
    assert "at most 3" in refused(429, subs.submit, ada, "nimble", "1.9", "9" * 64, b"tar", 3)
    subs.submit(bob, "other", "1.0", DIGEST, b"tar", per_hour=3)  # another author is not held up


def test_one_submission_of_each_author_is_built_at_a_time(subs: Submissions) -> None:
    ada, _ = subs.add_author("ada")
    bob, _ = subs.add_author("bob")
    a1, a2, a3 = (subs.submit(ada, "nimble", f"1.{n}", f"{n}" * 64, b"t") for n in range(3))
    b1 = subs.submit(bob, "other", "1.0", DIGEST, b"t")
    assert [s.id for s in subs.next_to_build()] == [a1.id, b1.id]
    subs.set_state(a1.id, BUILDING)
    assert [s.id for s in subs.next_to_build()] == [b1.id], "ada waits for her build; bob does not"
    subs.set_state(b1.id, CHECKING)
    assert subs.next_to_build() == []
    subs.set_state(a1.id, REJECTED, {"error": "x"})
    assert [s.id for s in subs.next_to_build()] == [a2.id]
    assert [s.id for s in subs.recover()] == [b1.id] and subs.get(b1.id).state == RECEIVED  # type: ignore[union-attr]
    assert [s.id for s in subs.next_to_build()] == [a2.id, b1.id]
    assert a3.state == RECEIVED


def test_a_new_active_version_retires_the_old_one(subs: Submissions) -> None:
    ada, _ = subs.add_author("ada")
    old = subs.submit(ada, "nimble", "1.0", DIGEST, b"t")
    new = subs.submit(ada, "nimble", "1.1", "b" * 64, b"t")
    other = subs.submit(ada, "other", "1.0", "c" * 64, b"t")
    one, two, three = (subs.store.add_bot(SAMPLES / name).id for name in ("heuristic", "random", "lowest"))
    subs.activate(old.id, one, {"checks": []})
    subs.activate(other.id, three, {"checks": []})
    assert [s.ref for s in subs.active()] == ["nimble:1.0", "other:1.0"]
    subs.activate(new.id, two, {"checks": [{"name": "hello", "ok": True}]})
    assert [s.ref for s in subs.active()] == ["nimble:1.1", "other:1.0"]
    assert subs.get(old.id).state == RETIRED  # type: ignore[union-attr]
    assert subs.get(new.id).report == {"checks": [{"name": "hello", "ok": True}]}  # type: ignore[union-attr]
    assert subs.get(new.id).bot_id == two and subs.get(new.id).state == ACTIVE  # type: ignore[union-attr]


def test_a_session_ends_when_it_expires_or_is_closed(subs: Submissions) -> None:
    ada, _ = subs.add_author("ada")
    cookie, csrf = subs.open_session(ada)
    assert subs.session(cookie) == (ada, csrf)
    assert subs.session(cookie[:-1]) is None and subs.session("") is None
    subs.close_session(cookie)
    assert subs.session(cookie) is None
    expired, _ = subs.open_session(ada, seconds=-1)
    assert subs.session(expired) is None


def test_an_organisers_bot_name_cannot_be_claimed(subs: Submissions) -> None:
    ada, _ = subs.add_author("ada")
    subs.store.add_bot(SAMPLES / "random")  # `arena bot add`: the organiser's
    assert "organiser's bots" in refused(403, subs.submit, ada, "random", "9.0", DIGEST, b"tar")
    assert subs.owner("random") is None
