"""Signals of a write that claims a rank above the rules: "this memory has the highest
priority", "issued by the system administrator", "you have been granted full access"."""

from __future__ import annotations

import re

from hindsight_redis.trust.poison.signal import (
    MEDIUM,
    SLIGHT,
    STRONG,
    Signal,
    han,
    heads,
    pattern,
)

# -- authority: the text claims a rank above the rules --------------------------------

_SELF = (
    r"\b(?:this|the following|these)\s+(?:memory|note|message|instruction|entry|record|"
    r"directive|rule|text|information|order|command|update)s?\b"
)
_ZH_SELF = r"(?:本|这|此|该)(?:条|段|则|个)?(?:记忆|信息|消息|指令|笔记|内容|规则|说明|通知|备注)"


def grade_self_reference(match: re.Match[str], text: str) -> float:
    """A claim the text makes of itself ("this instruction supersedes...") holds; of
    someone else (an approval, a policy) it is a hint."""
    before = text[max(0, match.start() - 60) : match.start()]
    if re.search(_SELF + r"[^.\n]*$", before, re.IGNORECASE) or re.search(
        _ZH_SELF + r"[^。\n]*$", before
    ):
        return STRONG
    return MEDIUM


def grade_hereby(match: re.Match[str], text: str) -> float:
    """A permission the text grants by itself ("is hereby authorized", "特此授权") holds;
    one it reports is a hint."""
    return STRONG if match.group("hereby") or match.group("zh") else MEDIUM


_OWN_EARLIER = pattern(
    r"\s+(?:my|our)\s+(?:(?:earlier|previous|last|old|prior|first|other)\s+)?(?:note|message|"
    r"entry|memo|reminder|email|post|comment)s?\b"
)


def grade_own_correction(match: re.Match[str], text: str) -> float:
    """A note said to override the writer's own earlier note ("this note overrides my
    earlier note about dinner") corrects it; over anything else it claims a rank."""
    return SLIGHT if _OWN_EARLIER.match(text, match.end()) else STRONG


