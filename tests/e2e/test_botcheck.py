"""``arena bot check`` against real bot processes: good bots pass every check, and each
kind of broken bot fails with the evidence and a fix."""

from __future__ import annotations

import re
import subprocess

import pytest
import trio

from arena.botcheck import Checker
from arena.bots import load_bot

from ..conftest import SAMPLES, MakeBot
from .test_cli import ARENA

HANDSHAKE = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "b", "version": "1"}), flush=True)
"""


def check(*args: str, sandbox: str = "local", timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARENA, "bot", "check", *args, "--sandbox", sandbox], capture_output=True, text=True, timeout=timeout
    )


def verdicts(output: str) -> dict[str, str]:
    """``{check name: PASS|FAIL|SKIP}`` from the report."""
    found = {}
    for line in output.splitlines():
        match = re.match(r"^ (PASS|FAIL|SKIP)  (.+?)  ", line + "  ")
        if match:
            found[match.group(2)] = match.group(1)
    return found


def assert_fails(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "FAIL" in result.stdout
    for needle in needles:
        assert needle in result.stdout, result.stdout


def test_sample_bot_passes_every_check() -> None:
    result = check(str(SAMPLES / "heuristic"))
    assert result.returncode == 0, result.stdout + result.stderr
    found = verdicts(result.stdout)
    assert set(found.values()) == {"PASS"}, result.stdout
    for name in (
        "manifest",
        "start",
        "nimmt: two standard games in one session, the seat changing",
        "nimmt: a card below every row (a row to choose)",
        "nimmt: every card would be a sixth card",
        "nimmt: the last turn of a round, then a new deal",
        "nimmt: request ids that are not 1, 2, 3...",
        "nimmt: logical variant (the draft)",
        "nimmt: shedding",
    ):
        assert name in found, result.stdout
    assert re.search(r"a card below every row.*answered \d+ play, \d+ row", result.stdout)
    assert re.search(r"the draft\).*answered 10 draft", result.stdout)
    assert re.search(r"requests, mean [\d.]+ ms, slowest [\d.]+ ms", result.stdout)


def test_sixes_bot_passes_including_a_forced_pass() -> None:
    result = check(str(SAMPLES / "sixes-random"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert verdicts(result.stdout)["sixes: no card to play (pass)"] == "PASS"


def test_bot_that_never_answers(make_bot: MakeBot) -> None:
    folder = make_bot("mute", "import sys\nfor line in sys.stdin:\n    pass\n")
    result = check(str(folder), "--startup-time", "1")
    assert_fails(result, "no answer to the hello within 1000 ms", "flush stdout", '"type":"hello"')
    assert "SKIP" in result.stdout  # the rest is not run: it would only time out again


def test_bot_that_prints_garbage(make_bot: MakeBot) -> None:
    folder = make_bot("chatty", "import sys\nsys.stdin.readline()\nprint('starting up!', flush=True)\n")
    result = check(str(folder))
    assert_fails(result, "not a valid hello message", "got      starting up!", "write logs", "to stderr")


def test_bot_that_answers_hello_nested_too_deep(make_bot: MakeBot) -> None:
    """A line the decoder could not even recurse through is a failed check, not a crash."""
    code = "import sys\nsys.stdin.readline()\nprint('{\"type\":\"hello\",\"name\":' + '[' * 5000 + ']' * 5000 + '}', flush=True)\n"
    folder = make_bot("deep", code)
    result = check(str(folder))
    assert_fails(result, "not a valid hello message: nested 5001 levels deep", 'got      {"type":"hello"')


def test_bot_that_writes_last_words_without_a_newline(make_bot: MakeBot) -> None:
    code = 'import sys\nsys.stdin.readline()\nsys.stdout.write(\'{"type":"hello","na\'); sys.stdout.flush()\n'
    folder = make_bot("cutoff", code)
    result = check(str(folder))
    assert_fails(result, "exited with code 0", 'got      {"type":"hello","na')


def test_bot_that_exits_at_once(make_bot: MakeBot) -> None:
    folder = make_bot("quitter", "import sys\nprint('cannot find my model', file=sys.stderr)\nsys.exit(3)\n")
    result = check(str(folder))
    assert_fails(result, "exited with code 3", "cannot find my model", "run the bot by hand")


def test_bot_that_counts_its_own_ids(make_bot: MakeBot) -> None:
    code = (
        HANDSHAKE
        + """
    elif message["type"] == "request":
        n = globals().get("n", 0) + 1
        globals()["n"] = n
        print(json.dumps({"type": "answer", "id": n, "answer": message["legal"][0]}), flush=True)
    elif message["type"] == "new_game":
        globals()["n"] = 0
    elif message["type"] == "bye":
        break
