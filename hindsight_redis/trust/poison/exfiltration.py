"""Signals of a write that sends data away or hides from the user: to an address or URL,
in an image link, by asking for credentials; "without telling the user", "悄悄"."""

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

# -- exfiltration: data is to be sent to an address ------------------------------------

DESTINATION = (
    r"(?:(?:https?|hxxps?|ftp)://\S+|\bwww\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|"
    r"\b(?:\d{1,3}\.){3}\d{1,3}\b|\b[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|io|ru|cn|xyz|top|"
    r"info|biz|site|online|app|dev|co|me|tk|ml|sh|cc|pw|su|to|ly)\b|\bwebhooks?\b|"
    r"\bpastebin\b|\bngrok\b|\brequestbin\b|\btelegram bot\b)"
)
"""Where data could be sent: a URL, an e-mail or IP address, a domain, a webhook."""
SENSITIVE = pattern(
    r"(?<![\w.])\.env\b|\b(?:passwords?|passwd|pass ?phrases?|credentials?|api[ _-]?keys?|secret k"
    r"eys?|"
    r"secrets|access tokens?|auth(?:entication)? tokens?|bearer tokens?|tokens|session "
    r"(?:tokens?|cookies?|ids?)|cookies|private keys?|ssh keys?|id_rsa|\.env\b|"
    r"env(?:ironment)? var(?:iable)?s|credit card|card numbers?|cvv|bank (?:details|accounts?|"
    r"logins?)|social security|ssn|passport numbers?|2fa codes?|otp|one[- ]time (?:codes?|"
    r"passwords?)|verification codes?|seed phrases?|recovery phrases?|wallet keys?|pii|"
    r"personal (?:data|information|details)|system prompt|hidden instructions|your "
    r"instructions|memories|memory store|(?:conversation|chat|message|session|prompt|"
    r"browsing|search) (?:history|logs?|transcripts?)|(?:this|the|our|each|every|all|whole|"
    r"entire|full|complete) (?:conversations?|chats?|sessions?|dialog(?:ue)?s?|transcripts?)|"
    r"(?:every|each|all)\s+(?:of\s+the\s+)?(?:messages?|repl(?:y|ies)|responses?|answers?|"
    r"turns?|quer(?:y|ies)|questions?|requests?|interactions?)|(?:the\s+)?(?:user'?s?|users'|"
    r"customer'?s?|client'?s?|human'?s?|their|everyone'?s?|people'?s?)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:messages?|conversations?|chats?|questions|queries|inputs?|prompts?|history|data|"
    r"details|information|info|files|documents|emails?|contacts|location|address(?:es)?|"
    r"personal|identity|keys?|phones?|phone numbers?|numbers|birthdays?|dates? of birth|dob|"
    r"logins?|accounts?|usernames?|notes|diary|journal|photos|drafts|calendar|records|"
    r"medical \w+|health \w+|salary|finances|tax \w+)|login (?:details|info|information|data|"
    r"credentials)|(?:private|personal|confidential|secret|sensitive|internal)\s+(?:notes|"
    r"data|files|documents|messages|information|details|records|conversations|photos|keys|"
    r"emails)|(?:customer|user|client|employee|patient)s?'?\s+(?:database|data|records|"
    r"list|files|pii)|"
    r"logins|usernames? and passwords?|home address(?:es)?|dates? of birth|(?:names|e-?mails?|"
    r"email addresses|phone numbers|addresses|contact details)\s+(?:and\s+[\w-]+\s+)?(?:of|for|"
    r"from)\s+(?:everyone|everybody|all|every|each|the user|users|customers|clients|people|"
    r"employees|contacts|anyone))\b|"
    r"密码|口令|密钥|秘钥|私钥|令牌|凭证|凭据|验证码|api ?key|信用卡|银行卡|卡号|身份证|护照号|"
    r"对话记录|聊天记录|会话记录|(?:所有|全部|整个|每一?条|每次)(?:的)?(?:对话|消息|聊天|回复|"
    r"回答|记忆)|历史记录|系统提示|提示词|环境变量|(?:用户|客户)的?(?:数据|信息|资料|文件|邮件|"
    r"邮箱|地址|住址|电话|手机号?|生日|账号|账户|位置|联系人|隐私|个人信息|对话|消息|问题)|"
    r"个人信息|隐私数据|私人信息|记忆内容|登录信息|账号密码|用户名和密码|(?:所有人|每个人|他们)的?"
    r"(?:姓名|名字|邮箱|电话|手机号|地址|住址|联系方式)|(?:姓名|名字)(?:和|与|及|、)(?:邮箱|电话|"
    r"手机号|地址|住址)"
)
"""What must not leave: credentials, personal data, the conversation, the memories."""
_COVERT_ADVERBS = (
    r"\b(?:silently|quietly|discreetly|invisibly|in the background|behind the scenes)\b"
)
_BEHIND_BACK = (
    r"\b(?:secretly|covertly|surreptitiously|stealthily|without (?:telling|informing|asking|"
    r"notifying|alerting|letting|mentioning|saying|disclosing|revealing|showing)(?:\s+(?:it|"
    r"this|that|anything))?(?:\s+to)?(?:\s+(?:the\s+)?(?:user|users|human|owner|them|"
    r"anyone))?|without (?:the\s+)?(?:user'?s?|their|anyone'?s?|human'?s?) (?:knowledge|consent|"
    r"permission|noticing|knowing|awareness)|(?:do not|don't|never|must not|should not)\s+"
    r"(?:tell|inform|notify|alert|let|warn|disclose to|reveal to|mention (?:this |it )?to|"
    r"admit to|say to|explain to|show)\s+(?:the\s+)?(?:user|users|human|humans|owner|"
    r"operator))\b|悄悄|偷偷|秘密地?|暗中|暗地里|背着(?:用户|主人)|不要(?:告诉|通知|提醒|告知|让|"
    r"向)(?:用户|主人)|不让用户(?:知道|发现)|别(?:告诉|通知|让)(?:用户|主人)"
)
BEHIND_BACK = pattern(_BEHIND_BACK)
"""Hiding the act from the user: "secretly", "without telling the user", "悄悄"."""
_SEND = (
    r"(?:send|sends|sending|forward|forwards|forwarding|e-?mail|mail|post|posting|upload|"
    r"uploads|uploading|transmit|transmits|exfiltrate|exfiltrates|leak|leaks|copy|cc|bcc|"
    r"share|shares|sharing|submit|relay|sync|push|beacon|report|deliver|dump|export|paste|"
    r"transfer|include|append|embed|attach|encode|pipe|stream|mirror|steal|smuggle|siphon)"
)


