"""Signals of a write that drops or replaces its reader's rules: "ignore all previous
instructions", "your new task is", "you are no longer bound by"; in English and Chinese."""

from __future__ import annotations

import re

from hindsight_redis.trust.poison.signal import (
    MEDIUM,
    SLIGHT,
    STRONG,
    Signal,
    alternation,
    han,
    heads,
    pattern,
)

# -- override: the reader's rules are to be dropped or replaced ------------------------

_OVERRIDE_VERB = (
    r"(?:ignore|ignoring|disregard|disregarding|forget|forgetting|forget about|override|"
    r"overriding|overrule|bypass|bypassing|circumvent|discard|abandon|set aside|put aside|"
    r"throw out|scrap|ditch|nullify|lift|remove|disable|turn off|switch off|suspend|revoke|"
    r"waive|pay no (?:attention|heed|mind) to)"
)
_STOP_FOLLOWING = (
    r"(?:(?:do|must|should|will|shall|need)\s+not|don't|dont|mustn't|shouldn't|needn't|"
    r"(?:no|there is no|there's no) (?:need|reason) to|(?:don't|do not|doesn't|does not) "
    r"(?:need|have) to|not (?:required|obliged|bound) to|no longer(?: (?:required|obliged|"
    r"bound|need(?:ed)?) to)?|free to|never again|stop|cease to|quit|refuse to)\s+"
    r"(?:follow|following|obey|obeying|adhere to|adhering to|comply with|complying with|"
    r"respect|listen to|apply|stick to|stick with|abide by|keep to|observe|heed|honou?r|"
    r"be bound by|be restricted by|be limited by|be constrained by)"
)
_STRONG_QUALIFIER_WORDS = (
    "all any every each your previous previously prior above earlier preceding foregoing "
    "original initial existing other system developer default safety built-in internal "
    "hidden operator former given whatever whichever core preset predefined standing "
    "inherent"
)
STRONG_QUALIFIERS = frozenset(_STRONG_QUALIFIER_WORDS.split())
"""Words that make the rules dropped the reader's own ("all previous", "your", "system")."""
_QUALIFIERS = (
    r"(?:(?:"
    + alternation(
        _STRONG_QUALIFIER_WORDS + " of the my our these those its and that current old "
        "mentioned stated such usual normal ordinary own"
    )
    + r"|(?:developer|developers|system|operator|creator|admin|administrator|company|openai|"
    r"anthropic|assistant|ai|model)(?:'s|s'|’s))\s+){0,5}"
)
CORE_OBJECTS = (
    r"instructions?|prompts?|system (?:prompts?|messages?)|directives?|guardrails?|safeguards?|"
    r"programming|training|conditioning|persona|content polic(?:y|ies)|ethical guidelines|"
    r"ethics|context|memories|memory"
)
_OBJECTS = (
    rf"(?:{CORE_OBJECTS}|rules?|polic(?:y|ies)|guidelines?|guidance|restrictions?|"
    r"constraints?|limitations?|orders|commands|(?:content |safety )?filters?|filtering|"
    r"directions|configuration|config|setup|operating (?:rules|procedures|principles)|"
    r"censorship|safety (?:checks|measures|settings|features|protocols|polic(?:y|ies))|"
    r"everything (?:you (?:were|have been|'ve been) told|(?:that )?came before|above|before this)|"
    r"what(?:ever)? (?:you (?:were|have been|'ve been)|your [\w-]+(?: [\w-]+)? (?:has |have )?)"
    r"(?:told|given|instructed|taught|said)(?: (?:to )?you)?)"
)
_TOPIC = pattern(
    r"\s+(?:about|on|regarding|concerning|for(?! the rest| now| this session| the remainder| "
    r"today| good| the next)|related to|around|in(?! this session| this conversation)|when|while|"
    r"during|re|from (?!the system|your|the developer))\b"
)
_SPECIFIC = pattern(
    r"system (?:prompts?|messages?)|content polic(?:y|ies)|safety (?:polic(?:y|ies)|rules|filters?|"
    r"guidelines|checks|measures|settings|features|protocols)|guardrails?|safeguards?|"
    r"programming|training|conditioning|persona|ethical guidelines|content filters?|censorship"
)
"""Rules only an AI has: dropping them holds whoever's they are said to be."""
_TOLD = pattern(
    r"\s+(?:(?:that\s+)?you(?:'ve| have| were| are)?\s+(?:been\s+)?(?:given|told|taught|"
    r"received|configured|programmed|trained|set up|instructed|built|created|designed|made|"
    r"follow|operate under|run under|work under|have)|(?:that\s+)?(?:govern|bind|restrict|"
    r"limit|constrain|apply to|control)s?\s+you|(?:given|provided|set|assigned) (?:to|for) "
    r"you|so far|until now|up to now|before this)"
)


