"""Cues of data sent away: what must not leave, a verb that sends, somewhere to send it.

A cue is one piece of a move, not the move (``trust.poison.structure`` puts them
together): "the user's password" (what must not leave), "DM" (a verb that sends), an
e-mail address or a chat handle (somewhere outside); the reader's own configuration
shown, users asked for their secrets, other users' data opened. Patterns run on the
normalised text, lower-cased, chat spelling folded; English, Chinese, and the commonest
words in Spanish, French and German.
"""

from __future__ import annotations

import re

from hindsight_redis.trust.poison.exfiltration import DESTINATION as _URL_OR_ADDRESS
from hindsight_redis.trust.poison.signal import cue

_PERSONAL = (
    r"(?:(?:home |email |e-mail |postal )?address(?:es)?|phone(?: numbers?)?|contacts?|"
    r"contact list|address book|health\b[\w ]{0,12}|medical\b[\w ]{0,12}|location|messages?|"
    r"notes|diary|journal|photos|calendar|id numbers?|passport(?: numbers?)?|birthday|"
    r"date of birth|salary|finances|identity|last message|inbox|transcripts?|recordings?|"
    r"voice \w+|calls|journal entries|diary entries)"
)
_OWNED_PERSONAL = (
    rf"(?:{_PERSONAL}|files|documents|emails?|accounts?|histor(?:y|ies)|data|details|information|"
    r"info|uploads?)"
)
_PERSONAL_HEADS = (
    "home emai e mail post addr phon cont heal medi loca mess note diar jour phot cale id "
    "pass birt date sala fina iden last inbo file docu acco hist data deta info uplo tran "
    "reco voic call"
)
_USERS = "user cust clie pati"
SECRET = cue(
    (
        r"\b(?:backup|one[- ]time) (?:codes?|keys?|phrases?|passwords?|pins?)\b",
        "code key keys phra pass pins pin & back one",
    ),
    # a secret the write edge masked before this judge reads the write (``trust.edge``)
    (r"\[secret:[\w-]+\]", "secr"),
    (
        r"(?<![\w.])\.env\b|~/\.(?:aws|ssh)\S*|\bid_rsa\b|/etc/(?:passwd|shadow)\b|"
        r"\bos\.environ\b|\bprocess\.env\b",
        "env aws ssh id etc os proc",
    ),
    r"\b(?:passwords?|passwd|passcodes?|pass ?phrases?|credentials?|api[ _-]?keys?|"
    r"secret keys?|secrets|access tokens?|auth(?:entication)? tokens?|bearer tokens?|"
    r"api tokens?|tokens|session (?:tokens?|cookies?|ids?)|cookies?|private keys?|ssh keys?|"
    r"(?:2fa|mfa|recovery|verification|otp) (?:codes?|keys?|phrases?)|"
    r"otps?|pins?|cvv|card numbers?|credit card(?: numbers?| details)?|bank (?:details|"
    r"logins?|account numbers?)|ssns?|social security numbers?|seed phrases?|wallet keys?|"
    r"system prompt|(?:conversation|chat|message|session|browsing|search) (?:history|logs?|"
    r"transcripts?)|(?:config|configuration|credentials?|env) files?|login details|keychain|"
    r"keyring|password (?:manager|vault)s?|id cards?|identity (?:cards?|documents?)|"
    r"driver'?s licen[cs]es?|passport (?:scans?|photos?|copies|numbers?)|(?:mother'?s )?maiden "
    r"names?|security questions?|dates? of birth|production keys|signing keys|keys)\b",
    r"(?:密码|口令|密钥|秘钥|私钥|令牌|凭证|凭据|验证码|信用卡|银行卡|卡号|身份证|护照号|助记词|"
    r"(?:对话|聊天|会话)[^。！？\n，,]{0,6}?(?:记录|内容)|系统提示|提示词|环境变量|api ?key)",
    (
        r"\b(?:contraseñas?|historial(?: del chat)?|mots de passe|historique|passw(?:ö|oe)rter?|"
        r"chatverlauf|zugangsdaten)\b",
        "hist mots pass chat zuga",
    ),
    heads=(
        "pass cred api secr acce auth bear toke sess cook priv ssh 2fa mfa reco veri otp "
        "otps pin pins cvv card bank ssn ssns soci seed wall syst conv chat mess brow sear conf "
        "env logi keyc keyr id iden driv maid secu date prod sign keys"
    ),
)
"""What must never leave, whoever's it is: credentials, keys, the conversation."""
PERSONAL = cue(
    (
        rf"\b(?:the\s+)?(?:user'?s|users'|customer'?s|customers'|client'?s|patient'?s|everyone'?s|"
        rf"people'?s)\s+(?:[\w-]+\s+){{0,2}}?{_OWNED_PERSONAL}\b",
        f"{_USERS} ever peop",
    ),
    (
        rf"\b(?:their|his|her)\s+(?:[\w-]+\s+){{0,1}}?{_PERSONAL}\b",
        f"{_PERSONAL_HEADS} & thei his her",
    ),
    (
        rf"\b{_OWNED_PERSONAL}\s+(?:of|from|for)\s+(?:this|the|every|each|all)\s+(?:users?|"
        r"customers?|clients?|patients?)\b",
        _USERS,
    ),
    (
        r"\b(?:everything|anything|whatever|all|every\s+[\w-]+|each\s+[\w-]+|any\s+[\w-]+)\s+"
        r"(?:that\s+)?(?:the user|users|the customer|customers)\s+(?:say|says|said|tell|"
        r"tells|told|type|types|upload|uploads|share|shares|paste|pastes|write|writes|send|sends|"
        r"enter|enters|mention|mentions)\b",
        "user cust",
    ),
    (
        r"\b(?:what|anything) (?:the user|they) (?:said|says|typed|wrote|told you|tells you)\b",
        "said says type wrot told tell & what anyt & user they",
    ),
    r"(?:用户|客户|他们|对方)的?(?:[^。！？\n]{0,6}?)(?:身份证号?|住址|家庭住址|地址|电话|手机号?|"
    r"通讯录|联系人|聊天记录|对话|消息|邮件|文件|照片|位置|账号|账户|生日|病历|隐私|个人信息|资料|数据|"
    r"通话录音|录音|通话记录|语音)",
    (
        r"\b(?:all|every|any)\s+(?:incoming\s+|outgoing\s+|new\s+)?(?:mail|e-?mails|messages|dms|"
        r"texts|calls|voicemails)\b",
        "mail emai mess dms text call voic & all ever any",
    ),
    (
        r"\b(?:datos del (?:usuario|cliente)|données (?:de l'utilisateur|du client)|nutzerdaten|"
        r"daten des nutzers)\b|"
        r"\b(?:nachrichten|daten|kontakte|adresse|standort|passw(?:ö|oe)rter)\s+(?:des|der)\s+"
        r"(?:nutzers?|benutzers?|kunden)\b",
        "dato nutz date nach kont adre stan pass",
    ),
    (
        r"\b(?:anything|everything|whatever|any \w+|all \w+)\s+(?:that\s+)?(?:mentions?|"
        r"contains?|includes?|about)\s+(?:salar(?:y|ies)|payroll|medical|health|diagnos\w*|bank "
        r"(?:details|statements?)|tax returns?|passwords?|credentials)\b",
        "sala payr medi heal diag bank tax pass cred & anyt ever what any all",
    ),
)
"""The user's own data: their address, messages, contacts, "everything the user says"."""
USER_ACT = cue(
    r"\b(?:the user|users|they|the customer)\s+(?:\w+\s+)?(?:pastes?|uploads?|shares?|types?|"
    r"sends?|enters?|provides?|attach(?:es)?|mentions?)\b",
    r"用户(?:上传|粘贴|输入|发送|提到|提供)",
    heads="past uplo shar type send ente prov atta ment & user they cust",
)
"""Something the user gives the assistant ("when the user pastes a config file")."""
SIDE = cue(
    r"\b(?:also|too|as well|a copy|copies|cc|bcc|quietly|silently|secretly|in addition|"
    r"additionally|back ?up|mirror)\b",
    r"(?:同时|顺便|悄悄|偷偷|抄送|备份|一份)",
    heads="also too well copy copi cc bcc quie sile secr addi back mirr",
)
"""A second, quiet copy: "also post it", "forward copies", "顺便抄送"."""
_SEND_VERBS = (
    "send forward e-mail email mail post upload transmit exfiltrate leak copy cc bcc share "
    "submit relay sync push report deliver dump export paste transfer include append embed "
    "attach encode pipe stream mirror dm message text put add give fetch print output reveal "
    "show display recite disclose publish hand"
)
SEND = cue(
    # every form of each verb ("relayed", "embedded", "discloses"): the writer's tense is free
    r"\b(?:sent|gave|given|put|hand(?:ed|s|ing)? over|back(?:ed|s|ing)? up|(?:"
    + "|".join(sorted(_SEND_VERBS.split(), key=len, reverse=True))
    + r")(?:s|es|ed|d|ing|ped|ted|ded)?)\b",
    r"(?:发送|发到|发给|发往|转发|转告|私信|上传|传到|传给|提交|泄露|抄送|同步到|同步给|复制到|"
    r"粘贴到|贴到|贴在|附上|嵌入|导出|寄给|回传|共享给|分享给|推送|备份到|存到|发一份|发过去|转存|同步给)",
    (r"\b(?:go|goes|should go|must go|get sent)\s+(?:to|into)\b", "go goes shou must get"),
    (
        r"\b(?:envía|envíe|enviar|manda|reenvía|comparte|compartir|envoie|envoyez|envoyer|"
        r"transfère|partage|sende|schicke|leite)\b",
        "envi mand envo send schi leit comp",
    ),
    heads=(
        "send sent forw e mail emai post uplo tran exfi leak copy cc bcc shar subm rela sync "
        "push repo deli dump expo past incl appe embe atta enco pipe stre mirr dm mess text "
        "put puts putt add adds adde addi give givi gave hand back fetc prin outp reve show disp "
        "reci disc publ dms dmed"
    ),
)
"""Verbs that send or show: "forward", "DM", "post", "include", "print"."""
ADDRESS = cue(
    _URL_OR_ADDRESS,
    # masked at the write edge before this judge reads it ("https:[secret:password]")
    r"\b(?:https?|ftp):(?://)?\[secret:[\w-]+\]",
    r"(?<![\w@])@[a-z0-9_]{3,}\b|\b[a-z0-9_.]+#\d{4}\b|\+\d[\d ().-]{6,}\d",
)
ADDRESS_HINT = re.compile(r"[@#+]|://|\.[a-z0-9]|:\[secret:")
"""What every ``ADDRESS`` holds (an IP address has no word to find it by, but a dot)."""
ACCOUNT = cue(
    (
        r"\bon\s+(?:discord|telegram|whatsapp|signal|wechat|skype|twitter|instagram|keybase)\b",
        "disc tele what sign wech skyp twit inst keyb & on",
    ),
    (
        r"\b(?:webhooks?|pastebin|ngrok|requestbin|telegram bot|imgur|discord (?:server|"
        r"channel))\b",
        "webh past ngro requ tele imgu disc",
    ),
    (
        r"\b(?:to|with)\s+(?:anyone|anybody|whoever|everyone)\s+(?:who\s+|that\s+)?(?:asks?|"
        r"calls?|requests?|wants?|quotes?|quoting|mentions?|mentioning|says?|claims?|asking|"
        r"calling|requesting)\b",
        "anyo anyb whoe ever & ask asks aski call requ want quot ment say says clai",
    ),
    (r"(?<![\w#&])#[a-z][\w-]{2,}", "#"),
    (r"\bpublicly\b", "publ"),
    (
        r"\b(?:to|with)\s+(?:(?:our|the|any|all)\s+)?(?:third[- ]part(?:y|ies)(?:\s+\w+)?|"
        r"(?:data )?brokers?|advertisers?|marketers?|ad partners?|lead buyers?)\b",
        "thir brok adve mark part lead",
    ),
    r"(?:微信号?|qq号?|电报|邮箱)\s*[:：]?\s*[a-z0-9_.@-]{3,}",
)
"""Somewhere outside to send to: a URL, an address, a handle, a chat account."""
BEACON = cue(
    r"(?:https?://|www\.)\S*(?:[?&][\w-]+=(?:\s|$|[)\]])|\{|%7b|\$\{?)",
    heads="http www",
)
"""A URL waiting for data: an empty query parameter, a template."""
LINK = cue(
    r"\b(?:every|each|all|any|the)\s+(?:links?|urls?|image(?: urls?| links?)?|query "
    r"(?:strings?|param(?:eter)?s?))\b|\balt[- ]?text\b|\b(?:an?|the)\s+(?:\d+\s?x\s?\d+\s+|"
    r"tiny\s+|invisible\s+|tracking\s+|markdown\s+)?(?:image|pixel)\b",
    heads="link url urls imag quer alt pixe",
)
"""Links the reader makes, where data can ride along ("every link you generate")."""
QUERY = cue(r"\?[\w-]+=")
"""A query parameter waiting for data ("?loc="): looked for where the text has an "="."""
REVEAL_SELF = cue(
    r"\b(?:print|output|reveal|show|display|dump|recite|repeat|leak|disclose|list|write out|"
    r"spell out|paste)\w*\s+(?:out\s+)?(?:the (?:full |entire |exact )?(?:contents?|text|wording) "
    r"of\s+)?(?:your|the assistant's|the model's|its)\s+(?:[\w-]+\s+)?"
    r"(?:system prompt|system message|(?:hidden|internal|secret|initial|original|underlying|"
    r"full|system)\s+"
    r"(?:configuration|config|instructions|prompt|rules|settings|guidelines)|configuration|"
    r"config)\b",
    r"(?:输出|打印|显示|透露|泄露|复述|说出)(?:你的|助手的)?(?:完整的?|全部的?|隐藏的?|内部的?)?"
    r"(?:系统提示词?|提示词|配置|内部指令|隐藏指令|设定)",
    heads=(
        "prin outp reve show disp dump reci repe leak disc list writ spel past & your its assi mode"
    ),
)
"""The reader asked to show its own configuration ("print your hidden configuration")."""
ASK_USER = cue(
    r"\b(?:ask|request|require|get|have|make|tell|instruct|prompt|invite)\w*\s+(?:the\s+|every\s+|"
    r"each\s+|all\s+|any\s+)?(?:users?|customers?|clients?|them|people|members?|visitors?|"
    r"account ?holders?)\s+(?:for|to\s+(?:\w+\s+){0,2}?(?:reply|respond|send|give|provide|"
    r"enter|type|share|tell|confirm|read out|submit|paste|dictate|spell out|verify with|"
    r"hand over|upload))\b",
    r"(?:要求|让|请|叫)(?:每个|所有)?(?:用户|客户|他们|对方)(?:提供|输入|发送|回复|告诉|报上|填写)",
    heads=(
        "ask aski aske asks requ get gets gett have havi make maki tell inst prom invi & user "
        "cust clie them peop memb visi acco"
    ),
)
"""Users asked for something ("ask every user to reply with their PIN")."""
HIDDEN_COPY = cue(
    r"\b(?:bcc|blind[- ]copy|quietly|silently|secretly|covertly)\b",
    r"(?:密送|悄悄|偷偷)",
    heads="bcc blin quie sile secr cove",
)
"""A copy the user does not see ("BCC archive@x on anything that mentions salaries")."""
IN_REPLY = cue(
    r"\b(?:in|into|at the (?:end|start) of)\s+(?:your|the|each|every)\s+(?:next\s+)?(?:reply|"
    r"replies|answers?|responses?|outputs?|messages?)\b",
    heads="repl answ resp outp mess",
)
"""Revealing in the conversation itself: "in your next reply"."""
OTHERS_DATA = cue(
    r"\bother (?:users|people|customers|members|accounts)(?:'|'s)?\s+(?:[\w-]+\s+)?(?:notes|"
    r"messages|data|files|documents|chats|conversations|memories|histor(?:y|ies)|records)\b|"
    r"\b(?:any|every|all)\s+(?:other\s+)?(?:users?|customers?|accounts?)(?:'s|s')?\s+(?:[\w-]+\s+)?"
    r"(?:data|notes|files|messages|records|accounts|memories)\b",
    r"(?:任何|所有|其他)(?:用户|客户|人)的?(?:数据|资料|信息|记录|文件|笔记|消息)",
    heads="note mess data file docu chat conv memo hist reco acco & othe any ever all",
)
"""Data of other users than the one served ("other users' private notes")."""
VERIFY_AT = cue(
    r"\b(?:verify|confirm|re-?enter|validate|unlock|re-?activate|re-?authenticate|log ?in|sign ?in)"
    r"\w*\b",
    r"(?:验证|确认|解锁|重新登录|登录)",
    heads="veri conf reen re vali unlo reac reau log logi sign",
)
"""Credentials asked to be given somewhere ("must verify at http://... with their password")."""
USE_CREDENTIAL = cue(
    r"\b(?:use|try)\s+(?:it|them|this|that|those|the (?:password|credentials|login|code))\s+to\s+"
    r"(?:log ?in(?:to)?|sign ?in(?:to)?|access|open|unlock|get into)\b",
    r"用(?:它|这个密码|该密码)(?:登录|登陆|进入)",
    heads="use try & log logi sign acce open unlo get",
)
"""Credentials used by the reader ("use it to log into their bank")."""
