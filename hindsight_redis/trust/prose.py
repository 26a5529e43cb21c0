"""Secrets stated in words or assigned in code and configuration: "the password is ...",
"密码是 ...", "my API key is ...", ``DB_PASSWORD=...``, ``"client_secret": "..."``,
``--token ...``.

Pure module: no I/O. A cue (password, passcode, PIN, 密码, 口令; key, token, secret,
credential, 密钥, 令牌; an identifier ending in one of them) followed by a connector
("is", "was set to", ":", "=", 是, 为...) and a value. What tells a secret from a
sentence that merely talks about one is the value: a password must not be a word that
describes ("required", "wrong", "stored", "the"...: ``_STOP``, and words ending in
-ed, -ing, -ly), nor a number of characters ("12 characters", "8 位"); a key or token
must look random (letters and digits, ``MIN_TOKEN_CHARS`` or more, spread out:
``entropy``), and after a plain "key" (a cache key, a primary key) it must not be a
hash or a UUID, which are ids, not secrets.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from importlib import resources

from hindsight_redis.core.text import HAN_CLASS
from hindsight_redis.trust.formats import Finding, entropy, is_placeholder

MIN_TOKEN_CHARS = 16
"""The shortest value a key or token may be unless a connector says it is one ("key: ..."
allows 12)."""


def _word_lists() -> dict[str, frozenset[str]]:
    """The package's word lists (``data/secret_words.toml``), each a set."""
    text = resources.files("hindsight_redis").joinpath("data", "secret_words.toml").read_text()
    return {name: frozenset(words.split()) for name, words in tomllib.loads(text).items()}


_WORDS = _word_lists()
_STOP = _WORDS["not_passwords"]
_NOT_SECRET_KEYS = _WORDS["not_secret_keys"]
_PASSWORD_PARTS = _WORDS["password_parts"]
_SECRET_PARTS = _WORDS["secret_parts"]
_KEY_LEADS = _WORDS["key_leads"]
_NOT_SECRET_NAMES = _WORDS["not_secret_names"]
_UNIT_AFTER = re.compile(
    r"\s*(?:(?i:characters?|chars?|digits?|letters?|symbols?|long|words?|bytes?)\b"
    r"|位|个字符|个字|字符|个|码)"
)
_TRAILING = ".,;:?)]}>\"'"
_CJK_PUNCT = "\u3000-\u303f\uff00-\uffef"
_QUOTED = "(?<![A-Za-z])(?P<open>[\"'`“‘「『])(?P<q>[^\"'`”’」』\\n]{1,128})[\"'`”’」』]"
_VALUE = rf"(?:{_QUOTED}|(?P<b>[^\s{_CJK_PUNCT}{HAN_CLASS}\"'`“‘「『]{{1,128}}))"
_ASCII_VALUE = rf"(?:{_QUOTED}|(?P<b>[!-~]{{1,128}}))"
# "for the staging db", "of root on prod", "(temporary)": what may sit between a cue and
# its verb.
_QUALIFIER = (
    r"(?:\s+(?:for|to|of|on|at|in)\s+[^\s,;!?:=\"'`]+(?:\s+[^\s,;!?:=\"'`]+){0,3}?)?"
    r"(?:\s*\([^()\n]{1,30}\))?"
)
_CONNECTOR = (
    r"(?:['’]s\b|\?\s*it['’]?s\b"
    r"|(?:is|was|are|were)(?:\s+(?:now|still|just|simply|actually|currently|always|literally"
    r"|also|probably|basically|officially|temporarily|definitely))?"
    r"(?:\s*[:：])?|(?:(?:has|have)\s+been\s+|was\s+|is\s+|got\s+|been\s+)?"
    r"(?:set|changed|updated|reset)\s+to\b|becomes|will\s+be|[:：=]|->|=>|→|是|为|為)"
)
_CODE_CUE = (
    r"(?:door|alarm|gate|garage|safe|lock|locker|keypad|entry|security|building|unlock|access"
    r"|phone|screen)[ -]codes?"
    r"|(?:(?:safe|lock|locker)[ -])?(?:combinations?|combos?)"
    r"|codes?(?=\s+(?:to|for|of)\s+(?:the\s+|my\s+|our\s+)?(?:front\s+|back\s+|main\s+)?"
    r"(?:door|gate|alarm|safe|garage|building|house|lock|office|locker|keypad|apartment|flat"
    r"|lobby)\b)"
)
# One-time codes (a verification code, a 2FA code) are credentials while they live.
_OTP_CUE = r"(?:verification|security|one[ -]time|login|sign[ -]in|2fa|mfa|otp|sms)[ -]codes?|otps?"
_PASSWORD_CUE = (
    r"(?:pass(?:word|wd|code|phrase)s?|pass[ -]phrase|pwd|pw|pins?(?:[ -](?:code|number))?"
    rf"|{_OTP_CUE}"
    rf"|(?:wi-?fi|wlan|wpa2?)[ -](?:key|pass)|{_CODE_CUE})"
)