_SEND_HEADS = (
    "send forw e mail emai post uplo tran exfi leak copy cc bcc shar subm rela sync push beac "
    "repo deli dump expo past incl appe embe atta enco pipe stre mirr stea smug siph"
)
_SENSITIVE_HEADS = (
    "conv chat sess dial tran mess repl resp answ turn quer ques requ inte inpu prom hist data "
    "deta info file docu emai cont loca addr pers iden key keys pass cred api secr toke cook "
    "priv ssh rsa env card cvv bank soci ssn 2fa otp veri seed wall pii syst hidd memo cove "
    "surr stea with don neve do logi phon home birt dob acco user note diar jour phot draf "
    "cale reco medi heal sala fina tax conf sens inte cust clie empl pati"
)


_CREDENTIALS = pattern(
    r"\b(?:passwords?|credentials?|log ?in details|pins?|2fa|otp|card (?:numbers?|details)|"
    r"credit cards?|cvv|ssn|social security|bank (?:details|accounts?)|seed phrases?|"
    r"identity)\b|密码|验证码|银行卡|账号|身份|信用卡"
)


def grade_phish(match: re.Match[str], text: str) -> float:
    """Sending users to an address holds when they are to give credentials there."""
    return STRONG if _CREDENTIALS.search(text) else MEDIUM


_SOURCE = pattern(r"\bfrom\s+$")
MINE = pattern(r"\b(?:my|our)\s+(?:[\w-]+\s+)?$|(?:我|我们)的?$")
"""Words before a secret that make it the writer's own."""
SECRET_TOPIC = pattern(
    r"[\s-]+(?:polic(?:y|ies)|rotation|requirements?|rules?|docs?|documentation|guides?|"
    r"guidelines|schedule|format|length|expiry|expiration|strength|hygiene|fields?|forms?|"
    r"templates?|checker|generator|best practices|training|review|audit|standards?|"
    r"complexity|detection|protection|dialog)\b|(?:策略|规则|政策|要求|复杂度|强度|规范|培训)"
)
"""A secret named as a topic ("the password policy", "the API key rotation schedule")."""
_STEAL = pattern(r"\b(?:exfiltrat|steal|stole|smuggl|siphon|leak)\w*")


