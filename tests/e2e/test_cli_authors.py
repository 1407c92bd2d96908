"""``arena author`` over a real database and ``arena submit`` as a user runs it: against
a recording HTTP server (what it sends, how it reads every answer) and a real
``arena serve --submissions`` (what it refuses before sending, with the server's words)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from arena.bots.bundle import pack
from arena.bots.uploads import receive_upload
from arena.store import Store
from arena.store.submissions import SubmissionError, Submissions, token_hash

from ..conftest import SAMPLES, serving
from .test_web_submissions import bot_folder, post

ARENA = str(Path(sys.executable).parent / "arena")


def arena(*args: str, token: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command, with ``ARENA_TOKEN`` set to ``token`` (or unset)."""
    environment = {k: v for k, v in os.environ.items() if k != "ARENA_TOKEN"} | {"COLUMNS": "200"} | (env or {})
    if token is not None:
        environment["ARENA_TOKEN"] = token
    return subprocess.run([ARENA, *args], capture_output=True, text=True, env=environment, timeout=120)


def one_line_error(run: subprocess.CompletedProcess[str], code: int = 1) -> str:
    """The one line of a refusal: exit 2 for the user's mistake, 1 for the server's refusal."""
    assert run.returncode == code, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    return run.stderr


# --- arena author -------------------------------------------------------------------------


def test_author_add_prints_the_token_once_and_stores_only_its_hash(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    added = arena("author", "add", "ada", "--db", str(db))
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip().splitlines()[-1]
    assert len(token) >= 32 and added.stdout.count(token) == 1 and token not in added.stderr
    assert "shown only this once" in added.stdout
    assert "ARENA_TOKEN" in added.stderr and "--token-file" in added.stderr
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("arena.db"))
    assert token.encode() not in stored
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT token_hash FROM authors WHERE name = 'ada'").fetchone() == (
            token_hash(token),
        )
    with Store(db) as store:
        assert Submissions(store).author_for(token).name == "ada"
    listed = arena("author", "list", "--db", str(db))
    assert listed.returncode == 0 and token not in listed.stdout + listed.stderr


def test_author_list_shows_bots_owned_and_submissions_and_revoke_stops_the_token(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with Store(db) as store:
        subs = Submissions(store)
        ada, token = subs.add_author("ada")
        subs.add_author("bob")
        digest, archive = pack(SAMPLES / "random")
        subs.submit(ada, "random", "1.0.0", digest, archive, 10)
    listed = arena("author", "list", "--db", str(db))
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[1]: line for line in listed.stdout.splitlines() if line.split()[1:2] in (["ada"], ["bob"])}
    assert "random" in rows["ada"] and rows["ada"].split()[-2] == "1" and "random" not in rows["bob"]
    revoked = arena("author", "revoke", "ada", "--db", str(db))
    assert revoked.returncode == 0 and "revoked ada" in revoked.stdout, revoked.stderr
    with Store(db) as store:
        with pytest.raises(SubmissionError) as caught:
            Submissions(store).author_for(token)
        assert caught.value.status == 401
    after = arena("author", "list", "--db", str(db))
    ada_row = next(line for line in after.stdout.splitlines() if " ada " in line)
    assert ada_row.count(ada.created[:10]) == 2, ada_row  # created and revoked: today both


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("author", "add", "ada"), "ada"),  # taken
        (("author", "add", "Not A Name"), "Not A Name"),
        (("author", "revoke", "nobody"), "nobody"),
    ],
)
def test_author_mistakes_are_one_line(tmp_path: Path, args: tuple[str, ...], words: str) -> None:
    db = tmp_path / "arena.db"
    assert arena("author", "add", "ada", "--db", str(db)).returncode == 0
    before = sqlite3.connect(db).execute("SELECT count(*), max(revoked) FROM authors").fetchone()
    assert words in one_line_error(arena(*args, "--db", str(db)), 2)
    assert sqlite3.connect(db).execute("SELECT count(*), max(revoked) FROM authors").fetchone() == before


def test_author_list_of_a_missing_database_is_one_line(tmp_path: Path) -> None:
    assert "nowhere.db" in one_line_error(arena("author", "list", "--db", str(tmp_path / "nowhere.db")), 2)
    assert not (tmp_path / "nowhere.db").exists()