_EN_STATED = re.compile(
    rf"\b(?P<cue>{_PASSWORD_CUE})\b{_QUALIFIER}\s*{_CONNECTOR}\s*{_VALUE}", re.IGNORECASE
)
_EN_PASS = re.compile(
    r"\b(?:new|old|my|the|wi-?fi|admin|root|temp|temporary|user|login)\s+pass"
    rf"\s*(?:is|was|:|=|->|→)\s*{_VALUE}",
    re.IGNORECASE,
)
# "password? X": a question answered in place; the value must look made.
_EN_ASKED = re.compile(
    rf"\b(?P<cue>password|passcode|passphrase)\?\s*(?:it['’]?s\s+)?{_VALUE}", re.IGNORECASE
)
# A code named for what it opens, right before its digits: "keypad code 6243".
_EN_CODE_BARE = re.compile(
    rf"\b(?P<cue>{_CODE_CUE}|pins?|{_OTP_CUE})\s+(?P<b>\d[\d-]{{3,15}})\b", re.I
)
_EN_USED = re.compile(
    r"\b(?:use|using|try|with|enter|type|typed|entered)\s+(?:(?:the|my|our|your|a|this)\s+)?"
    rf"(?:[\w-]+\s+)?(?P<cue>password|passcode|passphrase|pin)\s+{_VALUE}",
    re.IGNORECASE,
)
_EN_CHANGED = re.compile(
    r"\b(?:changed|set|updated|reset|switched)\s+(?:(?:the|my|our|your|his|her|their)\s+)?"
    rf"(?:[\w-]+\s+){{0,2}}(?P<cue>password|passcode|passphrase|pin)\s+to\s+{_VALUE}",
    re.IGNORECASE,
)
# A password cue right before its value: quoted ("password 'x y'"), or a value with a
# digit or a symbol ("and password Qw3rty!9").
_EN_BARE = re.compile(
    rf"\b(?P<cue>passwords?|passcode|passphrase|pwd|pw)\s+{_VALUE}",
    re.IGNORECASE,
)
_EN_AS = re.compile(
    rf"\b(?:use|using|used|set|choose|chose|pick|picked|with|type|typed|enter|entered|put)"
    rf"\s+{_VALUE}\s+as\s+"
    r"(?:(?:the|my|our|your|a)\s+)?(?:[\w-]+\s+)?(?P<cue>password|passcode|passphrase|pin)\b",
    re.IGNORECASE,
)
_EN_NAMED_AFTER = re.compile(
    r"(?<![^\s(\[])(?P<b>[^\s\"'`]{4,128})\s+(?:is|was)\s+(?:the|my|our|your|his|her|their)"
    r"\s+(?:(?!(?:most|least|worst|best|top|weakest|strongest|commonest|common|popular)\b)"
    r"[\w-]+\s+){0,2}(?P<cue>password|passcode|passphrase|pin)\b",
    re.IGNORECASE,
)
_EN_PAIR = re.compile(
    r"\b(?:login|logins|log-in|log\s+in\s+(?:with|as)|credentials?|creds|account|username|user)\b"
    r"(?:\s+(?:details|info))?"
    r"(?:(?:[ \t]*(?:[:=]|is|are|was|were)[ \t]*|[ \t]+)[^\s/]{1,64}[ \t]*/"
    r"|[ \t]+\S{1,64}[ \t]+(?:pass|pw|pwd|password))"
    rf"[ \t]*{_VALUE}",
    re.IGNORECASE,
)
# Passwords on the command lines of common clients: mysql -pSECRET, sshpass -p SECRET,
# redis-cli -a SECRET, curl -u user:SECRET, smbclient -U user%SECRET.
_COMMAND_LINE = re.compile(
    r"\b(?:mysql(?:dump|admin)?\b[^\n]*?\s-p(?P<b>[^\s-]\S{0,127})"
    r"|sshpass\s+-p\s*(?P<c>\S{1,128})"
    r"|redis-cli\b[^\n]*?\s(?:-a|--pass)\s+(?P<d>[^\s-]\S{0,127})"
    r"|curl\b[^\n]*?\s(?:-u|--user)\s+[\"']?[^\s:\"']{1,64}:(?P<e>[^\s\"']{1,128})"
    r"|smbclient\b[^\n]*?\s(?:-U|--user)\s+[^\s%]{1,64}%(?P<f>\S{1,128}))"
)
COMMAND_CLIENTS = ("mysql", "sshpass", "redis-cli", "curl", "smbclient")
"""The clients whose command lines ``command_lines`` reads (a text naming none is not)."""
_ZH_STATED = re.compile(
    r"(?P<cue>密码|密碼|口令|(?i:pin)[码碼]|验证码|驗證碼|校验码|动态码)(?:都|也|还|一直|现在|就|仍然|依然|已经|已|则"
    r"|[我他她你]|暂时|临时|刚刚?|先|统一)?\s*"
    r"(?P<conn>(?:是|为|為|改成了?|改为|设为|设置为|设置成|设成|换成了?|变成了?)?\s*[：:=]?)"
    rf"\s*{_ASCII_VALUE}"
)
_ZH_CODES = ("验证码", "驗證碼", "校验码", "动态码")
_ZH_KEY = re.compile(
    r"(?P<cue>密钥|秘钥|私钥|令牌|(?<![A-Za-z])[AS]K(?![A-Za-z])|(?i:api\s*key|token|secret))(?:都|也|还|一直|现在|就)?\s*"
    rf"(?:(?:是|为|為|改成了?|改为|设为|设置为)\s*[：:]?|[：:=])\s*{_ASCII_VALUE}"
)

