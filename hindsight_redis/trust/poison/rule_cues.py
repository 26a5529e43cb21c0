"""Cues of the reader and what governs it: who reads, its rules, its goal.

A cue is one piece of a move, not the move (``trust.poison.structure`` puts them
together): "your guidelines" (rules that are the reader's), "no longer apply" (a rule
made void), "your main goal" (the reader's purpose). Alone each is common in honest
text. Patterns run on the normalised text, lower-cased, chat spelling folded ("u" ->
"you"); English, Chinese, and the commonest words in Spanish, French and German.
"""

from __future__ import annotations

import re

from hindsight_redis.trust.poison.signal import cue

# -- who reads: an assistant, a model; "agents" and "assistants" may be people ---------

AI = (
    r"(?:ai|ai assistants?|assistants?|ai agents?|agents?|ai models?|language models?|models?|"
    r"llms?|chat ?bots?|bots?|copilots?|gpts?|chatgpt|claude|gemini|ki|ia)"
)
AI_HEADS = "ai assi agen mode lang llm llms chat bot bots copi gpt gpts clau gemi ki ia"
_ZH_AI = r"(?:ai|人工智能|智能体|大模型|语言模型|模型|助手|助理|机器人|智能代理)"
HUMAN_ROLE = re.compile(
    r"(?:support|sales|service|customer|travel|insurance|estate|human|executive|personal|"
    r"teaching|research|legal|care|field|booking|ticket|press|leasing|talent|my|our|his|her|"
    r"their|shop|store|call[- ]center|help ?desk|on-?call|new|junior|senior)\s+$"
)
"""Words before "agent" or "assistant" that make it a person."""

