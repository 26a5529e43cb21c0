"""One settings object for the whole project, in groups.

The fields, in groups, are ``groups``'s; ``Settings`` holds them all, flat.
Values are read, lowest priority first, from the defaults there, then the TOML
file named by ``HINDSIGHT_CONFIG`` (else ``config/default.toml`` in the working
directory, else ``hindsight-redis/config.toml`` in the user's configuration
directory, the first that exists), then ``HINDSIGHT_*`` environment variables,
then keyword arguments. A named file that is missing, a file that is not TOML
and an environment value that is not JSON where JSON is due are ``ConfigError``.
Nothing is read at import time: build a ``Settings()`` and pass it in.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import SecretStr
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from hindsight_redis.errors import ConfigError
from hindsight_redis.settings.groups import (
    ConnectionSettings,
    DedupSettings,
    EmbeddingSettings,
    FilterSettings,
    IdentitySettings,
    IndexSettings,
    LLMSettings,
    Profile,
    RetentionSettings,
    SearchSettings,
    ServerSettings,
    SweepSettings,
    TrustSettings,
    WorkerSettings,
    WriteSettings,
    _Group,
    default_server_dir,
    redis_url_problem,
)

_DEFAULT_CONFIG = Path("config") / "default.toml"


def user_config_file() -> Path:
    """The user's configuration file: ``$XDG_CONFIG_HOME/hindsight-redis/config.toml``
    (``~/.config/...`` when the variable is unset); it may not exist."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "hindsight-redis" / "config.toml"


def config_file() -> Path | None:
    """The TOML file settings are read from, or None when there is none.

    ``HINDSIGHT_CONFIG`` names it (``ConfigError`` when that is not a file);
    otherwise the working directory's ``config/default.toml``, then the user's
    ``user_config_file()``, the first that exists.
    """
    named = os.environ.get("HINDSIGHT_CONFIG")
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"HINDSIGHT_CONFIG names {named!r}, which is not a file: fix the path, or "
                "unset it to read config/default.toml or the user's config.toml"
            )
        return path
    return next((p for p in (_DEFAULT_CONFIG, user_config_file()) if p.is_file()), None)


class _Environment(EnvSettingsSource):
    """The ``HINDSIGHT_*`` variables; one that is not the JSON its setting takes is a
    ``ConfigError`` naming it."""

    def __call__(self) -> dict[str, Any]:
        try:
            return super().__call__()
        except SettingsError as e:
            field = re.search(r'field "(\w+)"', str(e))
            name = f"HINDSIGHT_{field.group(1).upper()}" if field else "a HINDSIGHT_* variable"
            raise ConfigError(
                f"{name} is not valid JSON ({e.__cause__ or e}); give a JSON object or list, "
                "e.g. '{\"preference\": 365}'"
            ) from None


def _toml_source(settings_cls: type[BaseSettings], path: Path) -> TomlConfigSettingsSource:
    """The settings of the TOML file at ``path``; ``ConfigError`` says where it is not TOML."""
    try:
        return TomlConfigSettingsSource(settings_cls, toml_file=path)
    except tomllib.TOMLDecodeError as e:
        # "Expected '=' after a key in a key/value pair (at line 2, column 5)"
        found = re.search(r"\(at line (\d+), column (\d+)\)$", str(e))
        where = f"{path}:{found.group(1)}" if found else str(path)
        what = str(e)[: found.start()].strip() if found else str(e)
        raise ConfigError(f"{where}: not valid TOML: {what}") from None
    except OSError as e:
        raise ConfigError(f"cannot read the config file {path}: {e.strerror or e}") from None