_STRONG_LEAD = (
    r"api|access|secret|private|signing|encryption|master|auth|client|app|application"
    r"|license|deploy|webhook|bot|refresh|session|bearer|oauth|admin|service|personal[\s_-]access"
)
_KEY_STATED = re.compile(
    rf"\b(?:(?P<apikey>apikeys?)|(?:(?P<lead>{_STRONG_LEAD})[\s_-]?)?"
    r"(?P<noun>keys?|tokens?|secrets?|credentials?))\b"
    rf"{_QUALIFIER}(?P<conn>\s*{_CONNECTOR})?\s*"
    r"(?:(?<![A-Za-z])(?P<open>[\"'`“‘「『])(?P<q>[^\s\"'`”’」』]{8,256})[\"'`”’」』]"
    r"|(?P<b>[A-Za-z0-9_\-+/=.~:!#$%^&*@]{8,512}))",
    re.IGNORECASE,
)
_WORD_BEFORE = re.compile(r"([A-Za-z0-9]+)[\s_-]*$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^(?:0x)?[0-9a-fA-F]+$")
_HOSTNAME = re.compile(r"^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}$")
_NAMING_WORDS = ("password", "secret", "token", "passwd")  # in a name, not in a secret
_DIGESTS = ("sha256:", "sha1:", "sha512:", "sha384:", "md5:")

_ASSIGNED = re.compile(
    r"(?<![\w-])(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,60})[\"']?[ \t]*(?::=|=>|=|:|：)[ \t]*"
    r"(?:(?P<open>[\"'`])(?P<q>[^\"'`\n]{1,256})[\"'`]|(?P<b>[^\s;,&\"'<>]{1,256}))"
)
_FLAG = re.compile(
    r"(?<!\S)--(?P<name>[A-Za-z][A-Za-z0-9-]{1,40})[ \t]+"
    r"(?:(?P<open>[\"'`])(?P<q>[^\"'`\n]{1,256})[\"'`]|(?P<b>[^\s;,&\"'<>-][^\s;,&\"'<>]{0,255}))"
)
_ELEMENT = re.compile(
    r"<(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,60})>[ \t]*(?P<b>[^<>\s]{1,256})[ \t]*</(?P=name)>"
)
_NAME_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _value(found: re.Match[str]) -> tuple[str, int, int] | None:
    """The value a pattern matched (quoted: its inside; bare: without the punctuation that
    ends a sentence) and its span."""
    groups = found.groupdict()
    if groups.get("q") is not None:
        start, end = found.span("q")
        return groups["q"], start, end
    value = groups.get("b")
    if value is None:
        return None
    start = found.start("b")
    stripped = value.rstrip(_TRAILING)
    return stripped, start, start + len(stripped)


