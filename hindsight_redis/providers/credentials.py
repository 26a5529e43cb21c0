"""Whether a provider's key is missing, known before litellm is imported.

litellm takes a second or more to import and then reports a missing key as a
server error (500). For the providers whose key lives in one environment
variable, the check here answers at once and names the variable to set.
Providers it does not know (Azure, Bedrock, Vertex: several ways to sign in)
and local ones (Ollama) are left to the provider itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

KEY_VARIABLES: Mapping[str, str] = {
    "openai": "OPENAI_API_KEY",
    "text-completion-openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "cohere": "COHERE_API_KEY",
    "voyage": "VOYAGE_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "groq": "GROQ_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "jina_ai": "JINA_AI_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
}
"""A provider (litellm's prefix) and the environment variable its key is read from."""
_OPENAI_MODELS = ("text-embedding-", "gpt-", "o1", "o3", "o4", "chatgpt-")


def provider_of(model: str) -> str:
    """litellm's provider of ``model``: its prefix (``cohere/embed-v4``), else ``openai`` for
    OpenAI's own model names, else ``""`` (unknown)."""
    if "/" in model:
        return model.split("/", 1)[0].lower()
    return "openai" if model.lower().startswith(_OPENAI_MODELS) else ""


def missing_key(model: str, *, api_key: object | None, setting: str) -> str | None:
    """What to set when ``model``'s provider needs a key and none is given (``api_key``
    passed, or the provider's variable in the environment); None when nothing is missing
    or the provider is not one this module knows. ``setting``: the variable of our own
    setting that passes a key (``HINDSIGHT_EMBEDDING_API_KEY``)."""
    variable = KEY_VARIABLES.get(provider_of(model))
    if variable is None or api_key is not None or os.environ.get(variable):
        return None
    return (
        f"{model} needs an API key: set {variable} or {setting} "
        "(any value for a local server that asks for none)"
    )
