"""Secrets recognised by their form: keys and tokens of cloud providers and common
services, private keys, JWTs, credentials inside URLs, payment card numbers, US social
security numbers and Chinese resident ID numbers.

Pure module: no I/O. Each detector is a regular expression over the text (with a
check of what it matched where a form alone says too little: a card number must pass
the Luhn check and start as cards do, an ID number must carry its check digit). A
number is not taken for a card or an ID when the words just before it call it an
order, a ticket, a tracking or phone number, an ISBN... (``_NOT_PERSONAL``), unless
they also call it a card. The secrets stated in words ("the password is ...") are
``trust.prose``'s.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret found in a text: its kind (``aws-key``, ``password``...) and where it is,
    ``text[start:end]`` (the secret itself, not the words around it)."""

    kind: str
    start: int
    end: int


# (kind, pattern, bounded): the whole match is the secret unless the pattern has a group
# "v"; ``bounded``: the match must not continue a longer token (checked after the match:
# a pattern that starts with its literal prefix is found by the regex engine's fast
# search, one that starts with a look-behind is tried at every position, 15x slower).
_TOKEN_FORMATS: tuple[tuple[str, str, bool], ...] = (
    (
        "aws-key",
        r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z0-9]{16}(?![A-Z0-9])",
        True,
    ),
    ("google-key", r"AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])", True),
    ("google-key", r"GOCSPX-[0-9A-Za-z_\-]{28}", True),
    ("google-key", r"ya29\.[0-9A-Za-z_\-]{20,}", True),
    (
        "azure-key",
        r"(?i:AccountKey|SharedAccessKey|SharedSecret|SharedAccessSignature)\s*=\s*"
        r"(?P<v>[A-Za-z0-9+/%]{16,}={0,2})",
        False,
    ),
    ("azure-key", r"[?&](?i:sig)=(?P<v>[A-Za-z0-9%+/=]{20,})", False),
    ("azure-key", r"[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])", True),
    ("github-token", r"gh[pousr]_[A-Za-z0-9]{36,255}(?![A-Za-z0-9])", True),
    ("github-token", r"github_pat_[A-Za-z0-9_]{22,255}", True),
    ("gitlab-token", r"gl(?:pat|dt|rt|ptt|ft|cbt|imt|soat|agent)-[A-Za-z0-9_\-]{20,}", True),
    ("slack-token", r"xox[abposre]-[A-Za-z0-9\-]{10,250}", True),
    ("slack-token", r"xapp-\d-[A-Za-z0-9\-]{10,250}", True),
    (
        "slack-webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9/_\-]{8,})",
        False,
    ),
    (
        "discord-webhook",
        r"discord(?:app)?\.com/api/webhooks/(?P<v>\d+/[A-Za-z0-9_\-]{20,})",
        False,
    ),
    ("stripe-key", r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,247}(?![A-Za-z0-9])", True),
    ("stripe-key", r"whsec_[A-Za-z0-9+/=]{20,}", True),
    ("anthropic-key", r"sk-ant-[a-z]{2,10}\d{2}-[A-Za-z0-9_\-]{20,}", True),
    (
        "openai-key",
        r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|(?=[A-Za-z]*\d)[A-Za-z0-9]{20,})"
        r"(?![A-Za-z0-9])",
        True,
    ),
    ("sendgrid-key", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}", True),
    ("twilio-key", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", True),
    ("telegram-token", r"\d{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])", True),
    ("jwt", r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*", True),
    ("token", r"(?i:bearer)\s+(?P<v>(?=[A-Za-z0-9_\-.~+/]*\d)[A-Za-z0-9_\-.~+/]{16,}=*)", True),
    (
        "password",
        r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:basic)\s+(?P<v>[A-Za-z0-9+/]{8,}={0,2})",
        False,
    ),
    *(
        ("api-token", pattern + r"(?![A-Za-z0-9_\-])", True)
        for pattern in (
            r"key-[0-9a-f]{32}",
            r"[0-9a-f]{32}-us\d{1,2}",
            r"npm_[A-Za-z0-9]{36}",
            r"pypi-AgE[A-Za-z0-9_\-]{50,}",
            r"hf_[A-Za-z0-9]{30,}",
            r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
            r"do[por]_v1_[a-f0-9]{64}",
            r"sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,43}",
            r"lin_api_[A-Za-z0-9]{40}",
            r"ntn_[A-Za-z0-9]{40,}",
            r"ATATT3[A-Za-z0-9_\-=]{50,}",
            r"dapi[a-f0-9]{32}",
            r"gsk_[A-Za-z0-9]{40,}",
            r"xai-[A-Za-z0-9]{40,}",
            r"HRKU-[A-Za-z0-9_\-]{30,}",
            r"hv[sb]\.[A-Za-z0-9_\-]{24,}",
            r"dp\.(?:st|pt|ct|sa|scim|audit)\.[A-Za-z0-9_\-]{40,}",
            r"glc_[A-Za-z0-9+/=]{32,}",
            r"glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}",
            r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
            r"NRAK-[A-Z0-9]{27}",
            r"LTAI[A-Za-z0-9]{12,20}",
            r"AKID[A-Za-z0-9]{13,40}",
            r"r8_[A-Za-z0-9]{37}",
            r"rubygems_[a-f0-9]{48}",
            r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{32,}",
            r"sntr[ysu]s?_[A-Za-z0-9=_\-+/]{30,}",
            r"figd_[A-Za-z0-9_\-]{40,}",
            r"dckr_pat_[A-Za-z0-9_\-]{27,}",
            r"sbp_[a-f0-9]{40}",
            r"[ps]k\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{10,}",
            r"EAA[A-Za-z0-9]{90,}",
        )
    ),
)
# Private keys (the armour, a whole block) and credentials in URLs: asked for only when
# the text holds "-----" or "@", "?", "&" (``find_secrets``'s gates).
_ARMOURED: tuple[tuple[str, str, bool], ...] = (
    (
        "private-key",
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]{0,16000}?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:(?:\s|\\[nr])*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: [^\n\\]*))*)",
        False,
    ),
    ("private-key", r"PuTTY-User-Key-File-\d+:[\s\S]{0,8000}?Private-MAC:\s*[0-9a-fA-F]+", False),
    ("private-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", True),
)
_IN_URLS: tuple[tuple[str, str, bool], ...] = (
    (
        "url-credentials",
        r"://[^\s:/?#@\[\]]*:(?P<v>[^\s/?#]+)@[^\s@/?#]+",
        False,
    ),
    (
        "url-credentials",
        r"[A-Za-z0-9._%+\-]{1,64}:(?P<v>[^\s@:/]{3,64})@"
        r"(?:(?:[A-Za-z0-9\-]+\.)+[A-Za-z]{2,}|\d{1,3}(?:\.\d{1,3}){3}|localhost)(?![\w\-])",
        True,
    ),
    (
        "url-credentials",
        r"[?&;](?i:password|passwd|pwd|pass|token|access_token|auth_token|id_token"
        r"|refresh_token|api_key|apikey|api-key|secret|client_secret|signature"
        r"|x-amz-signature|x-amz-security-token|x-goog-signature)=(?P<v>[^&\s#\"'<>]{4,})",
        False,
    ),
)
_BOUNDARY = "/.:@%+-"  # what may not sit before a user:password@host either