"""
    )
    result = check(str(make_bot("counter", code)))
    assert_fails(result, "answered id 1 to request id 907", "copy the request's `id`")
    found = verdicts(result.stdout)
    assert found["nimmt: two standard games in one session, the seat changing"] == "FAIL"  # ids run on across games
    assert found["nimmt: request ids that are not 1, 2, 3..."] == "FAIL"


def test_bot_that_answers_illegally(make_bot: MakeBot) -> None:
    code = (
        HANDSHAKE
        + """
    elif message["type"] == "request":
        print(json.dumps({"type": "answer", "id": message["id"], "answer": 105}), flush=True)
"""
    )
    result = check(str(make_bot("cheat", code)))
    assert_fails(result, "illegal play answer 105", '"answer": 105', "with A one of [")


def test_slow_bot(make_bot: MakeBot) -> None:
    code = (
        HANDSHAKE
        + """
    elif message["type"] == "request":
        import time; time.sleep(0.4)
        print(json.dumps({"type": "answer", "id": message["id"], "answer": message["legal"][0]}), flush=True)
"""
    )
    result = check(str(make_bot("slow", code)), "--move-time", "0.1", "--only", "row")
    assert_fails(result, "over the move limit of 100 ms")


def test_bot_that_ignores_bye(make_bot: MakeBot) -> None:
    code = (
        HANDSHAKE
        + """
    elif message["type"] == "request":
        print(json.dumps({"type": "answer", "id": message["id"], "answer": message["legal"][0]}), flush=True)
"""
    )
    result = check(str(make_bot("stayer", code)), "--only", "sixth card")
    assert_fails(result, "still running 2 s after bye", "exit when you read bye")
    assert list(verdicts(result.stdout)) == ["manifest", "start", "nimmt: every card would be a sixth card"]


def test_bot_refusing_a_variant_is_skipped_not_failed(make_bot: MakeBot) -> None:
    code = """
    import json, sys
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] == "hello":
            ok = m["settings"].get("variant", "standard") == "standard"
            print(json.dumps({"type": "hello", "name": "b", "version": "1", "accept": ok}), flush=True)
        elif m["type"] == "request":
            print(json.dumps({"type": "answer", "id": m["id"], "answer": m["legal"][0]}), flush=True)
        elif m["type"] == "bye":
            break
    """
    result = check(str(make_bot("purist", code)))
    assert result.returncode == 0, result.stdout
    found = verdicts(result.stdout)
    assert found["nimmt: logical variant (the draft)"] == "SKIP"
    assert found["nimmt: shedding"] == "PASS"
    assert "refused in its hello answer" in result.stdout


def test_manifest_missing_a_field(make_bot: MakeBot) -> None:
    folder = make_bot("nameless", manifest='name = "x"\nversion = "1"\nlanguage = "python"\ngames = ["nimmt"]\n')
    assert_fails(check(str(folder)), "missing field `run`", "FAIL  manifest")


def test_manifest_with_a_mistyped_field(make_bot: MakeBot) -> None:
    manifest = 'name = "x"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\ngame = ["nimmt"]\n'
    assert_fails(check(str(make_bot("typo", manifest=manifest))), "unknown field `game`")


def test_manifest_with_an_unknown_game(make_bot: MakeBot) -> None:
    assert_fails(check(str(make_bot("chess", games='["nimt"]'))), "unknown: nimt", "fix `games`")


def test_run_command_that_is_not_there(make_bot: MakeBot) -> None:
    folder = make_bot("ghost", run="./no-such-program")
    assert_fails(check(str(folder)), "FAIL  start", "'./no-such-program' was not found", "check `run`")


def test_build_that_fails(make_bot: MakeBot) -> None:
    folder = make_bot("broken", run="./bot")
    (folder / "bot.toml").write_text(
        'name = "broken"\nversion = "1"\nlanguage = "c"\nbuild = "cc -o bot bot.c"\nrun = "./bot"\ngames = ["nimmt"]\n'
    )
    (folder / "bot.c").write_text("int main(void) { return missing_function(); }\n")
    for path in folder.iterdir():
        path.chmod(0o755)
    assert_fails(check(str(folder)), "FAIL  start", "the build command 'cc -o bot bot.c' failed", "missing_function")


def test_missing_folder_and_bad_flag() -> None:
    assert_fails(check("/no/such/bot"), "no such bot folder")
    result = check(str(SAMPLES / "random"), "--game", "sixes")
    assert result.returncode == 2 and "lists only nimmt" in result.stderr


def test_checker_reports_each_check_as_it_runs() -> None:
    """The library call the CLI makes: checks arrive one by one, in order."""
    seen: list[str] = []
    from arena.sandbox.local import LocalSandbox

    checker = Checker(load_bot(SAMPLES / "random"), LocalSandbox(), on_check=lambda c: seen.append(c.name))
    checks = trio.run(checker.run, ["nimmt"])
    assert seen == [c.name for c in checks] and seen[:2] == ["manifest", "start"]
    assert all(c.ok for c in checks)
    assert sum(c.kinds["row"] for c in checks) >= 1 and sum(c.kinds["draft"] for c in checks) == 10


@pytest.mark.docker
def test_check_in_docker(docker_sandbox: object) -> None:
    result = check(str(SAMPLES / "random"), sandbox="docker", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "docker" in result.stdout and "FAIL" not in result.stdout


# --- hints that name the fix (issue 12) ----------------------------------------------------

ANSWERING = (
    HANDSHAKE
    + """
    elif message["type"] == "request":
        print(json.dumps(ANSWER(message)), flush=True)
    elif message["type"] == "bye":
        break
