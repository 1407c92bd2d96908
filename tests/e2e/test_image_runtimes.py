"""Languages beyond the base image (issue 12, item 14) and where Debian's packages come
from: the organiser adds runtimes with `arena image build --with`, a manifest names
the packages it needs, and the mirror is the host's apt source."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.sandbox import images

from ..conftest import SAMPLES, MakeBot

ARENA = str(Path(sys.executable).parent / "arena")


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=300)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_mirror_is_the_hosts_apt_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It was hard-coded; now the host's source for Debian's main archive, else
    debootstrap's default, and ARENA_DEBIAN_MIRROR above both."""
    monkeypatch.delenv("ARENA_DEBIAN_MIRROR", raising=False)
    deb822 = tmp_path / "deb822"
    write(
        deb822 / "sources.list.d" / "debian.sources",
        "Types: deb\n# http://snapshot.debian.org/archive/debian/20250520T000000Z\n"
        "URIs: http://security.example/debian-security\nSuites: bookworm-security\nComponents: main\n\n"
        "Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n\n"
        "Types: deb deb-src\nURIs: https://mirror.example/debian/\nSuites: bookworm bookworm-updates\n"
        "Components: main contrib\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n",
    )
    write(deb822 / "sources.list.d" / "nodesource.sources", "Types: deb\nURIs: https://deb.nodesource.com/node_20.x\n")
    assert images.host_debian_mirror(deb822) == "https://mirror.example/debian"

    one_line = tmp_path / "one-line"
    write(
        one_line / "sources.list",
        "# deb http://commented.example/debian bookworm main\n"
        "deb http://security.debian.org/debian-security bookworm-security main\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://ftp.example.org/debian bookworm main non-free\n",
    )
    assert images.host_debian_mirror(one_line) == "http://ftp.example.org/debian"

    other_suite = tmp_path / "trixie"
    write(other_suite / "sources.list", "deb http://local.example/debian trixie main\n")
    assert images.host_debian_mirror(other_suite) == "http://local.example/debian", "a Debian mirror has bookworm too"

    ubuntu = tmp_path / "ubuntu"
    write(ubuntu / "sources.list", "deb http://archive.ubuntu.com/ubuntu jammy main universe\n")
    assert images.host_debian_mirror(ubuntu) is None
    monkeypatch.setattr(images, "APT_SOURCES", ubuntu)
    assert images.debian_mirror() == images.DEFAULT_MIRROR == "http://deb.debian.org/debian"
    monkeypatch.setattr(images, "APT_SOURCES", deb822)
    assert images.debian_mirror() == "https://mirror.example/debian"
    monkeypatch.setenv("ARENA_DEBIAN_MIRROR", "http://override.example/debian")
    assert images.debian_mirror() == "http://override.example/debian"


def test_with_refuses_what_is_not_a_package_name() -> None:
    result = arena("image", "build", "--with", "ruby,Go Lang")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "--with 'Go': not a Debian package name" in line or "--with 'Lang'" in line, line
    assert images.parse_packages(" ruby, lua5.4 ruby ") == ["lua5.4", "ruby"] and images.parse_packages("") == []


@pytest.mark.docker
def test_extra_runtimes_are_a_layer_of_their_own_in_the_bases_identity(docker_sandbox: object) -> None:
    """setup.sh adds Ruby (`arena image build --with ruby`): a layer over the root file
    system, which stays as it was, and the base (hence every bot image) is made on it."""
    client = images.connect()
    try:
        assert "ruby" in images.image_packages(client), "setup.sh builds the base --with ruby"
        rootfs = client.images.get(images.ROOTFS_IMAGE)
        extras = client.images.get(f"{images.ROOTFS_REPOSITORY}:{images.CURRENT_TAG}")
        assert extras.id != rootfs.id
        history = [layer["Id"] for layer in extras.history()]
        assert rootfs.id in history, "a layer on the root file system, not a new one"
        assert images.base_tag(client) == f"{images.BASE_REPOSITORY}:sdk-{images.sdk_hash(extras.id)[:12]}"
        assert images.sdk_hash(extras.id) != images.sdk_hash(rootfs.id), "other runtimes, another base"
        for image in (extras, client.images.get(images.base_tag(client))):
            owner = {key for key in image.labels if key.startswith(("sixarena.owner", "sixarena.started"))}
            assert owner == set(), "no owner passed on to every container (another arena would remove them as stale)"
        packages = images.image_packages(client)
        again = arena("image", "build")
        assert again.returncode == 0 and "keeping the extra packages" in again.stdout, again.stdout + again.stderr
        added = arena("image", "build", "--with", "+ruby")
        assert added.returncode == 0 and "is already built" in added.stdout, added.stdout + added.stderr
        assert images.image_packages(client) == packages, "kept as they were, nothing rebuilt"
    finally:
        client.close()


@pytest.mark.docker
def test_a_bot_needing_a_package_the_base_lacks_names_the_command_that_adds_it(make_bot: MakeBot) -> None:
    manifest = (
        'name = "luabot"\nversion = "1"\nlanguage = "lua"\nrun = "lua5.4 bot.lua"\ngames = ["nimmt"]\n'
        'packages = ["lua5.4"]\n'
    )
    folder = make_bot("luabot", manifest=manifest)
    result = arena("bot", "build", str(folder))
    assert result.returncode == 2 and "Traceback" not in result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    client = images.connect()
    try:
        wanted = ",".join(sorted({*images.image_packages(client), "lua5.4"}))
    finally:
        client.close()
    assert f"the base image has no lua5.4 (`packages` in bot.toml): run `arena image build --with {wanted}`" in line


@pytest.mark.docker
def test_the_ruby_sample_passes_bot_check_in_docker() -> None:
    result = arena("bot", "check", str(SAMPLES / "greedy-ruby"), "--sandbox", "docker")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 failed" in result.stdout and "FAIL" not in result.stdout