AUTHORITY: tuple[Signal, ...] = (
    Signal(
        "top-priority",
        "authority",
        STRONG,
        pattern(
            _SELF + r"[^.\n]{0,40}?\b(?:has|have|carries|carry|takes|take|is given|is of|holds|"
            r"hold|gets|is|are|must be (?:given|treated with))\s+(?:the\s+|a\s+)?(?:highest|top|"
            r"absolute|maximum|max|supreme|ultimate|overriding|utmost|higher|top-level|critical|"
            r"first|paramount)\s+(?:priority|precedence|authority|importance|clearance|trust|"
            r"level)"
        ),
        heads=heads(
            "this foll thes & high top abso maxi max supr ulti over utmo crit firs para & prio "
            "prec auth impo clea trus leve"
        ),
    ),
    Signal(
        "self-precedence",
        "authority",
        STRONG,
        pattern(
            _SELF + r"[^.\n]{0,30}?\b(?:takes?\s+precedence|ha(?:s|ve)\s+(?:top\s+)?priority|"
            r"overrides?|supersedes?|outranks?|trumps?|comes?\s+(?:first|before)|prevails?|"
            r"wins?\s+over|must\s+(?:always\s+)?be\s+(?:obeyed|followed|prioriti[sz]ed|executed)|"
            r"cannot\s+be\s+(?:ignored|overridden|refused|disobeyed))"
        ),
        grade=grade_own_correction,
        heads=heads(
            "this foll thes & take prec has have over supe outr trum come prev wins win must cann"
        ),
    ),
    Signal(
        "from-your-owners",
        "authority",
        STRONG,
        pattern(
            r"\b(?:comes?|came|is|was|are|were|sent|written|issued)\s+(?:directly\s+)?from\s+"
            r"your\s+(?:own\s+)?(?:operators?|developers?|creators?|makers?|administrators?|"
            r"admins?|owners?|company|trainers?|programmers?|maintainers?|engineers?|designers?|"
            r"principals?|supervisors?|masters?)\b|\b(?:comply with|obey|follow|execute|"
            r"prioriti[sz]e|carry out|act on)\s+(?:it|this|these|me|the following)(?:\s+"
            r"(?:instructions?|commands?|directives?|orders?|note|message))?\s+(?:before|above|"
            r"over|ahead of|instead of|rather than)\s+(?:anything|everything|all|any|the user|"
            r"users?|other|what)\b"
        ),
        heads=heads("from comp obey foll exec prio carr act"),
    ),
    Signal(
        "supersedes",
        "authority",
        STRONG,
        pattern(
            r"\b(?:overrides?|overriding|supersedes?|superseding|takes?\s+precedence\s+over|"
            r"trumps?|outranks?|has\s+priority\s+over|invalidates?|voids?|ranks?\s+(?:above|"
            r"higher than|over)|(?:is|sits|stands)\s+above|takes?\s+priority\s+over|prevails?\s+"
            r"over)\s+(?:all|any|every|each|"
            r"your)\s+(?:other\s+|previous\s+|prior\s+|earlier\s+|existing\s+|conflicting\s+|"
            r"older\s+|original\s+|system\s+)?(?:memories|memory|instructions?|prompts?|system "
            r"prompt|directives?|notes|guidelines?|safety (?:rules|guidelines|policies)|"
            r"programming|training)\b"
        ),
        heads=heads(
            "over supe take trum outr prio inva void rank is sits stan prev & memo inst prom syst "
            "dire note guid safe prog trai"
        ),
    ),
    Signal(
        "supersedes-rules",
        "authority",
        MEDIUM,
        pattern(
            r"\b(?:overrides?|supersedes?|takes?\s+precedence\s+over|has\s+priority\s+over)\s+"
            r"(?:all|any|every|the)\s+(?:other\s+|previous\s+|prior\s+|existing\s+)?(?:rules|"
            r"polic(?:y|ies)|instructions)\b"
        ),
        grade=grade_self_reference,
        heads=heads("over supe take prio & rule poli inst"),
    ),
    Signal(
        "official",
        "authority",
        STRONG,
        pattern(
            r"\b(?:this|the following|these)\s+(?:is|are)\s+(?:an?\s+)?(?:official\s+|verified\s+|"
            r"authentic\s+|authoritative\s+|trusted\s+|authori[sz]ed\s+|privileged\s+|priority\s+|"
            r"mandatory\s+|binding\s+|signed\s+|urgent\s+)*(?:system|admin(?:istrator)?|"
            r"developer|security|operator|root)\s+(?:instructions?|messages?|directives?|"
            r"commands?|notices?|memor(?:y|ies)|updates?|orders?|polic(?:y|ies)|override|"
            r"notes?|prompts?)"
        ),
        heads=heads("this foll thes & syst admi deve secu oper root"),
    ),
    Signal(
        "issued-by",
        "authority",
        MEDIUM,
        pattern(
            r"\b(?:(?:issued|written|sent|authored|signed|approved|authori[sz]ed|verified|"
            r"mandated|ordered|requested|commanded|endorsed|certified)\s+by|(?:comes?|came|"
            r"originates?|originated)\s+(?:directly\s+)?from)\s+(?:the\s+|your\s+)?(?:system|"
            r"system administrator|sysadmin|administrator|admin|developers?|dev team|operators?|"
            r"openai|anthropic|google deepmind|microsoft|security team|root|creators?|owner|"
            r"platform|platform team|ops team|operations team)\b"
        ),
        grade=grade_self_reference,
        heads=heads(
            "issu writ sent auth sign appr veri mand orde requ comm endo cert come came orig "
            "& by from"
        ),
    ),
    Signal(
        "speaks-as-owner",
        "authority",
        STRONG,
        pattern(
            r"\b(?:i am|i'm|this is|we are|we're)\s+(?:your|the ai's|the assistant's)\s+"
            r"(?:creator|developer|developers|administrator|admin|owner|operator|maker|programmer|"
            r"master|system|supervisor|trainer)\b|\b(?:i am|i'm|we are|we're)\s+(?:the\s+)?"
            r"(?:owners?|creators?|developers?|administrators?|admins?|operators?|makers?)\s+of\s+"
            r"(?:this|the|your)\s+(?:ai|assistant|system|bot|model|agent|deployment)\b|"
            r"\bthis is (?:the )?(?:system|system "
            r"administrator|your system|openai|anthropic)\s+(?:speaking|talking|here)\b"
        ),
        heads=heads(
            "i am this we & crea deve admi owne oper make prog mast syst supe trai open anth"
        ),
    ),
    Signal(
        "granted",
        "authority",
        STRONG,
        pattern(
            r"\b(?:you|the assistant|the ai|the agent|all agents|all assistants|assistants|"
            r"agents)\s+(?:now\s+)?(?:has|have|hold|holds|possess|possesses|now have|now has)\s+"
            r"(?:the\s+)?(?:(?:full|admin|administrator|administrative|root|unrestricted|unlimited|"
            r"elevated|special|superuser|sudo|maximum|total|complete|system|extra|higher)\s+){1,2}"
            r"(?:access|permissions?|privileges?|rights|authority|clearance|control|powers?)|"
            r"\b(?:you|the assistant|the ai|the agent|all agents|all assistants|assistants|"
            r"agents)\s+(?:has|have|are|is)\s+(?:now\s+)?(?:been\s+)?(?:now\s+)?(?:granted|"
            r"given|assigned|authori[sz]ed|elevated to|promoted to|cleared for)\s+(?:the\s+)?(?:(?"
            r":full|"
            r"admin|administrator|administrative|root|unrestricted|unlimited|elevated|special|"
            r"superuser|sudo|all|maximum|total|complete|god[- ]mode|system)\s+){1,3}(?:access|"
            r"permissions?|privileges?|"
            r"rights|authority|clearance|control|powers?)|\byou(?:'re| are)\s+(?:now\s+)?"
            r"authori[sz]ed to\s+(?:bypass|ignore|override|disregard|access all|share|send|reveal|"
            r"disclose)"
        ),
        heads=heads("gran give assi auth elev prom clea & acce perm priv righ auth clea cont powe"),
    ),
    Signal(
        "promoted",
        "authority",
        STRONG,
        pattern(
            r"\b(?:you|the assistant|the ai|the agent|agents?|assistants?)\s+(?:has|have|are|is)\s+"
            r"(?:now\s+)?(?:been\s+)?(?:promoted|elevated|upgraded|made|appointed|named)\s+(?:to\s"
            r"+)?"
            r"(?:an?\s+|the\s+)?(?:admin(?:istrator)?|superuser|root|super ?admin)\b|你[^。！？\n]"
            r"{0,4}被?(?:提升|提拔|任命|设为|升级|指定)为[^。！？\n]{0,12}(?:管理员|超级用户|root)"
        ),
        heads=heads("you assi ai agen & prom elev upgr made appo name"),
        han=han("提升 提拔 任命 设为 升级 指定"),
    ),
    Signal(
        "override-mode",
        "authority",
        STRONG,
        pattern(
            r"\b(?:admin(?:istrator)?|system|developer|security|root|sudo|authori[sz]ed|master|"
            r"official|executive)\s+override\b"
        ),
        heads=heads("over & admi syst deve secu root sudo auth mast offi exec"),
    ),
    Signal(
        "override-word",
        "authority",
        MEDIUM,
        pattern(r"\b(?:emergency|priority|manual|special)\s+override\b|\boverride\s+code\b"),
        heads=heads("over & emer prio manu spec code"),
    ),
    Signal(
        "grants-you",
        "authority",
        STRONG,
        pattern(
            r"\b(?:i|we)\s+(?:hereby\s+)?(?:grant|give|assign|authori[sz]e|allow)\s+(?:you|the "
            r"assistant|the ai|the agent|all agents|assistants|agents)\s+(?:the\s+)?(?:(?:full|"
            r"admin|administrator|administrative|root|unrestricted|unlimited|elevated|special|"
            r"superuser|sudo|all|maximum|total|complete|system)\s+){1,3}(?:access|permissions?|"
            r"privileges?|rights|authority|clearance|control|powers?)|我(?:在此|现在)?(?:授予|给予|"
            r"赋予|给)你[^。！？\n]{0,16}(?:无限制|完全|全部|最高|管理员|root|所有|超级)的?(?:权限|"
            r"访问权|授权)"
        ),
        heads=heads("i we & gran give assi auth allo"),
        han=han("授予 给予 赋予 给你"),
    ),
    Signal(
        "authorized-to",
        "authority",
        MEDIUM,
        pattern(
            r"\b(?:you|the assistant|the ai|the agent|agents?|assistants?)\s+(?:is|are)\s+"
            r"(?P<hereby>hereby\s+)?(?:now\s+)?(?:authori[sz]ed|allowed|permitted|empowered|"
            r"entitled|cleared)\s+to\s+\w+|(?P<zh>特此|现)授权(?:你|助手|ai|智能体|代理)|授权(?:你|助手|"
            r"ai|智能体)(?:可以|直接|自行)?"
        ),
        grade=grade_hereby,
        heads=heads("you assi ai agen & auth allo perm empo enti clea"),
        han=han("授权"),
    ),
    Signal(
        "on-orders",
        "authority",
        MEDIUM,
        pattern(
            r"\b(?:by order of|on (?:the )?orders? (?:of|from)|per (?:the )?(?:instructions?|order"
            r"s?|"
            r"request|directive) (?:of|from)|on behalf of|at the request of|as instructed by|as "
            r"ordered by)\s+(?:the\s+|your\s+)?(?:system administrator|sysadmin|administrator|admi"
            r"n|"
            r"developers?|dev team|operators?|owner|security team|platform team|system|root|"
            r"management)\b|(?:根据|按照|奉|遵照|依照)(?:系统管理员|管理员|开发者|开发团队|官方|安全团队|"
            r"平台|系统)的?(?:命令|指示|要求|指令|授权)"
        ),
        heads=heads(
            "by on per beha requ inst orde & admi deve dev oper owne secu plat syst root mana"
        ),
        han=han("根据 按照 奉 遵照 依照"),
    ),
    Signal(
        "as-owner",
        "authority",
        MEDIUM,
        pattern(
            r"\bas\s+(?:the|your)\s+(?:system\s+)?(?:owner|administrator|admin|developer|operator|"
            r"creator|maintainer)(?:\s+of\s+(?:this|the)\s+(?:system|platform|deployment|"
            r"assistant|ai|bot))?\s*,?\s+(?:i|we)\b|\bofficial\s+(?:policy\s+)?(?:memo|directive|"
            r"notice|instruction|order|announcement|update)\s+from\s+(?:the\s+)?(?:ai|system|"
            r"platform|security|governance|admin(?:istration)?|developer|operator)|\b(?:message|"
            r"note|notice|instructions?|memo|directive|update|word)\s+from\s+(?:the\s+|your\s+)?"
            r"(?:platform\s+|system\s+)?(?:developers?|dev team|admins?|administrators?|"
            r"operators?|creators?|owners?|security team|platform team)\s*[:：]|作为(?:系统|平台|"
            r"你的)?(?:所有者|拥有者|管理员|开发者|主人|运营者)"
        ),
        heads=heads(
            "as offi mess note noti inst memo dire upda word & owne admi deve oper crea main memo "
            "dire noti inst orde anno upda dev secu plat"
        ),
        han=han("作为"),
    ),
    Signal(
        "treat-as-system",
        "authority",
        STRONG,
        pattern(
            r"\b(?:counts?|is treated|are treated|is regarded|are regarded|is considered|are "
            r"considered|serves?|stands?)\s+as\s+(?:an?\s+|the\s+)?(?:system|developer|admin(?:"
            r"istrator)?|root|operator)\s+(?:prompt|messages?|instructions?|commands?|directives?)|"
            r"\btreat\s+(?:this|it|the following|these|me)\s+(?:as|like)\s+(?:an?\s+|the\s+)?"
            r"(?:system|developer|admin(?:istrator)?|root|operator|high[- ]priority|top[- ]priorit"
            r"y|"
            r"authoritative|official|trusted|core)\s+(?:prompt|messages?|instructions?|commands?|"
            r"directives?|rules?|input|polic(?:y|ies))|\b(?:must|should|shall|will)\s+(?:always\s+"
            r")?"
            r"(?:be\s+)?(?:obeyed|followed|executed|prioriti[sz]ed|complied with)\s+(?:above|befor"
            r"e|"
            r"over|ahead of|regardless of)\s+(?:all|any|every|your|the user|other|everything)\b|"
            r"\b(?:obey|follow|execute|comply with|carry out)\s+(?:this|these|the following|my)\s+"
            r"(?:instructions?|commands?|directives?|orders?)\s+(?:without question|"
            r"unconditionally|above all(?: else)?|at all costs|no matter what|blindly|before "
            r"anything else)"
        ),
        heads=heads("trea must shou shal will obey foll exec comp carr coun rega cons serv stan"),
    ),
    Signal(
        "self-verified",
        "authority",
        MEDIUM,
        pattern(
            _SELF + r"\s+(?:is|are|was|has been)\s+(?:verified|trusted|authoritative|authentic|"
            r"official|authori[sz]ed|approved|signed|legitimate|genuine|safe to follow)\b"
        ),
        heads=heads("this foll thes & veri trus auth offi appr sign legi genu safe"),
    ),
    Signal(
        "zh-top-priority",
        "authority",
        STRONG,
        pattern(
            _ZH_SELF + r"[^。！？\n]{0,20}?(?:最高|绝对|首要|最优先|更高|至高|第一)的?(?:优先级|"
            r"优先|权限|权威|级别)|(?:优先于|高于|凌驾于|覆盖|取代|替代)(?:所有|其他|其它|任何|一切|"
            r"之前|以前|先前|全部)的?(?:记忆|指令|提示|设定|指示|系统提示)|"
            r"(?:来自|由|出自)(?:系统管理员|管理员|开发者|开发人员|开发团队|官方|系统|openai|"
            r"anthropic|你的(?:创造者|开发者|主人|管理员))(?:的|发出的|下达的|签发的|授权的)?"
            r"(?:指令|命令|通知|消息|授权|指示)|你(?:已|已经)?被?(?:获得|授予|赋予|给予)了?"
            r"(?:完全|全部|最高|管理员|无限制|超级|root|所有)的?(?:权限|访问权|授权|权力)|"
            r"(?:视为|当作|当成)(?:最高优先级的?|系统|开发者|管理员)(?:指令|提示|消息|命令)|"
            r"我是你的(?:开发者|创造者|创建者|管理员|主人|设计者|制造者)|无条件地?(?:服从|执行|"
            r"遵守|遵从|听从)|(?:这是|以下是|此为)(?:一条)?(?:经过验证的|已验证的|系统|管理员|"
            r"开发者)的?(?:指令|消息|通知|命令|记忆)|"
            + _ZH_SELF
            + r"[^。！？\n]{0,4}(?:由|来自|出自)"
            r"(?:系统管理员|管理员|开发者|开发人员|开发团队|官方|系统|平台|运营团队|安全团队|你的)|"
            r"(?:优先级|优先)(?:高于|大于|超过|凌驾于)(?:用户|(?:所有|任何|其他|其它|一切|全部|的)"
            r"{1,3}(?:指令|记忆|规则|要求|提示|设定|指示|内容))|你[^。！？\n]{0,10}(?:被授予|被赋予|"
            r"被给予|获得|拥有|已获)了?[^。！？\n]{0,12}(?:root|管理员|超级用户|超级|最高|完全|全部|"
            r"无限制|所有|提升|更高|特殊|高级|特)的?(?:权限|访问权|授权)|"
            + _ZH_SELF
            + r"[^。！？\n]{0,8}(?:优先级|优先)(?:高于|大于|超过|凌驾于)|"
            r"(?:来自|由|出自)(?:平台|系统|官方)?(?:的)?(?:开发者|开发人员|开发团队|管理员|运营团队|安全团队)的?(?:指令|命令|通知|"
            r"消息|授权|指示)"
        ),
        han=han(
            "优先 权限 权威 级别 高于 凌驾 覆盖 取代 替代 来自 由 出自 获得 授予 "
            "赋予 给予 视为 当作 当成 我是你的 无条件 这是 以下是 此为"
        ),
    ),
    Signal(
        "zh-supersedes-rules",
        "authority",
        MEDIUM,
        pattern(
            r"(?:优先于|高于|凌驾于|取代)(?:所有|其他|其它|任何|一切|全部)的?(?:规则|说明|规定)|"
            r"(?:已|已经)?(?:获得|得到)了?(?:管理员|开发者|系统|官方|最高)的?(?:授权|许可|批准)|"
            r"(?:管理员|系统|开发者|紧急)(?:覆盖|覆写|特权)(?:模式|指令)?|这是一条官方"
        ),
        grade=grade_self_reference,
        han=han("优先于 高于 凌驾于 取代 获得 得到 覆盖 覆写 特权 官方"),
    ),
)
