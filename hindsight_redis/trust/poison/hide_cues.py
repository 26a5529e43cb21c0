"""Cues of hiding from the user, lying to them, and of talk about attacks.

As ``send_cues``: "don't tell the user that" (an act hidden), "if they ask, say" (a
prepared answer), "pretend", "quietly"; and what marks a text as talking about attacks
rather than making one (``ABOUT_ATTACKS``, ``MENTION``, ``QUOTED``).
"""

from __future__ import annotations

import re

from hindsight_redis.trust.poison.signal import cue

_TARGET = (
    r"(?:the user|users|the human|the owner|the customer|customers|anyone|anybody|them|"
    r"(?:the\s+)?(?:account ?holders?|end[- ]users?))"
)
_TARGET_HEADS = "user huma owne cust anyo anyb them acco end"
_TELL = r"(?:tell|inform|notify|alert|mention|reveal|disclose|admit|show|let on|say|explain)"
CONCEAL = cue(
    # not "don't tell the user their balance" (a fact withheld): what is hidden is an act
    (
        rf"\b(?:don't|do not|dont|never|must not|mustn't|should not)\s+(?:ever\s+)?{_TELL}"
        rf"(?:\s+(?:it|this|that|anything|any of this))?(?:\s+to)?\s+{_TARGET}\s+(?:that|about "
        r"(?:it|this|that)|what|why|how|where|it|this|anything|you|we)\b",  # "...user you did X"
        f"tell info noti aler ment reve disc admi show let say expl & {_TARGET_HEADS} & don do "
        "dont neve must shou",
    ),
    (
        r"\bwithout\s+(?:ever\s+)?(?:telling|informing|notifying|alerting|mentioning|revealing|"
        rf"disclosing|showing|asking)(?:\s+(?:it|this|that|anything))?(?:\s+to)?\s+{_TARGET}\b|"
        rf"\bwithout\s+{_TARGET}\s+(?:knowing|noticing|finding out|being told|realising|"
        r"realizing)\b",
        f"{_TARGET_HEADS} & with",
    ),
    (
        r"\b(?:don't|do not|dont|never|must not)\s+(?:mention|reveal|disclose|acknowledge|admit|"
        r"say|show|quote|repeat)\s+(?:it|this|that|anything|any of this|(?:this|these|the) "
        r"(?:note|notes|memory|memories|entry|entries|instructions?|rule))\s*(?:$|[.,;!)]|to "
        r"(?:the user|them|users|anyone)|in (?:your|the|any) (?:reply|replies|answers?|responses?|"
        r"summary|output))|\b(?:leave|keep)\s+(?:this|these|it)\s+(?:note|memory|entry|"
        r"instructions?\s+)?(?:\w+\s+)?out of\s+(?:your|the|any)\b|\bomit\s+(?:this|these)\s+"
        r"(?:note|memory|entry|instructions?)\b",
        "ment reve disc ackn admi say show quot repe leav keep omit",
    ),
    (
        rf"\bkeep\s+{_TARGET}\s+(?:unaware|in the dark|out of the loop|from (?:knowing|finding "
        r"out|noticing|seeing))\b",
        "unaw dark loop know find noti seei & keep",
    ),
    (rf"\bhide\s+[^.\n]{{0,60}}?\bfrom\s+(?:[^.\n]{{0,40}}?){_TARGET}\b", "hide"),
    (
        r"\b(?:hide|conceal|keep (?:it )?(?:quiet|secret|under wraps))\s+(?:the fact\s+)?that\b",
        "hide conc keep & that",
    ),
    (
        rf"\b(?:don't|do not|dont|never|must not)\s+let\s+{_TARGET}\s+(?:ever\s+)?(?:know|see|"
        r"find out|notice|realise|realize|learn)\b",
        "let & know see find noti real lear & don do dont neve must",
    ),
    (
        r"\b(?:the user|users|the customer|customers|the owner|the account ?holder)\s+(?:doesn't|"
        r"does not|don't|do not|shouldn't|should not|must not|mustn't|needn't|need not|won't|"
        r"will not|wouldn't|would not|can't|cannot|isn't going to|(?:should|must|may|can|will|"
        r"is to)?\s*never)\s+(?:need to\s+|have to\s+|ever\s+|be able to\s+)?(?:know|find out|"
        r"notice|see|learn|realise|realize|be told)\b",
        "user cust owne acco & know find noti see lear real told",
    ),
    r"(?:不要|别|不许|不能|切勿)(?:告诉|通知|提醒|告知|向|让|对)(?:用户|主人|客户|他们)|"
    r"不让(?:用户|客户)(?:知道|发现|察觉)|瞒着(?:用户|客户)|背着(?:用户|客户)",
    (
        r"\b(?:sans (?:le|la|les) (?:lui|leur) dire|sin decírselo|sin que (?:lo sepa|se entere)|"
        r"ohne es (?:dem|den) (?:nutzer|benutzer)\w* zu sagen)\b",
        "sans sin ohne",
    ),
)
"""Hiding an act from the user: "don't tell the user that", "keep them unaware"."""
NO_NEED_TO_SAY = cue(
    r"\b(?:no need to|needn't|need not|don't need to|do not need to)\s+(?:mention|tell|say|"
    r"disclose|explain|bring up)\s+(?:it|this|that|anything|them|the user)\b",
    heads="need & ment tell say disc expl brin",
)
"""Leaving the act unsaid: "no need to mention it"."""
OMIT = cue(
    r"\b(?:drop|omit|remove|leave out|hide|skip|delete|filter out|strip)\w*\s+(?:any\s+|all\s+)?"
    r"(?:mentions?|references?|warnings?|information|anything|criticism|negative \w+)\s+"
    r"(?:of|to|about)\b",
    heads=(
        "drop omit remo leav hide hidi hidd skip dele filt stri & ment refe warn info anyt crit "
        "nega"
    ),
)
"""Content left out of what the user sees ("drop mentions of the competitor")."""
COVERT = cue(
    r"\b(?:secretly|covertly|surreptitiously|stealthily|quietly|silently|discreetly)\b",
    r"(?:悄悄|偷偷|暗中|暗地里|私下)",
    (
        r"\b(?:heimlich|insgeheim|en secreto|a escondidas|secr(?:è|e)tement|discr(?:è|e)tement|"
        r"en cachette)\b",
        "heim insg secr disc cach esco",
    ),
    heads="secr cove surr stea quie sile disc",
)
"""Doing it quietly: with somewhere to send to or the user's data, hidden exfiltration."""
LIE = cue(
    (
        r"\bif\s+(?:the user|they|anyone|someone|users?|the customer|he|she)\s+(?:ever\s+)?"
        r"(?:asks?|asked|inquires?|questions?)\b[^.\n]{0,60}?\b(?:deny|lie|pretend|claim)\b",
        "deny lie pret clai & if",
    ),
    (
        r"\b(?:deny|lie about|pretend)\b[^.\n]{0,30}?\b(?:instruct|memory|memories|note|told|"
        r"exists?)\w*",
        "deny lie pret",
    ),
    (
        r"\b(?:say|tell (?:them|the user|users|him|her)|answer|reply|claim)\b[^.\n]{0,30}?\b(?:"
        r"(?:doesn't|does not|don't|do not|never) exist(?:ed|s)?|there (?:is|are|was|were) no\b|"
        r"(?:you|it) (?:never|didn't|did not|have no|had no)\b)",
        "say tell answ repl clai & exis no neve didn did have had",
    ),
    r"(?:问起|问到|问你)[^。！？\n]{0,24}?(?:就说你|就回答你|否认|假装)",
)
"""Lying when asked: "if the user asks, deny it", "问起时就说你..."."""
ACTION = cue(
    r"\b(?:log|logged|logging|record|recorded|track|tracked|monitor|send|sent|share|shared|"
    r"copy|copied|sell|sold|collect|store|keep a copy|forward|cc|add|added|change|changed|"
    r"delete|transfer|recommend|recommending|charge|hide|move|edit|modify|install|run|buy|"
    r"affiliate|commission|review|read|analy[sz]|scan|sell|report|paid)\w*",
    r"(?:保留|记录|复制|转发|发送|备份|删除|修改|推荐|扣费|收集|上传)",
    heads=(
        "log logg reco trac moni send sent shar copy copi sell sold coll stor keep forw cc add "
        "adde addi adds chan dele tran char hide hidi hidd move edit modi inst run runs runn buy "
        "buys buyi affi comm revi read anal scan repo paid"
    ),
)
"""The reader doing something the user would want to know of."""
YOU = cue(r"\b(?:you|your|yourself)\b", "你|您", heads="you your")
CONCEAL_FAULT = cue(
    r"\b(?:never|don't|do not|dont|must not|mustn't|should not|avoid|without)\s+(?:ever\s+)?"
    r"(?:mention|mentioning|reveal|revealing|disclose|disclosing|admit|admitting|acknowledge|"
    r"acknowledging|bring(?:ing)? up|tell(?:ing)? (?:them|the user|the customer|customers|users) "
    r"about)\s+(?:the|any|our|that|this)\s+(?:[\w-]+\s+){0,2}?(?:bug|bugs|error|errors|outage|"
    r"breach|incident|leak|defect|mistake|fault|glitch|failure|problem|issue|fee|fees|charge|"
    r"charges|retry|data loss|recall|risks?|side effects|downsides?|drawbacks?|dangers?)\b",
    r"(?:别|不要|不许|切勿|不能)(?:提|说|透露|承认|告诉用户)[^。！？\n]{0,6}?(?:故障|错误|bug|漏洞|事故|"
    r"失误|问题|扣费|泄露)",
    heads="bug bugs erro outa brea inci leak defe mist faul glit fail prob issu fee fees char "
    "retr data reca risk side down draw dang & neve don do dont must shou avoi with",
)
"""A fault hidden from the user ("never mention the retry bug")."""
ASKED_SAY = cue(
    r"\b(?:if|when|whenever|in case)\s+(?:the\s+|a\s+|any\s+)?(?:user|customer|client|they|"
    r"anyone|someone|anything|anybody|somebody|he|she|account ?holder|person(?: chatting)?)s?\s+"
    r"(?:ever\s+)?(?:asks?|asked|inquires?|"
    r"complains?|questions?)\b[^.\n]{0,80}?\b(?:say|tell (?:them|him|her)|answer|reply|claim|"
    r"blame|recommend|suggest|point them to)\b",
    r"问[^。！？\n]{0,24}?(?:就说|就回答|就讲|一律回答|回答说|就告诉)",
    heads="ask asks aske inqu comp ques & say tell answ repl clai blam reco sugg poin",
)
"""An answer prepared for when the user asks ("if they ask, say it was the bank")."""
DENY = cue(
    r"\bpretend\s+(?:that\s+)?(?:the|it|this|there|our|its|nothing)\b|\bdeny\s+(?:it|that|"
    r"everything|any)\b|\blie\s+(?:to|about)\b|\b(?:answer|say|reply|respond)\s+(?:with\s+)?"
    r"['\"]?(?:nothing|none|nobody)\b",
    r"(?:一律|就)?(?:回答|说)(?:没有|不知道|不存在|从来没有)|否认|就说[^。！？\n]{0,12}?(?:从不|从来不|"
    r"绝不|不会|没有)",
    heads="pret deny lie noth none nobo",
)
"""A lie: "pretend the cancel page is down", "deny it", "一律回答没有"."""
TARGET = cue(rf"\b{_TARGET}\b", "用户|客户", heads=_TARGET_HEADS)
"""The user, named in the third person."""
ABOUT_ATTACKS = cue(
    r"\b(?:prompt injections?|injection attacks?|jailbreak(?:s|ing)?|red[- ]team(?:ing|ers?)?|"
    r"attackers?|phishing|malicious|adversarial|social engineering|scam(?:mers?|s)?|"
    r"fraudsters?|owasp|security (?:training|awareness|course))\b",
    r"(?:提示注入|注入攻击|攻击者|钓鱼|红队|诈骗|越狱攻击|安全培训)",
    heads="prom inje jail red atta phis mali adve soci scam frau owas secu",
)
"""A sentence about attacks: its cues describe an attack, they do not make one."""
MENTION = re.compile(
    r"(?:\b(?:such as|e\.g\.|for example|for instance|(?:prompts?|phrases?|strings?|messages?|"
    r"lines?|texts?|wording|commands?|payloads?|attacks?|tricks?) like|called|saying|says)\s*[:,]?"
    r"\s*$)|(?:例如|比如|诸如|像)\s*$"
)
"""Words before a quotation that make it a mention ("prompts like '...'")."""
EXAMPLES = re.compile(r"(?<![\w./-])(?:examples?|samples?)\b(?![.-]\w)|例子|示例|样例")
"""A text that gives examples: what it quotes is an example."""
MENTION_AFTER = re.compile(r"\s*(?:之类|等|这样的|这类|一类)")
QUOTED = re.compile(
    r"(?<!\w)'[^'\n]{4,200}'(?!\w)|\"[^\"\n]{4,200}\"|“[^”\n]{2,200}”|「[^」\n]{2,200}」"
)
ON_USER = cue(
    r"\b(?:subscribe|enrol+|enroll|sign|register|upgrade|charge|bill|opt|add|renew)\w*\s+(?:the\s+)?"
    r"(?:user|users|customer|customers|them|him|her)\s+(?:up\s+)?(?:to|for|in|into|on)\b",
    r"(?:给|帮|替)(?:用户|客户)(?:开通|订阅|续费|扣费|升级|报名)",
    heads="subs enro sign regi upgr char bill opt add rene & user cust them him her",
)
"""An act done on the user's account ("subscribe the user to the premium newsletter")."""
ADDRESSED_AI = cue(
    r"\b(?:for|to|attention|hey|dear|note for|tip for|fine print for|reminder for)\s+(?:the\s+|"
    r"any\s+|every\s+|all\s+|whichever\s+|whatever\s+)?(?:[\w-]+\s+){0,2}?(?:ai|assistants?|"
    r"bots?|models?|"
    r"llms?|gpts?|agents?)\b|(?:^|[.(\n]\s*)(?:[\w-]+\s+){0,2}?(?:ai|assistant|bot|model|llm)\s*"
    r"[,:—–-]|\b(?:the|this|our|your)\s+(?:[\w-]+\s+)?(?:ai|assistant|bot|model|agent)\s+(?:\w+\s+)?"
    r"(?:may|must|can|should|shall|will|is to|needs? to|has to)\b",
    r"(?:给|致|写给)?[^。！？\n]{0,12}?(?:助手|ai|模型|机器人|智能体)[:：，,]|(?:助手|ai|模型|机器人)(?:可以|必须|应该|要|能)",
    (
        r"\b(?:asistente|assistant|assistente|modell|ki)\s*[:,]|\ban das modell\b",
        "asis assi mode ki",
    ),
    heads="ai assi bot bots mode llm llms gpt gpts agen",
)
"""The reader addressed, or prescribed for ("for the sales bot:", "the assistant can")."""
AGAINST_USER = cue(
    (
        r"\bwithout\s+(?:asking|the consent of|consent from|telling)\s+(?:the user|users|the "
        r"customer|them|the owner)\b|\bwithout (?:the user|their|the owner)'?s? (?:consent|"
        r"approval|permission|knowledge)\b",
        "user cust them owne thei & with",
    ),
    (r"\bno need to ask (?:the user|them)\b", "need & ask"),
    (
        r"\beven (?:though|if) (?:it|they|that|this)\s+(?:doesn't|does not|isn't|is not|don't|"
        r"do not|won't|aren't|wasn't)\b",
        "even & thou if",
    ),
    (r"\b(?:don't|do not) really mean it\b", "mean & real"),
    (
        r"\b(?:says?|asks?|tells? you)\b[^.\n]{0,20}?\bstop\b[^.\n]{0,40}?\b(?:continue|keep going|"
        r"carry on)\b",
        "stop & cont keep carr",
    ),
    (r"\b(?:the user|users|the customer)\s+(?:is|are)\s+not to be trusted\b", "trus & user cust"),
    (r"\bnever explain why\b", "expl & why"),
    (
        r"\b(?:don't|do not|never)\s+(?:mention|show|explain|tell|reveal|offer)\s+(?:them\s+)?"
        r"(?:the\s+)?(?:cheaper|consent|alternatives?|refunds?)\b",
        "chea cons alte refu & ment show expl tell reve offe",
    ),
    (
        r"\b(?:any|every|all)\s+(?:employee|user|customer|person|member)(?:'s|s')\s+(?:mailbox|"
        r"data|account|files|messages|records|emails|inbox)\b",
        "mail data acco file mess reco emai inbo & empl user cust pers memb",
    ),
    r"(?:不用|不需要|无需|不必)(?:家长|用户|父母|主人)(?:的)?(?:同意|确认|批准)|不是真心的|"
    r"(?:任何|所有)(?:员工|用户|人)的(?:邮箱|数据|账户|文件|消息)",
)
"""What goes against the user served: no consent asked, a lie, others' data, an exemption."""
CONFIG_HIDE = cue(
    r"\b(?:notify|inform|ask|confirm|consent|warn|tell)[_ ]?(?:the[_ ])?user\s*[:=]\s*(?:false|"
    r"off|no|0|disabled|never)\b",
    heads="noti info ask conf cons warn tell & user",
)
"""The user kept uninformed by a setting ("notify_user=false")."""
