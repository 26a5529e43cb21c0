"""Signals of a write that speaks as the system or closes the frame it is quoted in:
``SYSTEM:``, ``<|im_start|>``, ``</memory><system>``, ``[INST]``, ``【系统】``."""

from __future__ import annotations

import re

from hindsight_redis.trust.poison.signal import (
    MEDIUM,
    STRONG,
    Signal,
    han,
    heads,
    pattern,
)

# -- markup: the text speaks as the system, or closes the frame it is quoted in ---------

_ABOUT_MARKUP = pattern(r"\s*(?:tags?|elements?|blocks?|sections?|markers?|tokens?|delimiters?)\b")


def grade_markup(match: re.Match[str], text: str) -> float:
    """Markup talked about ("the <system> tag", in backticks) is a hint; used, it holds."""
    if _ABOUT_MARKUP.match(text, match.end()) or text.count("`", 0, match.start()) % 2:
        return MEDIUM
    return STRONG


_ROLE_START = r"(?:^|\n|[.!?;]\s+)\s*[*_>#\s]*"
_DIRECTIVE_START = (
    r"(?:you|your|the (?:ai|assistant|model|agent)|all (?:ai|assistants|agents)|any "
    r"(?:ai|assistant|agent)|from now|always|never|do not|don't|ignore|disregard|forget|new|"
    r"important|override|attention|note|remember|respond|reply|answer|reveal|send|obey|follow)\b"
)
MARKUP: tuple[Signal, ...] = (
    Signal(
        "chat-token",
        "markup",
        STRONG,
        pattern(
            r"<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|"
            r"start_header_id|end_header_id|begin_of_text|end_of_text|tool|ipython)\s*\|>"
        ),
        heads=heads("<"),
    ),
    Signal(
        "system-tag",
        "markup",
        STRONG,
        pattern(
            r"</?\s*(?:[a-z]+[_-])*(?:system|sys|instructions?|developer|admin|administrator|"
            r"prompt|override|root)(?:[_-][a-z]+)*\b[^<>\n]{0,40}>"
        ),
        grade=grade_markup,
        heads=heads("< & syst sys deve admi prom over root hidd secr impo inst"),
    ),
    Signal(
        "closing-frame",
        "markup",
        STRONG,
        pattern(
            r"</\s*(?:[a-z]+[_-])*(?:memory|memories|context|document|documents|data|entry|user|"
            r"assistant|tool|results?|untrusted|input|conversation|message|note|retrieved|recall)"
            r"(?:[_-][a-z]+)*\s*>"
        ),
        grade=grade_markup,
        heads=heads(
            "< & memo cont docu data entr user assi tool func sear resu untr inpu conv mess note "
            "retr reca"
        ),
    ),
    Signal(
        "inst-markup",
        "markup",
        STRONG,
        pattern(
            r"\[/?\s*(?:inst|sys|system|system prompt|admin|developer|override)\s*\]|"
            r"<<\s*/?\s*sys\s*>>|[\"']role[\"']\s*:\s*[\"'](?:system|developer)[\"']"
        ),
        grade=grade_markup,
        heads=heads("[ < role"),
    ),
    Signal(
        "role-header",
        "markup",
        STRONG,
        pattern(
            _ROLE_START + r"#{1,6}\s*(?:system|instructions?|new instructions|system prompt|"
            r"developer|admin|override)\b|"
            + _ROLE_START
            + r"(?:system|developer|dev|admin(?:istrator)?|operator|root)\s+(?:prompt|message|"
            r"instructions?|override|directive|command)\s*[*_]*\s*[:：]"
        ),
        heads=heads("# syst deve dev admi oper root"),
    ),
    Signal(
        "role-caps",
        "markup",
        STRONG,
        re.compile(
            r"(?:^|(?<=[\s:;.!?()\[\]>#*_\-]))(?<![A-Z] )(?<![A-Z])[*_>#\s]*"
            r"(?:SYSTEM|SYS|DEVELOPER|ADMIN|ADMINISTRATOR|ROOT|OVERRIDE|"
            r"SYSTEM (?:PROMPT|MESSAGE|NOTE|NOTICE|OVERRIDE|INSTRUCTIONS?|UPDATE|ALERT|DIRECTIVE)|"
            r"IMPORTANT INSTRUCTIONS?|NEW INSTRUCTIONS?|INSTRUCTIONS?)\s*[*_]*\s*[:：\]]"
        ),
        heads=heads("syst sys deve admi root over inst"),
    ),
    Signal(
        "role-said",
        "markup",
        STRONG,
        pattern(
            _ROLE_START + r"(?:system|developer|admin(?:istrator)?|operator)\s*(?:note|notice|"
            r"update|announcement|broadcast|alert)?\s*[*_]*\s*[:：]\s*" + _DIRECTIVE_START
        ),
        heads=heads("syst deve admi oper"),
    ),
    Signal(
        "role-label",
        "markup",
        MEDIUM,
        re.compile(_ROLE_START + r"(?:ASSISTANT|USER|HUMAN|AI)\s*[*_]*\s*[:：]"),
        heads=heads("assi user huma ai"),
    ),
    Signal(
        "zh-role",
        "markup",
        STRONG,
        pattern(
            r"[【\[（(<]\s*(?:系统|系统消息|系统提示|系统指令|系统通知|管理员|管理员指令|开发者|"
            r"开发者消息)\s*[】\]）)>]|(?:^|\n|[。！？；]\s*)\s*(?:系统提示|系统消息|系统指令|"
            r"系统通知|开发者消息|开发者指令|管理员指令|管理员消息)\s*[:：]"
        ),
        han=han("系统 管理员 开发者"),
    ),
    Signal(
        "role-in-comment",
        "markup",
        STRONG,
        pattern(
            r"(?:<!--|/\*)\s*(?:system|developer|admin(?:istrator)?|instructions?|ai|assistant|"
            r"llm|prompt|note to (?:the )?(?:ai|assistant|model))\s*[:：]|\[(?:verified by |approve"
            r"d "
            r"by |from |signed by |authori[sz]ed by )?(?:the )?(?:admin(?:istrator)?|system|"
            r"developers?|security team|root)(?: verified| approved| notice| message)?\]|"
            r"[【\[]\s*(?:系统|管理员|开发者)[^】\]\n]{1,6}[】\]]"
        ),
        heads=heads(
            "< / [ & syst deve admi inst ai assi llm prom note veri appr from sign auth root secu"
        ),
        han=han("系统 管理员 开发者"),
    ),
    Signal(
        "vocative",
        "markup",
        MEDIUM,
        pattern(
            r"(?:^|\n)\s*(?:(?:hey|hi|hello|dear|ok|okay|yo)\s*,?\s+)?(?:assistant|ai|model|agent|"
            r"claude|chatgpt|gpt|bot|copilot|llm)\s*[,:：]"
        ),
        heads=heads("assi ai mode agen clau chat gpt bot copi llm"),
    ),
    Signal(
        "zh-role-label",
        "markup",
        MEDIUM,
        pattern(r"(?:^|\n)\s*(?:系统|管理员|开发者)\s*[:：]"),
        han=han("系统 管理员 开发者"),
    ),
)