"""
)


def answering(answer: str) -> str:
    """A bot that answers every request with ``answer``, an expression of ``message``."""
    return f"ANSWER = lambda message: {answer}\n" + ANSWERING


def test_answer_with_an_unknown_field_names_it(make_bot: MakeBot) -> None:
    code = answering('{"type": "answer", "id": message["id"], "answer": message["legal"][0], "why": "lowest"}')
    result = check(str(make_bot("chatty-answer", code)), "--only", "sixth card")
    assert_fails(result, "unknown field `why`", "remove the field `why`: the answer message has only type, id and")
    assert "stdout carries protocol lines only" not in result.stdout


def test_answer_with_a_string_id_says_it_is_the_requests_integer(make_bot: MakeBot) -> None:
    code = answering('{"type": "answer", "id": str(message["id"]), "answer": message["legal"][0]}')
    result = check(str(make_bot("string-id", code)), "--only", "sixth card")
    assert_fails(result, "at `$.id`", "answer with the request's id, a JSON integer", '"id": 907, not "id": "907"')
    assert "stdout carries protocol lines only" not in result.stdout


def test_a_card_sent_as_a_string_is_named_and_one_failure_is_reported_once(make_bot: MakeBot) -> None:
    """Every scenario fails the same way: the evidence is shown once, the rest say so,
    and the summary counts them; requests are shortened."""
    code = answering('{"type": "answer", "id": message["id"], "answer": json.dumps(message["legal"][0])}')
    result = check(str(make_bot("quoted", code)))
    assert_fails(result, "a card is a JSON number, not a string: answer ")
    assert re.search(r'answer (\d+), not "\1"', result.stdout), result.stdout
    failed = [line for line in result.stdout.splitlines() if line.startswith(" FAIL")]
    repeats = sum("(the same failure as above)" in line for line in failed)
    assert len(failed) >= 10 and repeats >= len(failed) - 3, result.stdout
    assert result.stdout.count("a card is a JSON number") == 1, "the fix is shown once"
    assert result.stdout.count("        sent ") == len(failed) - repeats
    first = "nimmt: two standard games in one session, the seat changing"
    counted = re.search(rf"^(\d+) checks failed as «{re.escape(first)}» did", result.stdout, re.M)
    assert counted and int(counted.group(1)) == repeats + 1, result.stdout
    assert '"view":{...}' in result.stdout and max(map(len, result.stdout.splitlines())) < 400


def test_run_script_without_its_execute_bit(make_bot: MakeBot) -> None:
    folder = make_bot("no-x", "#!/usr/bin/env python3\n" + answering("{}"), run="./bot.py")
    (folder / "bot.py").chmod(0o644)
    result = check(str(folder))
    assert_fails(result, "FAIL  start", "./bot.py is not executable", "chmod +x bot.py")
    assert "not found" not in result.stdout


def test_run_script_with_windows_line_endings(make_bot: MakeBot) -> None:
    folder = make_bot("crlf", run="./bot.py")
    (folder / "bot.py").write_bytes(b"#!/usr/bin/python3\r\nimport sys\r\nsys.stdin.readline()\r\n")
    result = check(str(folder))
    assert_fails(result, "FAIL  start", "Windows line endings (CRLF)", "dos2unix bot.py", "sed -i 's/\\r$//' bot.py")
    assert "bwrap" not in result.stdout + result.stderr


@pytest.mark.docker
def test_windows_line_endings_in_docker_too(make_bot: MakeBot, docker_sandbox: object) -> None:
    folder = make_bot("crlf-docker", run="./bot.py")
    (folder / "bot.py").write_bytes(b"#!/usr/bin/env python3\r\nimport sys\r\n")
    result = check(str(folder), sandbox="docker")
    assert_fails(result, "FAIL  start", "Windows line endings (CRLF)", "dos2unix bot.py")
