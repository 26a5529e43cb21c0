"""When a provider call is worth retrying: one rule for the LLM client and the embedders.

Pure module: the rule reads the exception's class names and HTTP status, so
it needs no litellm import (litellm is slow to import).
"""

from __future__ import annotations

# litellm's (and the OpenAI SDK's) transient errors, by class name.
TRANSIENT_ERRORS = frozenset(
    {
        "APIConnectionError",
        "APITimeoutError",
        "BadGatewayError",
        "InternalServerError",
        "RateLimitError",
        "ServiceUnavailableError",
        "Timeout",
    }
)
# Errors the same request will meet again: credentials, permissions, the request itself.
PERMANENT_ERRORS = frozenset(
    {
        "AuthenticationError",
        "PermissionDeniedError",
        "BadRequestError",
        "NotFoundError",
        "UnprocessableEntityError",
        "ContextWindowExceededError",
        "ContentPolicyViolationError",
        "UnsupportedParamsError",
        "InvalidRequestError",
    }
)
# litellm reports a missing key as a 500 (InternalServerError): its message says so.
_NO_CREDENTIALS = (
    "missing credentials",
    "api_key client option must be set",
    "incorrect api key",
    "invalid api key",
    "invalid_api_key",
    "no api key",
)
# Request Timeout, Conflict, Too Early, Too Many Requests; and every 5xx.
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


def is_retryable(exc: BaseException) -> bool:
    """True when trying the same request again may succeed (timeouts, 429, 5xx...); never
    for credentials, permissions or a bad request, whatever status they came with."""
    if any(cls.__name__ in PERMANENT_ERRORS for cls in type(exc).__mro__):
        return False
    message = str(exc).lower()
    if any(marker in message for marker in _NO_CREDENTIALS):
        return False
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    if any(cls.__name__ in TRANSIENT_ERRORS for cls in type(exc).__mro__):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status in RETRYABLE_STATUS or status >= 500)
