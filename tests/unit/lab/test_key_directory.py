"""Key directories: only public https hosts, unless the lab trusts local directories (tests)."""

from __future__ import annotations

import anyio
import pytest

from lab.botauth.directory import DirectoryError, KeyDirectory, directory_url

PRIVATE_ORIGINS = [
    "https://localhost",
    "https://127.0.0.1:8443",
    "https://10.1.2.3",
    "https://192.168.0.7",
    "https://172.16.5.4",
    "https://169.254.169.254",
    "https://[::1]",
    "https://[fe80::1]",
    "https://[::ffff:127.0.0.1]",
    "https://0.0.0.0",
]


@pytest.mark.parametrize("origin", PRIVATE_ORIGINS)
def test_an_https_directory_on_a_private_network_is_refused(origin):
    with pytest.raises(DirectoryError, match="private, loopback or link-local"):
        anyio.run(KeyDirectory(trust_local=False).keys, origin)


def test_a_refused_directory_is_not_asked_again_at_once():
    directory = KeyDirectory(trust_local=False)
    with pytest.raises(DirectoryError):
        anyio.run(directory.keys, "https://10.1.2.3")
    with pytest.raises(DirectoryError, match="failed recently"):
        anyio.run(directory.keys, "https://10.1.2.3")


def test_trusting_local_directories_lets_the_fetch_go_ahead():
    # Nothing listens on port 9: the fetch is tried (and fails to connect) instead of being refused up front.
    with pytest.raises(DirectoryError) as refused:
        anyio.run(KeyDirectory(trust_local=True).keys, "https://127.0.0.1:9")
    assert "private" not in str(refused.value)


@pytest.mark.parametrize("origin", ["http://agent.example", "ftp://agent.example", "https://user:pw@agent.example"])
def test_only_https_origins_name_a_directory(origin):
    with pytest.raises(DirectoryError):
        directory_url(origin, trust_local=False)


def test_plain_http_is_allowed_only_to_loopback_and_only_when_trusted():
    assert directory_url("http://127.0.0.1:8123", trust_local=True).startswith("http://127.0.0.1:8123/.well-known/")
    with pytest.raises(DirectoryError):
        directory_url("http://127.0.0.1:8123", trust_local=False)
