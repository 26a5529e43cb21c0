"""The wrapper every Lua script of the package runs through (docket's ``@redis_script``).

The scripts themselves are in the ``scripts`` package. A script is an async function
whose signature names its KEYS and ARGV and whose docstring is its Lua body
(a stub: mypy's ``empty-body`` is off for ``scripts``). Each parameter
becomes a Lua local
(``local memory = KEYS[1]``; ``Arg[int]`` is ``tonumber(ARGV[i])``,
``Arg[bool]`` a boolean; a trailing ``KeyList``/``ArgList`` gives
``<name>_first``, the index of its first slot). The SHA is computed once;
a call is one ``EVALSHA``, sent again as ``EVAL`` (which caches the script)
when the server answers ``NOSCRIPT``: a restart, a ``SCRIPT FLUSH`` or a
failed-over cluster shard (a replica's script cache starts empty), and
``EVAL`` is routed by its keys like ``EVALSHA``. ``queue`` adds a call to a
pipeline, ``execute`` runs such a pipeline and re-sends the calls refused
with ``NOSCRIPT``. mypy checks every call against the signature.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import (
    Annotated,
    Any,
    Concatenate,
    Generic,
    ParamSpec,
    TypeAlias,
    TypeVar,
    get_args,
    get_type_hints,
)

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import NoScriptError


class _KeyMark:
    """One KEYS slot."""


class _KeyListMark:
    """The remaining KEYS slots."""


class _ArgMark:
    """One ARGV slot."""


class _ArgListMark:
    """The remaining ARGV slots."""


_ArgT = TypeVar("_ArgT", str, bytes, int, float, bool)
Key: TypeAlias = Annotated[str, _KeyMark]
"""One key."""
KeyList: TypeAlias = Annotated[Sequence[str], _KeyListMark]
"""The remaining keys (last key parameter); the Lua body sees ``<name>_first``."""
Arg: TypeAlias = Annotated[_ArgT, _ArgMark]
"""One argument: ``Arg[str]``/``Arg[bytes]`` raw, ``Arg[int]``/``Arg[float]`` a number,
``Arg[bool]`` a boolean."""
ArgList: TypeAlias = Annotated[Sequence[str | bytes | int | float], _ArgListMark]
"""The remaining arguments (last parameter); the Lua body sees ``<name>_first``."""

P = ParamSpec("P")
R = TypeVar("R")
_SOURCES: dict[str, str] = {}  # sha -> Lua, for pipelines that meet NOSCRIPT


_RAW = frozenset({str, bytes})


def _encode(value: Any) -> Any:
    if value.__class__ in _RAW:  # the common case, checked first: write batches are bytes
        return value
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return str(value)
    return value


def _lua_local(name: str, py_type: Any, index: int) -> str:
    if py_type is bool:
        return f"local {name} = ARGV[{index}] == '1'"
    if py_type in (int, float):
        return f"local {name} = tonumber(ARGV[{index}])"
    return f"local {name} = ARGV[{index}]"


class Script(Generic[P, R]):
    """A Lua script with named KEYS and ARGV; see the module docstring."""

    def __init__(self, fn: Callable[Concatenate[Redis, P], Awaitable[R]]) -> None:
        body = inspect.getdoc(fn)
        if not body:
            raise TypeError(f"script {fn.__qualname__} needs its Lua body as docstring")
        hints = get_type_hints(fn, include_extras=True)
        params = list(inspect.signature(fn).parameters)[1:]  # the first is the client
        self.name = fn.__name__
        self._keys: list[str] = []
        self._args: list[str] = []
        self._key_list: str | None = None
        self._arg_list: str | None = None
        preamble: list[str] = []
        for name in params:
            mark, py_type = self._slot(fn, name, hints[name])
            if self._key_list is not None and mark in (_KeyMark, _KeyListMark):
                raise TypeError(f"{fn.__qualname__}: KeyList must be the last key parameter")
            if self._arg_list is not None:
                raise TypeError(f"{fn.__qualname__}: ArgList must be the last parameter")
            if mark is _KeyMark:
                self._keys.append(name)
                preamble.append(f"local {name} = KEYS[{len(self._keys)}]")
            elif mark is _KeyListMark:
                self._key_list = name
                preamble.append(f"local {name}_first = {len(self._keys) + 1}")
            elif mark is _ArgMark:
                self._args.append(name)
                preamble.append(_lua_local(name, py_type, len(self._args)))
            else:
                self._arg_list = name
                preamble.append(f"local {name}_first = {len(self._args) + 1}")
        self.lua = "\n".join(preamble) + "\n\n" + body
        self.sha = hashlib.sha1(self.lua.encode()).hexdigest()
        _SOURCES[self.sha] = self.lua
        self.__doc__ = fn.__doc__

    @staticmethod
    def _slot(fn: Callable[..., Any], name: str, hint: Any) -> tuple[type, Any]:
        for meta in getattr(hint, "__metadata__", ()):
            if meta in (_KeyMark, _KeyListMark, _ArgMark, _ArgListMark):
                return meta, get_args(hint)[0]
        raise TypeError(f"{fn.__qualname__}.{name} must be a Key, KeyList, Arg[...] or ArgList")

    def _command(self, kwargs: dict[str, Any]) -> list[Any]:
        keys = [kwargs[name] for name in self._keys]
        if self._key_list is not None:
            keys.extend(kwargs[self._key_list])
        args = [_encode(kwargs[name]) for name in self._args]
        if self._arg_list is not None:
            args.extend([_encode(v) for v in kwargs[self._arg_list]])
        return ["EVALSHA", self.sha, len(keys), *keys, *args]

    async def __call__(self, redis: Redis, *args: P.args, **kwargs: P.kwargs) -> R:
        """Run the script (one round trip; two more when the server must load it first)."""
        command = self._command(kwargs)
        try:
            result: R = await redis.execute_command(*command)  # type: ignore[no-untyped-call]
        except NoScriptError:
            result = await redis.execute_command(*_with_source(command))  # type: ignore[no-untyped-call]
        return result

    def queue(self, pipe: Pipeline, *args: P.args, **kwargs: P.kwargs) -> None:
        """Add a call of the script to ``pipe`` (run it with ``execute``)."""
        pipe.execute_command(*self._command(kwargs))

    def queue_source(self, pipe: Pipeline, *args: P.args, **kwargs: P.kwargs) -> None:
        """Add a call as ``EVAL`` of the source (which caches the script), for a
        pipeline that must be sent again whole after ``NOSCRIPT`` (see ``refused``)."""
        pipe.execute_command(*_with_source(self._command(kwargs)))


def refused(result: object) -> bool:
    """Whether a pipelined script call was refused with ``NOSCRIPT`` (so it did not run)."""
    return isinstance(result, NoScriptError)


def redis_script(fn: Callable[Concatenate[Redis, P], Awaitable[R]]) -> Script[P, R]:
    """Declare a Lua script: see the module docstring."""
    return Script(fn)


async def execute(pipe: Pipeline, *, raise_on_error: bool = True) -> list[Any]:
    """Run ``pipe``; script calls refused with ``NOSCRIPT`` are sent again once loaded.

    A refused call did not run, so nothing runs twice. Use it for every
    pipeline that holds ``Script.queue`` calls.
    """
    stack = list(pipe.command_stack)  # also on a cluster's (cluster.ClusterClientPipeline)
    results = list(await pipe.execute(raise_on_error=False))
    refused = [i for i, r in enumerate(results) if isinstance(r, NoScriptError)]
    if refused:
        for i in refused:
            pipe.execute_command(*_with_source(stack[i][0]), **stack[i][1])
        again = await pipe.execute(raise_on_error=False)
        for i, result in zip(refused, again, strict=True):
            results[i] = result
    if raise_on_error:
        for result in results:
            if isinstance(result, Exception):
                raise result
    return results


def _with_source(command: Sequence[Any]) -> list[Any]:
    """An ``EVALSHA`` command as the ``EVAL`` of its script (same keys and arguments)."""
    return ["EVAL", _SOURCES[str(command[1])], *command[2:]]
