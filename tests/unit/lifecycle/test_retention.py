"""The retention score and the choice of what a sweep archives (pure, no Redis)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_redis.lifecycle.retention import (
    RetentionPolicy,
    pick_victims,
    retention_parts,
    retention_score,
)
from hindsight_redis.settings import Settings

NOW = 1_800_000_000.0
DAY = 86_400.0
POLICY = RetentionPolicy()

counts = st.integers(min_value=0, max_value=10**6)
ages_days = st.floats(min_value=0, max_value=3650, allow_nan=False)
scores = st.floats(min_value=0, max_value=1, allow_nan=False)
half_lives = st.floats(min_value=0.01, max_value=36500, allow_nan=False)
weights = st.floats(min_value=0, max_value=10, allow_nan=False)


def _score(
    count: int = 0,
    age_days: float = 0.0,
    write: float | None = 0.7,
    protected: bool = False,
    half_life: float = 30.0,
    policy: RetentionPolicy = POLICY,
) -> float:
    last = NOW - age_days * DAY
    return retention_score(
        policy,
        access_count=count,
        last_accessed_at=last,
        created_at=last - DAY,
        write_score=write,
        protected=protected,
        half_life_days=half_life,
        now=NOW,
    )


@given(counts, counts, ages_days, scores, st.booleans(), half_lives)
def test_more_access_never_lowers_the_score(
    a: int, b: int, age: float, write: float, protected: bool, half_life: float
) -> None:
    low, high = sorted((a, b))
    assert _score(high, age, write, protected, half_life) >= _score(
        low, age, write, protected, half_life
    )


@given(counts, ages_days, ages_days, scores, st.booleans(), half_lives)
def test_a_more_recent_access_never_lowers_the_score(
    count: int, a: float, b: float, write: float, protected: bool, half_life: float
) -> None:
    recent, old = sorted((a, b))
    assert _score(count, recent, write, protected, half_life) >= _score(
        count, old, write, protected, half_life
    )


@given(counts, ages_days, scores, scores, st.booleans(), half_lives)
def test_a_higher_write_score_never_lowers_the_score(
    count: int, age: float, a: float, b: float, protected: bool, half_life: float
) -> None:
    low, high = sorted((a, b))
    assert _score(count, age, high, protected, half_life) >= _score(
        count, age, low, protected, half_life
    )


@given(counts, ages_days, scores, half_lives)
def test_protection_never_lowers_the_score(
    count: int, age: float, write: float, half_life: float
) -> None:
    assert _score(count, age, write, True, half_life) >= _score(count, age, write, False, half_life)


@given(counts, ages_days, scores, st.booleans(), half_lives, half_lives)
def test_a_longer_half_life_never_decays_faster(
    count: int, age: float, write: float, protected: bool, a: float, b: float
) -> None:
    short, long = sorted((a, b))
    assert _score(count, age, write, protected, long) >= _score(count, age, write, protected, short)


@given(
    counts,
    ages_days,
    st.one_of(st.none(), scores),
    st.booleans(),
    half_lives,
    weights,
    weights,
    weights,
    weights,
)
def test_the_score_stays_between_0_and_1_whatever_the_weights(
    count: int,
    age: float,
    write: float | None,
    protected: bool,
    half_life: float,
    wa: float,
    wr: float,
    ww: float,
    wp: float,
) -> None:
    if wa + wr + ww + wp <= 0:
        return
    policy = RetentionPolicy(wa, wr, ww, wp)
    assert 0.0 <= _score(count, age, write, protected, half_life, policy) <= 1.0


def test_frequency_saturates_so_one_hot_memory_does_not_dwarf_the_rest() -> None:
    parts = retention_parts(
        POLICY,
        access_count=[0, 1, 10, 100, 10_000],
        last_accessed_at=NOW,
        created_at=NOW,
        write_score=0.5,
        protected=0,
        half_life_days=30,
        now=NOW,
    )
    assert list(parts.frequency[:3]) == sorted(parts.frequency[:3])
    assert parts.frequency[3] == parts.frequency[4] == 1.0
    assert parts.frequency[1] > 0.1  # one read already counts


def test_time_decay_halves_every_half_life_from_the_last_access() -> None:
    fresh = _score(count=0, age_days=0, write=0.0, half_life=30)
    aged = _score(count=0, age_days=30, write=0.0, half_life=30)
    older = _score(count=0, age_days=60, write=0.0, half_life=30)
    assert aged == pytest.approx(fresh / 2) and older == pytest.approx(fresh / 4)


def test_the_readme_worked_example() -> None:
    # dialogue memory (half-life 30 days), read 3 times, last 45 days ago, write score 0.7
    assert _score(count=3, age_days=45, write=0.7, half_life=30) == pytest.approx(0.366, abs=5e-4)
    # the same as a preference (365 days)
    assert _score(count=3, age_days=45, write=0.7, half_life=365) == pytest.approx(0.536, abs=5e-4)
    # never read, 90 days old, write score 0.65, dialogue: under the default threshold 0.2
    assert _score(count=0, age_days=90, write=0.65, half_life=30) == pytest.approx(0.1675, abs=5e-4)


def test_an_unscored_memory_counts_as_half_way() -> None:
    assert _score(write=None) == pytest.approx(_score(write=0.5))


def test_half_life_is_the_memory_s_own_then_its_task_s_then_the_default() -> None:
    policy = RetentionPolicy(half_life_days=90, task_half_life_days={"preference": 365})
    assert policy.half_life_for("preference", 7.0) == 7.0
    assert policy.half_life_for("preference") == 365.0
    assert policy.half_life_for("dialogue") == 90.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"access_weight": -1},
        {"access_weight": 0, "recency_weight": 0, "write_score_weight": 0, "protected_weight": 0},
        {"half_life_days": 0},
        {"task_half_life_days": {"x": -1}},
        {"access_saturation": 0},
    ],
)
def test_a_policy_with_impossible_values_is_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        RetentionPolicy(**kwargs)  # type: ignore[arg-type]


def test_settings_give_task_half_lives_from_toml_and_environment(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "c.toml"
    path.write_text("half_life_days = 60\n[task_half_life_days]\npreference = 400\n")
    monkeypatch.setenv("HINDSIGHT_CONFIG", str(path))
    policy = RetentionPolicy.from_settings(Settings().retention)
    assert policy.half_life_for("preference") == 400 and policy.half_life_for("x") == 60
    monkeypatch.setenv("HINDSIGHT_TASK_HALF_LIFE_DAYS", '{"dialogue": 10}')
    settings = Settings()  # the environment's table is merged over the file's
    assert settings.task_half_life_days == {"preference": 400, "dialogue": 10}
    monkeypatch.delenv("HINDSIGHT_CONFIG")
    rebuilt = settings.to_env()["HINDSIGHT_TASK_HALF_LIFE_DAYS"]  # as `up` passes it on
    monkeypatch.setenv("HINDSIGHT_TASK_HALF_LIFE_DAYS", rebuilt)
    assert Settings().task_half_life_days == {"preference": 400, "dialogue": 10}


def test_the_default_config_file_sets_the_task_half_lives() -> None:
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    config = tomllib.loads((root / "config" / "default.toml").read_text())
    assert config["task_half_life_days"] == Settings().task_half_life_days


# -- what a sweep picks -------------------------------------------------------------

arrays = st.integers(min_value=0, max_value=60).flatmap(
    lambda n: st.tuples(
        st.lists(scores, min_size=n, max_size=n), st.lists(st.booleans(), min_size=n, max_size=n)
    )
)


@given(arrays, st.one_of(st.none(), scores), st.one_of(st.none(), st.integers(0, 80)))
def test_a_sweep_never_picks_a_protected_memory_and_picks_the_lowest(
    data: tuple[list[float], list[bool]], threshold: float | None, max_active: int | None
) -> None:
    score, protected = np.array(data[0], dtype=float), np.array(data[1], dtype=bool)
    picked = pick_victims(score, protected, threshold=threshold, max_active=max_active)
    assert not protected[picked].any()
    assert len(set(picked.tolist())) == len(picked)
    rest = np.setdiff1d(np.flatnonzero(~protected), picked)
    if len(picked) and len(rest):
        assert score[picked].max() <= score[rest].min()
    if threshold is not None:
        assert set(np.flatnonzero(~protected & (score < threshold))) <= set(picked.tolist())
    if max_active is not None:
        left, guarded = len(score) - len(picked), int(protected.sum())
        assert left <= max(max_active, guarded)
        if threshold is None:
            assert left == min(len(score), max(max_active, guarded))
    if threshold is None and max_active is None:
        assert len(picked) == 0


def test_a_cap_below_the_protected_count_keeps_every_protected_memory() -> None:
    score = np.array([0.1, 0.2, 0.3, 0.05])
    protected = np.array([True, True, False, True])
    picked = pick_victims(score, protected, threshold=None, max_active=1)
    assert picked.tolist() == [2]


def test_scores_of_a_whole_namespace_match_one_by_one() -> None:
    rng = np.random.default_rng(3)
    n = 200
    count = rng.integers(0, 500, n)
    last = NOW - rng.random(n) * 400 * DAY
    write = np.where(rng.random(n) < 0.1, math.nan, rng.random(n))
    guard = rng.random(n) < 0.2
    life = rng.choice([30.0, 90.0, 365.0], n)
    parts = retention_parts(
        POLICY,
        access_count=count,
        last_accessed_at=last,
        created_at=last - DAY,
        write_score=write,
        protected=guard,
        half_life_days=life,
        now=NOW,
    )
    for i in range(n):
        one = retention_score(
            POLICY,
            access_count=int(count[i]),
            last_accessed_at=float(last[i]),
            created_at=float(last[i] - DAY),
            write_score=None if math.isnan(write[i]) else float(write[i]),
            protected=bool(guard[i]),
            half_life_days=float(life[i]),
            now=NOW,
        )
        assert parts.score[i] == pytest.approx(one)
