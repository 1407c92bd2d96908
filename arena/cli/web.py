"""``arena serve``: the leaderboards, tournaments, bots and replays on the web."""

from __future__ import annotations

import signal
from functools import partial
from typing import Annotated, Any

import typer

from arena.cli.common import DEFAULT_DB, DbOption, console, err_console, fail, user_errors
from arena.cli.options import DEFAULTS, SandboxOption


async def _until_stopped() -> None:
    """Return at Ctrl-C or SIGTERM: Hypercorn then shuts down gracefully."""
    import trio

    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            return


HostOption = Annotated[str, typer.Option(help="The address to listen on (0.0.0.0 for every interface).")]
PortOption = Annotated[int, typer.Option(help="The port to listen on.", min=1, max=65535)]
SubmissionsOption = Annotated[
    bool,
    typer.Option(
        "--submissions",
        help="Also take bots from authors (`arena author add` makes them): the only writes the server makes.",
    ),
]
PerHourOption = Annotated[
    int,
    typer.Option("--submissions-per-hour", help="With --submissions: at most this many an author an hour.", min=1),
]
MaxUploadMbOption = Annotated[
    float, typer.Option("--max-upload-mb", help="With --submissions: the largest upload, packed.", min=0.01)
]
UploadSecondsOption = Annotated[
    float,
    typer.Option("--upload-seconds", help="With --submissions: the longest an upload may take to arrive.", min=0.1),
]

LiveDelayOption = Annotated[
    float,
    typer.Option(
        "--live-delay",
        help="Show each turn of a game being played this many seconds after it was played (0: at once).",
        min=0.0,
        max=86400.0,
    ),
]

PlayOption = Annotated[
    bool,
    typer.Option(
        "--play",
        help="Let visitors play against the bots of a board (/play): the server plays and stores those games.",
    ),
]
PlayTablesOption = Annotated[
    int, typer.Option("--play-tables", help="With --play: games with people at once, at most.", min=1, max=64)
]
PlayTimeOption = Annotated[
    float,
    typer.Option("--play-time", help="With --play: a person's seconds for a move.", min=1.0, max=3600.0),
]


def serve(
    db: DbOption = DEFAULT_DB,
    host: HostOption = "127.0.0.1",
    port: PortOption = 8000,
    submissions: SubmissionsOption = False,
    per_hour: PerHourOption = 10,
    max_upload_mb: MaxUploadMbOption = 20.0,
    upload_seconds: UploadSecondsOption = 120.0,
    live_delay: LiveDelayOption = 0.0,
    play: PlayOption = False,
    play_tables: PlayTablesOption = 4,
    play_time: PlayTimeOption = 120.0,
    sandbox_name: SandboxOption = DEFAULTS.sandbox,
) -> None:
    """Serve the leaderboards, tournaments, bots and replays as web pages and JSON.

    A missing database is no error: the pages say so until a tournament creates it.
    Serving never writes to the database, so it can run beside a tournament; with
    --submissions it writes the authors' submissions, with --play the games people play, and nothing else. The games being
    played beside the database are shown as they are (/live), hands hidden until each
    ends, --live-delay seconds late. With --play a visitor picks bots of a board and plays
    them in the browser (the bots in --sandbox); those games are stored on boards of their
    own, marked "with people".
    """
    import trio
    from hypercorn.config import Config
    from hypercorn.trio import serve as hypercorn_serve

    from arena.web.app import asgi_app

    if db.is_dir():
        fail(f"{db}: is a folder, not a database file")
    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.loglevel = "WARNING"
    config.accesslog = None
    from arena.text import log_safely

    config.errorlog = log_safely("hypercorn.error", "arena")
    config.graceful_timeout = 1.0
    submit = None
    if submissions:
        import dataclasses

        from arena.bots.uploads import UploadLimits
        from arena.web.submit import SubmitOptions

        limits = dataclasses.replace(UploadLimits(), packed_bytes=round(max_upload_mb * 2**20))
        submit = SubmitOptions(per_hour, limits, body_seconds=upload_seconds)
    offer = None
    if play:
        from arena.cli.sandbox import open_sandbox
        from arena.web.play import PlayOptions

        with user_errors():
            offer = PlayOptions(open_sandbox(sandbox_name), play_tables, play_time)
    with user_errors():
        web_app: Any = asgi_app(db, submit=submit, live_delay=live_delay, play=offer)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(partial(hypercorn_serve, web_app, config, shutdown_trigger=_until_stopped))
            shown = host if host not in ("0.0.0.0", "::") else "localhost"
            url = f"http://{f'[{shown}]' if ':' in shown else shown}:{port}/"
            console.print(
                f"serving [bold]{db}[/] at [link={url}]{url}[/link]"
                + (" (taking submissions; Ctrl-C stops)" if submissions else "")
                + (" (people play at /play; Ctrl-C stops)" if play else "")
                + (" (read-only; Ctrl-C stops)" if not (play or submissions) else ""),
                soft_wrap=True,
            )
            if binds and len(binds) > 1:
                console.print(f"listening on {', '.join(binds)}")
            if not db.exists():
                err_console.print(
                    f"[yellow]no database at {db} yet[/]: the pages say so until a tournament creates it",
                    soft_wrap=True,
                )

    try:
        trio.run(main)
    except KeyboardInterrupt:  # before the server was up
        pass
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    except BaseExceptionGroup as group:
        if group.subgroup(KeyboardInterrupt) is not None:
            pass
        else:
            failed = group.subgroup(OSError)
            if failed is None:
                raise
            first: BaseException = failed
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            fail(f"cannot listen on {host}:{port}: {getattr(first, 'strerror', None) or first}")
    console.print("stopped")
