"""A cluster node's thinking slots, shared by the Trio runs of its threads (one per
match it plays at once): never more held than there are, none lost to cancellation."""

from __future__ import annotations

import random
import threading

import trio

from arena.node import SharedSlots


def test_threads_never_hold_more_slots_than_there_are() -> None:
    slots = SharedSlots(2)
    lock = threading.Lock()
    held = 0
    most = 0

    async def match(seed: int) -> None:
        nonlocal held, most
        rng = random.Random(seed)
        for _ in range(40):
            await slots.acquire()
            with lock:
                held += 1
                most = max(most, held)
            await trio.sleep(rng.random() / 1000)
            with lock:
                held -= 1
            slots.release()

    threads = [threading.Thread(target=trio.run, args=(match, seed)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert most == 2, "both slots were used, never a third"
    assert held == 0
    assert _free(slots) == 2


def test_a_waiter_cancelled_as_it_is_granted_passes_its_slot_on() -> None:
    """Waiters in other runs are cancelled while the slot is being handed to them: every
    slot comes back, and a later run gets both at once."""
    slots = SharedSlots(1)
    holding = threading.Event()
    let_go = threading.Event()

    async def holder() -> None:
        await slots.acquire()
        holding.set()
        await trio.to_thread.run_sync(let_go.wait)
        slots.release()

    async def impatient() -> None:
        holding.wait()
        with trio.move_on_after(0.05):
            await slots.acquire()
            slots.release()

    first = threading.Thread(target=trio.run, args=(holder,))
    first.start()
    waiters = [threading.Thread(target=trio.run, args=(impatient,)) for _ in range(4)]
    for thread in waiters:
        thread.start()
    let_go.set()
    for thread in [first, *waiters]:
        thread.join(timeout=60)
    assert _free(slots) == 1

    async def both() -> None:
        slots.acquire_nowait()
        slots.release()

    trio.run(both)


def test_acquire_nowait_refuses_when_none_is_free() -> None:
    slots = SharedSlots(1)
    slots.acquire_nowait()
    try:
        slots.acquire_nowait()
    except trio.WouldBlock:
        pass
    else:
        raise AssertionError("a second slot was handed out")
    slots.release()
    slots.acquire_nowait()


def _free(slots: SharedSlots) -> int:
    return slots._free  # noqa: SLF001 (the count is what the test is about)
