"""The web's page bodies kept by content, and the background computations' share of a core."""

from __future__ import annotations

import math
import threading
import time

import jinja2
import msgspec

from arena.web.database import Budget
from arena.web.rendered import Renderer


class Model(msgspec.Struct):
    elo: float | None
    bots: list[str]


def renderer() -> tuple[Renderer, list[int]]:
    renders: list[int] = []

    def counted() -> str:
        renders.append(1)
        return ""

    env = jinja2.Environment(
        loader=jinja2.DictLoader({"page.html": "{{ counted() }}{{ data.elo }} {{ data.bots|join(',') }} {{ path }}"})
    )
    env.globals["counted"] = counted
    return Renderer(env, kept=4), renders


def test_a_page_with_the_same_content_is_rendered_once() -> None:
    pages, renders = renderer()
    first = pages.render("page.html", {"data": Model(1500.0, ["a", "b"]), "path": "/x"})
    assert first == "1500.0 a,b /x"
    assert pages.render("page.html", {"data": Model(1500.0, ["a", "b"]), "path": "/x"}) == first
    assert len(renders) == 1, "the second is the kept body"


def test_any_change_of_what_it_shows_renders_it_again() -> None:
    pages, renders = renderer()
    shown = {
        pages.render("page.html", {"data": data, "path": path})
        for data, path in [
            (Model(1500.0, ["a", "b"]), "/x"),
            (Model(1500.0, ["a", "c"]), "/x"),
            (Model(1500.0, ["a", "b"]), "/y"),
            (Model(math.nan, ["a"]), "/x"),
            (Model(None, ["a"]), "/x"),  # NaN and None tell apart
        ]
    }
    assert len(renders) == 5 and len(shown) == 5


def test_what_cannot_be_written_as_a_key_is_rendered_every_time() -> None:
    pages, renders = renderer()
    context = {"data": Model(1.0, []), "path": "/x", "thing": object()}
    pages.render("page.html", dict(context))
    pages.render("page.html", dict(context))
    assert len(renders) == 2


def test_background_computations_take_turns_and_leave_the_rest_of_the_core() -> None:
    budget = Budget(0.5)  # half a core: a pause as long as the CPU time used
    ended: list[float] = []
    began: list[float] = []

    def busy() -> None:
        with budget.turn():
            began.append(time.monotonic())
            start = time.thread_time()
            while time.thread_time() - start < 0.05:
                pass
            ended.append(time.monotonic())

    threads = [threading.Thread(target=busy) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert began[1] >= ended[0] + 0.05, "the second waited for the first, then its pause"
