"""The init of a bot's container (pid 1, the arena's code, read-only): it starts each of
the bot's processes in namespaces of its own, one process at a time, so that a container
serves many of the bot's processes and nothing one of them did reaches the next.

Run by itself, standard library only, as the container's unprivileged user, without
capabilities. Before each process it forks a child that takes new user, mount, pid,
IPC, network and UTS namespaces (a user namespace grants the capabilities to build the
others, in them only), mounts there a fresh ``/tmp``, ``/dev/shm``, POSIX message
queues and ``/proc``, hides the container's cgroup files, binds that process's own
three pipes at ``/arena/io``, and starts the bot under the arena's seccomp filter
(``arena.sandbox.seccomp``: no new namespaces, no mounts, no tracing), its
capabilities gone at exec. A new pid namespace numbers from 1 and a new tmpfs its
files from its own counter, so not even a count of what the last process made shows
through.

Ended by the arena (``end``), it kills every other process of the container (the
kernel's ``kill(-1)`` from pid 1, which nothing in the container can escape) and waits
until none is left: the namespaces die with their last process, and with them every
file, socket, segment and queue the process made.

Commands on the control pipe (one a line): ``run N`` starts process N on the pipes of
folder ``arena-io-N``; ``end N`` kills it. Answers: ``started N``, ``exited N CODE`` (128 + the
signal if killed), ``ended N``, ``refused N WHY`` (namespaces not allowed here).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import select
import signal
import socket
import struct
import sys

IO = "/arena/io"
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_DUMPABLE, PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 4, 1, 38, 22
SECCOMP_MODE_FILTER = 2
ENV = {"HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1", "PATH": os.defpath}

libc = ctypes.CDLL(None, use_errno=True)


def check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def mount(source: str, target: str, kind: str | None, flags: int, data: str = "") -> None:
    check(
        libc.mount(source.encode(), target.encode(), kind.encode() if kind else None, flags, data.encode() or None),
        f"mount {target}",
    )


def load_filter(program: bytes) -> None:
    """Install the seccomp filter (BPF, 8 bytes an instruction) on this process."""

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    code = ctypes.create_string_buffer(program, len(program))
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no new privileges")
    prog = Program(len(program) // 8, ctypes.addressof(code))
    check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0), "seccomp")


def loopback_up() -> None:
    """Bring up the new network namespace's loopback (as in the container's own)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        # SIOCSIFFLAGS: up, loopback, running
        fcntl.ioctl(sock, 0x8914, struct.pack("16sH14x", b"lo", 0x1 | 0x8 | 0x40))


def namespaces(uid: int, gid: int, tmp_mb: int, life: str) -> None:
    """Make this process's own namespaces and file systems (see the module's docstring)."""
    every = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWPID
    check(libc.unshare(every), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
    mount("none", "/", None, MS_REC | MS_PRIVATE)
    safe = MS_NOSUID | MS_NODEV | MS_NOEXEC
    mount("tmpfs", "/tmp", "tmpfs", safe, f"size={tmp_mb}m,mode=1777")
    mount("tmpfs", "/dev/shm", "tmpfs", safe, "size=64m,mode=1777")
    mount("mqueue", "/dev/mqueue", "mqueue", safe)
    mount("tmpfs", "/sys/fs/cgroup", "tmpfs", safe | MS_RDONLY, "size=4k,mode=555")
    mount(f"{IO}/{life}", IO, None, MS_BIND)
    mount(IO, IO, None, MS_BIND | MS_REMOUNT | MS_RDONLY | safe)
    loopback_up()


def bot(run: str, program: bytes, pipes: list[int]) -> None:
    """In the new pid namespace (as its pid 1's child): become the bot."""
    for target, fd in enumerate(pipes):
        os.dup2(fd, target)
    os.set_blocking(0, True)
    os.chdir("/bot")
    load_filter(program)
    os.execve("/bin/sh", ["/bin/sh", "-c", f"exec {run}"], ENV)


def pid_one(run: str, program: bytes, pipes: list[int]) -> int:
    """Pid 1 of the process's namespace: mount its /proc, start the bot, reap what it
    leaves; its exit ends the namespace (the kernel kills the rest)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_IGN)
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    child = os.fork()
    if child == 0:
        bot(run, program, pipes)
    for fd in pipes:
        os.close(fd)
    while True:
        pid, status = os.wait()
        if pid == child:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def life(run: str, program: bytes, uid: int, gid: int, tmp_mb: int, name: str, report: int) -> None:
    """A forked child of init: namespaces, then the pipes, then the process's pid 1."""
    code = 125
    try:
        try:
            libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # its maps are written through /proc/self
            namespaces(uid, gid, tmp_mb, name)
            libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # its processes cannot open its memory or files
        except OSError as exc:
            os.write(report, f"refused {name.rsplit('-', 1)[1]} {exc}\n".encode())
            os._exit(126)
        os.close(report)
        # Blocks until the arena opens its end of the bot's input; then the outputs.
        pipes = [os.open(f"{IO}/in", os.O_RDONLY), os.open(f"{IO}/out", os.O_WRONLY), os.open(f"{IO}/err", os.O_WRONLY)]
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        child = os.fork()
        if child == 0:
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            os._exit(pid_one(run, program, pipes))
        for fd in pipes:
            os.close(fd)
        _, status = os.waitpid(child, 0)
        code = os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
    finally:
        os._exit(code)


def others() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]


def kill_all() -> None:
    """Kill every process of the container but this one, and reap them, until none is left."""
    for _ in range(1000):
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
        if not others():
            return
        select.select([], [], [], 0.002)
    raise SystemExit("processes survive kill(-1)")


def main() -> None:
    uid, gid, tmp_mb, run = os.getuid(), os.getgid(), int(sys.argv[1]), sys.argv[2]
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # no process of its user may trace it or open its files
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_IGN)
    with open(f"{IO}/seccomp.bpf", "rb") as f:
        program = f.read()
    report = os.open(f"{IO}/ctl-out", os.O_WRONLY)
    commands = os.open(f"{IO}/ctl-in", os.O_RDONLY)  # waits for the arena's end: no end of file before it
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    os.write(report, b"ready\n")
    current: tuple[str, int] | None = None  # the process's number and its child's pid
    buffer = b""
    while True:
        ready, _, _ = select.select([commands, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 512)
            while current is not None:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                if pid == current[1]:
                    code = os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
                    os.write(report, f"exited {current[0]} {code}\n".encode())
                    current = (current[0], 0)
        if commands not in ready:
            continue
        data = os.read(commands, 4096)
        if not data:
            return  # the arena is gone: the engine removes the container
        buffer += data
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            verb, number = line.decode().split()
            if verb == "run" and current is None:
                pid = os.fork()
                if pid == 0:
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    for fd in (commands, wake_r, wake_w):
                        os.close(fd)
                    life(run, program, uid, gid, tmp_mb, f"arena-io-{number}", report)
                current = (number, pid)
                os.write(report, f"started {number}\n".encode())
            elif verb == "end":
                kill_all()
                current = None
                os.write(report, f"ended {number}\n".encode())


if __name__ == "__main__":
    main()
