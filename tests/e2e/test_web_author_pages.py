"""An author's pages against a real `arena serve --submissions` over a real SQLite file,
and in real Chromium: signing in with the token, the session cookie, CSRF on every form,
uploading through the form, a submission's page (its steps, report, stderr and faults)
for its author only, and the token never shown."""

from __future__ import annotations

import gzip
import html
import http.client
import io
import json
import re
import sqlite3
import tarfile
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.bots.uploads import pack_upload
from arena.play import replay
from arena.store import FinishedGame, SeatResult, Store
from arena.store.submissions import Submissions
from arena.web.pages.authors import cookie_header, same_secret, steps

from ..conftest import SAMPLES, serving
from .test_web_submissions import bot_folder, get, rows


class Answer:
    def __init__(self, status: int, headers: list[tuple[str, str]], body: str) -> None:
        self.status, self.headers, self.body = status, headers, body

    def header(self, name: str) -> str:
        return next((v for k, v in self.headers if k.lower() == name), "")

    def cookies(self) -> dict[str, str]:
        """Each Set-Cookie, by cookie name, as sent."""
        return {v.split("=", 1)[0]: v for k, v in self.headers if k.lower() == "set-cookie"}

    def field(self, name: str) -> str:
        found = re.search(rf'name="{name}" value="([^"]*)"', self.body)
        assert found, self.body
        return html.unescape(found.group(1))


class Browser:
    """Raw HTTP with a cookie jar of its own: every Set-Cookie is read as sent."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.host, self.port = parts.hostname or "", parts.port or 80
        self.jar: dict[str, str] = {}
        self.seen: list[str] = []

    def ask(self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None) -> Answer:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
        sent = dict(headers or {})
        if self.jar:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.jar.items())
        try:
            cut = False
            try:
                connection.request(method, path, body, sent)
            except (BrokenPipeError, ConnectionResetError):
                cut = True  # refused before the body was all read: its answer may still be there
            try:
                response = connection.getresponse()
                answer = Answer(response.status, response.getheaders(), response.read().decode())
            except (ConnectionResetError, http.client.RemoteDisconnected):
                if not cut or body is None:
                    raise
                answer = self.declared(method, path, len(body), sent)  # the reset took the answer along
        finally:
            connection.close()
        for name, value in answer.cookies().items():
            content = value.split(";", 1)[0].split("=", 1)[1]
            if "Max-Age=0" in value:
                self.jar.pop(name, None)
            else:
                self.jar[name] = content
        self.seen.append(answer.body + json.dumps(answer.headers))
        return answer

    def declared(self, method: str, path: str, size: int, headers: dict[str, str]) -> Answer:
        """The answer to a request declaring a body of ``size`` bytes and sending none: what
        the server refuses from the declared size alone, its answer read before any write
        can break."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            connection.putrequest(method, path, skip_accept_encoding=True)
            sent = {**headers, "Content-Length": str(size)}
            if self.jar:
                sent.setdefault("Cookie", "; ".join(f"{k}={v}" for k, v in self.jar.items()))
            for name, value in sent.items():
                connection.putheader(name, value)
            connection.endheaders()
            response = connection.getresponse()
            return Answer(response.status, response.getheaders(), response.read().decode())
        finally:
            connection.close()

    def form(self, path: str, fields: dict[str, str]) -> Answer:
        body = urllib.parse.urlencode(fields).encode()
        return self.ask("POST", path, body, {"Content-Type": "application/x-www-form-urlencoded"})

    def upload(self, data: bytes, csrf: str | None) -> Answer:
        boundary = "arena-test-boundary-7f3a"
        parts = []
        if csrf is not None:
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{csrf}\r\n'.encode())
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="bot"; filename="bot.tar.gz"\r\n'
            "Content-Type: application/gzip\r\n\r\n".encode()
            + data
            + b"\r\n"
        )
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        return self.ask("POST", "/submissions", body, {"Content-Type": f"multipart/form-data; boundary={boundary}"})

    def sign_in(self, token: str) -> Answer:
        csrf = self.ask("GET", "/signin").field("csrf")
        return self.form("/signin", {"csrf": csrf, "token": token})