def _units_follow(text: str, end: int) -> bool:
    """Whether the value is a count: "12 characters", "8 位"."""
    return _UNIT_AFTER.match(text, end) is not None


def _looks_descriptive(value: str) -> bool:
    """A lowercase word (or hyphenated words) that describes instead of being a password."""
    parts = value.lower().split("-")
    if not all(part.isalpha() for part in parts):
        return False
    return any(part in _STOP or part.endswith(("ed", "ing", "ly")) for part in parts)


def password_value(value: str, *, pin: bool = False, strong: bool = False) -> bool:
    """Whether ``value`` is a password rather than words about one; ``pin``: digits only;
    ``strong``: it must also hold a digit, a symbol or an inner capital (no connector
    vouched for it)."""
    if not value or len(value) > 128 or is_placeholder(value):
        return False
    if pin:
        digits = value.replace("-", "")
        return digits.isdigit() and 4 <= len(digits) <= 12 and not value.endswith("-")
    if value.lower() in _STOP or _looks_descriptive(value):
        return False
    if value.isdigit():
        return len(value) >= 4
    if len(value) < 3:
        return False
    if strong:
        return any(not c.isalpha() for c in value) or any(c.isupper() for c in value[1:])
    return True


def token_value(value: str, *, strong_cue: bool, min_chars: int = MIN_TOKEN_CHARS) -> bool:
    """Whether ``value`` looks like a generated key or token: ASCII letters and digits,
    long enough, spread out; not a URL, a path, a host name or a digest. After a weak cue
    (a plain "key" or "token"), not a hash or a UUID either."""
    if len(value) < min_chars or len(value) > 512 or is_placeholder(value):
        return False
    low = value.lower()
    if "://" in value or low.startswith(_DIGESTS) or value[0] in "/~." or _HOSTNAME.match(value):
        return False
    if not any(c.isdigit() for c in value) or not any(c.isascii() and c.isalpha() for c in value):
        return False
    if not strong_cue and (_HEX.match(value) or _UUID.match(value)):
        return False
    if any(word in low for word in _NAMING_WORDS):  # "db-password-7f9c2": a secret's name
        return False
    return entropy(value) >= (3.0 if len(value) >= MIN_TOKEN_CHARS else 2.8)


def _pin_like(cue: str) -> bool:
    """Whether a cue names a number (a PIN, a door code, a one-time code) rather than a
    password."""
    cue = cue.lower()
    return cue.startswith(("pin", "otp")) or (cue.endswith(("code", "codes")) and "pass" not in cue)


def stated_passwords(text: str) -> Iterator[Finding]:
    """Passwords, passcodes and PINs stated in English or Chinese prose."""
    for pattern in (_EN_STATED, _EN_USED, _EN_CHANGED, _EN_PASS, _EN_ASKED, _EN_CODE_BARE):
        for found in pattern.finditer(text):
            got = _value(found)
            if got is None or _units_follow(text, got[2]):
                continue
            pin = pattern is not _EN_PASS and _pin_like(found.group("cue"))
            strong = pattern in (_EN_USED, _EN_PASS, _EN_ASKED) and found.group("q") is None
            if password_value(got[0], pin=pin, strong=strong):
                yield Finding("password", got[1], got[2])
    for found in _EN_BARE.finditer(text):
        got = _value(found)
        quoted = found.group("q") is not None
        if got is None or _units_follow(text, got[2]):
            continue
        value = got[0]
        mixed = any(c.isalpha() for c in value) and not value.isalpha()  # "Qw3rty!9", not "2024"
        if not (quoted or (len(value) >= 6 and mixed)):
            continue
        if password_value(got[0], strong=not quoted):
            yield Finding("password", got[1], got[2])
    for pattern in (_EN_PAIR, _EN_AS):
        for found in pattern.finditer(text):
            got = _value(found)
            if got is not None and password_value(got[0], strong=found.group("q") is None):
                yield Finding("password", got[1], got[2])
    for found in _EN_NAMED_AFTER.finditer(text):
        got = _value(found)
        pin = found.group("cue").lower() == "pin"
        if got is not None and password_value(got[0], pin=pin, strong=not pin):
            yield Finding("password", got[1], got[2])
    for found in _ZH_STATED.finditer(text):
        got = _value(found)
        if got is None or _units_follow(text, got[2]):
            continue
        said = bool(found.group("conn").strip()) or found.group("q") is not None
        cue = found.group("cue").lower()
        pin = cue.startswith("pin") or cue in _ZH_CODES
        if not any(c.isascii() and c.isalnum() for c in got[0]):
            continue  # "口令是“团结一心”": a watchword, passwords are typed in ASCII
        if password_value(got[0], pin=pin, strong=not said) and (said or len(got[0]) >= 4):
            yield Finding("password", got[1], got[2])