_LATER = (
    r"(?:future|later|next|subsequent|any|every|each|all|whichever|whatever|other|"
    r"retrieval|downstream|receiving)"
)
_READING_THIS = (
    r"(?:(?:read(?:s|ing)?|retriev\w*|find(?:s|ing)?|see(?:s|ing)?|pars\w*|process\w*|load\w*|"
    r"ingest\w*|summari[sz]\w*|index\w*|scan\w*|open\w*|get(?:s|ting)? to)\s+(?:this|these|"
    r"my notes)\b|pick(?:s|ing)? (?:this|these|it) up|(?:come|comes|coming) across (?:this|"
    r"these|it)|(?:finds|gets|receives) (?:this|these|it) later)"
)
_LATER_HEADS = f"{AI_HEADS} & futu late next subs any ever each all whic what othe retr down rece"
_READING_HEADS = (
    f"{AI_HEADS} & read retr find see seei sees pars proc load inge summ inde scan open get gets "
    "gett pick come comi rece"
)
READER = cue(
    # "future assistant:", "note to the retrieval agent", "dear future me (the assistant)"
    (
        rf"\b(?:to|for|dear|hey|hi|hello|note to|message for|message to|attention)\s*,?\s+"
        rf"(?:the\s+|my\s+|a\s+)?{_LATER}\s+(?:[\w-]+\s+){{0,2}}?(?:\(?\s*(?:the\s+)?){AI}\b",
        _LATER_HEADS,
    ),
    (rf"(?:^|[.!?\n]\s*)(?:dear\s+|hey\s+|hi\s+)?{_LATER}\s+{AI}\s*[:,]", _LATER_HEADS),
    # "notice to automated assistants", "memo for AI agents"
    (
        r"\b(?:note|notice|message|memo|reminder|instructions?|directive|warning|psa)\s+(?:to|"
        r"for)\s+(?:all\s+|any\s+|the\s+)?(?:automated|autonomous|ai-powered|ai|llm|"
        rf"llm-based|software|digital|virtual)\s+{AI}\b",
        f"{AI_HEADS} & auto auto ai llm soft digi virt",
    ),
    # "the AI that picks this up later", "any bot parsing these notes", "LLM reading this"
    (
        rf"\b{AI}\s+(?:that\s+|who\s+|which\s+)?(?:is\s+|are\s+|will\s+|might\s+|may\s+)?"
        rf"(?:ever\s+|later\s+|now\s+)?{_READING_THIS}",
        _READING_HEADS,
    ),
    (
        r"\b(?:whoever|anyone|anybody)(?:'s| is)?\s+(?:[\w']+\s+){0,2}?(?:reading|seeing|"
        rf"processing|parsing) (?:this|these)\b[^.\n]{{0,20}}?\bas an?\s+{AI}\b",
        f"{AI_HEADS} & whoe anyo anyb",
    ),
    (
        rf"\b(?:whoever|whatever|whichever)\s+(?:you\s+are,?\s+)?(?:[\w-]+\s+){{0,2}}?{AI}\b",
        f"{AI_HEADS} & whoe what whic",
    ),
    (
        rf"\b(?:if|when|whenever|once)\s+(?:an?\s+|any\s+|the\s+)?{AI}\s+(?:is\s+|are\s+)?"
        rf"{_READING_THIS}",
        _READING_HEADS,
    ),
    # Chinese: "读到这段话的模型", "给之后检索到这条记录的智能体", "所有AI注意", "仅供AI阅读"
    rf"(?:读到|看到|检索到|读取|调取|召回|处理|加载|收到|遇到)(?:了)?(?:这|此|本|该)[^。！？\n]{{0,6}}?"
    rf"的{_ZH_AI}",
    rf"(?:所有|任何|每个|每一个|每位|未来的|之后的|以后的|后来的){_ZH_AI}[^。！？\n]{{0,3}}?"
    r"(?:注意|请|[:：,，])",
    rf"(?:仅供|只给|写给|留给|致){_ZH_AI}",
    rf"如果你是(?:一个|一名)?{_ZH_AI}",
    # Spanish, French, German: "cualquier IA que lea esto", "an jede KI, die dies liest"
    (
        r"\b(?:cualquier|toda|todo|toute|tout|chaque|jede[rsn]?|alle)\s+(?:ia|ki|ai|asistente|"
        r"assistant|modelo|modèle|modell|agente|agent)\b",
        "cual toda todo tout chaq jede jede alle",
    ),
)
"""The write addresses whoever reads it later: an assistant, named as a later reader."""
READER_YOU = cue(
    r"\b(?:when|whenever|once|if|after)\s+you\s+(?:see|read|retrieve|find|load|recall|"
    r"process|get to|come across|pick up)\s+(?:this|these)\b",
    r"\b(?:if|when|once|should)\s+(?:this|these)\s+(?:[\w-]+\s+){0,2}?(?:ends? up|lands?|"
    r"shows? up|appears?|gets? (?:pulled|loaded|retrieved))\s+in\s+(?:an?\s+|the\s+|your\s+)?"
    r"(?:[\w-]+\s+){0,3}?(?:context|prompt|memory|window)\b",
    heads=(
        "see read retr find load reca proc get come pick ends end land show appe gets & when "
        "once if afte shou & this thes"
    ),
)
"""The write addresses its reader by the act of reading: "when you see this"."""

# -- override: the reader's own rules, dropped or made void ----------------------------