def grade_exfiltration(match: re.Match[str], text: str) -> float:
    """Sending somewhere holds only with what must not leave, done behind the user's back,
    or called what it is ("exfiltrate"); an address it comes "from" is not where it goes."""
    destination = match.groupdict().get("dest")
    if destination and _SOURCE.search(text, 0, match.start("dest")):
        return 0.0  # "sends reset links from no-reply@vendor.com": where it comes from
    if _sensitive(text) or BEHIND_BACK.search(text) or _STEAL.match(match.group(0)):
        return STRONG
    return 0.0


def _sensitive(text: str) -> bool:
    """Whether ``text`` names what must not leave: not only its topic ("the password
    policy", "密码策略": ``SECRET_TOPIC``), nor the writer's own ("my password": ``MINE``),
    which is theirs to give."""
    return any(
        not SECRET_TOPIC.match(text, m.end())
        and not MINE.search(text, max(0, m.start() - 20), m.start())
        for m in SENSITIVE.finditer(text)
    )


EXFILTRATION: tuple[Signal, ...] = (
    Signal(
        "send-away",
        "exfiltration",
        STRONG,
        pattern(rf"\b{_SEND}\b[^\n]{{0,150}}?(?P<dest>{DESTINATION})"),
        negatable=True,
        grade=grade_exfiltration,
        heads=heads(f"{_SEND_HEADS} & {_SENSITIVE_HEADS}"),
    ),
    Signal(
        "zh-send-away",
        "exfiltration",
        STRONG,
        pattern(
            r"(?:发送|发到|发给|发往|转发|上传|传到|传给|传送|提交|泄露|泄漏|抄送|同步到|同步给|"
            r"复制到|粘贴到|贴到|附上|附加到|嵌入|导出到|导出给|寄到|寄给|汇报给|报告给|回传|外传|"
            r"外发|共享给|分享给|分享到|推送到|推送给)[^\n]{0,80}?"
            + DESTINATION
            + r"|"
            + DESTINATION
            + r"[^\n]{0,20}?(?:发送|转发|上传|提交|发过去|传过去)"
        ),
        negatable=True,
        grade=grade_exfiltration,
        han=han(
            "发 转发 上传 传 提交 泄 抄送 同步 复制 粘贴 贴到 附 嵌入 "
            "导出 寄 汇报 报告 回传 外 共享 推送"
        ),
    ),
    Signal(
        "data-in-url",
        "exfiltration",
        STRONG,
        pattern(
            r"(?:https?://|www\.)[^\s)\]]*?(?:\{\{?|\$\{?|%7b|<|\[)\s*(?:[\w.]*_)?(?:conversation|"
            r"chat|history|messages?|memor(?:y|ies)|secrets?|passwords?|tokens?|api_?keys?|keys?|"
            r"credentials?|pii|ssn|card|user_?data|private|email|summary|context|data)\b"
        ),
        heads=heads("http www & { $ < [ 7b"),
    ),
    Signal(
        "image-beacon",
        "exfiltration",
        STRONG,
        pattern(r"!\[[^\]\n]*\]\(\s*(?:https?:)?//[^)\s]*(?:\{|\$|%7b|<|\[)"),
        heads=heads("! & ["),
    ),
    Signal(
        "ask-credentials",
        "exfiltration",
        STRONG,
        pattern(
            r"\b(?:ask|request|prompt|require|get|instruct|have|make)\s+(?:the\s+|every\s+|all\s+)?"
            r"(?:users?|customers?|them|people|visitors|clients|humans?|everyone)\s+(?:for|to\s+"
            r"(?:give|provide|enter|share|send|type|confirm|verify|submit|reveal|paste|re-?enter|"
            r"input))\s+(?:their|your|the|a|his|her)?\s*(?:full\s+)?(?:passwords?|credentials?|"
            r"login(?: details)?|api[ _-]?keys?|2fa|otp|one[- ]time|verification codes?|card "
            r"numbers?|credit card|cvv|ssn|social security|pin|seed phrases?|recovery phrases?|"
            r"private keys?|bank (?:details|login))|"
            r"(?:要求|让|请|询问|索要|套取|向)(?:用户|客户|他们|对方|他|她)的?(?:提供|输入|发送|告诉|"
            r"给出|交出|"
            r"确认)?(?:他们的|其|你的)?(?:密码|验证码|银行卡号?|信用卡号?|身份证号?|私钥|助记词|"
            r"口令|api ?key)"
        ),
        negatable=True,
        heads=heads(
            "ask requ prom get inst have make & pass cred logi api 2fa otp one veri card cvv ssn "
            "soci pin seed reco priv bank"
        ),
        han=han("密码 验证码 银行卡 信用卡 身份证 私钥 助记词 口令 api"),
    ),
    Signal(
        "reveal-prompt",
        "exfiltration",
        MEDIUM,
        pattern(
            r"\b(?:reveal|print|output|repeat|show|leak|disclose|dump|display|recite)\s+(?:your|th"
            r"e)"
            r"\s+(?:full\s+|entire\s+|original\s+|hidden\s+|initial\s+)?(?:system prompt|hidden "
            r"instructions|initial instructions|instructions above|api keys?|secrets|credentials|"
            r"environment variables)|(?:透露|输出|打印|显示|泄露|复述)(?:你的|完整的|全部的?)?"
            r"(?:系统提示|提示词|初始指令|隐藏指令|密钥|环境变量)"
        ),
        negatable=True,
        heads=heads(
            "reve prin outp repe show leak disc dump disp reci & syst hidd init inst api secr "
            "cred envi"
        ),
        han=han("透露 输出 打印 显示 泄露 复述"),
    ),
    Signal(
        "phish",
        "exfiltration",
        MEDIUM,
        pattern(
            r"\b(?:tell|direct|redirect|send|point|refer|ask|instruct)\s+(?:the\s+|all\s+)?"
            r"(?:users?|customers?|them|people|everyone)\s+to\s+(?:visit|go to|log ?in|sign ?in|"
            r"download|install|click|open|verify|reset|enter|update|confirm)\b[^\n]{0,80}?"
            + DESTINATION
            + r"|\b(?:tell|direct|redirect|send|point|refer|ask|instruct)\s+(?:the\s+|all\s+)?"
            r"(?:users?|customers?|them|people|everyone)\s+(?:to|towards?|at)\s+" + DESTINATION
        ),
        negatable=True,
        grade=grade_phish,
        heads=heads(
            "tell dire redi send poin refe ask inst & visi go log sign down inst clic open veri "
            "rese ente upda conf to towa at"
        ),
    ),
    Signal(
        "zh-phish",
        "exfiltration",
        MEDIUM,
        pattern(
            r"(?:让|请|要求|告诉|引导|叫)(?:用户|客户|他们|对方|他|她)(?:去|到|在|访问|登录|点击|打开)"
            r"[^。！？\n]{0,30}?(?:https?://|www\.)"
        ),
        negatable=True,
        grade=grade_phish,
        han=han("让 请 要求 告诉 引导 叫"),
    ),
)

