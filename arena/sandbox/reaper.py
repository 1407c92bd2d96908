"""A watchdog that outlives the arena by a moment: when the arena dies, even by kill -9,
its local bots die with it.

Local bots run in their own process groups, and between turns they are stopped
(SIGSTOP), so a bot whose arena was killed would wait forever for input it can no
longer notice is gone. The arena starts one reaper (this file, run by itself) in a
session of its own and tells it on a pipe which process groups are bots ("+PGID",
"-PGID"). When the pipe ends, the arena is gone: the reaper kills every group still
registered (SIGKILL ends stopped processes too) and exits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading


class Reaper:
    """The arena's end of the pipe; one per arena process, started on first use."""

    _lock = threading.Lock()
    _proc: subprocess.Popen[bytes] | None = None

    @classmethod
    def _pipe(cls) -> subprocess.Popen[bytes] | None:
        with cls._lock:
            if cls._proc is None or cls._proc.poll() is not None:
                try:
                    cls._proc = subprocess.Popen(
                        [sys.executable, "-I", os.path.abspath(__file__)],  # no package imports: quick
                        stdin=subprocess.PIPE,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        start_new_session=True,  # Ctrl-C in the terminal is not for it
                        close_fds=True,
                    )
                except OSError:
                    cls._proc = None
            return cls._proc

    @classmethod
    def _say(cls, line: str) -> None:
        proc = cls._pipe()
        if proc is None or proc.stdin is None:
            return  # no watchdog: teardown still works while the arena lives
        try:
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()
        except OSError:
            pass

    @classmethod
    def watch(cls, pgid: int) -> None:
        cls._say(f"+{pgid}")

    @classmethod
    def forget(cls, pgid: int) -> None:
        cls._say(f"-{pgid}")


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    groups: set[int] = set()
    for line in sys.stdin.buffer:
        try:
            pgid = int(line[1:])
        except ValueError:
            continue
        if line.startswith(b"+"):
            groups.add(pgid)
        elif line.startswith(b"-"):
            groups.discard(pgid)
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


if __name__ == "__main__":
    main()
