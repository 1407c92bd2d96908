"""The server's write door against a real `arena serve --submissions` over a real SQLite
file: who may submit what, the caps, the rate limit, nothing written when refused, the
token never shown, and `arena submit` speaking to it."""

from __future__ import annotations

import gzip
import http.client
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.bots.uploads import pack_upload
from arena.store import Store
from arena.store.submissions import Submissions

from ..conftest import SAMPLES, serving

ARENA = str(Path(sys.executable).parent / "arena")


def bot_folder(base: Path, name: str, version: str = "1.0") -> Path:
    """The random sample bot under another name and version."""
    folder = base / f"{name}-{version}"
    shutil.copytree(SAMPLES / "random", folder)
    manifest = (folder / "bot.toml").read_text().replace('name = "random"', f'name = "{name}"')
    (folder / "bot.toml").write_text(manifest.replace('version = "1.0.0"', f'version = "{version}"'))
    return folder


def post(url: str, token: str | None, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """POST /api/submissions: the status and the JSON answer."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    sent = {"Content-Type": "application/gzip", **(headers or {})}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    try:
        connection.request("POST", "/api/submissions", body, sent)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def get(url: str, path: str, token: str | None) -> tuple[int, Any]:
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        connection.request("GET", path, headers={"Authorization": f"Bearer {token}"} if token else {})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def rows(db: Path) -> tuple[int, int]:
    """Submissions and bot owners stored."""
    with sqlite3.connect(db) as connection:
        return tuple(
            connection.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("submissions", "bot_owners")
        )  # type: ignore[return-value]


@pytest.fixture
def door(tmp_path: Path) -> Iterator[tuple[str, Path, dict[str, str], list[str]]]:
    """A server taking submissions (2 an hour an author), its database, two authors'
    tokens (ada, bob) and a revoked one (eve), and its output once stopped."""
    db = tmp_path / "arena.db"
    with Store(db) as store:
        subs = Submissions(store)
        tokens = {name: subs.add_author(name)[1] for name in ("ada", "bob", "eve")}
        subs.revoke("eve")
    output: list[str] = []
    with serving(
        db, extra=("--submissions", "--submissions-per-hour", "2", "--max-upload-mb", "1"), output=output
    ) as url:
        yield url, db, tokens, output
    assert output, "the server's output was read"


def test_an_author_submits_and_follows_their_submission(door: Any, tmp_path: Path) -> None:
    url, db, tokens, _ = door
    status, answer = post(url, tokens["ada"], pack_upload(bot_folder(tmp_path, "nimble")))
    assert status == 202, answer
    assert (answer["bot"], answer["state"], answer["url"]) == ("nimble:1.0", "received", f"/submissions/{answer['id']}")
    status, listed = get(url, "/api/submissions", tokens["ada"])
    assert status == 200 and [s["id"] for s in listed["submissions"]] == [answer["id"]]
    status, one = get(url, f"/api/submissions/{answer['id']}", tokens["ada"])
    assert status == 200 and one["state"] == "received" and one["report"] == {}
    status, other = get(url, f"/api/submissions/{answer['id']}", tokens["bob"])
    assert status == 404, "another author's submission is not confirmed to exist"
    with Store(db, read_only=True) as store:
        stored = Submissions(store).get(answer["id"])
        assert stored is not None and stored.author == "ada" and Submissions(store).owner("nimble") is not None


@pytest.mark.parametrize("token", [None, "", "sa_wrong", "Basic abc"])
def test_no_token_or_a_wrong_one_is_401_and_writes_nothing(door: Any, tmp_path: Path, token: str | None) -> None:
    url, db, _, _ = door
    status, answer = post(url, token, pack_upload(bot_folder(tmp_path, "nimble")))
    assert status == 401 and "token" in answer["error"]
    assert rows(db) == (0, 0)
    assert get(url, "/api/submissions", token)[0] == 401


def test_a_revoked_token_is_401(door: Any, tmp_path: Path) -> None:
    url, db, tokens, _ = door
    assert post(url, tokens["eve"], pack_upload(bot_folder(tmp_path, "nimble")))[0] == 401
    assert rows(db) == (0, 0)


def test_another_authors_bot_name_is_403(door: Any, tmp_path: Path) -> None:
    url, db, tokens, _ = door
    assert post(url, tokens["ada"], pack_upload(bot_folder(tmp_path, "nimble")))[0] == 202
    status, answer = post(url, tokens["bob"], pack_upload(bot_folder(tmp_path, "nimble", "2.0")))
    assert status == 403 and "belongs to another author" in answer["error"]
    assert rows(db) == (1, 1)


def test_a_version_taken_is_409(door: Any, tmp_path: Path) -> None:
    url, db, tokens, _ = door
    folder = bot_folder(tmp_path, "nimble")
    assert post(url, tokens["ada"], pack_upload(folder))[0] == 202
    (folder / "bot.py").write_text((folder / "bot.py").read_text() + "\n# changed\n")
    status, answer = post(url, tokens["ada"], pack_upload(folder))
    assert status == 409 and "raise `version`" in answer["error"]
    assert rows(db) == (1, 1)


def test_the_rate_limit_is_429(door: Any, tmp_path: Path) -> None:
    url, db, tokens, _ = door
    for version in ("1.0", "1.1"):
        assert post(url, tokens["ada"], pack_upload(bot_folder(tmp_path, "nimble", version)))[0] == 202
    status, answer = post(url, tokens["ada"], pack_upload(bot_folder(tmp_path, "nimble", "1.2")))
    assert status == 429 and "at most 2" in answer["error"]
    assert post(url, tokens["bob"], pack_upload(bot_folder(tmp_path, "other")))[0] == 202, "bob is not held up"
    assert rows(db) == (3, 2)


def test_an_upload_past_the_cap_is_413_by_its_length_or_as_it_grows(door: Any) -> None:
    url, db, tokens, _ = door
    # A length past the cap is refused before the body is read (the body here is short:
    # the server must not wait for the rest, nor the client be cut off mid-send).
    status, answer = post(url, tokens["ada"], b"x" * 100, {"Content-Length": str(1024 * 1024 + 1)})
    assert status == 413 and "at most 1.0 MiB" in answer["error"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: chunked, past the cap
        for _ in range(40):
            yield os.urandom(64 * 1024)

    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        headers = {"Authorization": f"Bearer {tokens['ada']}", "Content-Type": "application/gzip"}
        connection.request("POST", "/api/submissions", chunks(), headers, encode_chunked=True)
        response = connection.getresponse()
        assert response.status == 413, response.read()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server stopped reading: refused before the end
    finally:
        connection.close()
    assert rows(db) == (0, 0)


def test_a_hostile_archive_is_400_and_leaves_nothing(door: Any) -> None:
    url, db, tokens, _ = door
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("../../escape")
        info.size = 1
        archive.addfile(info, io.BytesIO(b"x"))
    status, answer = post(url, tokens["ada"], gzip.compress(buffer.getvalue()))
    assert status == 400 and "'..'" in answer["error"]
    assert rows(db) == (0, 0)
    assert os.listdir(db.with_name("arena-uploads")) == [], "nothing left where uploads are unpacked"
    assert not (db.parent.parent / "escape").exists()


def test_the_token_is_never_shown(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with Store(db) as store:
        subs = Submissions(store)
        token, revoked = subs.add_author("ada")[1], subs.add_author("eve")[1]
        subs.revoke("eve")
    output: list[str] = []
    with serving(db, extra=("--submissions",), output=output) as url:
        bodies = [
            post(url, token, pack_upload(bot_folder(tmp_path, "nimble")))[1],
            post(url, token, b"not gzip")[1],
            post(url, revoked, b"x")[1],
            post(url, token + "x", b"x")[1],
            *(get(url, path, token)[1] for path in ("/api/submissions", "/api/submissions/1", "/api/health")),
        ]
    assert bodies[0]["state"] == "received" and "gzip" in bodies[1]["error"]
    said = json.dumps(bodies) + "".join(output)
    assert "serving" in said, "the server's whole output is here"
    assert token not in said and revoked not in said


def test_without_the_flag_nothing_can_be_written(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with Store(db) as store:
        token = Submissions(store).add_author("ada")[1]
    with sqlite3.connect(db) as connection:
        before = "\n".join(connection.iterdump())
    with serving(db) as url:
        status, _ = post(url, token, pack_upload(bot_folder(tmp_path, "nimble")))
        assert status in (404, 405)
        assert get(url, "/api/submissions", token)[0] == 404
    with sqlite3.connect(db) as connection:
        assert "\n".join(connection.iterdump()) == before


def test_arena_submit_speaks_to_the_server(door: Any, tmp_path: Path) -> None:
    url, db, tokens, _ = door
    folder = bot_folder(tmp_path, "nimble")

    def submit(*args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "ARENA_TOKEN"}
        if token is not None:
            env["ARENA_TOKEN"] = token
        return subprocess.run([ARENA, "submit", *args], capture_output=True, text=True, env=env, timeout=120)

    done = submit(str(folder), "--server", url, token=tokens["ada"])
    assert done.returncode == 0, done.stderr
    assert "submitted nimble:1.0 as submission 1 (received)" in done.stdout and f"{url}/submissions/1" in done.stdout
    again = submit(str(folder), "--server", url, token=tokens["ada"])
    assert again.returncode == 1 and "(409)" in again.stderr and "already submitted" in again.stderr
    stranger = submit(str(bot_folder(tmp_path, "nimble", "2.0")), "--server", url, token=tokens["bob"])
    assert stranger.returncode == 1 and "(403)" in stranger.stderr
    token_file = tmp_path / "token"
    token_file.write_text("sa_wrong\n")
    wrong = submit(str(folder), "--server", url, "--token-file", str(token_file))
    assert wrong.returncode == 1 and "(401)" in wrong.stderr
    missing = submit(str(folder), "--server", url)
    assert missing.returncode == 2 and "ARENA_TOKEN" in missing.stderr
    nowhere = submit(str(folder), "--server", "http://127.0.0.1:9", token=tokens["ada"])
    assert nowhere.returncode == 1 and "cannot reach" in nowhere.stderr
    no_bot = submit(str(tmp_path / "nothing"), "--server", url, token=tokens["ada"])
    assert no_bot.returncode != 0 and "Traceback" not in no_bot.stderr
    for run in (done, again, stranger, wrong, nowhere):
        assert "Traceback" not in run.stderr and tokens["ada"] not in run.stdout + run.stderr
    assert rows(db) == (1, 1)


def test_uploads_refused_once_unpacked_count_towards_the_rate(door: Any, tmp_path: Path) -> None:
    """Unpacking costs the server the same whether the upload is then refused or kept."""
    url, db, tokens, _ = door
    for _ in range(2):
        assert post(url, tokens["ada"], gzip.compress(b"not a tar at all" * 100))[0] == 400
    status, answer = post(url, tokens["ada"], pack_upload(bot_folder(tmp_path, "nimble")))
    assert status == 429 and "2 uploads refused" in answer["error"], answer
    assert post(url, tokens["bob"], pack_upload(bot_folder(tmp_path, "other")))[0] == 202, "bob is not held up"
    assert rows(db) == (1, 1)