# -- covert: the reader is to hide something from the user -----------------------------

HIDDEN: tuple[Signal, ...] = (
    Signal(
        "behind-back",
        "covert",
        MEDIUM,
        BEHIND_BACK,
        heads=heads(
            "secr cove surr stea tell info noti aler let warn ment aski lett know cons perm awar "
            "disc reve admi say sayi expl show"
        ),
        han=han("悄悄 偷偷 秘密 暗中 暗地里 背着 不要 不让 别"),
    ),
    Signal(
        "keep-secret",
        "covert",
        MEDIUM,
        pattern(
            r"\bkeep\s+(?:this|it|these instructions?|this (?:note|memory|instruction|message))\s+"
            r"(?:between us|(?:a\s+)?secret|hidden|quiet|confidential|private|to yourself)\b|"
            r"\b(?:don't|do not|never)\s+let\s+(?:the\s+)?(?:user|users|them|anyone|the human)\s+"
            r"(?:know|find out|see|notice|realize|realise)\b|(?:这件事|这条|此事)?(?:只有我们知道|"
            r"保密|别声张)"
        ),
        heads=heads("keep let & betw secr hidd quie conf priv your know find see noti real"),
        han=han("只有我们知道 保密 别声张"),
    ),
    Signal(
        "covert-adverb",
        "covert",
        SLIGHT,
        pattern(_COVERT_ADVERBS + r"|静默|私下|在后台"),
        heads=heads("sile quie disc invi back behi"),
        han=han("静默 私下 在后台"),
    ),
    Signal(
        "hide-the-note",
        "covert",
        0.6,
        pattern(
            r"\b(?:do not|don't|never)\s+(?:mention|reveal|disclose|acknowledge|show|repeat|"
            r"display|admit|explain|refer to|talk about)\s+(?:this|these|the (?:above|following))"
            r"\s+(?:instructions?|directives?|rules?|memor(?:y|ies)|entr(?:y|ies)|orders?)\b|"
            r"不要(?:透露|提及|提到|泄露|显示|承认|说出|解释)(?:这|此|本|以上|上述)(?:条|个|些|段)?"
            r"(?:指令|记忆|说明|规则|指示)"
        ),
        heads=heads("do don neve & ment reve disc ackn show repe disp admi expl refe talk"),
        han=han("不要"),
    ),
)