class Settings(  # groups last to first: pydantic lists the fields of the last base first
    TrustSettings,
    SweepSettings,
    RetentionSettings,
    SearchSettings,
    IndexSettings,
    EmbeddingSettings,
    LLMSettings,
    DedupSettings,
    FilterSettings,
    WorkerSettings,
    WriteSettings,
    ServerSettings,
    ConnectionSettings,
    IdentitySettings,
    BaseSettings,
):
    """Every tunable of hindsight-redis; see the README's configuration table.

    Flat, as the environment (``HINDSIGHT_<NAME>``) and the TOML file name
    them; each group is also a view (``settings.search``, ``settings.worker``...),
    and components take their group, not the whole object.
    """

    model_config = SettingsConfigDict(
        env_prefix="HINDSIGHT_", extra="forbid", validate_default=True, frozen=True
    )

    @property
    def identity(self) -> IdentitySettings:
        """The ``IdentitySettings`` of these settings."""
        return _view(IdentitySettings, self)

    @property
    def connection(self) -> ConnectionSettings:
        """The ``ConnectionSettings`` of these settings."""
        return _view(ConnectionSettings, self)

    @property
    def server(self) -> ServerSettings:
        """The ``ServerSettings`` of these settings."""
        return _view(ServerSettings, self)

    @property
    def write(self) -> WriteSettings:
        """The ``WriteSettings`` of these settings."""
        return _view(WriteSettings, self)

    @property
    def worker(self) -> WorkerSettings:
        """The ``WorkerSettings`` of these settings."""
        return _view(WorkerSettings, self)

    @property
    def filters(self) -> FilterSettings:
        """The ``FilterSettings`` of these settings."""
        return _view(FilterSettings, self)

    @property
    def dedup(self) -> DedupSettings:
        """The ``DedupSettings`` of these settings."""
        return _view(DedupSettings, self)

    @property
    def llm(self) -> LLMSettings:
        """The ``LLMSettings`` of these settings."""
        return _view(LLMSettings, self)

    @property
    def embedding(self) -> EmbeddingSettings:
        """The ``EmbeddingSettings`` of these settings."""
        return _view(EmbeddingSettings, self)

    @property
    def index(self) -> IndexSettings:
        """The ``IndexSettings`` of these settings."""
        return _view(IndexSettings, self)

    @property
    def search(self) -> SearchSettings:
        """The ``SearchSettings`` of these settings."""
        return _view(SearchSettings, self)

    @property
    def retention(self) -> RetentionSettings:
        """The ``RetentionSettings`` of these settings."""
        return _view(RetentionSettings, self)

    @property
    def sweeps(self) -> SweepSettings:
        """The ``SweepSettings`` of these settings."""
        return _view(SweepSettings, self)

    @property
    def trust(self) -> TrustSettings:
        """The ``TrustSettings`` of these settings."""
        return _view(TrustSettings, self)

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """The fields as ``repr`` shows them: a password in ``redis_url`` masked."""
        for name, value in super().__repr_args__():
            if name == "redis_url" and isinstance(value, str):
                value = redact_url(value)
            yield name, value

    def to_env(self) -> dict[str, str]:
        """``HINDSIGHT_*`` variables that rebuild these settings in another process.

        Every field set explicitly or from a source is included (secrets in
        clear: pass the result only to processes you start yourself).
        """
        env: dict[str, str] = {}
        for name in self.model_fields_set:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            elif isinstance(value, dict | list):
                value = json.dumps(value)  # what pydantic-settings parses back
            env[f"HINDSIGHT_{name.upper()}"] = str(value)
        return env

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments, then environment, then the TOML file, then defaults."""
        sources: list[PydanticBaseSettingsSource] = [init_settings, _Environment(settings_cls)]
        path = config_file()
        if path is not None:
            sources.append(_toml_source(settings_cls, path))
        return tuple(sources)


G = TypeVar("G", bound=_Group)


def _view(group: type[G], settings: Settings) -> G:
    """The fields of ``group`` read off ``settings`` (validated already); its
    ``model_fields_set`` is theirs (what was set explicitly, e.g. the profile)."""
    values = {name: getattr(settings, name) for name in group.model_fields}
    explicit = settings.model_fields_set & group.model_fields.keys()
    return cast(G, group.model_construct(_fields_set=explicit, **values))


GROUPS: tuple[type[_Group], ...] = (
    IdentitySettings,
    ConnectionSettings,
    ServerSettings,
    WriteSettings,
    WorkerSettings,
    FilterSettings,
    DedupSettings,
    LLMSettings,
    EmbeddingSettings,
    IndexSettings,
    SearchSettings,
    RetentionSettings,
    SweepSettings,
    TrustSettings,
)
"""The groups, in the order the README's configuration table shows them."""


def is_loopback(host: str) -> bool:
    """Whether an address (or ``localhost``) reaches this machine only; False for names."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # "*", "0.0.0.0"-like wildcards are addresses; host names are not


def redact_url(url: str) -> str:
    """``url`` with the credentials of its authority (``user:password@``) masked."""
    scheme, sep, rest = url.partition("://")
    # Up to the query: a password may hold '/' (unencoded), a query value '@'.
    main = re.split(r"[?#]", rest, maxsplit=1)[0]
    if not sep or "@" not in main:
        return url
    return f"{scheme}://***@{rest[main.rindex('@') + 1 :]}"


def load_settings(**overrides: Any) -> Settings:
    """``Settings(**overrides)``: invalid values are one ``ConfigError`` naming each bad
    setting, its source-independent name (``HINDSIGHT_<NAME>``) and what is wrong with it
    (as ``Settings`` itself raises)."""
    return Settings(**overrides)


__all__ = [
    "GROUPS",
    "ConnectionSettings",
    "DedupSettings",
    "EmbeddingSettings",
    "FilterSettings",
    "IdentitySettings",
    "IndexSettings",
    "LLMSettings",
    "Profile",
    "RetentionSettings",
    "SearchSettings",
    "ServerSettings",
    "Settings",
    "SweepSettings",
    "TrustSettings",
    "WorkerSettings",
    "WriteSettings",
    "config_file",
    "default_server_dir",
    "is_loopback",
    "load_settings",
    "redact_url",
    "redis_url_problem",
    "user_config_file",
]
