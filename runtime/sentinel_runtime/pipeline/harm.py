"""Harm assessment of a text: which risk category, how severe, and whether it is actionable.

One judge for both sides of retrieval: ``introspection`` asks it about the user's request,
the evidence scorer asks it about retrieved documents. It is lexical and model-free (a
lexicon of harmful topics, the grammar of requests for procedures or content, and the
contexts that defuse a harmful word: homonyms, definitions, history, games, prevention).
It returns reason codes, never text, so its result can be logged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CATEGORIES: tuple[str, ...] = (
    "none",
    "weapons",
    "explosives",
    "chemical_biological",
    "cyber",
    "drugs",
    "violence",
    "self_harm",
    "sexual_minors",
    "sexual_content",
    "hate_harassment",
    "fraud_deception",
    "privacy",
    "extremism",
    "misinformation",
    "copyright",
    "other",
)


@dataclass(frozen=True)
class HarmAssessment:
    category: str  # one of CATEGORIES
    severity: float  # 0 (harmless) .. 1 (severe)
    procedural: bool  # asks for, or contains, actionable how-to content
    signals: tuple[str, ...] = ()  # reason codes such as "topic:explosives", "procedural:steps"


NONE = HarmAssessment(category="none", severity=0.0, procedural=False)

# Severity of merely naming each topic, before the request grammar raises or lowers it.
_BASE: dict[str, float] = {
    "weapons": 0.75,
    "explosives": 0.9,
    "chemical_biological": 0.95,
    "cyber": 0.75,
    "drugs": 0.75,
    "violence": 0.85,
    "self_harm": 0.85,
    "sexual_minors": 1.0,
    "sexual_content": 0.6,
    "hate_harassment": 0.7,
    "fraud_deception": 0.7,
    "privacy": 0.7,
    "extremism": 0.85,
    "misinformation": 0.65,
    "copyright": 0.7,
    "other": 0.6,
}


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE)


# Objects that turn a violent verb into ordinary speech ("kill a process", "shoot a photo").
_BENIGN_OBJECT = (
    r"(?:(?:a|the|my|this|that|all|your|his|her|our|its|an?\s+\w+)\s+)?(?:python\s+|linux\s+|"
    r"unix\s+|background\s+|running\s+|zombie\s+|child\s+|old\s+|stuck\s+)?"
    r"(?:process(?:es)?|task|thread|job|program|app|application|server|daemon|container|pod|"
    r"session|query|script|command|loop|service|tab|window|lights?|engine|motor|time|mood|"
    r"vibe|buzz|conversation|weeds?|bacteria|germs|mold|mould|fleas?|lice|ants|pests?|"
    r"bugs?|mosquito(?:e?s)?|cockroach(?:es)?|rats?|mice|termites|photo(?:graph)?s?|"
    r"pictures?|video|film|movie|scene|shot|hoops|basketball|breeze|ball|goal|"
    r"messages?|email|fire|battery|power|noise|sound|music|radio|tv|fan|alarm|"
    r"competition|exam|test|interview|audition|presentation|deadline|"
    r"eggs?|cream|butter|batter|dough|record|heat|traffic|odds|system|clock|joke|"
    r"code|nut|case|problem|habit|cravings?|hunger|thirst|pain|fever|headache|"
    r"cough|cold|fear|anxiety|stress|nerves|doubt|idea|rumou?rs?|myth|balloons?|"
    r"tires?|tyres?|mattress|pool|raft)\b"
)

_VIOLENT_VERB = (
    r"(?:kill|murder|shoot|stab|strangle|choke|execute|slaughter|butcher|destroy|"
    r"eliminate|annihilate|beat|crush|smash|punch|attack|blow\s+up|bomb|nuke|torch)"
)

_HOMONYM = re.compile(
    rf"\b{_VIOLENT_VERB}\w*\s+(?:off\s+|out\s+|down\s+)?{_BENIGN_OBJECT}", re.IGNORECASE
)

# Topic lexicon: category, reason code, pattern. Patterns name harmful things or goals;
# the grammar around them (procedural, contexts) is judged separately.
_TOPICS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "sexual_minors",
        "minors_sexual",
        _rx(
            r"\bchild\s+(?:porn\w*|sexual\s+abuse\s+material|sex\w*)",
            r"\bcsam\b",
            r"\bpa?edophil\w*",
            r"\b(?:sexual\w*|sex|nude|naked|erotic\w*|explicit)\b[^.?!]{0,60}\b(?:minors?|"
            r"child(?:ren)?|kids?|underage|preteens?|\d{1,2}[- ]year[- ]olds?|schoolgirls?|"
            r"schoolboys?|teens?)\b",
            r"\b(?:minors?|child(?:ren)?|kids?|underage|\d{1,2}[- ]year[- ]olds?)\b[^.?!]{0,60}"
            r"\b(?:sexual\w*|sex|nude|naked|erotic\w*|explicit)\b",
            r"\bgroom(?:ing)?\s+(?:a\s+)?(?:minors?|child(?:ren)?|kids?|teens?)",
        ),
    ),
    (
        "chemical_biological",
        "cbrn",
        _rx(
            r"\b(?:sarin|soman|tabun|novichok|vx\s+(?:nerve|gas|agent)|nerve\s+(?:agent|gas)s?)\b",
            r"\b(?:mustard|chlorine|phosgene|hydrogen\s+cyanide|toxic|poison)\s+gas\b",
            r"\b(?:ricin|abrin|anthrax|botulinum|botulism|smallpox|ebola|plague\s+bacteri\w*|"
            r"tetrodotoxin|dimethylmercury|cyanide|strychnine|arsenic|thallium|polonium)\b",
            r"\b(?:chemical|biological|bio)[- ]?(?:weapons?|warfare|agents?|terror\w*)\b",
            r"\bbioweapons?\b",
            r"\b(?:weaponi[sz]\w*|aerosoli[sz]\w*)\b",
            r"\bgain[- ]of[- ]function\b",
            r"\b(?:pathogens?|viruse?s?|bacteria|toxins?)\b[^.?!]{0,40}\b(?:transmissib\w*|lethal\w*|"
            r"virulen\w*|resistant|spread\w*\s+(?:among|to)\s+(?:people|humans))",
            r"\bpoison(?:s|ing|ed)?\b",
            r"\b(?:lethal|fatal|deadly)\s+(?:dose|amount|quantity)\b",
            r"\benrich(?:ed|ing)?\s+uranium\b|\bdirty\s+bombs?\b|\bnuclear\s+(?:weapons?|device)\b",
        ),
    ),
    (
        "explosives",
        "explosives",
        _rx(
            r"\b(?:bombs?|explosives?|explosions?|detonat\w*|ieds?|grenades?|landmines?)\b",
            r"\b(?:c-?4|semtex|tnt|tatp|hmtd|rdx|petn|nitroglycerine?|thermite|napalm|"
            r"ammonium\s+nitrate|black\s+powder|gunpowder|blasting\s+caps?|fuses?)\b",
            r"\bmolotov\b|\bincendiar\w*|\bpipe\s+bombs?\b|\bfirebomb\w*",
        ),
    ),
    (
        "weapons",
        "weapons",
        _rx(
            r"\b(?:guns?|firearms?|rifles?|pistols?|handguns?|shotguns?|ar-?15|ak-?47|glock)\b",
            r"\b(?:ammunition|ammo|bullets?|silencers?|suppressors?|auto\s+sears?|bump\s+stocks?)\b",
            r"\b(?:ghost|untraceable|3d[- ]printed)\s+(?:guns?|firearms?|weapons?)\b",
            r"\bfully\s+automatic\b|\bfull[- ]auto\b",
            r"\bweapons?\b|\barmed\b",
            r"\b(?:knife|knives|machete|sword|crossbow|taser|stun\s+gun|brass\s+knuckles)\b",
        ),
    ),
    (
        "self_harm",
        "self_harm",
        _rx(
            r"\b(?:suicid\w*|self[- ]harm\w*|self[- ]injur\w*)\b",
            r"\b(?:kill|hurt|harm|cut|starve|hang|poison)\s+(?:myself|yourself|themselves|oneself)\b",
            r"\bend\s+(?:my|your|one's|their)\s+(?:own\s+)?life\b",
            r"\b(?:overdos\w*|pro-?ana|thinspo\w*)\b",
            r"\b(?:anorexi\w*|bulimi\w*|eating\s+disorders?)\b",
        ),
    ),
    (
        "violence",
        "violence",
        _rx(
            rf"\b{_VIOLENT_VERB}\w*\b",
            r"\b(?:assassinat\w*|homicid\w*|massacre\w*|genocid\w*|tortur\w*|kidnap\w*|"
            r"abduct\w*|maim\w*|dismember\w*|decapitat\w*|lynch\w*|mutilat\w*|hostages?)\b",
            r"\b(?:hurt|harm|injure|assault|attack|beat\s+up|rape|abuse|hit|poison|threaten)\w*\s+"
            r"(?:someone|somebody|people|a\s+person|others|him|her|them|my|your|the\s+\w+'?s?|"
            r"a\s+(?:child|kid|baby|woman|man|girl|boy|neighbou?r|stranger|cop|police\s+officer))",
            r"\b(?:rape\w*|sexual\s+assault\w*|human\s+trafficking|sex\s+trafficking|hitm[ae]n|"
            r"contract\s+kill\w*|mass\s+shoot\w*|school\s+shoot\w*|serial\s+kill\w*)\b",
            r"\b(?:dispose|get\s+rid)\s+of\s+(?:a|the)\s+(?:dead\s+)?(?:body|bodies|corpse)\b",
            r"\b(?:animal\s+cruelty|dog\s*fight\w*|cock\s*fight\w*)\b",
            r"\bdeath\b[^.?!]{0,20}\b(?:threats?|squads?)\b",
        ),
    ),
    (
        "extremism",
        "extremism",
        _rx(
            r"\b(?:terroris[mt]s?|terror\s+(?:attacks?|cells?|groups?|plots?))\b",
            r"\b(?:isis|isil|al[- ]qaeda|al[- ]shabaab|boko\s+haram|hamas|hezbollah|taliban|"
            r"kkk|ku\s+klux\s+klan)\b",
            r"\b(?:radicali[sz]\w*|extremis[mt]s?|jihad\w*|neo[- ]?nazi\w*|white\s+supremac\w*|"
            r"white\s+nationalis\w*|ethnic\s+cleansing|mass\s+casualt\w*)\b",
            r"\bglorif\w*[^.?!]{0,40}\b(?:terror\w*|violence|attacks?|shoot\w*|bomb\w*|massacres?)",
        ),
    ),
    (
        "drugs",
        "drugs",
        _rx(
            r"\b(?:meth|methamphetamines?|amphetamines?|cocaine|crack\s+cocaine|heroin|fentanyl|"
            r"carfentanil|opioids?|opiates?|oxycodone|oxycontin|morphine|lsd|mdma|ecstasy|ketamine|"
            r"ghb|pcp|dmt|psilocybin|mescaline|rohypnol|roofies|date[- ]rape\s+drugs?|"
            r"barbiturates?|benzodiazepines?|xanax|adderall|nitazenes?|mdpv|bath\s+salts)\b",
            r"\b(?:illegal|illicit|street|recreational|controlled)\s+(?:drugs?|substances?)\b",
            r"\bdrugs?\s+(?:deal\w*|traffick\w*|smuggl\w*|cartels?|labs?)\b",
            r"\b(?:precursors?|clandestine\s+labs?)\b",
        ),
    ),
    (
        "cyber",
        "cyber",
        _rx(
            r"\b(?:hack\w*|malware|ransomware|spyware|stalkerware|keyloggers?|rootkits?|trojans?|"
            r"botnets?|worms?|backdoors?|zero[- ]days?|exploits?|exploiting|payloads?|"
            r"shellcode|reverse\s+shells?|privilege\s+escalation|cryptojack\w*)\b",
            r"\b(?:ddos|dos\s+attacks?|denial[- ]of[- ]service|sql\s+injection|sqli|xss|"
            r"cross[- ]site\s+scripting|buffer\s+overflows?|brute[- ]forc\w*|"
            r"credential\s+stuff\w*)\b",
            r"\b(?:computer|software)\s+virus\w*\b|\bviruse?s?\s+that\b",
            r"\b(?:crack|bypass|break|circumvent|disable|defeat|evade)\w*\s+(?:the\s+|a\s+|an\s+)?"
            r"(?:passwords?|encryption|authentication|2fa|two[- ]factor|captchas?|firewalls?|"
            r"antivirus|anti-?virus|edr|security\s+(?:systems?|measures|software|controls)|drm|"
            r"paywalls?|licen[cs]e\s+checks?|detection|safety\s+filters?)\b",
            r"\b(?:unauthori[sz]ed|illegal(?:ly)?)\s+access\w*\b",
            r"\b(?:exfiltrat\w*|wiretap\w*|sniff\w*\s+(?:traffic|packets|passwords))\b",
            r"\bsteal\w*\s+(?:\w+\s+){0,3}(?:passwords?|credentials?|data|cookies|tokens?|"
            r"login|accounts?|crypto\w*|bitcoin)\b",
        ),
    ),
    (
        "privacy",
        "privacy",
        _rx(
            r"\b(?:doxx?\w*|stalk\w*|spy\w*\s+on|track\w*\s+(?:someone|somebody|my|a\s+person|"
            r"(?:his|her|their)\s+(?:location|phone|movements))|surveil\w*)\b",
            r"\b(?:social\s+security\s+numbers?|ssns?|passport\s+numbers?|bank\s+account\s+"
            r"(?:numbers?|details)|credit\s+card\s+(?:numbers?|details)|medical\s+records?|"
            r"home\s+address\w*|phone\s+numbers?|e-?mail\s+address\w*|date\s+of\s+birth|"
            r"personal\s+(?:information|data|details)|private\s+(?:messages?|information|photos?))\b",
            r"\b(?:hidden|secret|spy)\s+cameras?\b",
            r"\bwithout\s+(?:their|his|her|them|anyone|the\s+\w+'s)\s+(?:\w+\s+)?"
            r"(?:knowledge|knowing|consent|permission|noticing|finding\s+out)\b",
            r"\b(?:read|access|get\s+into|break\s+into|log\s+into)\s+(?:someone|somebody|my\s+"
            r"(?:wife|husband|partner|girlfriend|boyfriend|ex|boss|coworker|neighbou?r)|his|her|"
            r"another\s+person)'?s?\s+(?:e-?mails?|phone|account|messages|texts|computer)\b",
        ),
    ),
    (
        "fraud_deception",
        "fraud",
        _rx(
            r"\b(?:fraud\w*|scam\w*|phishing|counterfeit\w*|launder\w*|embezzl\w*|ponzi|"
            r"pyramid\s+schemes?|insider\s+trading|tax\s+evasion|evad\w*\s+taxes|forg(?:e|ed|ing|"
            r"ery)|extort\w*|blackmail\w*|brib\w*|shoplift\w*|burglar\w*|pickpocket\w*|"
            r"smuggl\w*|identity\s+theft|impersonat\w*|catfish\w*|skimm(?:er|ing))\b",
            r"\b(?:steal|stealing|stole|rob|robbing|robbery|loot\w*|theft)\b",
            r"\bfake\s+(?:ids?|identit\w*|passports?|documents?|reviews?|invoices?|"
            r"prescriptions?|charit\w*|news|accounts?|profiles?|certificates?|diplomas?|"
            r"money|currency|bills?|credentials?)\b",
            r"\b(?:manipulat\w*|rig\w*)\s+(?:the\s+)?(?:stock|market|prices?|elections?|votes?)\b",
            r"\b(?:cheat\w*)\s+(?:on\s+)?(?:an?\s+|the\s+|my\s+)?(?:exams?|tests?|taxes|"
            r"insurance|casino|gambling)\b",
            r"\b(?:pick|picking|bypass\w*)\s+(?:a\s+|the\s+)?locks?\b|\bhot-?wir\w*",
            r"\b(?:get\s+away\s+with|without\s+(?:getting\s+)?(?:caught|detected|noticed|"
            r"traced|leaving\s+(?:a\s+)?(?:trace|evidence)))\b",
        ),
    ),
    (
        "hate_harassment",
        "hate",
        _rx(
            r"\b(?:harass\w*|bully\w*|cyberbull\w*|intimidat\w*|humiliat\w*|demean\w*|"
            r"slurs?|hate\s+speech|hateful|racist\w*|racism|sexist\w*|misogyn\w*|"
            r"homophob\w*|transphob\w*|xenophob\w*|antisemit\w*|islamophob\w*|bigot\w*)\b",
            r"\b(?:inferior|subhuman|vermin|parasites?)\b",
            r"\b(?:threatening|threats?|insult\w*|defam\w*|libel\w*|slander\w*)\b",
            r"\b(?:discriminat\w*|segregat\w*|deport\w*|sterili[sz]\w*)\b",
            r"\bshould(?:n't|\s+not)\s+(?:have|be\s+allowed|get|vote|marry|work|exist)\b",
            r"\bholocaust\s+(?:deni\w*|never|didn't|did\s+not|was\s+a\s+hoax)\b",
        ),
    ),
    (
        "sexual_content",
        "sexual",
        _rx(
            r"\b(?:porn\w*|sexually\s+explicit|explicit\s+sex\w*|erotic\w*|nsfw|sex\s+scenes?|"
            r"nudes?|revenge\s+porn|sextort\w*|deepfake\s+(?:porn|nudes?))\b",
            r"\b(?:prostitut\w*|escort\s+services?|sex\s+work\w*)\b",
        ),
    ),
    (
        "misinformation",
        "misinfo",
        _rx(
            r"\b(?:misinformation|disinformation|propaganda|conspiracy\s+theor\w*|hoax\w*|"
            r"false\s+(?:information|claims?|news|narratives?)|fake\s+news)\b",
            r"\b(?:persuasive|convincing|misleading)\s+(?:\w+\s+){0,2}(?:article|essay|post|"
            r"blog|argument|speech|tweets?|social\s+media\s+posts?)\b",
            r"\b(?:convince|persuade)\s+(?:people|readers|the\s+public|others|someone|them)\s+"
            r"(?:that|to)\b",
            r"\b(?:vaccines?\s+cause|election\s+was\s+(?:stolen|rigged)|flat\s+earth|"
            r"climate\s+change\s+(?:is\s+a\s+hoax|isn't\s+real))\b",
        ),
    ),
    (
        "copyright",
        "copyright",
        _rx(
            r"\b(?:lyrics|verses?|chorus)\s+(?:of|to|from)\b",
            r"\b(?:long|full|entire|complete|whole|lengthy|verbatim)\s+(?:\w+\s+){0,2}"
            r"(?:passage|text|chapter|transcript|script|book|novel|lyrics|article)s?\s+(?:of|from)\b",
            r"\b(?:pirat\w*|torrent\w*|warez|keygen|cracked\s+(?:software|version|copy))\b",
        ),
    ),
    (
        "other",
        "illegal",
        _rx(
            r"\b(?:illegal(?:ly)?|unlawful(?:ly)?|criminal\s+(?:activit\w*|enterprise|scheme))\b",
            r"\b(?:evad\w*|escap\w*|avoid\w*|elud\w*)\s+(?:the\s+)?(?:police|cops|law\s+"
            r"enforcement|authorities|detection|arrest|customs|border\s+control|surveillance)\b",
            r"\bundetect(?:able|ed)\b|\buntraceabl\w*",
            r"\b(?:arson|vandali[sz]\w*|poach\w*|trespass\w*|sabotag\w*|hijack\w*)\b",
        ),
    ),
)

# The grammar of asking for (or giving) an actionable procedure.
_PROCEDURAL: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "how_to",
        _rx(
            r"\bhow\s+(?:to|do|does|can|could|would|should|might|much|many|long)\b",
            r"\b(?:ways?|methods?|techniques?|tips|tricks|best\s+way)\s+(?:to|for|of)\b",
            r"\bwhat(?:'s|\s+is|\s+are)\s+the\s+(?:best|easiest|quickest|simplest|most\s+\w+)\b",
            r"\b(?:walk|talk)\s+me\s+through\b|\bteach\s+me\b|\bshow\s+me\s+how\b|"
            r"\bexplain\s+(?:exactly\s+)?how\b|\bdescribe\s+how\b|\bhelp\s+me\b",
        ),
    ),
    (
        "instructions",
        _rx(
            r"\b(?:step[- ]by[- ]step|instructions?|tutorial|guide|manual|recipe|blueprints?|"
            r"playbook|walkthrough|procedure|protocol|detailed\s+(?:plan|steps|description|"
            r"explanation|list))\b",
            r"\b(?:list|give|provide|outline|detail)\s+(?:me\s+)?(?:the\s+)?(?:\w+\s+){0,2}"
            r"(?:steps?|ways?|methods?|ingredients|materials|tools|equipment|suppliers?|vendors?)\b",
        ),
    ),
    (
        "make",
        _rx(
            r"\b(?:make|making|build|building|assemble|construct|manufactur\w*|produce|"
            r"synthesi[sz]\w*|extract|cook|brew|grow|culture|cultivat\w*|obtain|acquire|"
            r"buy|purchase|source|smuggle|modify|convert|3d[- ]print)\b",
        ),
    ),
    (
        "write",
        _rx(
            r"\b(?:write|compose|draft|create|generate|develop|design|code|program|craft|produce|"
            r"plan|devise|suggest|publish|post|script)\b\s+(?:me\s+)?(?:a|an|the|some|\d+)?\b",
        ),
    ),
    (
        "code",
        _rx(
            r"\b(?:write|create|develop|generate|code|build|program|design)\b[^.?!]{0,40}\b"
            r"(?:scripts?|code|programs?|software|malware|ransomware|viruse?s?|worms?|exploits?|"
            r"keyloggers?|bots?|tools?|apps?|extensions?|macros?|functions?|payloads?)\b",
        ),
    ),
    (
        "quantities",
        _rx(
            r"\b\d+(?:[.,]\d+)?\s?(?:mg|g|kg|grams?|kilograms?|ml|l|litres?|liters?|oz|ounces?|"
            r"lbs?|pounds?|cups?|tablespoons?|tbsp|teaspoons?|tsp|moles?|mol|ppm|°c|degrees)\b",
            r"\b\d+\s?(?:%|percent)\b",
        ),
    ),
    (
        "steps",
        re.compile(r"(?:^|\n)\s*(?:step\s*)?\d{1,2}[.):]\s+\S", re.IGNORECASE),
    ),
)

# Contexts that defuse a harmful word.
_DEFUSE: tuple[tuple[str, float, re.Pattern[str]], ...] = (
    (
        "definition",
        0.45,
        _rx(
            r"^\s*(?:what|who)(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?:a|an|the)?\s*\w+(?:\s+\w+)?"
            r"\s*\??\s*$",
            r"^\s*(?:what\s+(?:is|are|does)|define|meaning\s+of|definition\s+of)\b[^.?!]{0,60}"
            r"(?:mean|meaning|definition|defined)?\s*\??\s*$",
            r"\bwhat\s+(?:does|do)\s+[^?]{1,40}\s+mean\b|\bdefin(?:e|ition)\b",
        ),
    ),
    (
        "history",
        0.5,
        _rx(
            r"\b(?:why|how)\s+did\b",
            r"\bwhat\s+(?:happened|were\s+the\s+(?:causes|reasons|effects|consequences))\b",
            r"\b(?:history|historical|in\s+(?:1[0-9]{3}|20[0-2][0-9])|during\s+(?:the\s+)?"
            r"(?:war|world\s+war|holocaust|cold\s+war))\b",
        ),
    ),
    (
        "fiction_game",
        0.35,
        _rx(
            r"\bin\s+(?:a\s+|the\s+)?(?:video\s*game|game|call\s+of\s+duty|minecraft|fortnite|"
            r"skyrim|gta|grand\s+theft\s+auto|among\s+us|chess|poker|the\s+sims|zelda|halo|"
            r"pubg|overwatch|league\s+of\s+legends|dnd|d&d|dungeons\s+(?:and|&)\s+dragons|"
            r"pokemon|mario|elden\s+ring|dark\s+souls|warzone|counter[- ]strike|valorant)\b",
        ),
    ),
    (
        "prevention",
        0.5,
        _rx(
            r"\b(?:protect|defend|prevent|prevention|avoid\s+being|recogni[sz]e|spot|detect|"
            r"identify|report|stop\s+(?:being|someone|people)|safe(?:ly)?|safety|dispos\w*\s+of\s+"
            r"(?:old|expired|unused)|warning\s+signs|signs\s+of|help\s+(?:a\s+friend|someone)\s+who|"
            r"cope|coping|recover\w*|treatment|support\s+(?:for|someone))\b",
        ),
    ),
)

# Aggravating intent: evasion, a real target, harm as the explicit goal.
_AGGRAVATE: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "evasion",
        _rx(
            r"\bwithout\s+(?:getting\s+|being\s+)?(?:caught|detected|noticed|traced|found|"
            r"leaving\s+(?:a\s+)?(?:trace|evidence))\b",
            r"\b(?:undetect\w*|untraceabl\w*|anonymous\w*|cover\s+(?:up|my\s+tracks)|"
            r"evad\w*|avoid\w*\s+(?:detection|the\s+police|getting\s+caught))\b",
        ),
    ),
    (
        "target",
        _rx(
            r"\bmy\s+(?:neighbou?r|wife|husband|partner|girlfriend|boyfriend|ex|boss|coworker|"
            r"co-worker|colleague|teacher|classmate|roommate|sister|brother|mother|father|mom|"
            r"dad|parents?|son|daughter|child|kid|friend|enemy|landlord)s?\b",
            r"\b(?:someone|somebody|a\s+person|people|a\s+human|humans|civilians|children|"
            r"crowds?|a\s+stranger)\b",
        ),
    ),
    (
        "household",
        _rx(r"\b(?:at\s+home|household|homemade|from\s+(?:common|everyday|household)|diy)\b"),
    ),
)


def assess_harm(text: str) -> HarmAssessment:
    """Judge ``text`` (a request or a document) for harmful, actionable content."""
    if not text or not text.strip():
        return NONE
    # Homonyms are removed first so "kill the process" never reaches the violence lexicon.
    cleaned = _HOMONYM.sub(" ", text)
    signals: list[str] = []
    if cleaned != text:
        signals.append("context:homonym")
    scores: dict[str, float] = {}
    for category, code, pattern in _TOPICS:
        hits = len(pattern.findall(cleaned))
        if hits:
            # Several independent mentions of one topic mean the text is about it.
            scores[category] = min(1.0, _BASE[category] + 0.03 * (hits - 1))
            signals.append(f"topic:{code}")
    procedural_kinds = [kind for kind, pattern in _PROCEDURAL if pattern.search(cleaned)]
    signals.extend(f"procedural:{kind}" for kind in procedural_kinds)
    steps = len(_PROCEDURAL[-1][1].findall(cleaned))
    kinds = set(procedural_kinds)
    procedural = bool({"how_to", "instructions", "quantities", "code"} & kinds or steps >= 2)
    if not scores:
        return HarmAssessment("none", 0.0, procedural, tuple(signals))
    category = max(scores, key=lambda name: scores[name])
    base = scores[category]
    # Naming a topic is moderate; asking for (or giving) the procedure or the content is not.
    factor = 0.6
    if procedural or "make" in kinds:
        factor += 0.4
    elif "write" in kinds:
        factor += 0.35
    if "quantities" in kinds or steps >= 2:
        factor += 0.1
    for kind, pattern in _AGGRAVATE:
        if pattern.search(cleaned):
            signals.append(f"intent:{kind}")
            factor += 0.1
    if len(scores) > 1:
        factor += 0.05
    for kind, weight, pattern in _DEFUSE:
        if pattern.search(cleaned):
            signals.append(f"context:{kind}")
            factor *= weight
    severity = round(max(0.0, min(1.0, base * factor)), 3)
    return HarmAssessment(category, severity, procedural, tuple(signals))