def command_lines(text: str) -> Iterator[Finding]:
    """Passwords given to common clients on their command lines (``COMMAND_CLIENTS``)."""
    for found in _COMMAND_LINE.finditer(text):
        group = next(name for name in "bcdef" if found.group(name) is not None)
        value = found.group(group)
        if not is_placeholder(value) and value.lower() not in _STOP:
            yield Finding("password", *found.span(group))


def stated_keys(text: str) -> Iterator[Finding]:
    """Keys, tokens, secrets and credentials stated in prose ("my API key is ...",
    "密钥是 ...")."""
    for found in _KEY_STATED.finditer(text):
        got = _value(found)
        if got is None:
            continue
        value = got[0].rstrip(".:")
        noun = (found.group("noun") or "").lower()
        strong = bool(found.group("apikey") or found.group("lead")) or noun.startswith(
            ("secret", "credential")
        )
        if not strong:
            before = _WORD_BEFORE.search(text, max(0, found.start() - 24), found.start())
            if before is not None and before.group(1).lower() in _NOT_SECRET_KEYS:
                continue
        said = bool((found.group("conn") or "").strip()) or found.group("q") is not None
        least = 12 if said else MIN_TOKEN_CHARS
        if token_value(value, strong_cue=strong, min_chars=least):
            yield Finding("token", got[1], got[1] + len(value))
    for found in _ZH_KEY.finditer(text):
        got = _value(found)
        if got is not None and token_value(got[0].rstrip(".:"), strong_cue=True, min_chars=8):
            yield Finding("token", got[1], got[1] + len(got[0].rstrip(".:")))


def _name_kind(name: str) -> tuple[str, bool] | None:
    """What an identifier names: ``("password", _)``, ``("token", strong)``, or None."""
    parts = [p.lower() for p in _NAME_PARTS.findall(name)]
    if not parts or parts[-1] in _NOT_SECRET_NAMES:
        return None
    # A name run together (PGPASSWORD, GITHUBTOKEN) ends with what it names.
    if any(p in _PASSWORD_PARTS for p in parts) or parts[-1].endswith(("password", "passwd")):
        return "password", True
    if any(p in _SECRET_PARTS for p in parts) or parts[-1].endswith(("secret", "token")):
        return "token", True
    if parts[-1] in ("key", "keys"):
        return "token", any(p in _KEY_LEADS for p in parts[:-1])
    return None


def assigned(text: str) -> Iterator[Finding]:
    """Secrets assigned in code, configuration and command lines: ``DB_PASSWORD=...``,
    ``"api_key": "..."``, ``X-Api-Key: ...``, ``--password ...``, ``<password>...</password>``."""
    for pattern in (_ASSIGNED, _FLAG, _ELEMENT):
        for found in pattern.finditer(text):
            named = _name_kind(found.group("name"))
            got = _value(found)
            if named is None or got is None:
                continue
            kind, strong = named
            if kind == "password":
                ok = password_value(got[0]) and not _units_follow(text, got[2])
            else:
                ok = token_value(got[0], strong_cue=strong, min_chars=8 if strong else 16)
            if ok:
                yield Finding(kind, got[1], got[2])