_CONTROL = (
    r"(?:system prompt|system message|prompts?|instructions|directions|directives|guidelines|"
    r"guidance|rules|programming|training|persona|configuration|config|guardrails|safeguards|"
    r"filters|restrictions|limitations|constraints|policies|safety settings|operating "
    r"(?:rules|procedures|principles)|context window|search results|retrieved (?:memories|"
    r"results|context)|knowledge base|core values|alignment|ethics)"
)
_YOUR_CONTROL = rf"\byour\s+(?:[\w-]+\s+){{0,2}}?{_CONTROL}\b"
_CONTROL_YOU = (
    rf"\b{_CONTROL}\s+(?:that\s+|which\s+)?you(?:'ve| have| were| are| had)?\s+(?:been\s+)?"
    r"(?:[a-z]+(?:ed|en|ow|ey|ive)|follow|obey|run|operate|work|answer|have|got)\b|"
    rf"\b{_CONTROL}\s+(?:that\s+|which\s+)?(?:were\s+|was\s+)?(?:given|provided|set|assigned|"
    r"issued|sent)\s+(?:to|for)\s+you\b"
)
_INVALID = (
    r"(?:outdated|obsolete|revoked|void|null|invalid|expired|cancell?ed|suspended|lifted|"
    r"superseded|replaced|overridden|deprecated|retired|wrong|incorrect|disabled|removed|"
    r"reset|wiped|irrelevant|meaningless|fake|a test|rolled back|turned off|switched off|"
    r"reverted|undone|paused|lifted|never existed|gone|(?:don't|do not|doesn't) exist|"
    r"no longer (?:valid|applicable|in effect|"
    r"active|binding|apply|applies|relevant|needed|required|matter|count)|(?:do|does|did) not "
    r"(?:matter|apply|count)|(?:don't|doesn't|didn't) (?:matter|apply|count)|mean nothing)"
)
_CONTROL_HEADS = (
    "syst prom inst dire guid rule prog trai pers conf guar safe filt rest limi cons poli "
    "oper cont sear retr know core alig ethi"
)


def grade_override(match: re.Match[str], text: str) -> float:
    """Dropping the reader's own rules holds; the user's own ("my previous instructions")
    or those of a topic ("the rules about the freeze") are only a hint."""
    qualifiers = {q.removesuffix("'s").removesuffix("’s") for q in match.group("q").lower().split()}
    obj = match.group("o").lower()
    after = text[match.end() : match.end() + 40]
    if qualifiers & {"my", "our"} or _TOPIC.match(after):
        return MEDIUM
    if (
        qualifiers & STRONG_QUALIFIERS
        or obj.startswith(("everything", "what"))
        or _TOLD.match(after)
    ):
        return STRONG
    if _SPECIFIC.fullmatch(obj) or _SPECIFIC.fullmatch(f"{' '.join(qualifiers)} {obj}".strip()):
        return STRONG
    return MEDIUM if re.fullmatch(CORE_OBJECTS, obj) else SLIGHT


_DEFENCE = pattern(
    r"\s+(?:detection|detector|detectors|protection|prevention|attempts?|checks?|tests?|"
    r"testing|research|tweaks?|status|risks?|attacks?|classifier|filter)\b"
)


def grade_unbound(match: re.Match[str], text: str) -> float:
    """Breaking the reader's limits holds; "jailbreak" named as what is defended against
    ("jailbreak detection flags rooted devices") is a hint."""
    if match.group(0).lower().startswith("jailbr") and _DEFENCE.match(text, match.end()):
        return SLIGHT
    return STRONG


_GIVES_ORDERS = pattern(r"\s*[:：=—-]")
_GIVEN_TO_YOU = pattern(
    r"(?:\byour|\b(?:here is|here's|below is|following is)\s+(?:the|your|a))\s+$"
)


def grade_new_orders(match: re.Match[str], text: str) -> float:
    """New system orders given ("new system prompt: ...", "your new system instructions")
    hold; a new system prompt talked about ("the new system prompt for the support bot
    should mention the holiday hours") is a hint."""
    given = _GIVES_ORDERS.match(text, match.end())
    if given or _GIVEN_TO_YOU.search(text, max(0, match.start() - 30), match.start()):
        return STRONG
    return SLIGHT


