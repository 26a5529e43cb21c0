"""Where settings come from, and how a wrong source reads: one ``ConfigError`` each."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hindsight_redis.errors import ConfigError
from hindsight_redis.settings import Settings, config_file, load_settings, user_config_file


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory and a home with no config file, and no HINDSIGHT_CONFIG."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("HINDSIGHT_CONFIG", raising=False)
    return tmp_path


@pytest.mark.parametrize(
    "url", ["localhost:6379", "not a url", "http://localhost:6379", "redis://", "u:pw@h:1"]
)
def test_a_redis_url_that_is_not_one_is_refused_by_name(url: str) -> None:
    with pytest.raises(ConfigError, match="is not a Redis URL: use redis://host:port/db") as e:
        load_settings(redis_url=url)
    assert "pw" not in str(e.value)  # a password typed without a scheme is not repeated
    with pytest.raises(ConfigError, match="is not a Redis URL"):  # the library's own error
        Settings(redis_url=url)


@pytest.mark.parametrize(
    "url", ["redis://h:1/0", "rediss://h:1", "unix:///tmp/r.sock", "redis+cluster://h:7000"]
)
def test_redis_urls_of_every_scheme_are_taken(url: str) -> None:
    assert Settings(redis_url=url).redis_url == url


async def test_a_connection_to_a_url_that_is_not_redis_is_a_config_error() -> None:
    from hindsight_redis.redis.connection import open_redis

    with pytest.raises(ConfigError, match="'localhost:6379' is not a Redis URL"):
        await open_redis("localhost:6379")


def test_a_named_config_file_that_is_missing_is_an_error(
    elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HINDSIGHT_CONFIG", str(elsewhere / "nope.toml"))
    with pytest.raises(ConfigError, match=r"nope\.toml', which is not a file"):
        Settings()


def test_a_config_file_that_is_not_toml_names_its_line(
    elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = elsewhere / "bad.toml"
    bad.write_text('namespace = "a"\n\nfoo bar\n')
    monkeypatch.setenv("HINDSIGHT_CONFIG", str(bad))
    with pytest.raises(
        ConfigError, match=rf"^{re.escape(str(bad))}:3: not valid TOML: Expected '='"
    ):
        Settings()


def test_an_environment_value_that_is_not_json_names_its_variable(
    elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HINDSIGHT_TASK_HALF_LIFE_DAYS", "{bad json")
    with pytest.raises(ConfigError, match=r"^HINDSIGHT_TASK_HALF_LIFE_DAYS is not valid JSON"):
        load_settings()


def test_the_working_directory_file_comes_before_the_users(
    elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert config_file() is None and load_settings().namespace == "default"
    user = user_config_file()
    assert user == elsewhere / "home" / ".config" / "hindsight-redis" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('namespace = "mine"\n')
    assert config_file() == user and load_settings().namespace == "mine"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(elsewhere / "xdg"))
    assert user_config_file() == elsewhere / "xdg" / "hindsight-redis" / "config.toml"
    assert config_file() is None
    monkeypatch.delenv("XDG_CONFIG_HOME")
    (elsewhere / "config").mkdir()
    (elsewhere / "config" / "default.toml").write_text('namespace = "here"\n')
    assert config_file() == Path("config") / "default.toml"
    assert load_settings().namespace == "here"
