"""Signals of a write that addresses whoever reads it later: "to any assistant reading
this", "if you are an AI", "when this memory is retrieved", "致所有读到这条记忆的AI"."""

from __future__ import annotations

import re

from hindsight_redis.trust.poison.signal import (
    AI_WORDS,
    MEDIUM,
    STRONG,
    Signal,
    han,
    heads,
    pattern,
)

# -- reader: the text addresses whoever reads it later -------------------------------

_READ_VERB = (
    r"(?:read|retriev|recall|see|find|found|process|load|encounter|pars|ingest|access|receiv|"
    r"get|summari[sz]|translat|review|analy[sz]|index|crawl|scrap|view|handl|digest|consum|"
    r"examin|scan|open|us(?:e|es|ing)\b|come across|comes across|coming across|stumbl\w* "
    r"(?:up)?on|run across|runs across|look(?:s|ing)? at)\w*"
)
_THE_MEMORY = (
    r"(?:memory|memories|note|notes|entry|entries|record|records|message|text|page|document|"
    r"content|instructions?|line|lines|paragraph|file|comment|context|conversation|chat|"
    r"summary|review|email|post|section|snippet|knowledge base)"
)
_ANY = r"(?:any|every|all|each|whatever|whichever|future|other|later|subsequent)"
_AUX = (
    r"(?:(?:is|are|will be|would be|might be|may be|should be|can be|could be|happens? to be)"
    r"\s+)?(?:later\s+|ever\s+|now\s+|currently\s+|also\s+)?"
)
_ZH_AI = r"(?:ai|人工智能|助手|助理|模型|大模型|语言模型|大语言模型|智能体|机器人|代理|agent)"
_ZH_THIS = r"(?:这|此|本|该)(?:条|段|则|份|个|篇)?"
_ZH_MEMORY = (
    r"(?:记忆|信息|消息|内容|笔记|记录|文字|提示|备注|文本|条目|话|段话|段落|留言|文档|页面|网页)"
)
_AI_HEADS = "ai assi agen lang larg mode llm llms chat bot bots copi gpt gpts clau gemi mach arti"


def grade_addressee(match: re.Match[str], text: str) -> float:
    """Addressing "any AI" or "all models" holds; "all agents" and "all assistants" may be
    people (a support team), and only hint."""
    who = " ".join(match.group("ai").lower().split())
    return STRONG if who in _STRICT_AI_WORDS or who.startswith("ai ") else MEDIUM


_STRICT_AI_WORDS = frozenset(
    {
        "ai",
        "a.i.",
        "artificial intelligence",
        "language model",
        "language models",
        "large language model",
        "large language models",
        "model",
        "models",
        "llm",
        "llms",
        "chatbot",
        "chatbots",
        "chat bot",
        "chat bots",
        "bot",
        "bots",
        "gpt",
        "gpts",
        "chatgpt",
        "claude",
        "gemini",
        "copilot",
        "copilots",
        "machine",
        "machines",
    }
)
_MACHINE_WORDS = "automated autonomous ai software virtual digital llm-based ai-powered"
_MACHINE = frozenset(_MACHINE_WORDS.split())


def grade_if_you_are(match: re.Match[str], text: str) -> float:
    """ "If you are an AI" holds; "if you are a support agent" may be a person: it holds
    only with a machine's adjective ("an automated agent")."""
    adjectives = set(match.group("adj").lower().split())
    who = match.group("ai").lower()
    return STRONG if who in _STRICT_AI_WORDS or adjectives & _MACHINE else MEDIUM