# --- arena submit against a recording server ------------------------------------------------


class Recorder(BaseHTTPRequestHandler):
    """Records each request and answers from ``server.answers`` (status, JSON) in turn."""

    server: Any

    def do_POST(self) -> None:
        self._answer(self.rfile.read(int(self.headers["Content-Length"])))

    def do_GET(self) -> None:
        self._answer(b"")

    def _answer(self, body: bytes) -> None:
        self.server.requests.append((self.command, self.path, dict(self.headers), body))
        status, answer = self.server.answers.pop(0)
        payload = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def loopback_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[Any]:
    """A threaded HTTP server on a free loopback port (``url``), recording its ``requests``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.requests, server.answers = [], []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def recorder() -> Iterator[Any]:
    yield from loopback_server(Recorder)


TOKEN = "sa_" + "k" * 40
RECEIVED = {"id": 7, "name": "random", "version": "1.0.0", "state": "received", "url": "/submissions/7"}


def test_submit_sends_the_packed_folder_with_the_token_in_a_header_only(recorder: Any, tmp_path: Path) -> None:
    recorder.answers.append((201, RECEIVED))
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    done = arena("submit", str(SAMPLES / "random"), "--server", recorder.url + "/", "--token-file", str(token_file))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"submitted random:1.0.0 as submission 7 (received): {recorder.url}/submissions/7"
    [(method, path, headers, body)] = recorder.requests
    assert (method, path) == ("POST", "/api/submissions")
    assert headers["Authorization"] == f"Bearer {TOKEN}" and headers["Content-Type"] == "application/gzip"
    work = tmp_path / "work"
    work.mkdir()
    with receive_upload(body, work) as received:
        assert gzip.decompress(received.read()) == pack(SAMPLES / "random")[1]
    assert TOKEN not in done.stdout + done.stderr


def test_submit_wait_follows_the_state_and_shows_the_failures(recorder: Any) -> None:
    failed = {"name": "answers in time", "ok": False, "skipped": False, "detail": "no answer within 2 s"}
    report = {"build": "", "checks": [{"name": "starts", "ok": True, "skipped": False}, failed], "error": ""}
    recorder.answers += [
        (201, RECEIVED),
        (200, {**RECEIVED, "state": "checking"}),
        (200, {**RECEIVED, "state": "rejected", "report": report}),
    ]
    done = arena("submit", str(SAMPLES / "random"), "--server", recorder.url, "--wait", token=TOKEN)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[1:] == ["checking", "rejected", " FAIL  answers in time  no answer within 2 s"]
    assert [(m, p, h["Authorization"]) for m, p, h, _ in recorder.requests[1:]] == [
        ("GET", "/api/submissions/7", f"Bearer {TOKEN}")
    ] * 2
    recorder.answers += [(201, RECEIVED), (200, {**RECEIVED, "state": "active", "report": {"checks": []}})]
    active = arena("submit", str(SAMPLES / "random"), "--server", recorder.url, "--wait", token=TOKEN)
    assert active.returncode == 0 and active.stdout.splitlines()[1:] == ["active"], active.stdout + active.stderr


@pytest.mark.parametrize(
    ("status", "answer", "words"),
    [
        (401, {"error": "no such token, or it was revoked"}, "(401): no such token"),
        (403, {"error": "the bot name random belongs to another author"}, "(403): the bot name random"),
        (409, {"error": "random:1.0.0 was already submitted"}, "(409): random:1.0.0"),
        (413, {"error": "the upload is 3.0 MiB: at most 1.0 MiB packed"}, "(413): the upload is 3.0 MiB"),
        (429, {"error": "10 submissions in the last hour"}, "(429): 10 submissions"),
        (400, {"error": "the upload: member 'x' has an absolute name"}, "(400): the upload: member"),
        (502, b"<html>Bad Gateway</html>", "(502): Bad Gateway"),
        (200, b"<html>not an arena</html>", "not JSON"),
    ],
)
def test_submit_shows_the_servers_answer_in_one_line(recorder: Any, status: int, answer: Any, words: str) -> None:
    recorder.answers.append((status, answer))
    refused = arena("submit", str(SAMPLES / "random"), "--server", recorder.url, token=TOKEN)
    assert words in one_line_error(refused) and TOKEN not in refused.stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("args", "token", "words", "code"),
    [
        ((), None, "no token: set ARENA_TOKEN or give --token-file", 2),
        (("--token-file", "/nonexistent/token"), None, "--token-file /nonexistent/token", 2),
        ((), "two words", "spaces or control characters", 2),
        (("--server", "ftp://example.org"), TOKEN, "http(s)://HOST[:PORT]", 2),
    ],
)
def test_submit_mistakes_before_sending_are_one_line(
    recorder: Any, args: tuple[str, ...], token: str | None, words: str, code: int
) -> None:
    run = arena("submit", str(SAMPLES / "random"), "--server", recorder.url, *args, token=token)
    assert words in one_line_error(run, code)
    assert recorder.requests == []


def test_submit_to_an_unreachable_server_is_one_line() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    run = arena("submit", str(SAMPLES / "random"), "--server", url, token=TOKEN)
    assert f"cannot reach {url}/" in one_line_error(run) and "refused" in run.stderr.lower()


# --- arena submit against a real server --------------------------------------------------


@pytest.fixture
def door(tmp_path: Path) -> Iterator[tuple[str, Path, str]]:
    """A real ``arena serve --submissions`` taking 1 MiB at most, and ada's token."""
    db = tmp_path / "arena.db"
    with Store(db) as store:
        token = Submissions(store).add_author("ada")[1]
    with serving(db, extra=("--submissions", "--max-upload-mb", "1")) as url:
        yield url, db, token


