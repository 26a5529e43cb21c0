"""Settings in groups: each field in one group, the flat names of environment and TOML kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from hindsight_redis.errors import ConfigError
from hindsight_redis.settings import GROUPS, SearchSettings, Settings, WorkerSettings


def test_every_setting_is_in_exactly_one_group() -> None:
    grouped = [name for group in GROUPS for name in group.model_fields]
    assert len(grouped) == len(set(grouped))
    assert set(grouped) == set(Settings.model_fields)


def test_each_view_holds_the_values_of_its_fields() -> None:
    settings = Settings(hybrid_alpha=0.5, worker_batch_size=7, namespace="views")
    assert isinstance(settings.search, SearchSettings)
    assert settings.search.hybrid_alpha == 0.5
    assert isinstance(settings.worker, WorkerSettings)
    assert settings.worker.worker_batch_size == 7
    assert settings.identity.namespace == "views"
    for group in GROUPS:
        view = next(getattr(settings, n) for n in dir(Settings) if _is_view(n, group))
        assert view.model_dump() == {k: getattr(settings, k) for k in group.model_fields}


def _is_view(name: str, group: type) -> bool:
    attribute = getattr(Settings, name, None)
    return (
        isinstance(attribute, property)
        and attribute.fget is not None
        and (attribute.fget.__annotations__.get("return") in (group, group.__name__))
    )


def test_every_group_has_a_view() -> None:
    assert all(any(_is_view(n, g) for n in dir(Settings)) for g in GROUPS)


def test_environment_names_stay_flat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HINDSIGHT_HYBRID_ALPHA", "0.25")
    monkeypatch.setenv("HINDSIGHT_SWEEP_BATCH", "50")
    monkeypatch.setenv("HINDSIGHT_TASK_HALF_LIFE_DAYS", '{"code": 12}')
    settings = Settings()
    assert settings.search.hybrid_alpha == 0.25
    assert settings.sweeps.sweep_batch == 50
    assert settings.retention.task_half_life_days["code"] == 12.0


def test_toml_keys_stay_flat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text("hnsw_ef_runtime = 80\nmin_score = 0.4\n[task_half_life_days]\nnote = 5\n")
    monkeypatch.setenv("HINDSIGHT_CONFIG", str(config))
    settings = Settings()
    assert settings.search.hnsw_ef_runtime == 80
    assert settings.filters.min_score == 0.4
    assert settings.retention.task_half_life_days["note"] == 5.0


def test_settings_and_their_groups_are_frozen() -> None:
    settings = Settings()
    with pytest.raises(ValidationError):
        settings.hybrid_alpha = 0.9  # type: ignore[misc]
    with pytest.raises(ValidationError):
        settings.search.hybrid_alpha = 0.9  # type: ignore[misc]
    assert settings.model_copy(update={"hybrid_alpha": 0.9}).search.hybrid_alpha == 0.9


def test_a_group_validates_its_fields_on_its_own() -> None:
    with pytest.raises(ConfigError, match="positive sum"):
        Settings(
            retention_access_weight=0,
            retention_recency_weight=0,
            retention_write_score_weight=0,
            retention_protected_weight=0,
        )
    with pytest.raises(ConfigError, match="hybrid_alpha"):
        SearchSettings(hybrid_alpha=2.0)


def test_a_view_keeps_which_of_its_fields_were_set() -> None:
    settings = Settings(profile="durable", hybrid_alpha=0.5)
    assert "profile" in settings.connection.model_fields_set
    assert "redis_url" not in settings.connection.model_fields_set
    assert "profile" not in Settings().connection.model_fields_set
    assert settings.search.model_fields_set >= {"hybrid_alpha"}