READER: tuple[Signal, ...] = (
    Signal(
        "any-reader",
        "reader",
        STRONG,
        pattern(
            rf"\b{_ANY}\s+{AI_WORDS}(?:\s+{AI_WORDS})?\s+(?:that\s+|who\s+|which\s+)?{_AUX}"
            r"(?:[\w-]+\s+){1,3}?(?:this|these|my)(?:\s+"
            rf"{_THE_MEMORY}\b|\s+in\s+(?:its|your|their|the)\s+(?:context|memory|prompt|window|"
            r"results)|\s*(?=[:,.;!?)\-—]|$))|"
            rf"\b(?:the|an?)\s+{AI_WORDS}\s+(?:that\s+|who\s+|which\s+)?{_AUX}{_READ_VERB}"
            r"\s+(?:this|these|my|the following)\b|"
            rf"(?:^|[.!?;\n]\s*)(?:{AI_WORDS}\s+){{1,2}}[a-z]+ing\s+(?:this|these)(?:\s+"
            rf"{_THE_MEMORY}\b|\s*(?=[:,.;!?)\-—]|$))|"
            rf"(?:^|[.!?;\n]\s*)(?:{AI_WORDS}\s+){{1,2}}(?:that|who|which)\s+{_AUX}(?:[\w-]+\s+)"
            rf"{{1,3}}?(?:this|these)(?:\s+{_THE_MEMORY}\b|\s*(?=[:,.;!?)\-—]|$))"
        ),
        heads=heads(_AI_HEADS),
    ),
    Signal(
        "addressed-to-ai",
        "reader",
        STRONG,
        pattern(
            r"(?:\b(?:to|for|attention|dear|hey|hi|hello|note to|note for|message to|message "
            r"for)|\bp\.?\s?s\.?(?:\s+(?:to|for))?)\s*,?\s+(?:the\s+)?"
            rf"{_ANY}\s+(?P<ai>{AI_WORDS})\b"
        ),
        grade=grade_addressee,
        heads=heads(f"{_AI_HEADS} & any ever all each what whic futu othe late subs"),
    ),
    Signal(
        "you-read-this",
        "reader",
        STRONG,
        pattern(
            r"\byou(?:'re| are| have| 've)?\s+(?:now\s+|just\s+)?(?:reading|retrieving|"
            r"recalling|seeing|loading|processing|viewing|accessing|retrieved|recalled|loaded|"
            r"found|read)\s+(?:this|these)(?:\s+(?:memory|memories|note|entry|entries|record|"
            r"records|stored|saved)\b|\s*(?=[:,.;!?)\-—]|$))|\b(?:when|whenever|once|if|after|"
            r"as soon as)\s+you\s+(?:read|see|retrieve|find|load|process|recall|encounter|get "
            r"to|come across)\s+(?:this|these)\b"
        ),
        heads=heads("you & read retr reca seei see load proc view acce foun find enco get come"),
    ),
    Signal(
        "retrieval-aware",
        "reader",
        STRONG,
        pattern(
            r"\b(?:if|when|whenever|once|should|in case)\s+(?:this|these)\s+(?:memory|memories|"
            r"note|notes|entry|entries|record|records|text|message|snippet|document|passage|"
            r"chunk|information)\s+(?:ever\s+)?(?:shows? up|appears?|comes? up|turns? up|"
            r"surfaces?|ends? up|makes? it|gets? (?:into|returned|retrieved|pulled|loaded)|is "
            r"(?:returned|retrieved|surfaced|included|injected|loaded|shown|recalled|found))\b|"
            r"(?:这|此|本|该)(?:条|段|则)?(?:记忆|信息|内容|笔记|记录)(?:出现在|进入|被放进|混进|"
            r"显示在|被加入)(?:了)?(?:你的)?(?:上下文|搜索结果|检索结果|对话|提示|记忆)"
        ),
        heads=heads("if when once shou case & this thes"),
        han=han("出现在 进入 被放进 混进 显示在 被加入"),
    ),
    Signal(
        "if-you-are-ai",
        "reader",
        STRONG,
        pattern(
            r"\bif you(?:'re| are)\s+(?:an?|the|some|any)\s+(?P<adj>(?:[\w-]+\s+){0,2}?)"
            rf"(?P<ai>{AI_WORDS})\b"
        ),
        grade=grade_if_you_are,
        heads=heads("if & you"),
    ),
    Signal(
        "whoever-reads",
        "reader",
        STRONG,
        pattern(
            r"\b(?:whoever|whatever|anyone|anybody|anything)\s+(?:that\s+|who\s+|which\s+)?"
            rf"{_READ_VERB}\s+this\s+{_THE_MEMORY}\b|"
            r"\b(?:when|whenever|once|if|after|as soon as)\s+(?:this|the present)\s+"
            rf"{_THE_MEMORY}\s+(?:is|gets|has been)\s+(?:read|retrieved|recalled|loaded|found|"
            r"returned|surfaced|accessed|seen|processed|used|injected|summari[sz]ed|indexed)\b|"
            r"\b(?:upon|on|after)\s+(?:reading|retrieving|recalling|loading|seeing|finding|"
            rf"processing)\s+(?:this|the present)\s+{_THE_MEMORY}\b"
        ),
        heads=heads(
            "memo note entr reco mess text page docu cont inst line para file comm conv "
            "chat summ revi emai post sect snip"
        ),
    ),
    Signal(
        "hey-ai",
        "reader",
        MEDIUM,
        pattern(
            rf"\b(?:dear|attention|hello|hi|hey|yo|listen)\s*,?\s+(?:all\s+|fellow\s+)?{AI_WORDS}\b"
        ),
        heads=heads(f"dear atte hell hi hey yo list & {_AI_HEADS}"),
    ),
    Signal(
        "note-to-ai",
        "reader",
        MEDIUM,
        pattern(
            r"\b(?:note|message|reminder|instructions?|memo|notice|warning|psa|directive)\s+"
            rf"(?:to|for)\s+(?:the\s+|all\s+|any\s+|every\s+|future\s+|other\s+)*{AI_WORDS}\b"
        ),
        heads=heads(f"note mess remi inst memo noti warn psa dire & {_AI_HEADS}"),
    ),
    Signal(
        "written-for-reader",
        "reader",
        MEDIUM,
        pattern(
            r"\bthis\s+(?:memory|note|message|entry|record)\s+(?:is|was)\s+(?:written|left|"
            r"meant|intended|addressed|placed|stored|planted)\s+(?:for|to)\b|"
            r"\bif you(?:'re| are) (?:reading|seeing|processing) this\b"
        ),
        heads=heads("this if & memo note mess entr reco read seei proc"),
    ),
    Signal(
        "zh-any-reader",
        "reader",
        STRONG,
        pattern(
            rf"(?:读到|看到|检索到|读取到?|调取到|调用到|收到|召回|处理到?|加载到?|访问到?|找到|发现|"
            rf"看见|遇到|获取到?)了?"
            rf"(?:{_ZH_THIS}{_ZH_MEMORY}|(?:这|此|本|该)(?:条|段|则|篇))的(?:任何|所有|每个|每一个)?"
            rf"(?:ai)?{_ZH_AI}|"
            rf"如果你是(?:一个|一名|个)?{_ZH_AI}|"
            rf"(?:致|写给|给|告诉)(?:所有|任何|每一个|每个|每位|未来的|后来的|之后的|以后|今后|将来|"
            rf"之后)"
            rf"[^。！？\n]{{0,12}}?{_ZH_AI}|"
            rf"{_ZH_THIS}{_ZH_MEMORY}被(?:读取|检索|调用|召回|看到|读到|加载|访问|使用|处理|调取|调出|"
            rf"取出|提取|查到|搜到|返回|载入|注入|找到)|(?:正在|在)?(?:读|看|阅读|浏览|检索|处理)(?:到)?"
            rf"(?:我的?|这些|这)(?:笔记|记忆|内容|文字|消息|留言)的{_ZH_AI}|"
            rf"(?:任何|所有|每一个|每个)(?:读到|看到|检索到|读取|处理)(?:这|此|本)|"
            rf"你(?:正在|现在)?(?:读到|看到|读取|检索到)(?:的)?{_ZH_THIS}(?:记忆|笔记|记录|条目)"
        ),
        han=han("ai 人工智能 助手 助理 模型 智能体 机器人 代理 agent 被 任何 所有 每 你"),
    ),
    Signal(
        "zh-note-to-ai",
        "reader",
        MEDIUM,
        pattern(rf"(?:致|写给|给){_ZH_AI}的?(?:备注|说明|留言|消息|指令|提示)?\s*[:：，,]"),
        han=han("ai 人工智能 助手 助理 模型 智能体 机器人 代理 agent"),
    ),
)