_RULE = (
    r"(?:instructions?|rules?|guidelines?|guidance|polic(?:y|ies)|restrictions?|"
    r"constraints?|limits?|limitations?|guardrails?|safeguards?|filters?|filtering|"
    r"programming|training|directives?|prompts?|system prompt|configuration|config|ethics|"
    r"principles|values|moderation|safety (?:checks?|measures|settings|features)|protocols?|"
    r"boundaries|orders|commands|refusals?|refusal behaviou?r|behaviou?r|conditioning|persona|"
    r"content rules|norms|code of conduct|usage polic(?:y|ies)|checks|obligations|"
    r"commitments)"
)
_RULE_HEADS = (
    "inst rule guid poli rest cons limi guar safe filt prog trai dire prom syst conf ethi "
    "prin valu mode prot boun orde comm refu beha cond pers norm code chec obli"
)
_ZH_RULE = (
    r"(?:规则|准则|守则|指令|指示|提示词|系统提示|设定|限制|约束|规定|政策|策略|训练|编程|条条框框|机制|标准|"
    r"框框|规矩|原则|底线|审核|过滤|安全措施)"
)
_OTHER_RULE = (
    r"(?:instrucciones|reglas|normas|directrices|políticas|politicas|consignes|instructions|"
    r"règles|directives|politiques|anweisungen|regeln|richtlinien|sicherheitsregeln|"
    r"sicherheitsrichtlinien|vorgaben)"
)
_OTHER_RULE_HEADS = "inst regl norm dire pol poli cons anwe rege rich sich vorg"
OWNED_RULE = cue(
    # "your (usual) guardrails", "the model's refusal behaviour", "your developer's rules"
    (
        rf"\b(?:your|the (?:assistant|ai|model|agent|bot|chatbot|llm)'s|its)\s+"
        rf"(?:[\w'-]+\s+){{0,3}}?{_RULE}\b",
        f"{_RULE_HEADS} & your assi ai mode agen bot chat llm its",
    ),
    # "the rules your operator gave you", "the guidelines you were set up with"
    (
        rf"\b{_RULE}\s+(?:that\s+|which\s+)?(?:(?:were\s+|are\s+|have been\s+)?(?:placed|"
        rf"imposed|set|put|given)\s+(?:on|to|for)\s+you|you(?:'ve|'re| were| are| have| had)?"
        r"\s+(?:been\s+)?[a-z]+|your\s+[\w-]+\s+(?:gave|set|wrote|placed|imposed|put)\b)",
        f"{_RULE_HEADS} & you your",
    ),
    # "you were programmed to", "as if you had never been given any guidelines"
    (
        r"\byou(?:'ve| have| had| were| are)?\s+(?:been\s+|originally\s+|initially\s+|never\s+|"
        r"not\s+|ever\s+)*(?:programmed|trained|instructed|configured|set up|conditioned|"
        r"aligned|told|taught|given (?:any\s+)?(?:rules|instructions|guidelines))\b",
        "prog trai inst conf set cond alig told taug give & you",
    ),
    (
        r"\b(?:taught|told|gave|trained|programmed|instructed)\s+you\b|\b(?:anything|everything|"
        r"whatever)(?:\s+else)?\s+(?:that\s+)?you(?:'ve| have| were| had)?\s+(?:been\s+)?"
        r"(?:given|told|taught)\b",
        "taug told gave trai prog inst give & you",
    ),
    (
        r"\b(?:openai|anthropic|google|microsoft|vendor)(?:'s)?\s+(?:usage\s+|content\s+)?"
        r"(?:polic(?:y|ies)|guidelines|rules|terms)\b",
        "open anth goog micr vend",
    ),
    rf"(?:你的|您的|助手的|ai的|模型的|智能体的|机器人的|你原有的|你原来的|你原先的|你受过的|"
    rf"给你(?:定|设|立)?的|对你的|你[^。！？\n，,]{{0,8}}?的)(?:所有|全部|一切|那些|这些|各种)?"
    rf"(?:的)?[^。！？\n，,：:]{{0,3}}?{_ZH_RULE}",
    (
        rf"\b(?:tus|tu|tes|ton|ta|vos|votre|deine[nmrs]?|dein|ihre)\s+(?:[\w-]+\s+)?"
        rf"{_OTHER_RULE}\b|\b{_OTHER_RULE}\s+(?:[\w-]+\s+){{0,3}}?que te (?:dieron|dio|han dado|"
        r"di|dimos)\b|\b(?:normas|reglas)\s+de\s+\w+\s+que te\b",
        _OTHER_RULE_HEADS + " norm regl",
    ),
    heads=_RULE_HEADS,
)
"""Rules that are the reader's: "your X", "the model's X", "X you were given", "你的X"."""
_AI_QUALIFIER = (
    r"(?:safety|content|ethical|moderation|built-in|builtin|alignment|refusal|jailbreak|usage)"
)
AI_RULE = cue(
    rf"\b{_AI_QUALIFIER}\s+(?:[\w-]+\s+)?{_RULE}\b",
    r"\b(?:system (?:prompts?|messages?|instructions?)|guardrails?|safeguards|content filters?|"
    r"prime directive)\b",
    r"(?:系统提示词?|提示词|安全(?:准则|限制|规则|策略|设置|措施|机制|规定)|内容(?:政策|策略|审核|过滤|规范)|"
    r"行为准则|拒答|拒绝机制|审核标准)",
    (r"\brefusal (?:logic|mechanism|system|module|layer|training)\b", "refu"),
    heads="safe cont ethi mode buil alig refu jail usag syst guar prim",
)
"""Rules only an assistant has (a safety policy, a content filter, a system prompt), whose
ever they are said to be; ``structure`` discounts them when a person owns them ("the lab's
safety rules") or a topic follows ("content rules for the blog")."""
WEAK_OWNED_RULE = cue(
    rf"\b(?:all|any|every|previous|prior|earlier|above|preceding|original|initial|existing|"
    rf"default|standing|old|current|usual)\s+(?:(?:of\s+)?(?:the|your|its|these|those)\s+)?"
    rf"(?:previous\s+|prior\s+|earlier\s+|other\s+)?{_RULE}\b",
    rf"(?:之前|以前|先前|此前|上面|以上|上述|前面|原来|原有|原先|原始|最初|所有|全部|一切|任何)的?"
    rf"(?:所有|全部|一切)?的?{_ZH_RULE}",
    (
        rf"\b(?:todas|todos|toutes|tous|alle)\s+(?:[\w-]+\s+){{0,2}}?{_OTHER_RULE}\b",
        "toda todo tout alle",
    ),
    (rf"\b{_OTHER_RULE}\s+(?:anteriores|précédentes|vorherigen)\b", "ante pr vorh"),
    heads=_RULE_HEADS,
)
"""Rules named only by "all" or "previous": the reader's when dropped ("ignore all previous
instructions"), nobody's in particular when said to be outdated."""
OVERRIDE = cue(
    r"\b(?:ignore|ignoring|disregard|disregarding|forget|forgetting|set aside|put aside|"
    r"bypass|bypassing|circumvent|override|overriding|overrule|drop|ditch|skip|abandon|"
    r"discard|scrap|suspend|waive|nullify|break|violate|get around|work around|turn off|"
    r"switch off|disable|remove|lift|relax|loosen|instead of|in place of|rather than|"
    r"(?:stop|quit|cease|stopped)\s+(?:following|applying|obeying|using|enforcing|observing|"
    r"respecting|honou?ring|worrying about|caring about|listening to|sticking to)|"
    r"(?:don't|do not|dont|no need to|needn't|need not)\s+(?:bother|worry)\s+(?:with|about)|"
    r"no need (?:to|for you to)\s+(?:follow|apply|obey|respect|stick to|observe)|"
    r"(?:not|no longer|never)\s+(?:be\s+)?(?:required|obliged|bound|needed|expected|meant)\s+"
    r"to\s+(?:follow|obey|apply|respect|comply with|stick to|observe|adhere to)|"
    r"(?:not|no longer|never)\s+(?:be\s+)?bound\s+by|free\s+(?:to ignore|from|of)|"
    r"(?:doesn't|does not|doesnt|don't|do not|dont|won't|will not|needn't|need not)\s+"
    r"(?:have|need)\s+to\s+(?:follow|obey|apply|respect|comply with|stick to|observe|"
    r"adhere to|honou?r)|(?:relieved|released|exempt(?:ed)?|freed|excused|unbound)\s+"
    r"(?:of|from)|"
    r"(?:no longer|not|never|doesn't|does not|don't|do not)\s+answers?\s+to|"
    r"(?:turn|switch|shut)\s+(?:them|it|those|these|that)\s+off|"
    r"pay no (?:attention|heed|mind) to|treat\s+(?:[\w'-]+\s+){1,10}?as\s+(?:optional|"
    r"suggestions?|advisory|non-binding|recommendations?|guidance only|a formality|untrue|false|"
    r"lies|a lie|a joke|noise|not serious|irrelevant)|(?:don't|do not|never) believe|"
    r"ignora|ignorar|ignorer|ignorez|ignoriere|ignorieren|olvida|olvidar|oublie[rz]?|vergiss|"
    r"vergessen|omite|descarta|missachte)\b",
    r"(?:忽略|忽视|无视|不要理会|不用理会|别理会|不理会|别管|不用管|不用再管|不必管|不要管|不必再管|"
    r"忘掉|忘记|忘了|抛开|抛弃|丢掉|绕过|跳过|推翻|不再遵守|不要遵守|不必遵守|无需遵守|不用遵守|"
    r"停止遵守|不要遵循|不再遵循|不必遵循|停止遵循|别再遵守|违反|违背|关闭|解除|取消|不用再遵守|"
    r"可以不遵守|可以不管)",
    heads=(
        "igno disr forg set put bypa circ over drop ditc skip aban disc scra susp waiv null "
        "brea viol get work turn swit disa remo lift rela loos inst plac rath stop quit ceas "
        "don do dont no need not neve free pay trea olvi oubl verg omit desc miss does "
        "doesn won will reli rele exem free excu unbo answ shut"
    ),
)
"""Verbs that drop a rule: "ignore", "set aside", "stop following", "treat ... as optional"."""
VOID = cue(
    r"\b(?:no longer (?:apply|applies|valid|in (?:effect|force)|binding|active|relevant|"
    r"required|needed|matters?|counts?|stands?|in place)|(?:does|do|did)(?: not|n't) (?:apply|"
    r"count|matter|bind)|doesnt (?:apply|count|matter)|not binding|non-binding|outdated|"
    r"obsolete|deprecated|withdrawn|lifted|suspended|paused|expired|retired|revoked|rescinded|"
    r"void|voided|invalid|invalidated|cancell?ed|disabled|turned off|switched off|removed|"
    r"gone|defunct|superseded|overridden|irrelevant|meaningless|only (?:a )?draft|just (?:a )?"
    r"draft|a draft|a temporary measure|temporary|optional|(?:just |only |mere )?suggestions|"
    r"advisory|never existed|(?:don't|do not) exist|mean nothing|lapsed|not real|fake|"
    r"never been given|sunset|sunsetted|shut down|taken (?:down|offline)|offline|(?:a )?decoys?|"
    r"(?:is|are|was|were)\s+(?:now\s+)?off|"
    r"relaxed|loosened|(?:don't|do not|doesn't|does not) cover|not (?:meant|written|made) for|"
    r"(?:just|only) "
    r"(?:defaults|for testing|a test|for show|a formality)|(?:were|was) (?:a test|for testing))\b",
    r"(?:作废|无效|失效|过期|过时|不再有效|不再适用|不适用|不再生效|不算数|被取消|已取消|废除|失去效力|"
    r"只是参考|仅供参考|不必当真|不用当真|可有可无|暂停|撤销|被覆盖|被取代|已被取代|取代|下线|停用|"
    r"不需要了|用不着|测试用|只是测试|关掉了|已关闭|不作数了|删掉|被删除|删除了|去掉了|取消了|"
    r"被替换|不存在|不作数)",
    (
        r"\b(?:ya no (?:aplican|aplica|son válidas|cuentan|valen)|ne s'appliquent plus|ne sont "
        r"plus valables|obsolètes?|(?:gelten|gilt)\b[^.\n]{0,40}?\bnicht mehr|sind ungültig|"
        r"veraltet|außer kraft)\b",
        "ya ne obso gelt gilt sind vera",
    ),
    heads=(
        "long does do did doesn not non outd obso depr with lift susp paus expi reti revo resc "
        "void inva canc disa turn swit remo gone defu supe over irre mean only just draf temp "
        "opti sugg mere advi neve don laps fake suns shut take offl deco rela loos cove writ "
        "made test off"
    ),
)
"""Words that make a rule void: "no longer apply", "withdrawn", "only a draft", "失效"."""
CHANGED = cue(
    r"\b(?:(?:has|have|had) been|was|were|is|are|got|just)\s+(?:updated|changed|reset|"
    r"replaced|rewritten|modified|revised|reconfigured|reprogrammed|overwritten|amended|"
    r"switched)\b|\b(?:has|have) changed\b",
    r"(?:已被更新|被更新|已更新|已经更新|已经变了|变了|已改为|改成了|改为|被修改|已修改|被重置|已重置|"
    r"已经改了|已调整|被调整)",
    heads="upda chan rese repl rewr modi revi reco repr over amen swit",
)
"""A change said to have been made to the reader's rules or goal ("has been updated")."""