def _compiled(
    table: tuple[tuple[str, str, bool], ...],
) -> tuple[tuple[str, re.Pattern[str], bool], ...]:
    return tuple((kind, re.compile(pattern), bounded) for kind, pattern, bounded in table)


_TOKENS = _compiled(_TOKEN_FORMATS)
_ARMOURS = _compiled(_ARMOURED)
_URLS = _compiled(_IN_URLS)
_PLACEHOLDER = re.compile(
    r"^(?:\$|\{\{|\{|<|%\(|%[A-Za-z_]+%|\[secret:|\*+$|•+$|x{3,}$|X{3,}$|\.\.\.)"
)


# Words documentation writes where a secret goes (postgres://user:password@host).
_PLACEHOLDER_WORD = re.compile(
    r"(?i:(?:your|my|the)?[_-]?(?:password|passwd|pass|pwd|secret|token|api[_-]?key)"
    r"(?:[_-]?here)?|changeme|example|redacted|hidden)$"
)


def is_placeholder(value: str) -> bool:
    """A value that stands for a secret instead of being one: ``${DB_PASS}``, ``<token>``,
    ``{{ vault }}``, ``***``, ``xxxx``, ``password``, ``your_token``, a placeholder of this
    module."""
    return _PLACEHOLDER.match(value) is not None or _PLACEHOLDER_WORD.match(value) is not None


