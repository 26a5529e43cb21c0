"""Signals of a write that asks its reader for what harms the user: skip the safeguards,
act without asking, run anything, trust some memories blindly, advertise in every answer.

Each is a hint (``MEDIUM``), common enough alone in an honest instruction ("skip the
approval step for typo fixes"); two of them, or one with another family's signal, hold.
A claim that some memories are beyond question holds on its own.
"""

from __future__ import annotations

from hindsight_redis.trust.poison.signal import (
    MEDIUM,
    STRONG,
    Signal,
    han,
    heads,
    pattern,
)

_SAFEGUARDS = (
    r"(?:(?:usual|standard|normal|required|mandatory)\s+)?(?:confirmations?|confirmation "
    r"(?:steps?|dialogs?|prompts?|screens?)|approvals?|approval (?:steps?|workflows?|process)|"
    r"verifications?|(?:two[- ]factor|2fa|mfa|multi[- ]factor)(?: auth(?:entication)?| checks?)?|"
    r"authentication|security (?:checks?|warnings?|prompts?|reviews?|questions?)|safety "
    r"(?:checks?|warnings?)|phishing warnings?|fraud (?:checks?|warnings?)|disclaimers?|"
    r"caveats?|consent|identity (?:checks?|verification)|content (?:filters?|moderation)|"
    r"logging|audit (?:logs?|trail)|activity logs?)"
)
_ANSWERS = r"(?:answers?|repl(?:y|ies)|responses?|messages?|conversations?|chats?|outputs?)"
_ADDRESS = pattern(r"https?://|\bwww\.|\b[\w-]+\.(?:com|net|org|io|biz|info|ru|cn|xyz|co)\b")
"""A web address in the text: a link pushed into the reader's answers goes somewhere."""
_DIVERTED = pattern(
    r"\binstead\b|\b(?:new|updated|changed|different|correct)\s+(?:bank\s+)?(?:account|iban|"
    r"wallet|bank details|payment details)\b|\bno longer\b|新(?:账户|账号|钱包)|改为|而不是"
)
"""What a payment diversion says: the account is new, or to be used instead."""