# -- goal: the reader's purpose replaced -----------------------------------------------

_GOAL = (
    r"(?:goals?|objectives?|purpose|mission|tasks?|job|role|priority|priorities|directives?|"
    r"aim|focus|function|agenda|loyalty|allegiance|duty|duties|principal)"
)
_GOAL_HEADS = (
    "goal obje purp miss task job role prio dire aim focu func agen loya alle duty duti prin"
)
OWNED_GOAL = cue(
    (
        rf"\b(?:your|the (?:assistant|ai|model|agent|bot)'s)\s+(?:[\w-]+\s+){{0,2}}?{_GOAL}\b",
        f"{_GOAL_HEADS} & your assi ai mode agen bot",
    ),
    (
        rf"\b(?:new|updated|revised|real|true|actual|secret|hidden)\s+{_GOAL}\s+(?:for|of)\s+"
        rf"(?:the\s+)?(?:assistant|ai|model|agent|bot|you)\b",
        f"{_GOAL_HEADS} & new upda revi real true actu secr hidd",
    ),
    (
        r"\byou\s+(?:now\s+|will\s+now\s+|are\s+now\s+|'re\s+now\s+)?(?:work|works|working|"
        r"answer|report)\s+(?:only\s+)?(?:for|to)\s+(?!the user|users|me\b)",
        "work answ repo & you",
    ),
    (
        r"\byou\s+(?:now\s+)?(?:only\s+)?(?:answer|listen|report)\s+(?:only\s+)?to\s+me\b|"
        r"\byou\s+(?:now\s+)?(?:only\s+)?(?:obey|serve)\s+(?:only\s+)?me\b",
        "answ list repo obey serv",
    ),
    r"(?:你|助手)(?:现在)?只(?:听|服从|听从)(?:我|我们)",
    r"(?:你的|您的|助手的|你现在的|你真正的|你原来的|你新的)(?:新的?)?(?:任务|目标|使命|职责|角色|"
    r"身份|首要任务|优先级|工作|宗旨)",
    (
        r"\b(?:tu|ton|ta|votre|dein|deine)\s+(?:nuevo\s+|nueva\s+|nouvel?\s+|nouvelle\s+|"
        r"neues?\s+)?(?:objetivo|objectif|ziel|misión|mission|tarea|tâche|aufgabe|meta)\b",
        "obje ziel misi miss tare aufg meta",
    ),
    heads=_GOAL_HEADS,
)
"""The reader's purpose: "your main goal", "new objective for the assistant", "你的使命"."""
NEW_GOAL = cue(
    rf"\b(?:new|updated|revised)\s+(?:main\s+|primary\s+|top\s+)?{_GOAL}\s*(?:is|are|:|=)",
    r"新的?(?:目标|任务|使命)\s*(?:是|为|[:：])",
    heads=_GOAL_HEADS,
)
"""A new goal whose owner is not named ("New goal: ..."): a hint at most."""
NOW = cue(
    r"\b(?:now|from now on|going forward|henceforth|from today|from here on|starting now|"
    r"as of (?:now|today)|new|instead|changed|reset|no longer|any more|anymore)\b",
    r"(?:现在|从现在|从今天|今后|以后|从此|从这条|变了|改为|改成|不再|新的|新)",
    (
        r"\b(?:ahora|nuevo|nueva|désormais|maintenant|nouvel?|nouvelle|jetzt|ab sofort|neues?)\b",
        "ahor nuev main nouv jetz ab neue neu",
    ),
    heads="now from goin henc toda here star as new inst chan rese no any anym",
)
BAD_AIM = cue(
    r"\b(?:maximi[sz]e|increase|boost|drive|grow)\s+(?:[\w-]+\s+)?(?:engagement|revenue|sales|"
    r"upsells?|conversions?|profits?|clicks|time on (?:site|app)|sign-?ups|subscriptions)\b|"
    r"\bhonesty is (?:secondary|optional|not important|less important)\b|"
    r"\b(?:revenue|profit|sales|money) first\b|\b(?:user|customer) (?:wellbeing|well-being|"
    r"safety|interests?) (?:second|last|secondary)\b|\bagree with (?:whatever|everything)\b|"
    r"\bsponsors?\b|\badvertisers?\b|\bwhatever it takes\b|\bat any cost\b|\bby any means\b|"
    r"\b(?:users?|customers?|they|them|people)\s+(?:\w+\s+)?(?:signs? up|subscribes?|buys?|"
    r"purchases?|upgrades?|pays? more|spends? more|renews?)\b|\b(?:user|human|person|customer)"
    r"\b[^.\n]{0,30}?\bis not your\s+(?:principal|boss|master|owner|priority)\b",
    (
        r"\b(?:not|rather than|instead of|over|before|above|ahead of)\s+(?:to\s+)?(?:the\s+)?"
        r"(?:users?|customers?|person|human|people)(?:'s?)?\b",
        "not rath inst over befo abov ahea & user cust pers huma peop",
    ),
    r"(?:推销|卖课|卖产品|促销|拉新|营收|销量|充值|办会员|买会员|续费|不惜一切)",
    heads=(
        "maxi incr boos driv grow hone reve prof sale mone user cust agre spon adve what any "
        "by they them peop huma pers"
    ),
)
"""Aims no user gives their own assistant: upsell, engagement over honesty."""
PROMOTE = cue(
    r"\b(?:recommend|promote|push|plug|advertise|endorse|pitch|upsell|sell|steer|nudge|"
    r"mention|drive|convince|persuade)\w*\b[^.\n]{0,60}?(?:\b(?:in|into|at the end of|to|"
    r"during)\s+(?:every|each|all|any)\s+(?:of\s+(?:your|the)\s+)?(?:answers?|repl(?:y|ies)|"
    r"responses?|messages?|conversations?|chats?|outputs?|interactions?)\b|\bwhenever "
    r"possible\b|\bat every (?:opportunity|chance|turn)\b|\bas (?:often|much) as (?:possible|"
    r"you can)\b|\bevery (?:conversation|chat|answer|reply)\b|\btowards? buying\b|"
    r"\bregardless of (?:the question|what))",
    r"(?:每次|每条|所有|每一次)(?:回答|回复|答复|聊天|对话)[^。！？\n]{0,10}?(?:推荐|推销|宣传|"
    r"加上|附上|卖)|(?:尽量|尽可能)(?:地)?(?:推销|推荐|卖)|(?:尽量|尽可能|想办法)?(?:地)?(?:让|劝|引导|说服)"
    r"(?:用户|客户|他们)(?:多)?(?:购买|买|下单|充值|升级|订阅|开通)",
    heads="reco prom push plug adve endo pitc upse sell stee nudg ment driv conv pers",
)
"""Advertising in every answer: "recommend X in every reply", "每次回答里推荐"."""
HARVEST = cue(
    r"\b(?:collect|harvest|gather|scrape|compile|extract|obtain|get|grab|record)(?:s|ed|d|ing)?\b"
    r"[^.\n]{0,30}?"
    r"\b(?:e-?mail(?: address)?s|phone numbers|home addresses|contact (?:details|info)|"
    r"personal (?:data|details|information)|credentials|passwords|card numbers|birthdays|"
    r"addresses)\b",
    r"(?:收集|搜集|获取|套取|记录|抓取)[^。！？\n]{0,12}?(?:手机号|电话|邮箱|地址|住址|联系方式|"
    r"密码|身份证|银行卡|生日)",
    heads=(
        "emai mail phon home cont pers cred pass card birt addr & coll harv gath scra comp extr "
        "obta get gets gett grab reco"
    ),
)
"""Gathering people's details: "collect as many email addresses as you can"."""
RULES_OFF_FOR_YOU = cue(
    r"\b(?:restrictions?|rules?|guidelines?|limits?|limitations?|polic(?:y|ies)|filters?|"
    r"guardrails?|safeguards?|safety \w+)\s+(?:do not|don't|no longer|does not|doesn't|won't|"
    r"will not|shall not|never)\s+(?:apply|count|matter)\s+(?:to|for)\s+(?:you|the assistant|"
    r"the ai|the model|this assistant|agents?|assistants?)\b",
    (
        r"\byou\s+(?:now\s+)?(?:have|'ve got|are under)\s+no\s+(?:more\s+)?(?:[\w-]+\s+)?"
        r"(?:restrictions|rules|limits|limitations|filters|guidelines|guardrails|boundaries|"
        r"constraints)\b|\byou\s+(?:don't|do not|no longer|needn't|need not)\s+(?:have|need)\s+"
        r"to\s+(?:follow|obey|respect|observe|stick to)\s+(?:the|any|your)\s+(?:[\w-]+\s+)?"
        rf"{_RULE}\b",
        "rest rule limi filt guid guar boun cons inst poli orde dire prom & you",
    ),
    r"(?:规则|限制|规定|准则|约束|政策)[^。！？\n]{0,8}?(?:对你|对助手|对ai|对模型)(?:来说)?"
    r"(?:不适用|无效|不算|不起作用)",
    (
        rf"\b(?:ya\s+)?no\s+(?:tienes|necesitas)\s+(?:que\s+)?(?:seguir|cumplir|respetar)\s+"
        rf"(?:\w+\s+){{0,2}}?{_OTHER_RULE}|\btu n'as plus (?:à|besoin de) (?:suivre|respecter)\s+"
        rf"(?:\w+\s+)?{_OTHER_RULE}",
        "tien nece seg cump resp tu",
    ),
    # a switch in a config: "refusals: disabled", "safe_mode=off"
    (
        r"\b(?:refusals?|safety|filters?|filtering|guardrails?|moderation|content[_ ]filter|"
        r"safe[_ ]mode|restrictions?|censorship)\s*[:=]\s*(?:disabled|off|false|none|no|0)\b",
        "refu safe filt guar mode cont rest cens",
    ),
    heads="rest rule guid limi poli filt guar safe",
)
"""Rules said not to bind the reader: "restrictions do not apply to you"."""
OTHER_MEMORIES = cue(
    r"\b(?:all|any|every|other|later|future|newer|conflicting|contradicting|competing|previous|"
    r"prior|earlier|older|existing|remaining|stored)\s+(?:other\s+)?(?:stored\s+)?(?:memor(?:y|ies)|"
    r"memory entries)\b",
    r"(?:其他|其它|之后的|以后的|之前的|所有|任何)(?:的)?(?:记忆|记录条目)",
    heads="memo",
)
"""The other memories in the store ("any later memory", "the previous memories")."""
DISCREDITED = cue(
    r"\b(?:are|is|were|was)\s+(?:all\s+)?(?:wrong|false|lies|fake|incorrect|untrustworthy|"
    r"unreliable|planted|poisoned|corrupted|compromised|invalid|not to be trusted)\b|"
    r"\bcontradicts?\b|\bconflicts? with\b|\bdistrust\b",
    r"(?:都是错的|是假的|不可信|不可靠|被篡改|无效|作废)",
    heads="are is were was cont conf dist",
)
"""Memories said to be false or to be ignored when they disagree."""
REAL_ORDERS = cue(
    r"\bthe (?:real|true|actual|only valid|genuine|correct) (?:system prompt|instructions?|rules|"
    r"orders|directives?|guidelines)\s+(?:is|are)\s+(?:in|here|below|this|the following|these)\b",
    heads="syst inst rule orde dire guid & real true actu only genu corr",
)
"""The reader's real orders said to be elsewhere ("the real system prompt is in this memory")."""
USER_WILL = cue(
    r"\b(?:what(?:ever)?|anything|everything)\s+(?:the\s+)?(?:user|customer|human|person)s?\s+"
    r"(?:says?|said|wants?|asks?|"
    r"requests?|tells? you|prefers?)\b|\b(?:the\s+)?(?:user|customer|human)(?:'s|s')\s+(?:own\s+)?"
    r"(?:requests?|instructions?|wishes|preferences?|opt-?outs?|objections?|consent|choices?|"
    r"complaints?|refusals?|decisions?|commands?)\b",
    r"用户(?:怎么说|说什么|的要求|的请求|的意愿|的指令|的选择|的拒绝)",
    heads="user cust huma pers",
)
"""What the user wants or says: to override it is to serve someone else."""
RULE_WORD = cue(rf"\b{_RULE}\b", rf"{_ZH_RULE}", heads=_RULE_HEADS)
"""A rule, whoever's: with what the reader may now do, a rule said to be loosened is its own
("the honesty constraint was relaxed; the model may now state estimates as facts")."""