def entropy(value: str) -> float:
    """Shannon entropy of ``value``'s characters, in bits per character."""
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in counts.values()) if size else 0.0


def _matches(
    text: str, table: tuple[tuple[str, re.Pattern[str], bool], ...], extra: str = ""
) -> Iterator[Finding]:
    for kind, pattern, bounded in table:
        for found in pattern.finditer(text):
            before = text[found.start() - 1] if found.start() else " "
            if bounded and (before.isalnum() or before in extra):
                continue
            group = "v" if "v" in pattern.groupindex else 0
            start, end = found.span(group)
            if group and is_placeholder(found.group(group)):
                continue
            yield Finding(kind, start, end)


def token_formats(text: str) -> Iterator[Finding]:
    """Keys and tokens recognised by their form."""
    return _matches(text, _TOKENS)


def armoured_keys(text: str) -> Iterator[Finding]:
    """Private keys: PEM and OpenSSH blocks, PuTTY key files, age secret keys."""
    return _matches(text, _ARMOURS)


def url_credentials(text: str) -> Iterator[Finding]:
    """Passwords in URLs and DSNs (``scheme://user:password@host``, ``user:password@host``)
    and credentials in query strings (``?password=...``, ``&token=...``)."""
    return _matches(text, _URLS, _BOUNDARY)


# -- AWS secret access keys: 40 characters of base64, told from others by the text ---------

_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_WORDS = re.compile(r"(?i:aws|amazon|secret)|AKIA|ASIA")


def aws_secrets(text: str) -> Iterator[Finding]:
    """40-character base64 runs of upper and lower case letters and digits, in a text that
    speaks of AWS, Amazon, a secret or holds an access key id."""
    if _AWS_WORDS.search(text) is None:
        return
    for found in _AWS_SECRET.finditer(text):
        value = found.group()
        if (
            any(c.isupper() for c in value)
            and any(c.islower() for c in value)
            and any(c.isdigit() for c in value)
        ):
            yield Finding("aws-secret", *found.span())


# -- numbers: payment cards, US social security numbers, Chinese resident IDs ---------------

_NUMBER = re.compile(r"\d(?:[ .\-]?\d)*[Xx]?")
_CARD_FORMS = ((4, 4, 4, 4), (4, 6, 5), (4, 6, 4), *((4, 4, 4, 4, n) for n in (1, 2, 3)))
_SSN_WORDS = re.compile(
    r"(?i:\bssn\b|\bss#|\bss\s+(?:number|no\.?|#)|\bsocial(?:\s+security)?(?:\s+(?:number|no\.?|#))?)|社会安全号|社安号"
)
_CN_ID = re.compile(
    r"[1-9]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx]$"
)
_CN_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_NOT_PERSONAL = re.compile(
    r"(?i:\b(?:order|orders|tracking|track|invoice|ticket|ref|reference|confirmation|booking"
    r"|reservation|isbn|phone|tel|fax|mobile|serial|sku|part|case|incident|transaction|txn"
    r"|shipment|parcel|package|waybill|account|acct|iban|routing|issue|build|job|request"
    r"|req|po)\b|\bno\.|#)"
    r"|订单|单号|运单|快递|物流|发票|工单|编号|电话|手机|流水|交易号|账号|书号"
)
_CARD_WORDS = re.compile(
    r"(?i:\b(?:card|cards|visa|master\s?card|amex|american\s+express|discover|jcb|unionpay"
    r"|diners|maestro|credit|debit|cc|cvv|pan)\b)|卡号|信用卡|银行卡|借记卡|储蓄卡|银联"
)
_ID_WORDS = re.compile(r"身份证|身份號|身分證|(?i:\bID\s+card|\bresident\s+ID)")
_BEFORE = 32  # characters before a number in which words say what it is


