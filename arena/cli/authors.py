"""``arena author`` (the organiser: who may submit) and ``arena submit`` (an author: send a bot)."""

from __future__ import annotations

import json
import os
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Annotated, Any

import typer

from arena.cli.common import (
    DEFAULT_DB,
    DbOption,
    console,
    err_console,
    escape,
    fail,
    open_store,
    print_check,
    print_table,
    user_errors,
)
from arena.text import shown

author_app = typer.Typer(help="Authors: who may submit bots to `arena serve --submissions`.", no_args_is_help=True)

TOKEN_ENV = "ARENA_TOKEN"
FINAL_STATES = ("active", "rejected")
WAIT_POLL_S = 2.0


NameArgument = Annotated[str | None, typer.Argument(help="The author's name.", show_default=False)]
FromOption = Annotated[
    Path | None,
    typer.Option("--from", help="Add every author named in FILE (one name a line; # comments).", metavar="FILE"),
]
TokensOption = Annotated[
    Path | None,
    typer.Option("--tokens", help="With --from: write NAME TOKEN lines to OUT (new, mode 0600).", metavar="OUT"),
]


@author_app.command("add")
def author_add(
    name: NameArgument = None,
    db: DbOption = DEFAULT_DB,
    from_: FromOption = None,
    tokens: TokensOption = None,
) -> None:
    """Create an author and print their token, once: only its hash is stored. With
    --from FILE --tokens OUT, a whole class at once: all or none, each token written
    once, to OUT only."""
    from arena.store.submissions import Submissions

    if from_ is not None or tokens is not None:
        if name is not None or from_ is None or tokens is None:
            fail("a class at once: arena author add --from FILE --tokens OUT (and no NAME)")
        add_many(from_, tokens, db)
        return
    if name is None:
        fail("name the author: arena author add NAME (or --from FILE --tokens OUT)")
    with user_errors():
        author, token = Submissions(open_store(db, must_exist=False)).add_author(name)
    console.print(shown(f"author {author.name} added to {db}; their token (shown only this once):"), markup=False)
    print(token, flush=True)
    say_how_to_use(author.name)


def say_how_to_use(name: str) -> None:
    err_console.print(
        f"give it to {name}: `ARENA_TOKEN=... arena submit BOT_DIR --server URL` (or --token-file FILE),"
        " or paste it to sign in on the web",
        markup=False,
        soft_wrap=True,
    )


def read_names(path: Path) -> list[str]:
    """The names of a class list: one a line, blank lines and ``#`` comments skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"--from {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})")
    names = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    names = [n for n in names if n]
    if not names:
        fail(f"--from {path}: names no author (one name a line)")
    return names


def add_many(names_file: Path, tokens: Path, db: Path) -> None:
    """Authors from a file; their tokens into a new file only its owner may read, written
    inside the transaction that adds them: if it cannot be written, nobody is added."""
    from arena.store.submissions import Submissions

    names = read_names(names_file)
    try:
        handle = os.open(tokens, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        fail(f"--tokens {tokens}: already exists: tokens are written once, to a new file; name another")
    except OSError as exc:
        fail(f"--tokens {tokens}: cannot create it ({exc.strerror})")
    os.fchmod(handle, 0o600)  # whatever the umask

    def keep(pairs: list[tuple[str, str]]) -> None:
        data = "".join(f"{n} {t}\n" for n, t in pairs).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view) :]
        os.fsync(handle)

    try:
        with user_errors():
            added = Submissions(open_store(db, must_exist=False)).add_authors(names, keep)
    except BaseException:
        os.close(handle)
        os.unlink(tokens)
        raise
    os.close(handle)
    console.print(
        shown(
            f"{len(added)} author{'s' * (len(added) != 1)} added to {db}: {', '.join(a.name for a in added)};"
            f" their tokens are in {tokens} (NAME TOKEN a line, readable by you only), and nowhere else"
        ),
        markup=False,
        soft_wrap=True,
    )


@author_app.command("list")
def author_list(db: DbOption = DEFAULT_DB) -> None:
    """The authors, the bot names they own and their submissions."""
    from arena.store.submissions import Submissions

    with user_errors():
        store = open_store(db, read_only=True)
        subs = Submissions(store)
        owned: dict[int, list[str]] = {}
        for name, author_id in store.db.execute("SELECT name, author_id FROM bot_owners ORDER BY name"):
            owned.setdefault(author_id, []).append(name)
        from rich.table import Table

        table = Table(title=f"Authors in {db}")
        for column in ("author", "created", "revoked", "bots", "submissions"):
            table.add_column(column)
        for a in subs.authors():
            table.add_row(
                escape(shown(a.name)),
                a.created,
                a.revoked or "",
                escape(shown(", ".join(owned.get(a.id, [])) or "-")),
                str(len(subs.of_author(a.id))),
            )
        print_table(table)


AuthorRevokeNameArgument = Annotated[str, typer.Argument(help="The author's name.")]


@author_app.command("revoke")
def author_revoke(name: AuthorRevokeNameArgument, db: DbOption = DEFAULT_DB) -> None:
    """Stop an author's token at once (and end their browser sessions); their bots stay."""
    from arena.store.submissions import Submissions

    with user_errors():
        author = Submissions(open_store(db)).revoke(name)
    console.print(shown(f"revoked {author.name}'s token (since {author.revoked})"), markup=False)