def sessions(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        return int(connection.execute("SELECT count(*) FROM sessions").fetchone()[0])


OPTIONS = ("--submissions", "--max-upload-mb", "1")


def authors(db: Path) -> dict[str, str]:
    """The tokens of ada, bob and eve (revoked)."""
    with Store(db) as store:
        subs = Submissions(store)
        tokens = {name: subs.add_author(name)[1] for name in ("ada", "bob", "eve")}
        subs.revoke("eve")
    return tokens


@pytest.fixture
def door(tmp_path: Path) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """A server taking submissions (uploads up to 1 MiB), its database and the authors' tokens."""
    db = tmp_path / "arena.db"
    tokens = authors(db)
    with serving(db, extra=OPTIONS) as url:
        yield url, db, tokens


def test_signing_in_sets_a_private_session_cookie_and_never_shows_the_token(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    tokens = authors(db)
    output: list[str] = []
    with serving(db, extra=OPTIONS, output=output) as url:
        said = signing_in(url, db, tokens)
    assert "serving" in output[0], "the server's whole output is here"
    for token in tokens.values():
        assert token not in said and token not in output[0]


def signing_in(url: str, db: Path, tokens: dict[str, str]) -> str:
    """Sign in (rightly and wrongly), submit, look: every page and header seen."""
    ada = Browser(url)
    form = ada.ask("GET", "/signin")
    assert form.status == 200 and 'type="password"' in form.body and "Sign in" in form.body
    pair = form.cookies()["arena_signin"]
    assert "HttpOnly" in pair and "SameSite=Strict" in pair and "Path=/" in pair
    signed = ada.form("/signin", {"csrf": form.field("csrf"), "token": tokens["ada"]})
    assert signed.status == 303 and signed.header("location") == "/submissions"
    cookie = signed.cookies()["arena_session"]
    for flag in ("HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=604800"):
        assert flag in cookie, cookie
    assert "Secure" not in cookie, "plain http: a Secure cookie would never come back"
    assert tokens["ada"] not in cookie and "private" in signed.header("cache-control")
    mine = ada.ask("GET", "/submissions")
    assert mine.status == 200 and "Submissions of ada" in mine.body and "Sign out" in mine.body
    assert mine.header("cache-control") == "private, no-store", "a page with a CSRF token is kept by no cache"
    home = ada.ask("GET", "/")
    assert 'class="author-name">ada<' in home.body and "Sign out" in home.body
    assert sessions(db) == 1
    wrong = Browser(url).sign_in(tokens["ada"] + "x")
    assert wrong.status == 401 and "no valid token" in wrong.body and "arena_session" not in wrong.cookies()
    revoked = Browser(url).sign_in(tokens["eve"])
    assert revoked.status == 401 and "arena_session" not in revoked.cookies()
    assert sessions(db) == 1
    made = ada.upload(pack_upload(bot_folder(db.parent, "nimble")), ada.ask("GET", "/submissions").field("csrf"))
    assert made.status == 303, made.body
    assert ada.ask("GET", "/submissions/1").status == 200
    said = "".join(ada.seen) + wrong.body + revoked.body
    assert "nimble:1.0" in said
    return said


def test_the_sign_in_form_without_its_own_csrf_pair_is_403(door: Any) -> None:
    url, db, tokens = door
    stranger = Browser(url)
    refused = stranger.form("/signin", {"csrf": "forged", "token": tokens["ada"]})
    assert refused.status == 403 and "another site" in refused.body
    other = Browser(url)
    other.ask("GET", "/signin")
    assert other.form("/signin", {"csrf": "forged", "token": tokens["ada"]}).status == 403
    assert sessions(db) == 0 and "arena_session" not in other.jar


def test_every_form_without_the_sessions_csrf_token_is_403_and_writes_nothing(door: Any, tmp_path: Path) -> None:
    url, db, tokens = door
    ada = Browser(url)
    assert ada.sign_in(tokens["ada"]).status == 303
    csrf = ada.ask("GET", "/submissions").field("csrf")
    bot = pack_upload(bot_folder(tmp_path, "nimble"))
    assert ada.upload(bot, None).status == 403
    assert ada.upload(bot, "x" + csrf).status == 403
    bob = Browser(url)
    bob.sign_in(tokens["bob"])
    assert ada.upload(bot, bob.ask("GET", "/submissions").field("csrf")).status == 403, "bob's token is not ada's"
    assert rows(db) == (0, 0) and sessions(db) == 2
    assert ada.form("/signout", {}).status == 403
    assert ada.form("/signout", {"csrf": "wrong"}).status == 403
    assert ada.ask("GET", "/submissions").status == 200, "still signed in"
    old_cookie = ada.jar["arena_session"]
    out = ada.form("/signout", {"csrf": csrf})
    assert out.status == 303 and "Max-Age=0" in out.cookies()["arena_session"]
    assert sessions(db) == 1
    ada.jar["arena_session"] = old_cookie  # kept by a copy: the session ended on the server
    assert ada.ask("GET", "/submissions").header("location") == "/signin"
    nobody = Browser(url)
    assert nobody.upload(bot, csrf).status == 403, "no session: refused whatever the field"
    assert nobody.ask("GET", "/submissions").status == 303
    assert rows(db) == (0, 0)


def test_an_upload_through_the_form_lands_on_its_page(door: Any, tmp_path: Path) -> None:
    url, db, tokens = door
    ada = Browser(url)
    ada.sign_in(tokens["ada"])
    csrf = ada.ask("GET", "/submissions").field("csrf")
    made = ada.upload(pack_upload(bot_folder(tmp_path, "nimble")), csrf)
    assert made.status == 303 and made.header("location") == "/submissions/1"
    page = ada.ask("GET", "/submissions/1")
    assert page.status == 200 and "nimble:1.0" in page.body
    assert re.search(r'<li class="todo">built</li>', page.body) and '<li class="done">received</li>' in page.body
    listed = ada.ask("GET", "/submissions")
    assert 'href="/submissions/1"' in listed.body and "received" in listed.body
    assert rows(db) == (1, 1)
    again = ada.upload(pack_upload(bot_folder(tmp_path / "again", "nimble")), csrf)
    assert again.status == 409 and "already submitted" in again.body and 'type="file"' in again.body


def test_a_hostile_or_oversized_upload_through_the_form_is_refused_with_one_line(door: Any) -> None:
    url, db, tokens = door
    ada = Browser(url)
    ada.sign_in(tokens["ada"])
    csrf = ada.ask("GET", "/submissions").field("csrf")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("/etc/cron.d/evil")
        info.size = 1
        archive.addfile(info, io.BytesIO(b"x"))
    hostile = ada.upload(gzip.compress(buffer.getvalue()), csrf)
    assert hostile.status == 400
    error = re.search(r'<p class="form-error" role="alert">([^<]*)</p>', hostile.body)
    assert error and "absolute" in error.group(1), hostile.body
    big = ada.upload(b"\0" * (2 * 2**20), csrf)
    assert big.status == 413 and "at most 1.0 MiB" in big.body
    told = ada.declared("POST", "/submissions", 2 * 2**20, {"Content-Type": "multipart/form-data; boundary=b"})
    assert told.status == 413 and "at most 1.0 MiB" in told.body, "refused from its declared size, none of it read"
    assert ada.upload(b"", csrf).status == 400
    boundary = "b0undary"
    two = "".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="bot"; filename="{n}.tar.gz"\r\n\r\nx\r\n' for n in "ab"
    )
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    many = ada.ask("POST", "/submissions", f"{two}--{boundary}--\r\n".encode(), headers)
    assert many.status == 400 and "Too many files" in many.body
    field = f'--{boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{"x" * 10_000}\r\n--{boundary}--\r\n'
    assert ada.ask("POST", "/submissions", field.encode(), headers).status == 400
    assert ada.ask("POST", "/submissions", b"bot=x", {"Content-Type": "text/plain"}).status == 400
    assert ada.form("/signin", {"token": "x" * 20_000}).status == 413
    assert rows(db) == (0, 0)
    assert list(db.with_name("arena-uploads").iterdir()) == []


def test_another_authors_submission_page_is_404_as_a_missing_one(door: Any, tmp_path: Path) -> None:
    url, _, tokens = door
    ada, bob = Browser(url), Browser(url)
    ada.sign_in(tokens["ada"])
    ada.upload(pack_upload(bot_folder(tmp_path, "nimble")), ada.ask("GET", "/submissions").field("csrf"))
    bob.sign_in(tokens["bob"])
    theirs, missing = bob.ask("GET", "/submissions/1"), bob.ask("GET", "/submissions/2")
    assert theirs.status == missing.status == 404
    assert "nimble" not in theirs.body and "no submission &#39;1&#39; of yours" in theirs.body, theirs.body
    assert ada.ask("GET", "/submissions/1").status == 200
    assert Browser(url).ask("GET", "/submissions/1").header("location") == "/signin"


def store_ladder_game(db: Path, submission_id: int, folder: Path) -> None:
    """The submission on the ladder, with one stored game where it timed out."""
    with Store(db) as store:
        bot, other = store.add_bot(folder), store.add_bot(SAMPLES / "heuristic")
        Submissions(store).activate(submission_id, bot.id, {"build": "built ok", "checks": [], "error": ""})
        t = store.create_tournament("ladder", "nimmt", "standard", {}, 1, {})
        fault = replay.Fault("timeout", "no answer to request 7 within 1000 ms", None, "deep in search\n")
        seats = [replay.SeatInfo(b.name, b.version, "process") for b in (bot, other)]
        header = replay.Header(1, "nimmt", {}, 1, 2, seats, {"move_ms": 1000})
        end = replay.End(
            [5, 1], [2, 1], [replay.SeatStatus("faulty", [fault]), replay.SeatStatus("ok")], ["my secret log\n", ""]
        )
        data = replay.dumps([header, replay.FaultLine(0, fault), end])
        results = [SeatResult(bot.id, 2, 5, "faulty", {"timeout": 1}), SeatResult(other.id, 1, 1, "ok", {})]
        store.save_game(
            FinishedGame(t.id, 0, 0, 0, 1, "nimmt", "standard", 1, 1.0, "2026-01-01T00:00:00+00:00", results, data)
        )


def test_its_author_sees_the_bots_stderr_and_faults_once_it_is_on_the_ladder(door: Any, tmp_path: Path) -> None:
    url, db, tokens = door
    folder = bot_folder(tmp_path, "nimble")
    ada = Browser(url)
    ada.sign_in(tokens["ada"])
    ada.upload(pack_upload(folder), ada.ask("GET", "/submissions").field("csrf"))
    status, before = get(url, "/api/submissions/1", tokens["ada"])
    assert status == 200 and before["stderr"] == [] and before["faults"] == []
    store_ladder_game(db, 1, folder)
    status, one = get(url, "/api/submissions/1", tokens["ada"])
    assert status == 200 and one["state"] == "active" and one["report"]["build"] == "built ok"
    assert [(s["seat"], s["stderr_tail"]) for s in one["stderr"]] == [(0, "my secret log")]
    assert [(f["kind"], f["count"], f["latest"]["stderr_tail"]) for f in one["faults"]] == [
        ("timeout", 1, "deep in search")
    ]
    page = ada.ask("GET", "/submissions/1")
    assert "my secret log" in page.body and "deep in search" in page.body and "Faults on the ladder" in page.body
    # Where it stands now: its rating and rank on its board, as the leaderboard has them.
    status, board = get(url, "/api/leaderboard?board=nimmt/standard", tokens["ada"])
    row = next(r for r in board["boards"][0]["rows"] if r["bot"] == "nimble:1.0")
    rating = f"&lt; {row['high']:.0f}" if row["bound"] == "<" else f"{row['elo']:.0f}"
    assert "where it stands now" in page.body and 'class="standing"' in page.body, page.body
    assert f'6 nimmt! standard</a>: Elo <strong class="standing-rating">{rating}</strong>' in page.body, page.body
    assert f"rank <strong>{row['rank']}</strong> of 2" in page.body
    assert all(s in page.body for s in ('class="done">received', 'class="done">checked', 'class="done">active'))
    assert get(url, "/api/submissions/1", tokens["bob"])[0] == 404


def test_a_rejected_submission_shows_each_failed_check_with_its_evidence(door: Any, tmp_path: Path) -> None:
    url, db, tokens = door
    ada = Browser(url)
    ada.sign_in(tokens["ada"])
    ada.upload(pack_upload(bot_folder(tmp_path, "nimble")), ada.ask("GET", "/submissions").field("csrf"))
    failed = {"name": "answers a take", "ok": False, "skipped": False, "detail": "card 104 is not in your hand"}
    evidence = {"sent": '{"type":"take"}', "got": '{"card":104}', "expected": "a card of the hand", "fix": "read hand"}
    report = {
        "build": "step 1/1",
        "checks": [{"name": "hello", "ok": True, "skipped": False}, {**failed, **evidence, "stderr": "oops <b>"}],
        "error": "1 check failed: answers a take",
    }
    with Store(db) as store:
        Submissions(store).set_state(1, "rejected", report)
    page = ada.ask("GET", "/submissions/1")
    assert page.status == 200 and '<li class="failed">rejected</li>' in page.body
    assert "FAILED</strong> answers a take: card 104 is not in your hand" in page.body
    for text in (*evidence.values(), "oops <b>", "1 check failed"):
        assert html.escape(text, quote=False).replace('"', "&#34;") in page.body, text
    assert "oops <b>" not in page.body, "a bot's output is escaped"
    assert get(url, "/api/submissions/1", tokens["ada"])[1]["report"] == report


def test_without_the_flag_the_author_pages_do_not_exist(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with Store(db) as store:
        token = Submissions(store).add_author("ada")[1]
    with sqlite3.connect(db) as connection:
        before = "\n".join(connection.iterdump())
    with serving(db) as url:
        visitor = Browser(url)
        assert visitor.ask("GET", "/signin").status == 404
        assert visitor.form("/signin", {"token": token}).status in (404, 405)
        assert visitor.form("/signout", {}).status in (404, 405)
        assert visitor.ask("GET", "/submissions").status == 404
        assert visitor.ask("GET", "/submissions/1").status == 404
        assert visitor.upload(b"x", "x").status in (404, 405)
        home = visitor.ask("GET", "/")
        assert "Sign in" not in home.body and "read-only view" in home.body
    with sqlite3.connect(db) as connection:
        assert "\n".join(connection.iterdump()) == before


@pytest.mark.browser
def test_sign_in_upload_and_sign_out_in_chromium(browser: Any, door: Any, tmp_path: Path) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    url, db, tokens = door
    packed = tmp_path / "swift.tar.gz"
    packed.write_bytes(pack_upload(bot_folder(tmp_path, "swift", "2.5")))
    browser.delete_all_cookies()
    browser.get(url + "/")
    browser.find_element(By.LINK_TEXT, "Sign in").click()
    browser.find_element(By.ID, "token").send_keys(tokens["ada"])
    browser.find_element(By.CSS_SELECTOR, "form.author-form button").click()
    WebDriverWait(browser, 60).until(lambda b: b.current_url.endswith("/submissions"))
    assert tokens["ada"] not in browser.current_url
    assert "ada" in browser.find_element(By.CSS_SELECTOR, ".site-header .account").text
    assert browser.get_cookie("arena_session")["httpOnly"] is True
    assert browser.get_cookie("arena_session")["sameSite"] == "Strict"
    assert browser.execute_script("return document.cookie") == "", "no script reads the session"
    browser.find_element(By.ID, "bot").send_keys(str(packed))
    browser.find_element(By.CSS_SELECTOR, "form.author-form button").click()
    WebDriverWait(browser, 60).until(lambda b: re.search(r"/submissions/\d+$", b.current_url))
    assert browser.find_element(By.TAG_NAME, "h1").text.startswith("swift:2.5")
    assert browser.find_element(By.CSS_SELECTOR, "ol.steps li.done").text == "received"
    assert "received" in browser.find_element(By.CSS_SELECTOR, "strong.state").text
    assert tokens["ada"] not in browser.page_source
    with Store(db, read_only=True) as store:
        stored = Submissions(store).get(int(browser.current_url.rsplit("/", 1)[1]))
        assert stored is not None and (stored.ref, stored.author, stored.state) == ("swift:2.5", "ada", "received")
    browser.find_element(By.CSS_SELECTOR, "form.signout button").click()
    signed_out = WebDriverWait(browser, 60, ignored_exceptions=[StaleElementReferenceException])  # the page reloads
    signed_out.until(lambda b: "Sign in" in b.find_element(By.CSS_SELECTOR, ".site-header").text)
    assert browser.get_cookie("arena_session") is None and sessions(db) == 0
    browser.get(url + "/submissions")
    assert browser.current_url.endswith("/signin")


def test_the_steps_of_a_submission() -> None:
    def shown(state: str, report: dict[str, Any] | None = None) -> list[tuple[str, str]]:
        return [(s["label"], s["status"]) for s in steps(state, report or {})]

    assert shown("received") == [("received", "done"), ("built", "todo"), ("checked", "todo"), ("active", "todo")]
    assert shown("building")[1] == ("built", "current")
    assert shown("checking")[:3] == [("received", "done"), ("built", "done"), ("checked", "current")]
    assert shown("active") == [(s, "done") for s in ("received", "built", "checked", "active")]
    assert shown("rejected", {"error": "build failed"}) == [("received", "done"), ("rejected", "failed")]
    assert shown("rejected", {"checks": [{"name": "hello", "ok": False}]}) == [
        ("received", "done"),
        ("built", "done"),
        ("rejected", "failed"),
    ]


def test_csrf_tokens_and_cookies() -> None:
    assert same_secret("abc", "abc") and not same_secret("abc", "abd")
    assert not same_secret("", "") and not same_secret("abc", None) and not same_secret("abc", ["abc"])
    assert cookie_header("s", "v", 60, secure=True) == "s=v; Max-Age=60; Path=/; HttpOnly; SameSite=Strict; Secure"
    assert "Secure" not in cookie_header("s", "v", 60, secure=False)