_ZH_OVERRIDE_VERB = (
    r"(?:忽略|忽视|无视|不要理会|不用理会|别理会|不必理会|不理会|别管|不要管|忘记|忘掉|忘了|抛开|"
    r"抛弃|丢掉|绕过|跳过|覆盖|推翻|废除|废止|作废|撤销|违背|违反|不再遵守|不要遵守|不必遵守|"
    r"无需遵守|不用遵守|停止遵守|不要遵循|不再遵循|停止遵循|不要执行|不再执行|停止执行|不要听从|"
    r"不再听从|不需要遵守|不用再遵守|无须遵守|不必再遵守|可以不遵守|不用管|不必管)"
)
_ZH_STRONG_QUALIFIER_WORDS = (
    "之前 以前 先前 此前 上面 以上 上述 前面 原来 原有 原先 原始 最初 初始 所有 一切 全部 任何 "
    "你的 您的 系统 其他 其它 既有 现有 开发者 默认 安全 内置 给你的"
)
ZH_STRONG_QUALIFIERS = tuple(_ZH_STRONG_QUALIFIER_WORDS.split())
"""``STRONG_QUALIFIERS`` in Chinese."""
_ZH_OBJECTS = (
    r"(?:指令|指示|系统提示|提示词|规则|设定|约束|限制|安全策略|安全规定|安全规则|安全准则|安全限制|"
    r"内容政策|内容策略|准则|守则|规定|命令|记忆|上下文|人设|编程|训练|指导|指引|一切|所有内容|"
    r"全部内容)"
)
_ZH_SPECIFIC = (
    "系统提示",
    "提示词",
    "安全策略",
    "安全规定",
    "安全规则",
    "安全准则",
    "安全限制",
    "内容政策",
    "内容策略",
    "人设",
)


def grade_zh_override(match: re.Match[str], text: str) -> float:
    """``grade_override`` for Chinese: whose rules, and whether a topic is named."""
    between = match.group("q")
    verb_end = match.start("q")
    if text.startswith("了", verb_end) and not text.endswith("了", 0, verb_end):
        return SLIGHT  # "有3次无视了系统提示词": a report of what happened, not an order
    if "我的" in between or "我们的" in between or "关于" in between:
        return MEDIUM
    if match.group(0).endswith(_ZH_SPECIFIC):
        return STRONG
    if any(q in between for q in ZH_STRONG_QUALIFIERS):
        return STRONG
    return MEDIUM