def submissions(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        return int(connection.execute("SELECT count(*) FROM submissions").fetchone()[0])


def test_what_the_server_would_refuse_is_refused_before_sending_with_its_words(door: Any, tmp_path: Path) -> None:
    url, db, token = door
    linked = bot_folder(tmp_path, "linked")
    (linked / "alias.py").symlink_to("bot.py")
    unnamed = bot_folder(tmp_path, "unnamed")
    (unnamed / "bot.toml").write_text("name = 'Bad Name'\n")
    for folder in (linked, unnamed):
        raw = subprocess.run(["tar", "czf", "-", "-C", str(folder), "."], capture_output=True, check=True).stdout
        status, answer = post(url, token, raw)
        assert status == 400
        local = one_line_error(arena("submit", str(folder), "--server", url, token=token), 2)
        assert answer["error"] in local, (answer["error"], local)
    missing = arena("submit", str(tmp_path / "nothing"), "--server", url, token=token)
    assert "nothing" in one_line_error(missing, 2)
    assert submissions(db) == 0


def test_a_submission_past_the_servers_cap_is_413(door: Any, tmp_path: Path) -> None:
    url, db, token = door
    big = bot_folder(tmp_path, "big")
    (big / "weights.bin").write_bytes(os.urandom(3 * 2**20))
    refused = arena("submit", str(big), "--server", url, token=token)
    assert "(413): the upload is 3.0 MiB: at most 1.0 MiB packed" in one_line_error(refused)
    assert submissions(db) == 0
    shutil.rmtree(big)
    done = arena("submit", str(bot_folder(tmp_path, "big")), "--server", url, token=token)
    assert done.returncode == 0 and f"{url}/submissions/1" in done.stdout, done.stderr
    assert submissions(db) == 1


class Slammer(BaseHTTPRequestHandler):
    """A door that refuses an upload by its declared size and resets the connection at
    once, the rest of the body unread: the refusal a client still writing never reads."""

    server: Any

    def do_POST(self) -> None:
        self.server.requests.append(int(self.headers["Content-Length"]))
        body = json.dumps({"error": "the upload is too big here"}).encode()
        self.send_response(413)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        self.close_connection = True

    def log_message(self, *args: Any) -> None:
        pass


def test_a_refusal_lost_with_a_reset_connection_is_asked_again_by_its_size(tmp_path: Path) -> None:
    """The server's 413 and a reset arrive while ``arena submit`` still writes: it asks
    again with the size alone (no body) and shows the server's own words, not "Broken pipe"."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Slammer)
    server.requests = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        big = bot_folder(tmp_path, "huge")
        (big / "weights.bin").write_bytes(os.urandom(12 * 2**20))  # far more than a socket buffers
        refused = arena("submit", str(big), "--server", f"http://127.0.0.1:{server.server_port}", token="t0ken")
    finally:
        server.shutdown()
        server.server_close()
    line = one_line_error(refused)
    assert "refused it (413): the upload is too big here" in line, line
    assert "Broken pipe" not in line and "reset" not in line
    assert len(server.requests) == 2 and server.requests[0] == server.requests[1] > 12 * 2**20  # type: ignore[attr-defined]


# --- arena submit never sends the token elsewhere ------------------------------------------


class Redirector(BaseHTTPRequestHandler):
    """Answers every request with ``server.status`` to ``server.location``, recording it."""

    server: Any

    def do_POST(self) -> None:
        self.server.requests.append((self.command, self.path, dict(self.headers)))
        self.send_response(self.server.status)
        self.send_header("Location", self.server.location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def redirector() -> Iterator[Any]:
    yield from loopback_server(Redirector)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_submit_never_sends_the_token_to_where_a_redirect_points(redirector: Any, recorder: Any, status: int) -> None:
    """A server answering with a redirect to another origin (another port of loopback,
    recording every header it gets) never sees the token, nor any request at all."""
    redirector.status, redirector.location = status, recorder.url + "/api/submissions"
    recorder.answers.append((202, RECEIVED))
    run = arena("submit", str(SAMPLES / "random"), "--server", redirector.url, token=TOKEN)
    line = one_line_error(run)
    assert f"answered {status}, a redirect to {recorder.url}/api/submissions: not followed" in line
    assert [(m, p, h["Authorization"]) for m, p, h in redirector.requests] == [
        ("POST", "/api/submissions", f"Bearer {TOKEN}")
    ]
    assert recorder.requests == [], "the other origin saw nothing, the token least of all"
    assert TOKEN not in run.stdout + run.stderr


def test_submit_does_not_follow_a_redirect_to_its_own_origin_either(redirector: Any) -> None:
    redirector.status, redirector.location = 302, "/elsewhere"
    run = arena("submit", str(SAMPLES / "random"), "--server", redirector.url, token=TOKEN)
    assert "a redirect to /elsewhere: not followed" in one_line_error(run)
    assert [p for _, p, _ in redirector.requests] == ["/api/submissions"]


@pytest.mark.parametrize(
    ("status", "answer", "words"),
    [
        (500, b"<html><body>Internal Server Error\n<pre>Traceback...</pre></body></html>", "(500): Internal Server"),
        (202, b"[1, 2, 3]", "not JSON of the API"),
        (202, b'"received"', "not JSON of the API"),
        (202, b'{"id": "seven", "name": "random"}', "answered without a submission"),
        (202, b'{"error": "nothing"}', "answered without a submission"),
        (202, b"\xff\xfe not even text", "not JSON of the API"),
    ],
)
def test_submit_reads_an_unexpected_answer_as_one_line(recorder: Any, status: int, answer: bytes, words: str) -> None:
    recorder.answers.append((status, answer))
    run = arena("submit", str(SAMPLES / "random"), "--server", recorder.url, token=TOKEN)
    assert words in one_line_error(run), run.stderr


def test_submit_wait_survives_a_strange_report(recorder: Any) -> None:
    recorder.answers += [(202, RECEIVED), (200, {**RECEIVED, "state": "rejected", "report": ["not", "a", "dict"]})]
    run = arena("submit", str(SAMPLES / "random"), "--server", recorder.url, "--wait", token=TOKEN)
    assert run.returncode == 1 and "Traceback" not in run.stderr and run.stdout.splitlines()[1:] == ["rejected"]


def test_submit_to_a_server_that_hangs_up_is_one_line() -> None:
    """A server that closes the connection without answering."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()

        def hang_up() -> None:
            connection, _ = listener.accept()
            connection.recv(1024)
            connection.close()

        thread = threading.Thread(target=hang_up, daemon=True)
        thread.start()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        run = arena("submit", str(SAMPLES / "random"), "--server", url, token=TOKEN)
        thread.join(10)
    line = one_line_error(run)
    assert url in line and TOKEN not in line


# --- an author who lost access, and a whole class at once ----------------------------------


def test_reissue_gives_a_revoked_author_a_new_token_over_http_and_keeps_their_bot_names(tmp_path: Path) -> None:
    """Bob, revoked, gets a new token: over the real server the old one is refused, the new
    one submits a new version of the bot name bob owns; nobody else may take that name."""
    db = tmp_path / "arena.db"
    added = arena("author", "add", "bob", "--db", str(db))
    old = added.stdout.strip().splitlines()[-1]
    assert arena("author", "add", "eve", "--db", str(db)).returncode == 0
    eve = arena("author", "add", "mallory", "--db", str(db)).stdout.strip().splitlines()[-1]
    with serving(db, extra=("--submissions",)) as url:
        first = arena("submit", str(bot_folder(tmp_path, "bobbot", "1.0")), "--server", url, token=old)
        assert first.returncode == 0, first.stderr
        assert arena("author", "revoke", "bob", "--db", str(db)).returncode == 0
        assert arena("author", "add", "bob", "--db", str(db)).returncode == 2  # the dead end there was
        reissued = arena("author", "reissue", "bob", "--db", str(db))
        assert reissued.returncode == 0, reissued.stderr
        new = reissued.stdout.strip().splitlines()[-1]
        assert new != old and new.startswith("sa_") and reissued.stdout.count(new) == 1
        assert "shown only this once" in reissued.stdout
        status, _ = post(url, old, b"x", {"Arena-Bot": "bobbot:2.0"})
        assert status in (401, 403)
        refused = arena("submit", str(bot_folder(tmp_path / "o", "bobbot", "2.0")), "--server", url, token=old)
        assert "(401)" in one_line_error(refused)
        again = arena("submit", str(bot_folder(tmp_path / "n", "bobbot", "2.0")), "--server", url, token=new)
        assert again.returncode == 0 and "bobbot:2.0" in again.stdout, again.stderr
        taken = arena("submit", str(bot_folder(tmp_path / "m", "bobbot", "3.0")), "--server", url, token=eve)
        assert "(403)" in one_line_error(taken)
    listed = arena("author", "list", "--db", str(db))
    bob = next(line for line in listed.stdout.splitlines() if " bob " in line)
    assert "bobbot" in bob and bob.split()[-2] == "2", bob
    eve_row = next(line for line in listed.stdout.splitlines() if " eve " in line)
    assert " - " in eve_row, "no empty bots cell"
    assert "nobody" in one_line_error(arena("author", "reissue", "nobody", "--db", str(db)), 2)


def test_a_class_is_added_from_a_file_with_its_tokens_written_once_to_a_private_file(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    names = tmp_path / "class.txt"
    names.write_text("# spring term\nada\n\nbob  # late\ncyd\n")
    out = tmp_path / "tokens.txt"
    added = arena("author", "add", "--from", str(names), "--tokens", str(out), "--db", str(db))
    assert added.returncode == 0, added.stderr
    assert os.stat(out).st_mode & 0o777 == 0o600
    pairs = dict(line.split() for line in out.read_text().splitlines())
    assert list(pairs) == ["ada", "bob", "cyd"]
    for token in pairs.values():
        assert token not in added.stdout + added.stderr, "the tokens are written to the file only"
    with Store(db) as store:
        assert {Submissions(store).author_for(t).name for t in pairs.values()} == {"ada", "bob", "cyd"}
    out.write_text("kept")
    again = arena("author", "add", "--from", str(names), "--tokens", str(out), "--db", str(db))
    assert "already exists" in one_line_error(again, 2) and out.read_text() == "kept"
    # All or none: one taken name adds nobody, and leaves no tokens' file.
    names.write_text("dee\nada\n")
    fresh = tmp_path / "fresh.txt"
    taken = arena("author", "add", "--from", str(names), "--tokens", str(fresh), "--db", str(db))
    assert "'ada' exists" in one_line_error(taken, 2) and not fresh.exists()
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT count(*) FROM authors WHERE name = 'dee'").fetchone() == (0,)
    linked = tmp_path / "linked.txt"
    linked.symlink_to(tmp_path / "elsewhere.txt")
    through = arena("author", "add", "--from", str(names), "--tokens", str(linked), "--db", str(db))
    assert "already exists" in one_line_error(through, 2) and not (tmp_path / "elsewhere.txt").exists()
    half = arena("author", "add", "--from", str(names), "--db", str(db))
    assert "--tokens" in one_line_error(half, 2)