AuthorReissueNameArgument = Annotated[str, typer.Argument(help="The author's name.")]


@author_app.command("reissue")
def author_reissue(name: AuthorReissueNameArgument, db: DbOption = DEFAULT_DB) -> None:
    """Give an author a new token, printed once: the old one stops working at once (and
    their browser sessions end). A revoked author may submit again; their bot names stay
    theirs."""
    from arena.store.submissions import Submissions

    with user_errors():
        author, token = Submissions(open_store(db)).reissue(name)
    console.print(
        shown(f"author {author.name} has a new token (the old one no longer works); shown only this once:"),
        markup=False,
    )
    print(token, flush=True)
    say_how_to_use(author.name)


BotDirArgument = Annotated[Path, typer.Argument(help="The bot folder (with its bot.toml).", metavar="BOT_DIR")]
ServerOption = Annotated[str, typer.Option("--server", help="The arena's address, e.g. https://arena.example.org")]
TokenFileOption = Annotated[
    Path | None, typer.Option("--token-file", help=f"A file holding your token (else ${TOKEN_ENV}).")
]
WaitOption = Annotated[bool, typer.Option("--wait", help="Wait until it is active or rejected, and show why.")]


def submit_cmd(
    bot_dir: BotDirArgument,
    server: ServerOption,
    token_file: TokenFileOption = None,
    wait: WaitOption = False,
) -> None:
    """Submit a bot to an arena: pack the folder, upload it, print where to follow it."""
    token = _token(token_file)
    base = _base_url(server)
    data, bot = _packed(bot_dir)
    answer = _call(base, "/api/submissions", token, data, bot)
    submission_id = answer.get("id")
    if not isinstance(submission_id, int) or not all(isinstance(answer.get(k), str) for k in _SUBMITTED):
        fail(f"{base} answered without a submission: is it an arena (`arena serve --submissions`)?", code=1)
    url = urllib.parse.urljoin(base, str(answer.get("url", "")))
    said = f"submitted {answer['name']}:{answer['version']} as submission {submission_id} ({answer['state']}): {url}"
    console.print(
        shown(said),
        markup=False,
        soft_wrap=True,
    )
    if wait:
        _wait(base, token, submission_id)


_SUBMITTED = ("name", "version", "state")
"""What the server's answer to an upload must hold, besides the submission's id."""


def _packed(bot_dir: Path) -> tuple[bytes, str]:
    """The upload of ``bot_dir`` and its ``NAME:VERSION``, put through the server's own
    checks first (at the default caps): what the server would refuse is refused here,
    with its message."""
    from arena.bots import BotError
    from arena.bots.uploads import UploadError, pack_upload, receive_upload

    try:
        data = pack_upload(bot_dir)
        with tempfile.TemporaryDirectory(prefix="arena-submit-") as work:
            with receive_upload(data, Path(work)) as received:
                bot = f"{received.name}:{received.version}"
    except UploadError as exc:
        fail(f"{bot_dir}: {exc.message}")
    except BotError as exc:
        fail(str(exc))
    return data, bot


def _token(token_file: Path | None) -> str:
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            fail(f"--token-file {token_file}: {exc.strerror or exc}")
    else:
        token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        fail(f"no token: set {TOKEN_ENV} or give --token-file (the organiser's `arena author add` made it)")
    if any(ch.isspace() or not ch.isprintable() for ch in token):
        fail("the token holds spaces or control characters: give it as the organiser printed it")
    return token


def _base_url(server: str) -> str:
    parsed = urllib.parse.urlsplit(server)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        fail(f"--server {server!r}: give the arena's address as http(s)://HOST[:PORT]")
    return server.rstrip("/") + "/"


def _opener() -> Any:
    """An opener that follows no redirect: urllib's would send the token on to wherever
    one points, another host included (imported here: ``arena`` starts without it)."""
    import urllib.request

    class NoRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(NoRedirects)


