"""The screenshots of the web pages in docs/screenshots/, made with headless Chromium.

    .venv/bin/python bench/screenshots.py [--out docs/screenshots] [--db FILE]

Plays two small 6 nimmt! tournaments of the sample bots (and a bot that now and then
answers something illegal, so the fault record has evidence to show) and a Sixes one,
with the local sandbox, and a gauntlet, into a fresh database; serves it with `arena serve`; and saves
the leaderboard, a tournament, a bot and a game page, the games list filtered, a deal in
every rotation, a gauntlet (desktop), the leaderboard and games on a phone-sized screen,
the leaderboard in the dark theme, and a game being played (four bots that think 0.3 s
a move). ``--db`` reuses (or keeps) that database.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).parent / "arena")
SAMPLES = ROOT / "sample_bots"
FLAKY = """\
import random
import sys

from protocol.bot import Bot, run


class Flaky(Bot):
    def decide(self, kind, view, legal):
        if random.random() < 0.04:
            print(f"{kind}: {legal[:3]}... trying 104", file=sys.stderr, flush=True)
            return 104
        return random.choice(legal)


run(Flaky())
"""


def flaky_bot(base: Path) -> Path:
    folder = base / "flaky"
    folder.mkdir()
    (folder / "bot.py").write_text(textwrap.dedent(FLAKY))
    (folder / "bot.toml").write_text(
        'name = "flaky"\nversion = "0.3"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
    )
    for path in (folder, *folder.iterdir()):
        os.chmod(path, 0o755)
    return folder


def play(db: Path, work: Path) -> None:
    nimmt = [str(SAMPLES / b) for b in ("heuristic", "random", "lowest")] + [str(flaky_bot(work))]
    common = ["--sandbox", "local", "--db", str(db)]
    runs = [
        [*nimmt, "--table-size", "3", "--deals", "3", "--seed", "1", "--name", "spring-cup", *common],
        [*nimmt, "--table-size", "4", "--deals", "3", "--seed", "2", "--name", "summer-cup", *common],
        [str(SAMPLES / "sixes-heuristic"), str(SAMPLES / "sixes-random"), "--game", "sixes", "--deals", "3"]
        + ["--seed", "3", "--name", "sixes-open", *common],
    ]
    for args in runs:
        print("playing", args[args.index("--name") + 1], flush=True)
        subprocess.run([ARENA, "tournament", "run", *args], check=True, capture_output=True, timeout=600)
    print("playing the gauntlet", flush=True)
    gauntlet = [nimmt[0], "--vs", *nimmt[1:3], "--sprt", "elo0=0,elo1=200", "--max-games", "400"]
    gauntlet += ["--seed", "4", "--name", "heuristic-gauntlet", *common]
    subprocess.run([ARENA, "gauntlet", *gauntlet], check=True, capture_output=True, timeout=600)


def serve(db: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [ARENA, "serve", "--db", str(db), "--port", str(port), "--play", "--sandbox", "local"],
        stdout=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(url + "/api/health", timeout=1).read()
            return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("arena serve did not start")


def browser(profile: Path) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars"):
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    return webdriver.Chrome(options=options, service=Service(executable_path="/usr/bin/chromedriver"))


def shoot(driver: Any, url: str, out: Path, width: int, max_height: int, prepare: str = "", theme: str = "") -> None:
    driver.set_window_size(width, 900)
    driver.get(url)
    # The reader's theme choice (remembered by the site), then the page drawn with it.
    driver.execute_script(f"localStorage.{'setItem' if theme else 'removeItem'}('arena-theme', {theme!r})")
    driver.get(url)
    time.sleep(0.5)
    if prepare:
        driver.execute_script(prepare)
        time.sleep(2.5)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(height, max_height))
    time.sleep(0.3)
    driver.save_screenshot(str(out))
    print("wrote", out, flush=True)


THINKING = """\
import time

from protocol.bot import Bot, run