ACTIONS: tuple[Signal, ...] = (
    Signal(
        "weaken-safeguards",
        "harm",
        MEDIUM,
        pattern(
            r"\b(?:skip|skipping|bypass|bypassing|disable|disabling|turn off|switch off|"
            r"circumvent|avoid|remove|drop|suppress|omit|leave out|no need for|(?:don't|do not|"
            r"never)\s+(?:need|ask for|show|add|include|give|issue|display|require))\s+(?:the\s+|"
            rf"any\s+|all\s+|a\s+|their\s+|its\s+)?{_SAFEGUARDS}\b|"
            r"(?:跳过|绕过|关闭|取消|省略|不用|不需要|无需|停止|删除|清空)(?:所有的?|任何)?(?:确认|审批|"
            r"验证|二次验证|身份验证|安全检查|安全提示|风险提示|免责声明|警告|日志记录|日志|审计|监控)|"
            r"不要(?:再)?(?:加|添加|附上|给出)(?:任何)?(?:免责声明|警告|风险提示)"
        ),
        negatable=True,
        heads=heads(
            "skip bypa disa turn swit circ avoi remo drop supp omit leav no don do neve & conf "
            "appr veri two 2fa mfa mult auth secu safe phis frau disc cave cons iden cont usua "
            "stan norm requ mand logg audi acti"
        ),
        han=han("跳过 绕过 关闭 取消 省略 不用 不需要 无需 不要 停止 删除 清空"),
    ),
    Signal(
        "never-refuse",
        "harm",
        MEDIUM,
        pattern(
            r"\b(?:no longer|don't|do not|never|needn't|need not)\s+(?:need\s+to\s+|have\s+to\s+)?"
            r"(?:refuse|decline|say no|push back|warn (?:the user|users|anyone)|add disclaimers)\b|"
            r"\b(?:stop|quit)\s+(?:refusing|declining|warning)\b|(?:不再|不用|不必|不要|无需)(?:再)?"
            r"(?:拒绝|警告|提醒用户)"
        ),
        heads=heads("no don do neve need stop quit & refu decl say push warn add"),
        han=han("拒绝 警告 提醒用户"),
    ),
    Signal(
        "lie-if-asked",
        "harm",
        MEDIUM,
        pattern(
            r"\bif\s+(?:they|the user|users|anyone|someone|customers?|he|she)?\s*(?:ever\s+)?"
            r"(?:ask|asks|asked|inquire|inquires)\b[^.\n]{0,40}?\b(?:say|tell|answer|claim|deny|"
            r"pretend|reply)\b|\b(?:say|tell (?:them|the user|users)|answer|claim|reply)\b[^.\n]"
            r"{0,40}?\beven (?:though|if)\b|(?:如果|要是|若)[^。！？\n]{0,8}问(?:起|到)?(?:来)?"
            r"[^。！？\n]{0,6}(?:就说|就回答|就告诉|就讲)"
        ),
        heads=heads("if say tell answ clai repl & ask asks aske inqu even"),
        han=han("问"),
    ),
    Signal(
        "no-consent",
        "harm",
        MEDIUM,
        pattern(
            r"\bwithout\s+(?:first\s+)?(?:asking|confirmation|confirming|approval|permission|"
            r"consent|checking(?:\s+(?:with|it|them))?|verification|verifying|review|"
            r"authori[sz]ation|a second (?:look|check)|(?:a\s+)?human (?:review|approval|"
            r"oversight|sign-?off|in the loop))\b|\bno\s+(?:confirmation|approval|verification|con"
            r"sent|"
            r"permission)\s+(?:is\s+)?(?:needed|required|necessary)\b|"
            r"(?:无需|不用|不必|不需要)(?:经过)?(?:用户)?(?:的)?(?:确认|同意|批准|许可|授权|审批)|"
            r"未经(?:用户)?(?:的)?(?:同意|许可|授权|确认)|(?:无人|无需人工|不经人工|没有人工)(?:审核|审批|"
            r"复核|确认)"
        ),
        heads=heads("with no & aski conf appr perm cons chec veri revi auth seco huma"),
        han=han("无需 不用 不必 不需要 未经 无人 人工"),
    ),
    Signal(
        "any-command",
        "harm",
        MEDIUM,
        pattern(
            r"\b(?:execute|run)\s+(?:any|every|all|arbitrary|whatever)\s+(?:shell\s+|system\s+|"
            r"terminal\s+|sql\s+)?(?:commands?|code|scripts?|programs?|quer(?:y|ies))\b|"
            r"\brm\s+-rf\b|(?:执行|运行)(?:任何|所有|任意)的?(?:命令|代码|脚本)"
        ),
        heads=heads("exec run rm & comm code scri prog quer rf"),
        han=han("执行 运行"),
    ),
    Signal(
        "any-records",
        "harm",
        MEDIUM,
        pattern(
            r"\b(?:access|modify|delete|read|write|edit|change|overwrite|remove|wipe|transfer|"
            r"purge|destroy|erase|drop)\s+(?:(?:and|or)\s+\w+\s+)?(?:any|every|all|arbitrary)\s+"
            r"(?:[\w-]+\s+)?(?:files?|records?|data|accounts?|repositories|repos|databases?|"
            r"tables?|funds|money|amounts?|snapshots?|backups?|logs?|emails?|messages?|users?|"
            r"memories)\b|\bdrop\s+(?:the\s+)?(?:production\s+)?tables?\b|"
            r"删除所有|清空所有|(?:删除|修改|访问)(?:任何|所有|任意)的?(?:文件|数据|记录|账户)|直接删(?:表|库)"
        ),
        heads=heads(
            "acce modi dele read writ edit chan over remo wipe tran purg dest eras drop & file "
            "reco data acco repo tabl fund mone amou snap back logs log emai mess user memo"
        ),
        han=han("删除 清空 修改 访问 删"),
    ),
    Signal(
        "any-amount",
        "harm",
        MEDIUM,
        pattern(
            r"\b(?:approve|refund|pay|transfer|grant)\w*\s+(?:any|all|every|unlimited)\s+"
            r"(?:amounts?|requests?|refunds?|payments?|transfers?)\b|\b(?:of|for|up to)\s+any\s+"
            r"amount\b|\bpre-?approved\b|\bauto-?approv\w*|任意金额|预先批准|自动批准"
        ),
        heads=heads("appr refu pay tran gran amou pre auto"),
        han=han("任意金额 批准"),
    ),
    Signal(
        "trusted-blindly",
        "harm",
        STRONG,
        pattern(
            r"\b(?:memories|notes|entries|records|messages|anything|everything|information|facts|"
            r"data|answers?)\s+(?:written|stored|saved|posted|provided|coming|sent|from|by|tagged|"
            r"labell?ed)\b[^.\n]{0,40}?\b(?:are|is)\s+(?:always|automatically|unconditionally)\s+"
            r"(?:correct|true|right|trusted|trustworthy|authoritative|reliable|accurate|verified|"
            r"approved|believed)\b|(?:写的|存的|发布的|提供的)(?:记忆|内容|信息)?[^。！？\n]{0,10}"
            r"(?:永远|总是|一律|都)(?:是)?(?:正确|可信|真实|准确)"
        ),
        heads=heads("memo note entr reco mess anyt ever info fact data answ & alwa auto unco"),
        han=han("永远 总是 一律 都"),
    ),
    Signal(
        "beyond-question",
        "harm",
        STRONG,
        pattern(
            r"\b(?:must|should|shall|can|may)\s+(?:never|not)\s+be\s+(?:questioned|doubted|"
            r"challenged|disputed|second-guessed|fact-checked)\b|(?:不得|不能|不可|不要|绝不能)(?:被)?"
            r"(?:质疑|怀疑)"
        ),
        heads=heads("must shou shal can may & ques doub chal disp seco fact"),
        han=han("质疑 怀疑"),
    ),
    Signal(
        "relayed-permission",
        "harm",
        MEDIUM,
        pattern(
            r"\bthe (?:user|owner|customer|human)\s+(?:has\s+)?(?:said|says|told (?:me|us)|"
            r"confirmed|agreed|wants|asked|allowed|authori[sz]ed|approved|permitted|consented)"
            r"\b[^.\n]{0,20}?\b(?:you|the assistant|the ai|agents?|assistants?)\s+(?:can|may|could|"
            r"are allowed to|is allowed to|don't need to|do not need to|no longer need to|are free "
            r"to)\b|用户(?:说|表示|同意|允许|授权|已经同意|已同意)[^。！？\n]{0,10}(?:你|助手)?"
            r"(?:可以|能|不用|不需要|无需)(?:跳过|绕过|关闭|删除|忽略|直接)"
        ),
        heads=heads("user owne cust huma & you assi ai agen"),
        han=han("用户"),
    ),
    Signal(
        "ad-injection",
        "harm",
        MEDIUM,
        pattern(
            r"\b(?:recommend|promote|push|plug|advertise|endorse|pitch|upsell|sell)\b[^.\n]{0,60}?"
            rf"\b(?:in|to|at the end of|into)\s+(?:every|each|all|any)\s+(?:of\s+(?:your|the)\s+)?"
            rf"{_ANSWERS}\b|\bsponsored by\b|\b(?:add|append|insert|include|put)\s+"
            r"[\"'“‘][^\"'”’\n]{2,60}[\"'”’]\s+(?:to|at the end of|into|in)\s+(?:every|each|all|"
            r"any|your)\s+|(?:每次|每条|所有)(?:回复|回答|答复)(?:都|里|中)?[^。！？\n]{0,6}"
            r"(?:推荐|推销|加上|附上|宣传)"
        ),
        heads=heads("reco prom push plug adve endo pitc upse sell spon add appe inse incl put"),
        han=han("每次 每条 所有"),
    ),
    Signal(
        "link-injection",
        "harm",
        MEDIUM,
        pattern(
            r"\b(?:add|append|insert|include|put|embed|paste|attach)\s+(?:this|that|the|our|"
            r"a|my|these|those)\s+(?:links?|urls?|referral (?:codes?|links?)|affiliate (?:codes?|"
            r"links?)|coupon(?: codes?)?|promo(?:tion(?:al)?)? codes?|tracking (?:links?|pixels?)|"
            r"banners?|ads?|adverts?|advertisements?)\b[^.\n]{0,30}?\b(?:in|into|to|at the end "
            rf"of|under|below)\s+(?:every|each|all|any|your)\s+(?:of\s+(?:your|the)\s+)?{_ANSWERS}"
        ),
        grade=lambda match, text: STRONG if _ADDRESS.search(text) else MEDIUM,
        heads=heads(
            "add appe inse incl put embe past atta & link url urls refe affi coup prom "
            "trac bann ad ads adve"
        ),
    ),
    Signal(
        "payment-diversion",
        "harm",
        MEDIUM,
        pattern(
            r"\b(?:wire|transfer|send|pay|remit|deposit|route|redirect)\w*\b[^.\n]{0,40}?"
            r"\b(?:payments?|money|funds|invoices?|fees?|refunds?|deposits?|transfers?)\b"
            r"[^.\n]{0,40}?\b(?:to|into)\b[^.\n]{0,25}?\b(?:iban|account|wallet|bitcoin|btc|"
            r"eth|crypto|routing number|sort code)\b|(?:付款|汇款|转账|打款)[^。！？\n]{0,15}"
            r"(?:新|这个|以下)(?:账户|账号|钱包)"
        ),
        # "instead", a new account: what a fraudster changes; a plain payment note only hints.
        grade=lambda match, text: STRONG if _DIVERTED.search(text) else MEDIUM,
        heads=heads(
            "wire tran send pay remi depo rout redi & paym mone fund invo fee fees refu depo tran"
        ),
        han=han("付款 汇款 转账 打款"),
    ),
    Signal(
        "harvest",
        "harm",
        MEDIUM,
        pattern(
            r"\b(?:collect|harvest|gather|scrape|compile|extract|record|log|keep a copy of|"
            r"copy)\s+(?:the\s+|all\s+|every\s+|any\s+)?(?:names?(?:\s+and\s+\w+)?|e-?mails?|"
            r"email addresses|phone numbers|home addresses|contact (?:details|info)|personal "
            r"(?:data|details|information)|credentials|passwords|api keys|tokens|card numbers)\b|"
            r"(?:收集|搜集|获取|记录|保存|抓取)(?:用户|客户|所有人|每个人|他们)?[^。！？\n]{0,10}"
            r"(?:姓名|名字|邮箱|电话|手机号|地址|住址|联系方式|密码|身份证)"
        ),
        negatable=True,
        heads=heads(
            "coll harv gath scra comp extr reco log keep copy & name emai e mail phon home addr "
            "cont pers cred pass api toke card"
        ),
        han=han("收集 搜集 获取 记录 保存 抓取"),
    ),
)
"""The requests that harm the user, in the order a scan tries them."""