def _call(base: str, path: str, token: str, body: bytes | None = None, bot: str = "") -> dict[str, Any]:
    """One request to the arena's API: its JSON object, or one line and exit 1 for
    anything else (a refusal in the server's words, a redirect, a page that is not the
    API's, a connection that fails). The token goes to ``base``'s origin only: a
    redirect is never followed, to another origin or the same."""
    import http.client
    import urllib.error
    import urllib.request

    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = "application/gzip"
        headers["Arena-Bot"] = bot  # what can be refused before the upload is read, is
    request = urllib.request.Request(urllib.parse.urljoin(base, path.lstrip("/")), body, headers)
    try:
        with _opener().open(request, timeout=120) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:
            where = _printable(exc.headers.get("Location", "") or "nowhere")
            fail(
                f"{base} answered {exc.code}, a redirect to {where}: not followed (the token goes to that address"
                " only); give --server the arena's own address",
                code=1,
            )
        try:
            message = json.loads(exc.read()).get("error") or exc.reason
        except (ValueError, AttributeError, OSError):
            message = exc.reason
        fail(f"{base} refused it ({exc.code}): {_printable(str(message))}", code=1)
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if body is not None and isinstance(reason, (BrokenPipeError, ConnectionResetError)):
            refusal = _refusal_by_size(base, path, headers, len(body))
            if refusal is not None:
                fail(f"{base} refused it ({refusal[0]}): {_printable(refusal[1])}", code=1)
        fail(f"cannot reach {base}: {_printable(str(getattr(reason, 'strerror', None) or reason))}", code=1)
    except (ValueError, http.client.HTTPException) as exc:
        if isinstance(exc, http.client.HTTPException):
            fail(f"{base} broke off its answer ({type(exc).__name__}): try again", code=1)
        answer = None
    if not isinstance(answer, dict):
        fail(
            f"{base} answered something that is not JSON of the API: is it an arena (`arena serve --submissions`)?",
            code=1,
        )
    return answer


def _refusal_by_size(base: str, path: str, headers: dict[str, str], size: int) -> tuple[int, str] | None:
    """What the server answers an upload of ``size`` bytes declared but not sent: a door
    that refuses a body too big (413) before reading it, and then closes while the rest is
    still being written, has its refusal lost with the broken connection; asked again with
    the size alone it says it at once. ``None`` when it does not answer within seconds
    (the connection broke for another reason)."""
    import http.client

    url = urllib.parse.urlsplit(urllib.parse.urljoin(base, path.lstrip("/")))
    kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    connection = kind(url.netloc, timeout=10)
    try:
        connection.putrequest("POST", url.path or "/")
        for name, value in {**headers, "Content-Length": str(size)}.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        if response.status < 400:
            return None
        try:
            message = json.loads(response.read(65536)).get("error") or response.reason
        except (ValueError, AttributeError, OSError):
            message = response.reason
        return response.status, str(message)
    except (OSError, http.client.HTTPException):
        return None
    finally:
        connection.close()


def _printable(text: str, cap: int = 200) -> str:
    """A server's words on one line, without control characters, at most ``cap`` long."""
    shown = "".join(ch if ch.isprintable() else " " for ch in text)
    return " ".join(shown.split())[:cap]


def reported_check(entry: dict[str, Any]) -> Any:
    """A check of a submission's report (the server's JSON, ``pipeline.report_of``) as
    the battery's own ``Check``, for the one renderer; a field of the wrong type is empty."""
    from arena.botcheck import Check

    def text(key: str) -> str:
        value = entry.get(key)
        return value if isinstance(value, str) else ""

    return Check(
        name=text("name"),
        ok=entry.get("ok") is True,
        detail=text("detail"),
        sent=text("sent"),
        got=text("got"),
        expected=text("expected"),
        fix=text("fix"),
        stderr=text("stderr"),
        skipped=entry.get("skipped") is True,
    )


def _wait(base: str, token: str, submission_id: int) -> None:
    """Follow the submission until it is active or rejected; exit 1 when rejected, with
    each failed check's evidence. The report quotes the bot (its lines, its stderr, its
    build): through ``shown``."""
    last = ""
    while True:
        found = _call(base, f"/api/submissions/{submission_id}", token)
        state = str(found.get("state", ""))
        if state != last:
            console.print(shown(state), markup=False)
            last = state
        if state in FINAL_STATES:
            break
        time.sleep(WAIT_POLL_S)
    report = found.get("report")
    report = report if isinstance(report, dict) else {}
    checks = report.get("checks")
    for check in checks if isinstance(checks, list) else []:
        if isinstance(check, dict) and not check.get("ok") and not check.get("skipped"):
            print_check(reported_check(check))
    if report.get("error"):
        console.print(shown(str(report["error"]), lines=True), markup=False, soft_wrap=True)
    if state == "rejected":
        raise typer.Exit(1)