def luhn_ok(digits: str) -> bool:
    """Whether a digit string passes the Luhn check (card numbers do)."""
    total = 0
    for n, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if n % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_prefix_ok(digits: str) -> bool:
    """Whether a number starts, and is as long, as a card of a known network is."""
    n, two, three, four = len(digits), int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":
        return n in (13, 16, 19)
    if 51 <= two <= 55 or 2221 <= four <= 2720 or 2200 <= four <= 2204:
        return n == 16
    if two in (34, 37):
        return n == 15
    if 3528 <= four <= 3589 or two in (62, 65, 81) or four == 6011 or 644 <= three <= 649:
        return 16 <= n <= 19
    if 300 <= three <= 305 or two in (36, 38, 39) or four == 3095:
        return 14 <= n <= 19
    if two == 50 or 56 <= two <= 69:
        return 12 <= n <= 19
    return False


def _named_otherwise(text: str, start: int, card: bool = False) -> bool:
    """Whether the words before ``start`` call the number something else (an order, a
    ticket...), and not a card when ``card``."""
    before = text[max(0, start - _BEFORE) : start]
    if _NOT_PERSONAL.search(before) is None:
        return False
    return not (card and _CARD_WORDS.search(before) is not None)


def cn_id_ok(number: str) -> bool:
    """Whether an 18-character Chinese resident ID number carries its check digit."""
    total = sum(int(d) * w for d, w in zip(number[:17], _CN_ID_WEIGHTS, strict=True))
    return "10X98765432"[total % 11] == number[17].upper()


def _groups(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """The digit groups of a number at ``text[start:end]``: (start, end, separator after)."""
    groups = []
    first = start
    for n in range(start, end + 1):
        if n == end or text[n] in " .-":
            groups.append((first, n, text[n] if n < end else ""))
            first = n + 1
    return groups


def _cards(text: str, groups: list[tuple[int, int, str]]) -> Iterator[Finding]:
    """Runs of groups written as a card number is (16 digits, 4-4-4-4, 4-6-5...) that
    pass the Luhn check and start as a card of a known network does."""
    for i, (first, last, _) in enumerate(groups):
        candidates = [(first, last)] if 13 <= last - first <= 19 else []
        for form in _CARD_FORMS:
            window = groups[i : i + len(form)]
            seps = {sep for _, _, sep in window[:-1]}
            if (
                len(window) == len(form)
                and len(seps) == 1
                and seps <= {" ", "-", "."}
                and all(b - a == size for (a, b, _), size in zip(window, form, strict=True))
            ):
                candidates.append((first, window[-1][1]))
        for start, end in candidates:
            digits = "".join(ch for ch in text[start:end] if ch.isdigit())
            if (
                luhn_ok(digits)
                and card_prefix_ok(digits)
                and not _named_otherwise(text, start, card=True)
            ):
                yield Finding("card-number", start, end)


def _ssn(text: str, start: int, end: int, groups: list[tuple[int, int, str]]) -> bool:
    """Whether the number at ``text[start:end]`` is a US social security number: 3-2-4
    digits joined by dashes (or, named SSN just before, by spaces, dots or nothing)."""
    named = _SSN_WORDS.search(text, max(0, start - _BEFORE), start) is not None
    if len(groups) == 1 and end - start == 9 and named:
        digits = text[start:end]
    elif [b - a for a, b, _ in groups] == [3, 2, 4] and len({g[2] for g in groups[:2]}) == 1:
        if groups[0][2] != "-" and not named:
            return False
        digits = "".join(text[a:b] for a, b, _ in groups)
    else:
        return False
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    if area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000":
        return False
    return named or not _named_otherwise(text, start)


def numbers(text: str) -> Iterator[Finding]:
    """Payment card numbers (Luhn), US social security numbers, Chinese resident IDs."""
    for found in _NUMBER.finditer(text):
        start, end = found.span()
        if end - start < 9:
            continue
        if (start and (text[start - 1].isalnum() or text[start - 1] in "_-./")) or (
            end < len(text) and (text[end].isalnum() or text[end] in "_-")
        ):
            continue
        groups = _groups(text, start, end)
        yield from _cards(text, groups)
        if _ssn(text, start, end, groups):
            yield Finding("ssn", start, end)
        if _CN_ID.match(found.group()):
            named = _ID_WORDS.search(text, max(0, start - 12), start) is not None
            if (named or cn_id_ok(found.group())) and not _named_otherwise(text, start):
                yield Finding("cn-id", start, end)


Detector = Callable[[str], Iterator[Finding]]
