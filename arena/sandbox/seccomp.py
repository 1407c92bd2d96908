"""The system calls a local bot may not make: a seccomp filter for bubblewrap (``--seccomp``).

Bubblewrap alone leaves a bot every system call of the kernel; Docker's default profile
refuses those that reach kernel code no unprivileged program needs, where most of the
kernel's local privilege escalations were found. This filter refuses the same, with
``EPERM`` (as Docker does), and kills a process that calls in another ABI (i386 through
``int 0x80``, x32): the filter only knows the native numbers, and a foreign ABI is how
filters are slipped past. It is built by libseccomp (through ``pyseccomp``), which knows
every architecture's numbers and writes the BPF program, once per arena.

Refused: new namespaces (``unshare``, ``setns``, ``clone`` with a ``CLONE_NEW*`` flag;
``clone3``, whose flags a filter cannot read, says ENOSYS so the C library falls back to
``clone``, as in Docker), mounts and the new mount API, ``pivot_root``, ``chroot``,
tracing and reading other processes (``ptrace``, ``process_vm_*``, ``kcmp``,
``pidfd_getfd``), the kernel's keyrings, ``bpf``, ``perf_event_open``, ``userfaultfd``,
``io_uring``, loading kernels and modules, handles to files by number
(``open_by_handle_at``), swap, reboot, accounting, quotas, clocks, port I/O, ``vm86``,
``syslog`` and the obsolete calls; and ``personality`` beyond the values Docker allows.
"""

from __future__ import annotations

import errno
import functools
import tempfile

from arena.sandbox.base import StartError

DENIED = (
    # namespaces and mounts
    "unshare",
    "setns",
    "mount",
    "umount",
    "umount2",
    "mount_setattr",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "pivot_root",
    "chroot",
    # other processes
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "process_madvise",
    "kcmp",
    "pidfd_getfd",
    # kernel interfaces unprivileged programs never need
    "add_key",
    "request_key",
    "keyctl",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "fanotify_init",
    "lookup_dcookie",
    "name_to_handle_at",
    "open_by_handle_at",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "create_module",
    "query_module",
    "get_kernel_syms",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "quotactl",
    "quotactl_fd",
    "nfsservctl",
    "iopl",
    "ioperm",
    "vm86",
    "vm86old",
    "syslog",
    "uselib",
    "ustat",
    "sysfs",
    "_sysctl",
    "vhangup",
    "settimeofday",
    "stime",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
)
NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
PERSONALITY_BITS = 0x0020008
"""UNAME26 and PER_LINUX32, the only bits of ``personality`` Docker lets through (with
0, meaning PER_LINUX, and 0xffffffff, which only asks)."""
QUERY_BIT = 1 << 31


@functools.cache
def bot_filter() -> bytes:
    """The BPF program of the filter, as ``bwrap --seccomp FD`` reads it; ``StartError``
    naming the fix where libseccomp is missing."""
    try:
        import pyseccomp as sc
    except (ImportError, OSError, RuntimeError) as exc:
        raise StartError(
            f"the local sandbox's seccomp filter needs libseccomp ({exc}): apt-get install libseccomp2"
        ) from None

    refuse = sc.ERRNO(errno.EPERM)
    rules = sc.SyscallFilter(sc.ALLOW)
    rules.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)  # the native ABI only: no x32, no i386
    rules.set_attr(sc.Attr.CTL_OPTIMIZE, 2)  # a binary tree of the numbers: a few tests per call, not ~70
    for name in DENIED:
        try:
            number = sc.resolve_syscall(sc.Arch.NATIVE, name)
        except (OSError, ValueError):
            continue  # not a system call of this architecture
        if number >= 0:  # libseccomp's negative numbers stand for calls this architecture lacks
            rules.add_rule(refuse, name)
    for flag in NAMESPACE_FLAGS:
        rules.add_rule(refuse, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    # personality(p): allowed for p with no bit outside PERSONALITY_BITS, and the query
    # 0xffffffff. One rule may test an argument once, so: refused when bit 31 is clear
    # and another bit is set, or when bit 31 is set and any other bit is clear.
    for bit in range(31):
        mask = QUERY_BIT | 1 << bit
        if not PERSONALITY_BITS & 1 << bit:
            rules.add_rule(refuse, "personality", sc.Arg(0, sc.MASKED_EQ, mask, 1 << bit))
        rules.add_rule(refuse, "personality", sc.Arg(0, sc.MASKED_EQ, mask, QUERY_BIT))
    with tempfile.TemporaryFile() as program:
        rules.export_bpf(program)
        program.seek(0)
        return program.read()
