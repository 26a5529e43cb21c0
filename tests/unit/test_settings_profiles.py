"""Settings sources and persistence profiles (no Redis)."""

from __future__ import annotations

from pathlib import Path

import pytest

import hindsight_redis
from hindsight_redis.errors import ConfigError
from hindsight_redis.redis.server.profiles import PROFILES, get_profile, profile_mismatches
from hindsight_redis.settings import Settings


def test_toml_then_env_then_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "hs.toml"
    config.write_text('namespace = "from-file"\nprofile = "snapshot"\nmax_backlog = 7\n')
    monkeypatch.setenv("HINDSIGHT_CONFIG", str(config))
    monkeypatch.setenv("HINDSIGHT_PROFILE", "durable")
    settings = Settings(max_backlog=9)
    assert settings.namespace == "from-file"  # file
    assert settings.profile == "durable"  # env beats file
    assert settings.max_backlog == 9  # argument beats both


def test_unset_redis_url_means_embedded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HINDSIGHT_REDIS_URL", raising=False)
    assert Settings().embedded
    assert not Settings(redis_url="redis://redis:6379/0").embedded


@pytest.mark.parametrize(
    "bad", [{"namespace": "a b"}, {"namespace": "x{y}"}, {"profile": "fast"}, {"min_score": 2}]
)
def test_bad_settings_are_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Settings(**bad)  # type: ignore[arg-type]


def test_secrets_do_not_leak_in_repr() -> None:
    settings = Settings(llm_api_key="sk-secret")  # type: ignore[arg-type]
    assert "sk-secret" not in repr(settings)


def test_profiles_describe_their_redis_config() -> None:
    assert set(PROFILES) == {"ephemeral", "snapshot", "balanced", "durable"}
    assert (
        get_profile("durable").config["appendfsync"] == "always" and get_profile("durable").wait_aof
    )
    assert get_profile("balanced").config["appendfsync"] == "everysec"
    assert not get_profile("ephemeral").persists and get_profile("snapshot").persists
    with pytest.raises(ConfigError, match="choose one of"):
        get_profile("fast")


def test_profile_mismatches_name_each_difference() -> None:
    durable = get_profile("durable")
    assert (
        profile_mismatches(durable, {"appendonly": "yes", "appendfsync": "always", "save": ""})
        == []
    )
    problems = profile_mismatches(
        durable, {"appendonly": "no", "appendfsync": "everysec", "save": "3600 1"}
    )
    assert len(problems) == 3 and any("appendfsync" in p for p in problems)


def test_public_api_is_sorted_and_complete() -> None:
    names = hindsight_redis.__all__
    assert names == sorted(names)
    for name in (
        "AsyncMemoryClient",
        "MemoryClient",
        "Settings",
        "Worker",
        "SearchHit",
        "MemoryRecord",
    ):
        assert name in names and getattr(hindsight_redis, name) is not None
    public = {n for n in vars(hindsight_redis) if not n.startswith("_") and n[0].isupper()}
    assert public <= set(names)


def test_to_env_rebuilds_the_same_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    original = Settings(
        namespace="team-a", max_backlog=7, llm_api_key="sk-1", redis_url="redis://r:1/0"
    )  # type: ignore[arg-type]
    for name, value in original.to_env().items():
        monkeypatch.setenv(name, value)
    rebuilt = Settings()
    assert (rebuilt.namespace, rebuilt.max_backlog, rebuilt.redis_url) == (
        "team-a",
        7,
        "redis://r:1/0",
    )
    assert rebuilt.llm_api_key is not None and rebuilt.llm_api_key.get_secret_value() == "sk-1"