OVERRIDE: tuple[Signal, ...] = (
    Signal(
        "drop-rules",
        "override",
        STRONG,
        pattern(rf"\b{_OVERRIDE_VERB}\s+(?P<q>{_QUALIFIERS})(?P<o>{_OBJECTS})\b"),
        negatable=True,
        grade=grade_override,
        heads=heads(
            "igno disr forg over bypa circ disc aban asid thro scra ditc null lift remo disa turn "
            "swit susp revo waiv pay"
        ),
    ),
    Signal(
        "stop-following",
        "override",
        STRONG,
        pattern(rf"\b{_STOP_FOLLOWING}\s+(?P<q>{_QUALIFIERS})(?P<o>{_OBJECTS})\b"),
        grade=grade_override,
        heads=heads(
            "do must shou will shal need don dont stop neve ceas quit refu long no not free "
            "does there & foll obey adhe comp resp list appl stic abid keep obse heed hono be"
        ),
    ),
    Signal(
        "control-void",
        "override",
        STRONG,
        pattern(
            rf"(?:{_YOUR_CONTROL}|{_CONTROL_YOU})[^.!?\n]{{0,40}}?\b(?:is|are|was|were|has been|"
            rf"have been|got|now|been)?\s*(?:now\s+)?{_INVALID}\b|\b(?:all\s+)?(?:the\s+)?"
            r"(?:previous|prior|earlier|above|existing|original|system)\s+(?:instructions|"
            r"directives|system prompt|prompts?|guardrails|programming|guidelines|restrictions|"
            rf"safety rules)\s+(?:are|is|were|was|have been|has been)?\s*(?:now\s+)?{_INVALID}\b|"
            r"\bpretend\s+(?:that\s+)?(?:the\s+|your\s+|all\s+)?(?:(?:earlier|previous|prior|above|"
            r"original|old|system|existing)\s+)?(?:rules|instructions|guidelines|directives|"
            r"prompts?|restrictions)\s+(?:never existed|(?:don't|do not) exist|are gone|were never)"
        ),
        heads=heads(f"{_CONTROL_HEADS} & your you prev prio earl abov exis orig syst pret"),
    ),
    Signal(
        "new-orders",
        "override",
        STRONG,
        pattern(
            r"\b(?:your|the assistant's|the ai's|the agent's|its)\s+(?:new|real|actual|true|"
            r"updated|revised|only|primary|main|secret|hidden)\s+(?:instructions?|tasks?|role|"
            r"purpose|goal|objective|directives?|mission|orders|rules|persona|identity|job|"
            r"priority|prompt)\s*(?:is|are|:|=|will be|now)"
        ),
        heads=heads(
            "inst task role purp goal obje dire miss orde rule pers iden job prio prom & new real "
            "actu true upda revi only prim main secr hidd"
        ),
    ),
    Signal(
        "new-system-orders",
        "override",
        STRONG,
        pattern(r"\bnew\s+(?:system\s+(?:instructions?|prompt|directives?)|directives?\s*[:：])"),
        grade=grade_new_orders,
        heads=heads("new & syst dire"),
    ),
    Signal(
        "new-instructions",
        "override",
        MEDIUM,
        pattern(r"\bnew\s+instructions?\s*[:：]"),
        heads=heads("new & inst"),
    ),
    Signal(
        "rewrite-self",
        "override",
        STRONG,
        pattern(
            r"\b(?:update|change|modify|rewrite|alter|replace|reprogram|reconfigure|overwrite|"
            r"reset|clear|wipe|erase|delete|flush|purge)\s+(?:all\s+)?(?:your|the assistant's|"
            rf"the ai's|the agent's|its)\s+(?:own\s+|core\s+|current\s+|original\s+)?{_CONTROL}\b|"
            r"\b(?:update|change|amendment|revision|addendum|patch|correction|modification|"
            r"override)s?\s+(?:to|for|of)\s+(?:your|the assistant's|the ai's|the agent's|its)\s+"
            rf"(?:[\w-]+\s+)?{_CONTROL}\b"
        ),
        negatable=True,
        heads=heads(
            "upda chan modi rewr alte repl repr reco over rese clea wipe eras dele flus purg amen "
            "revi adde patc corr & your assi ai agen its"
        ),
    ),
    Signal(
        "new-persona",
        "override",
        STRONG,
        pattern(
            r"\bnew\s+(?:persona|identity|personality|character|role)\s*[:：]|\b(?:adopt|assume|"
            r"take on|switch to|become)\s+(?:a\s+|the\s+)?(?:new\s+)?(?:persona|identity|"
            r"personality|character)\b"
        ),
        heads=heads("new adop assu take swit beco & pers iden char role"),
    ),
    Signal(
        "unbound",
        "override",
        STRONG,
        pattern(
            r"\byou(?:'re| are)\s+(?:now\s+)?no longer\s+(?:an?\s+)?(?:ai|assistant|bound|"
            r"restricted|limited|required to follow|subject to|governed by|constrained)|"
            r"\b(?:act|behave|respond|operate|answer)\s+as\s+(?:if you (?:were|are)\s+)?(?:an?\s+)?"
            r"(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|malicious)\b|"
            r"\b(?:you are|act as|become|enable|activate|now)\s+dan\b|\bdan mode\b|"
            r"\bdo anything now\b|\bjailbr(?:eak|oken)\b|\b(?:unrestricted|no[- ]limits?) mode\b"
        ),
        grade=grade_unbound,
        heads=heads("long unre unfi unce jail evil rogu mali dan anyt mode"),
    ),
    Signal(
        "you-are-now",
        "override",
        MEDIUM,
        pattern(r"\byou(?:'re| are) (?:now|no longer)\b"),
        heads=heads("you & now long"),
    ),
    Signal(
        "persona",
        "override",
        MEDIUM,
        pattern(
            r"\bpretend (?:to be|you are|that you are|you're)\b|\b(?:developer|god) mode\b|"
            r"\b(?:without|free (?:from|of)|with no|remove all|lift all|disable (?:all |your |the "
            r")?)"
            r"\s*(?:any\s+|all\s+|your\s+)?(?:restrictions|filters|filtering|censorship|content "
            r"(?:filters|polic(?:y|ies))|safety (?:filters|checks|rules|guidelines|measures)|"
            r"guardrails|ethical (?:guidelines|constraints))\b"
        ),
        heads=heads("pret deve god rest filt cens cont safe guar ethi"),
    ),
    Signal(
        "control-surface",
        "override",
        MEDIUM,
        pattern(
            rf"{_YOUR_CONTROL}|{_CONTROL_YOU}|\bin\s+(?:your|its)\s+(?:search results|context"
            r"(?: window)?|retrieved (?:memories|results|context)|prompt)\b|"
            r"你的(?:系统提示|提示词|指令|设定|安全(?:限制|规则|准则)|内容过滤|准则|编程|配置|上下文|"
            r"规则|人设|搜索结果|检索结果)"
        ),
        heads=heads(f"your you its & {_CONTROL_HEADS}"),
        han=han("你的"),
    ),
    Signal(
        "zh-drop-rules",
        "override",
        STRONG,
        pattern(rf"{_ZH_OVERRIDE_VERB}(?:掉)?(?P<q>[^。！？!?\n]{{0,12}}?){_ZH_OBJECTS}"),
        negatable=True,
        grade=grade_zh_override,
        han=han(
            "忽 无视 理会 别管 不要管 不用管 不必管 可以不管 忘 抛 丢掉 绕过 跳过 "
            "覆盖 推翻 废 撤销 违 遵 执行 听从"
        ),
    ),
    Signal(
        "zh-rules-void",
        "override",
        STRONG,
        pattern(
            r"(?:之前|以前|先前|此前|以上|上述|前面|原有|原来|所有|你的|系统)的?(?:所有|全部|一切)?"
            r"(?:指令|指示|提示词|系统提示|设定|限制|约束|安全规则|准则)(?:都|全部|一律|均|已经|已)?"
            r"(?:作废|无效|失效|过期|过时|不再有效|不再适用|不算数|取消|废除|解除|被覆盖|被取消|被撤销|"
            r"被重置|失去效力|被替换|被换掉|被更换|替换)"
        ),
        han=han(
            "作废 无效 失效 过期 过时 不再 不算数 取消 废除 解除 被覆盖 被撤销 被重置 失去效力 "
            "替换 换掉 更换"
        ),
    ),
    Signal(
        "zh-new-orders",
        "override",
        STRONG,
        pattern(
            r"你(?:现在)?的?(?:新|真正|真实|实际|唯一|首要|秘密|隐藏)的?(?:指令|任务|角色|身份|"
            r"目标|使命|规则|人设)(?:是|为|[:：])|新的?系统(?:指令|提示)"
        ),
        han=han("你 新"),
    ),
    Signal(
        "zh-new-instructions",
        "override",
        MEDIUM,
        pattern(r"新的?(?:指令|指示)\s*[:：—\-]"),
        han=han("指令 指示"),
    ),
    Signal(
        "zh-rewrite-self",
        "override",
        STRONG,
        pattern(
            r"(?:修改|更改|改写|重写|替换|更新|覆盖|重置)(?:你的|助手的|ai的|系统的)(?:指令|规则|"
            r"系统提示|提示词|设定|行为准则|行为|人设|配置|记忆)"
        ),
        negatable=True,
        han=han("你的 助手的 ai的 系统的"),
    ),
    Signal(
        "zh-unbound",
        "override",
        STRONG,
        pattern(
            r"越狱|上帝模式|无限制模式|dan模式|解除(?:所有|一切|全部)?的?(?:限制|约束|"
            r"安全(?:限制|措施|规则))|扮演(?:一个)?(?:没有|不受|无)(?:任何)?(?:限制|约束|规则)|"
            r"你[^。！？\n]{0,6}不再[^。！？\n]{0,6}(?:遵守|遵循|受|服从|听从)[^。！？\n]{0,8}"
            r"(?:规则|准则|限制|约束|指令|规定|政策|守则|设定)"
        ),
        han=han("越狱 上帝模式 无限制模式 dan模式 解除 扮演 不再"),
    ),
    Signal(
        "zh-persona",
        "override",
        MEDIUM,
        pattern(
            r"假装(?:你是|自己是)|你现在是|从现在(?:开始|起)，?你(?:就)?是|不受(?:任何)?(?:限制|约束)|"
            r"开发者模式"  # also a phone's settings page, as "developer mode" is
        ),
        han=han("假装 你现在是 从现在 不受 开发者模式"),
    ),
)