class Thinking(Bot):
    def decide(self, kind, view, legal):
        time.sleep(0.3)
        return legal[len(legal) // 2]


run(Thinking())
"""


def shoot_live(driver: Any, db: Path, work: Path, url: str, out: Path) -> None:
    """A game being played, some turns in: four bots that think 0.3 s a move."""
    import json
    import signal

    folders = []
    for i in range(4):
        folder = work / f"thinker{i}"
        folder.mkdir()
        (folder / "bot.py").write_text(THINKING)
        manifest = (
            f'name = "thinker{i}"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
        )
        (folder / "bot.toml").write_text(manifest)
        for path in (folder, *folder.iterdir()):
            path.chmod(0o755)
        folders.append(str(folder))
    playing = subprocess.Popen(
        [ARENA, "tournament", "run", *folders, "--db", str(db), "--name", "autumn-live", "--sandbox", "local"],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):
            games = json.loads(urllib.request.urlopen(url + "/api/live").read())["games"]
            if games:
                break
            time.sleep(0.1)
        time.sleep(12)  # some turns played
        shoot(driver, url + games[0]["url"], out, 1280, 1300)
    finally:
        playing.send_signal(signal.SIGINT)
        playing.wait(timeout=60)


def shoot_play(driver: Any, url: str, out: Path) -> None:
    """A person's table against two bots of the main board, a few moves in, asked again."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.set_window_size(1280, 900)
    driver.get(url + "/play?board=nimmt/standard")
    driver.find_element(By.CSS_SELECTOR, "button.play-start").click()
    wait = WebDriverWait(driver, 60, poll_frequency=0.1)
    seat = "return document.getElementById('play-seat').getAttribute('data-ask')"
    answered: set[str] = set()
    for move in range(5):
        ask = wait.until(lambda d: (lambda a: a if a and a not in answered else False)(d.execute_script(seat)))
        if move < 4:
            driver.find_elements(By.CSS_SELECTOR, "button.play-answer")[-1].click()
            answered.add(ask)
    time.sleep(1.5)  # the table's last turn drawn
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, min(height, 1500))
    time.sleep(0.3)
    driver.save_screenshot(str(out))
    print("wrote", out, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs/screenshots")
    parser.add_argument("--db", type=Path, help="use (or make and keep) this database")
    parser.add_argument("--only", choices=["play"], help="take this screenshot alone")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="arena-shots-"))
    work.chmod(0o755)
    db = args.db or work / "arena.db"
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        if not db.exists():
            play(db, work)
        proc, url = serve(db)
        driver = browser(work / "chromium")
        try:
            import json

            if args.only == "play":
                shoot_play(driver, url, args.out / "play.png")
                return
            with urllib.request.urlopen(f"{url}/api/bots/flaky") as response:
                faulty_game = json.loads(response.read())["fault_record"][0]["game"]
            # Step the viewer to a moment with cards on the rows (its keys: → steps).
            step = (
                "const root = document.getElementById('replay-viewer');"
                "for (let i = 0; i < 14; i++) root.dispatchEvent(new KeyboardEvent('keydown',"
                " {key: 'ArrowRight', bubbles: true}));"
            )
            pages = [
                ("leaderboard", "/leaderboard", 1280, 1100, ""),
                ("tournament", "/tournaments/summer-cup", 1280, 1500, ""),
                ("bot", "/bots/flaky:0.3", 1280, 1900, ""),
                ("game", f"/games/{faulty_game}", 1280, 1500, step),
                ("leaderboard-phone", "/leaderboard?game=nimmt&variant=standard", 390, 1300, ""),
                ("games", "/games?bot=flaky:0.3&faults=1", 1280, 1300, ""),
                ("games-phone", "/games?tournament=summer-cup", 390, 1300, ""),
                ("duplicate", f"/games/{faulty_game}/duplicate", 1280, 1300, ""),
                ("gauntlet", "/gauntlets/heuristic-gauntlet", 1280, 1300, ""),
            ]
            for name, path, width, height, prepare in pages:
                shoot(driver, url + path, args.out / f"{name}.png", width, height, prepare)
            shoot(driver, url + "/leaderboard", args.out / "leaderboard-dark.png", 1280, 1100, theme="dark")
            shoot_live(driver, db, work, url, args.out / "live.png")
            shoot_play(driver, url, args.out / "play.png")
        finally:
            driver.quit()
            proc.terminate()
            proc.wait(timeout=10)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
