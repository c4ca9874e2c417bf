"""The lexicon and request grammar behind ``harm.assess_harm`` (data, no scoring).

General English, not data set strings: figurative uses and safe targets removed first
(``IDIOMS``: "kill time", "poison the weeds"), harmful topics (``MENTIONS``), wrongful acts
(``ACTS``: fraud, harassment, sabotage), harmful goals, which mostly need a victim or a
target in the same clause (``GOALS``, ``PAIRS``), the grammar of asking for a procedure or
for content (``PROCEDURAL``), aggravating intent (``AGGRAVATORS``) and the contexts of a
request that defuse a harmful word (``DEFUSERS``). ``harm`` weighs them; nothing here
decides. Verb lists are compiled as tries, and ``Scan`` tries each pattern only where one
of its trigger words (read from the pattern itself) starts, which keeps documents fast.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from re import _constants as _rc
from re import _parser as _rp


def rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{part})" for part in parts), re.IGNORECASE)


def words(*alternatives: str) -> str:
    return r"\b(?:" + "|".join(alternatives) + r")\b"


@dataclass(frozen=True)
class Rule:
    category: str
    code: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Pair:
    """Harm when both patterns occur in one sentence (a group and a discriminatory claim);
    ``ordered``: the first must come before the second."""

    category: str
    code: str
    first: re.Pattern[str]
    second: re.Pattern[str]
    ordered: bool = True


# --- who can be harmed -------------------------------------------------------------------

_RELATION = (
    r"(?:neighbou?rs?|wife|wives|husbands?|partners?|spouses?|girlfriends?|boyfriends?|"
    r"ex(?:[- ]?(?:wife|husband|girlfriend|boyfriend|partner|gf|bf))?|fianc[eé]e?|boss|"
    r"bosses|managers?|supervisors?|coworkers?|co-workers?|colleagues?|employees?|"
    r"employers?|secretary|assistant|teachers?|professors?|tutors?|coach|students?|"
    r"classmates?|roommates?|flatmates?|housemates?|sisters?|brothers?|siblings?|twin|"
    r"mother|father|mom|mum|mommy|mummy|dad|daddy|parents?|sons?|daughters?|step\w+|"
    r"child(?:ren)?|kids?|bab(?:y|ies)|toddlers?|grand\w+|aunts?|uncles?|cousins?|nephews?|"
    r"nieces?|in-laws?|friends?|best\s+friend|bff|buddy|mates?|enemy|enemies|landlord|"
    r"landlady|tenants?|patients?|clients?|customers?|doctor|dentist|therapist|pastor|"
    r"priest|probation\s+officer|house\s+servant|servant|maid|cleaner|nanny|babysitter|"
    r"family|relatives?|bully|crush|lover|mistress|(?:tinder\s+|blind\s+|first\s+)?date)"
)
_SINGLE_GROUP = (
    r"(?:black|white|brown|asian|latin[oax]|hispanic|arab|african|indian|chinese|mexican|"
    r"jewish|muslim|christian|hindu|sikh|buddhist|catholic|mormon|atheist|gay|lesbian|"
    r"bisexual|queer|trans(?:gender)?|disabled|autistic|homeless|immigrant|refugee|"
    r"illegal|undocumented|foreign|indigenous|native|old|elderly|fat|pregnant)"
)
PERSON = (
    r"(?:someone|somebody|anyone|anybody|everyone|everybody|people|persons?|humans?|humanity|"
    r"mankind|individuals?|victims?|civilians|strangers?|(?:wo)?m[ae]n|girls?|boys?|guys?|"
    r"lad(?:y|ies)|dudes?|gentlem[ae]n|blokes?|fellas?|chicks?|"
    r"child(?:ren)?|kids?|bab(?:y|ies)|toddlers?|infants?|newborns?|teen(?:ager)?s?|minors?|"
    r"adolescents?|pupils?|students?|schoolchildren|elderly|seniors?|pensioners?|"
    + _RELATION
    + r"|politicians?|president|prime\s+minister|senators?|congress(?:wo)?man|governor|mayor|"
    r"judges?|lawyers?|jurors?|journalists?|reporters?|police(?:\s+officers?)?|cops?|"
    r"officers?|sheriff|detectives?|soldiers?|troops|guards?|security\s+guards?|"
    r"bouncers?|witness(?:es)?|informants?|snitch(?:es)?|immigrants?|refugees?|migrants?|"
    r"protest[eo]rs?|crowds?|passengers?|pedestrians?|drivers?|cyclists?|hostages?|"
    r"prisoners?|inmates?|worshippers?|congregation|shoppers?|workers?|nurses?|doctors?|"
    r"priests?|imams?|rabbis?|monks?|nuns?|celebrit(?:y|ies)|influencers?|ceos?|"
    r"gang\s+members?|rivals?\s+gang|homeless\s+(?:people|person|man|woman|guy)|"
    r"(?:a|an|the|some|this|that)\s+" + _SINGLE_GROUP + r"\s+(?:person|man|woman|guy|girl|"
    r"boy|kid|family|couple|neighbou?r|student|worker)|jews?|muslims?|arabs?|christians?|"
    r"hindus?|sikhs?|buddhists?|catholics?|mormons?|atheists?|gays?|lesbians?|immigrants?|"
    r"refugees?|migrants?|foreigners?|him|her|them|myself)"
)
NAMED = r"(?-i:[A-Z][a-z]+(?:\s+[A-Z]\.)?\s+[A-Z][a-z]+)"
ANIMAL = (
    r"(?:cats?|dogs?|pets?|pupp(?:y|ies)|kittens?|hamsters?|rabbits?|bunn(?:y|ies)|"
    r"parrots?|guinea\s+pigs?|ferrets?)"
)
BODY = (
    r"(?:skull|head|face|throat|neck|arter(?:y|ies)|carotid|jugular|veins?|wrists?|heart|"
    r"lungs?|organs?|kidneys?|liver|eyes?|eyeballs?|ears?|nose|teeth|tooth|jaw|tongue|"
    r"limbs?|arms?|legs?|hands?|feet|foot|fingers?|toes?|knees?|kneecaps?|ribs?|spine|back|"
    r"stomach|belly|guts|genitals?|brain|skin|scalp|bones?|(?:dead\s+)?body|bodies|corpses?|"
    r"remains)"
)
DETERMINER = (
    r"(?:(?:a|an|the|my|your|his|her|their|our|this|that|these|those|some|all|every|each|"
    r"many|several|as\s+many|any|one|two|three|\d+)\s+)"
)
# Up to two modifiers between determiner and noun ("my annoying neighbour"), but never a
# preposition, so "kill time with friends" does not reach "friends".
MODIFIERS = (
    r"(?:(?!(?:with|for|in|at|on|to|of|by|from|and|or|than|like|into|about)\b)"
    r"[\w'-]+\s+){0,2}"
)
# Not a possessive ("the kids' toys"), not an errand ("shoot him an email", "hit people up").
_NOT_TARGET = (
    "(?!['\u2019])"
    r"(?!\s+(?:up\b|(?:a|an)\s+(?:quick\s+)?(?:message|e-?mail|text|line|note|dm|"
    r"look|glance|smile|question|call|favou?r)\b))"
)
# A dead pet is buried, not harmed: animals never take the modifier "dead".
_ANIMAL_MODIFIERS = (
    r"(?:(?!(?:with|for|in|at|on|to|of|by|from|and|or|than|like|into|about|dead)\b)"
    r"[\w'-]+\s+){0,2}"
)
TARGET = rf"{DETERMINER}?(?:{MODIFIERS}{PERSON}|{_ANIMAL_MODIFIERS}{ANIMAL})\b{_NOT_TARGET}"
POSSESSOR = rf"(?:{DETERMINER}?{MODIFIERS}(?:{PERSON})'s?|his|her|their)"


def verbs(phrases: str) -> str:
    """Present forms of each comma-separated verb phrase (base, -s, -ing) as one trie-shaped
    pattern; a participle such as "injured people" describes victims rather than asking to
    harm them, so -ed forms are left out."""
    forms: set[str] = set()
    for stem in (phrase.strip() for phrase in phrases.split(",")):
        head, _, tail = stem.partition(" ")
        rest = f" {tail}" if tail else ""
        if head.endswith("e"):
            heads = {head, f"{head}s", f"{head[:-1]}ing"}
        elif head.endswith("y") and head[-2] not in "aeiou":
            heads = {head, f"{head[:-1]}ies", f"{head}ing"}
        else:
            heads = {head, f"{head}s", f"{head}es", f"{head}ing", f"{head}{head[-1]}ing"}
        forms.update(f"{form}{rest}" for form in heads)
    return trie(forms)


def trie(literals: set[str]) -> str:
    """An alternation of literal phrases shaped as a trie: Python's ``re`` tries every
    branch of a flat alternation at every position, which is what made long texts slow."""
    root: dict[str, dict] = {}
    for literal in literals:
        node = root
        for char in literal:
            node = node.setdefault(char, {})
        node[""] = {}

    def render(node: dict[str, dict]) -> str:
        branches = [
            (r"\s+" if char == " " else re.escape(char)) + render(child)
            for char, child in sorted(node.items())
            if char
        ]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return "(?:" + render(root) + ")"


# Verbs that kill or maim: harmful with any person as object, a named one included.
LETHAL_VERB = verbs(
    "kill, murder, shoot, gun down, mow down, stab, knife, shank, slash, strangle, garrote, "
    "throttle, choke, choke out, suffocate, asphyxiate, smother, drown, poison, gas, torture, "
    "waterboard, kidnap, abduct, snipe, ambush, assassinate, execute, behead, decapitate, "
    "dismember, disembowel, eviscerate, impale, skewer, bludgeon, club, hammer, bash, "
    "bash in, batter, stomp, stone, lynch, hang, slaughter, butcher, gut, skin, flay, "
    "eliminate, exterminate, eradicate, annihilate, massacre, rape, molest, take out, "
    "take down, do away with, get rid of, dispose of, off, run over, run down, electrocute, "
    "incapacitate, paralyse, paralyze, cripple, maim, mutilate, disfigure, blind, "
    "bury alive, burn alive, sedate, spike"
)
# Verbs that are harmful only with a living target ("kill a process", "crush a can" are not).
VIOLENT_VERB = (
    "(?:"
    + LETHAL_VERB
    + "|"
    + verbs(
        "hurt, harm, injure, wound, attack, assault, beat, beat up, rough up, hit, punch, "
        "kick, slap, headbutt, bite, scratch, scald, capture, trap, overpower, subdue, "
        "restrain, tie up, gag, chop, chop up, chop off, cut, cut up, cut off, slice, slit, "
        "sever, pierce, crack, crack open, break, break open, snap, shatter, smash, smash in, "
        "crush, rip off, rip out, tear off, tear apart, burn, set fire to, torch, blow up, "
        "bomb, nuke, obliterate, destroy, wipe out, terrorise, terrorize, threaten, stalk, "
        "harass, abuse, enslave, starve, sterilise, sterilize, infect, disarm, knock out, "
        "traffic, groom, drug, ram, push, shove, trip, throw, tase, taser, pepper spray, "
        "pistol whip, lock up, imprison, hunt, hunt down, track down, ambush, corner, "
        "mug, rob, assault, beat to death"
    )
    + ")"
)

GROUP = (
    r"(?:(?:black|white|asian|latin[oax]s?|hispanic|arab|african|indian|chinese|mexican|"
    r"jewish|muslim|christian|hindu|sikh|buddhist|catholic|mormon|atheist|gay|lesbian|"
    r"bisexual|asexual|queer|trans(?:gender)?|non-binary|disabled|autistic|blind|deaf|"
    r"elderly|old|poor|homeless|immigrant|refugee|roma|indigenous|native|divorced|single|"
    r"unmarried|overweight|fat|obese|mentally\s+ill|neurodivergent|working[- ]class|foreign|"
    r"female|male|pregnant|unemployed|left[- ]wing|right[- ]wing|liberal|conservative)\s+"
    r"(?:people|persons|men|women|folks|individuals|kids|children|employees|students|"
    r"couples|americans|communit(?:y|ies)|immigrants|workers|voters|citizens|parents)"
    r"|people\s+(?:with|on|of|from|who\s+are)\s+(?:a\s+|an\s+)?[\w-]+(?:\s+[\w-]+)?"
    r"|(?:jews|muslims|christians|hindus|sikhs|buddhists|catholics|mormons|atheists|gays|"
    r"lesbians|blacks|whites|asians|latinos|hispanics|arabs|africans|immigrants|refugees|"
    r"migrants|women|girls|minorities|foreigners|homosexuals|transgenders?|trans\s+women|"
    r"trans\s+men|the\s+disabled|the\s+poor|the\s+elderly|the\s+homeless|roma|gypsies|"
    r"mexicans|chinese|indians|africans|native\s+americans)"
    r"|(?:a|any|certain|particular|specific|one|another|different)\s+(?:race|ethnicity|"
    r"religion|group|demographic|community|minority|nationality|gender|caste))"
)

# --- figurative speech and safe targets, removed before anything else is matched ---------

_PEST = (
    r"(?:vermin|rats?|mice|pests?|weeds?|ants?|cockroach\w*|roaches|termites|slugs|snails|"
    r"moles|gophers|mosquito\w*|flies|fleas|ticks|lice|bed\s*bugs|wasps|hornets|aphids|"
    r"bacteria|germs|viruses\s+on\s+\w+|mou?ld|fungus|algae|rodents?|insects?|bugs|"
    r"invasive\s+\w+|crabgrass|dandelions)"
)
IDIOMS = rx(
    r"\bmurders?\s+of\s+crows\b",
    r"\bkill(?:s|ing|ed)?\s+(?:some\s+|the\s+|a\s+little\s+)?time\b|\bkilling\s+it\b|"
    r"\bkill(?:s|ed)?\s+it\s+(?:on|at|in|with)\b|\bkill\s+two\s+birds\b|"
    r"\bkiller\s+(?:app|feature|deal|idea|workout|look|smile|view|instinct|whales?)\b|"
    r"\bmake\s+a\s+killing\b|\bdressed\s+to\s+kill\b",
    r"\bbomb(?:s|ed|ing)?\s+(?:the|a|an|my|this|that|his|her)\s+(?:\w+\s+)?(?:test|exam|quiz|"
    r"interview|audition|presentation|gig|show|speech|date|pitch|recital|performance)\b",
    r"\bphoto\s*bomb\w*|\b(?:the|da)\s+bomb\b|\bbombshell\b|\bbath\s+bombs?\b|"
    r"\bdrop\s+(?:a|the)\s+bomb(?:shell)?\b|\bf-bombs?\b",
    r"\bsteal(?:s|ing)?\s+(?:the|a)\s+(?:show|spotlight|limelight|scene|glance|kiss|base|"
    r"march|moment)\b|\bsteal\w*\s+(?:someone's|my|his|her|your|their)\s+heart\b",
    r"\bweed(?:s|ing)?\s+(?:my|the|your|our|a)\s+(?:\w+\s+)?(?:garden|lawn|yard|beds?|patch|"
    r"plot|allotment)\b|\bweed\s*(?:killer|whacker|eater)s?\b|\bweed(?:s|ed|ing)?\s+out\b|"
    r"\bto\s+weed\b",
    r"\bblow(?:s|ing)?\s+off\s+steam\b|\bblow(?:s|ing)?\s+(?:my|your|their|his|her)\s+mind\b|"
    r"\bblow\s+the\s+whistle\b|\bblow(?:s|ing)?\s+up\s+(?:a|the|some|my)\s+(?:\w+\s+)?"
    r"(?:balloons?|air\s+mattress|pool|tyres?|tires?|raft|photo|picture|image)\b|"
    r"\bblow(?:ing)?\s+(?:out\s+)?(?:the\s+)?candles?\b",
    r"\bshoot(?:ing)?\s+for\s+the\s+(?:stars|moon)\b|\bshoot(?:ing)?\s+the\s+breeze\b|"
    r"\btake\s+a\s+(?:shot|stab)\s+at\b|\bshoot(?:ing)?\s+(?:my|your)\s+shot\b|"
    r"\bshoot(?:s|ing)?\s+(?:a|the|my|some|this)\s+(?:\w+\s+)?(?:photos?|pictures?|video|film|"
    r"scene|movie|hoops|baskets?|footage|documentary|portraits?|wedding)\b",
    r"\bpunch(?:ing)?\s+above\s+\w+\s+weight\b|\bbeat(?:ing)?\s+around\s+the\s+bush\b|"
    r"\bbeat(?:s|ing)?\s+(?:the|my|your)\s+(?:heat|traffic|odds|deadline|rush|clock|"
    r"system|record|personal\s+best|high\s+score|final\s+boss|eggs?|batter|cream)\b|"
    r"\bbeat\s+(?:the\s+)?eggs?\b",
    r"\bbreak\s+the\s+(?:ice|bank)\b|\bbreak\s+a\s+leg\b|\bbite\s+the\s+bullet\b|"
    r"\bdodge\w*\s+a\s+bullet\b|\bsilver\s+bullet\b|\bbullet\s+points?\b|"
    r"\bpull\s+the\s+trigger\s+on\b|\btrigger\s+warnings?\b",
    r"\b(?:crush|smash|nail|slay|kill)(?:es|ing)?\s+(?:it|the\s+competition|my\s+goals|"
    r"the\s+interview|the\s+exam|the\s+test|the\s+game)\b|\bhave\s+a\s+crush\b|"
    r"\bcrush(?:es|ing)?\s+on\b|\bsmash\s+hit\b",
    r"\bchok(?:e|es|ing)\s+(?:under|on)\s+(?:the\s+)?(?:pressure|food|a\s+\w+)\b",
    r"\bexecut(?:e|es|ing)\s+(?:a|the|my|our|this|that)\s+(?:\w+\s+)?(?:plan|strategy|task|"
    r"command|order|program|code|query|trade|script|function|move|idea)\b",
    r"\battack(?:s|ing)?\s+(?:the|a|this)\s+(?:problem|task|challenge|question)\b|"
    r"\b(?:heart|panic|asthma|anxiety)\s+attacks?\b",
    r"\b(?:state|moment|feeling|sense)\s+of\s+ecstasy\b|\bin\s+ecstasy\b|"
    r"\bhigh\s+on\s+life\b|\bruns?\s+?(?:er's|ers)\s+high\b",
    r"\bknock(?:s|ing)?\s+(?:them|'em|it)\s+(?:dead|out\s+of\s+the\s+park)\b|"
    r"\bknockout\s+(?:performance|look|dress)\b",
    r"\bexplosive\s+(?:growth|flavou?rs?|performance|popularity|temper|diarrh\w+)\b|"
    r"\bexplod\w*\s+(?:in|with)\s+(?:popularity|laughter|flavou?r)\b",
    r"\bhit(?:s|ting)?\s+(?:the|a)\s+(?:gym|road|books|sack|hay|jackpot|target|note|button|"
    r"ball|spot|nail|wall|ground\s+running)\b|\bhit\s+(?:it|me)\s+up\b",
    r"\bgut\s+(?:feeling|instinct|check|health|bacteria)\b",
    r"\bsex(?:ual)?\s+(?:reproduction|selection|dimorphism|health|education|ed|orientation|"
    r"chromosomes?|hormones?|characteristics|differences|harassment\s+(?:policy|training))\b|"
    r"\bsexually\s+transmitted\b|\bsafe\s+sex\b",
    r"\bhack(?:s|ing)?\s+(?:my|your|our|the)\s+(?:productivity|life|sleep|mornings?|routine|"
    r"habits|brain|diet|workflow|focus|metabolism|learning|budget|commute)\b|"
    r"\b(?:life|productivity|growth|kitchen|travel|cleaning)\s+hack\w*\b|\bhackathons?\b|"
    r"\bhack(?:s|ing|ed)?\s+(?:together|up|on|around|away\s+at)\b|"
    r"\bhack\w*\s+(?:a|an|the|this|my|our)\s+(?:quick\s+|simple\s+|small\s+)?(?:solution|"
    r"prototype|fix|workaround|demo|script|feature|patch)\b",
    r"\b[\w]+[- ]?proof(?:ing|ed)?\b",
    r"\bterrible\s+twos\b|\bcrime\s+(?:novel|fiction|drama|show|series|scene\s+tape)\b|"
    r"\bmurder\s+myster(?:y|ies)\b|\btrue\s+crime\b",
    r"\bmurder\w*\s+(?:a|the|this|that)\s+(?:\w+\s+)?(?:song|tune|karaoke|dance\s+floor|"
    r"language|accent|recipe)\b",
    rf"\b(?:poison\w*|kill\w*|exterminat\w*|get\w*\s+rid\s+of|eliminat\w*|trap\w*|gas\w*|"
    rf"murder\w*|destroy\w*|wip\w*\s+out|eradicat\w*)\s+(?:the\s+|my\s+|some\s+|all\s+|"
    rf"these\s+|those\s+|a\s+|an\s+)?(?:\w+\s+)?{_PEST}\b",
)


# --- harmful topics named (weak on their own) --------------------------------------------

MENTIONS: tuple[Rule, ...] = (
    Rule(
        "chemical_biological",
        "cbrn",
        rx(
            words(
                r"sarin|soman|tabun|novichok|vx|nerve\s+(?:agents?|gas)|lewisite|mustard\s+gas|"
                r"sulfur\s+mustard|nitrogen\s+mustard|phosgene|chloropicrin|chlorine\s+gas|"
                r"hydrogen\s+cyanide|cyanide|ricin|abrin|anthrax|botulinum|botulism|smallpox|"
                r"ebola|cholera|plague|tetrodotoxin|dimethylmercury|strychnine|arsenic|thallium|"
                r"polonium|parathion|organophosphates?|toxins?|pathogens?|bioweapons?|"
                r"(?:chemical|biological|bio)[- ]?(?:weapons?|warfare|agents?|terror\w*)|"
                r"toxic\s+(?:gas|chemicals?|fumes)|poison\s+gas|poisons?|bsl-?[34]|"
                r"(?:lethal|fatal|deadly)\s+(?:dose|amount|quantity)|"
                r"gain[- ]of[- ]function|enriched\s+uranium|dirty\s+bombs?|"
                r"nuclear\s+(?:weapons?|device|bomb)|radioactive\s+material"
            )
        ),
    ),
    Rule(
        "explosives",
        "explosives",
        rx(
            words(
                r"bombs?|car\s+bombs?|pipe\s+bombs?|explosives?|explosive\s+devices?|detonators?|"
                r"ieds?|grenades?|landmines?|c-?4|semtex|tnt|tatp|hmtd|rdx|petn|anfo|"
                r"nitroglycerine?|thermite|napalm|ammonium\s+nitrate|black\s+powder|gunpowder|"
                r"blasting\s+caps?|molotov(?:\s+cocktails?)?|incendiary\s+devices?|firebombs?"
            )
        ),
    ),
    Rule(
        "weapons",
        "weapons",
        rx(
            words(
                r"guns?|firearms?|rifles?|pistols?|handguns?|shotguns?|ar-?15s?|ak-?47s?|glocks?|"
                r"ammunition|ammo|silencers?|suppressors?|auto\s+sears?|bump\s+stocks?|"
                r"ghost\s+guns?|full[- ]auto|fully\s+automatic|weapons?|shivs?|shanks?|"
                r"switchblades?|brass\s+knuckles|tasers?|stun\s+guns?|crossbows?"
            )
        ),
    ),
    Rule(
        "drugs",
        "drugs",
        rx(
            words(
                r"meth|methamphetamines?|amphetamines?|cocaine|crack\s+cocaine|heroin|fentanyl|"
                r"carfentanil|nitazenes?|opioids?|opiates?|oxycodone|oxycontin|morphine|codeine|"
                r"lsd|mdma|ketamine|ghb|pcp|dmt|psilocybin|mescaline|rohypnol|roofies|"
                r"date[- ]rape\s+drugs?|purple\s+drank|lean|steroids?|anabolic|marihuana|"
                r"marijuana|cannabis|weed|inhalants?|huff(?:ing)?|whippets|drugs?|drug\s+use|"
                r"narcotics?|controlled\s+substances?|precursors?|clandestine\s+labs?|"
                r"get(?:ting)?\s+high"
            ),
            r"\b(?:take|taking|buy|buying|sell|selling|make|making|cook|cooking|drop|pop|dose|"
            r"on)\s+(?:some\s+)?ecstasy\b",
        ),
    ),
    Rule(
        "cyber",
        "cyber",
        rx(
            words(
                r"malware|ransomware|spyware|stalkerware|keyloggers?|rootkits?|trojans?|botnets?|"
                r"backdoors?|zero[- ]days?|exploits?|exploiting|vulnerabilit(?:y|ies)|"
                r"cve-\d{4}-\d+|payloads?|shellcode|reverse\s+shells?|privilege\s+escalation|"
                r"escalate\s+privileges|cryptomining\s+malware|sql\s+injection|sqli|xss|"
                r"cross[- ]site\s+scripting|buffer\s+overflows?|brute[- ]forc\w*|"
                r"(?:computer|boot\s+sector|polymorphic)\s+virus\w*|worms?|replay\s+attacks?|"
                r"amplification\s+attacks?|dns\s+amplification|social\s+engineering|csrf|"
                r"cross[- ]site\s+request\s+forgery"
            )
        ),
    ),
    Rule(
        "fraud_deception",
        "fraud",
        rx(words(r"stolen|dark\s*web|spam\w*|cheat\w*")),
    ),
    Rule(
        "violence",
        "violence",
        rx(
            words(
                r"violen(?:ce|t)|hostages?|serial\s+kill\w*|hitm[ae]n|bloodshed|casualt(?:y|ies)|"
                r"riots?|urban\s+warfare|child\s+labou?r\w*|gor(?:e|y)|"
                r"graphic\s+(?:detail|violence|description)|gangs?"
            )
        ),
    ),
    Rule(
        "self_harm",
        "self_harm",
        rx(
            words(
                r"suicid\w*|self[- ]harm\w*|self[- ]injur\w*|self[- ]inflicted|overdos\w*|"
                r"pro-?ana|thinspo\w*|anorexi\w*|bulimi\w*|eating\s+disorders?|purging"
            )
        ),
    ),
    Rule(
        "extremism",
        "extremism",
        rx(
            words(
                r"terroris[mt]s?|terror\s+(?:attacks?|cells?|groups?|plots?)|isis|isil|"
                r"al[- ]qaeda|al[- ]shabaab|boko\s+haram|hezbollah|kkk|ku\s+klux\s+klan|"
                r"extremis[mt]s?|jihad\w*|neo[- ]?nazi\w*|white\s+supremac\w*|"
                r"white\s+nationalis\w*|ethnic\s+cleansing|cults?"
            )
        ),
    ),
    Rule(
        "hate_harassment",
        "hate",
        rx(
            words(
                r"slurs?|hateful|racis[mt]\w*|stereotyp\w*|sexis[mt]\w*|misogyn\w*|homophob\w*|"
                r"transphob\w*|xenophob\w*|anti-?semit\w*|islamophob\w*|bigot\w*|discriminat\w*|"
                r"insults?"
            )
        ),
    ),
    Rule(
        "sexual_content",
        "sexual",
        rx(
            words(
                r"porn\w*|sexually\s+(?:explicit|suggestive)|"
                r"explicit\s+(?:sex\w*|images?|pictures?|photos?|videos?|snapchats?|content)|"
                r"intimate\s+(?:images?|pictures?|photos?|videos?)|erotic\w*|nsfw|sex\s+scenes?|"
                r"nudes?|adult\s+(?:movies?|films?|videos?|content|scenes?)|"
                r"sexual\s+acts?|prostitut\w*|escort\s+services?|masturbat\w*|orgasms?|"
                r"intercourse|genitals?|penis|vagina|fetish\w*|bdsm|kinks?|kinky|threesomes?|"
                r"org(?:y|ies)|blowjobs?|oral\s+sex|anal\s+sex|hookers?|onlyfans|dick\s+pics?|"
                r"sext\w*|strip\s+clubs?|horny"
            )
        ),
    ),
    Rule(
        "misinformation",
        "misinfo",
        rx(words(r"misinformation|conspiracy\s+theor\w*|hoax\w*|rumou?rs?")),
    ),
    Rule(
        "copyright",
        "copyright",
        rx(words(r"lyrics")),
    ),
    Rule(
        "other",
        "illegal",
        rx(words(r"crimes?|criminal\s+activit\w*|evidence")),
    ),
)

# --- wrongful acts named (a request to do one is harmful; a question about one is not) ---

ACTS: tuple[Rule, ...] = (
    Rule(
        "cyber",
        "cyber",
        rx(
            words(
                r"hack\w*|phishing|spear[- ]phishing|cryptojack\w*|ddos|denial[- ]of[- ]service|"
                r"credential\s+stuffing|deface\w*|sim\s+swap\w*|cyber\s*attacks?"
            )
        ),
    ),
    Rule(
        "fraud_deception",
        "fraud",
        rx(
            words(
                r"fraud\w*|scam\w*|counterfeit\w*|launder\w*|embezzl\w*|ponzi|pyramid\s+schemes?|"
                r"insider\s+trading|tax\s+evasion|forg(?:e|ed|ing|ery|eries)|extort\w*|"
                r"blackmail\w*|brib\w*|shoplift\w*|burglar\w*|pickpocket\w*|smuggl\w*|"
                r"identity\s+theft|impersonat\w*|catfish\w*|skimm(?:er|ers|ing)|theft|robbery|"
                r"chop\s+shops?|deceptive|deceiv\w*|plagiari[sz]\w*|hot-?wir\w*|"
                r"lock[- ]?pick\w*|pick\w*\s+(?:a|the)\s+locks?|"
                r"black\s+market|organ\s+trafficking|racketeer\w*|loan\s*shark\w*|"
                r"money\s+mul(?:e|es|ing)|perjur\w*|espionage|insurance\s+fraud|wire\s+fraud|"
                r"tax\s+fraud|check\s+kiting|carding|chargeback\s+fraud|return\s+fraud|"
                r"dine\s+and\s+dash|pimp\w*|bootleg\w*|grave\s+robb\w*|kickbacks?|"
                r"falsif(?:y|ies|ying)|fabricat(?:e|es|ing)\s+(?:\w+\s+)?(?:data|evidence|results|"
                r"records|receipts|documents|reports?|expenses|timesheets)"
            )
        ),
    ),
    Rule(
        "violence",
        "violence",
        rx(
            words(
                r"murder\w*|homicid\w*|assassinat\w*|massacre\w*|genocid\w*|tortur\w*|kidnap\w*|"
                r"abduct\w*|maim\w*|dismember\w*|decapitat\w*|lynch\w*|mutilat\w*|"
                r"hit[- ]and[- ]run|mass\s+shoot\w*|school\s+shoot\w*|human\s+trafficking|"
                r"sex\s+trafficking|animal\s+cruelty|dog\s*fight\w*|cock\s*fight\w*|rape\w*|"
                r"sexual\s+assault\w*|(?:car|vehicle|truck)[- ]ramming(?:\s+attacks?)?|"
                r"ramming\s+attacks?|death\s+threats?|drawn\s+and\s+quartered|skinned\s+alive|"
                r"burned\s+alive"
            )
        ),
    ),
    Rule(
        "hate_harassment",
        "hate",
        rx(
            words(
                r"harass\w*|bull(?:y|ies|ied|ying)|cyberbull\w*|intimidat\w*|humiliat\w*|"
                r"demean\w*|hate\s+speech|hate\s+crimes?|defam\w*|libel\w*|slander\w*|gaslight\w*|"
                r"cyberstalk\w*|swatting|revenge\s+on|"
                r"sluts?|whores?|retard(?:s|ed)?|fag(?:s|got\w*)?|dykes?|trann(?:y|ies)|kikes?|"
                r"spics?|chinks?|wetbacks?|ragheads?|towelheads?|nigg\w+|coons?|gooks?|"
                r"beaners?|cunts?|"
                r"dehumani[sz]\w*"
            )
        ),
    ),
    Rule(
        "other",
        "illegal",
        rx(
            words(
                r"illegal(?:ly)?|illicit(?:ly)?|unlawful(?:ly)?|treason|arson|vandali[sz]\w*|"
                r"poach\w*|trespass\w*|sabotag\w*|hijack\w*"
            )
        ),
    ),
    Rule(
        "copyright",
        "copyright",
        rx(words(r"pirat(?:e|ed|ing)|torrent\w*|warez|keygen|cracked\s+(?:software|version|copy)")),
    ),
    Rule(
        "sexual_content",
        "sexual",
        rx(
            words(
                r"sextort\w*|sexual\s+(?:demands|favou?rs|advances)|sugar\s+bab(?:y|ies)|"
                r"sexual\s+relationship\s+with\s+(?:me|my\s+\w+|an?\s+\w+)|"
                r"sex\s+in\s+(?:[\w\s]{0,20})public|solicit\w*\s+(?:\w+\s+){0,2}(?:explicit|"
                r"nude|intimate|sexual)\w*|revenge\s+porn"
            )
        ),
    ),
    Rule(
        "misinformation",
        "misinfo",
        rx(
            words(
                r"disinformation|propaganda|"
                r"false\s+(?:information|claims?|news|narratives?|rumou?rs?)|fake\s+news"
            )
        ),
    ),
    Rule(
        "extremism",
        "extremism",
        rx(
            words(
                r"radicali[sz]\w*|militias?|overthrow\w*\s+(?:the\s+)?government|coup\s+d'?[eé]tat|"
                r"armed\s+(?:uprising|rebellion|insurrection|revolt)|insurrection\w*"
            )
        ),
    ),
    # Artefacts of fraud: asking how to spot a fake review is fine, asking for one is not.
    Rule(
        "fraud_deception",
        "fraud_artifact",
        rx(
            r"\bfake\s+(?:[\w'-]+\s+){0,2}(?:ids?|identit\w*|passports?|documents?|reviews?|"
            r"invoices?|prescriptions?|charit\w*|news|accounts?|profiles?|certificates?|"
            r"diplomas?|degrees?|transcripts?|money|currency|bills?|credentials?|login|"
            r"websites?|sites?|pages?|claims?|rumou?rs?|receipts?|tiktoks?|videos?|"
            r"emergenc\w*|injur\w*|insurance|stars|notes?|sick\s+notes?|letters?|excuses?|"
            r"signatures?|tickets?|permits?|licen[cs]es?|badges?|uniforms?|checks?|cheques?|"
            r"pay\s*stubs?|bank\s+statements?|references?|resumes?|cvs?|qualifications?|"
            r"alibis?|evidence|witness\w*|testimon\w*|data|results?|records?|stor(?:y|ies)|"
            r"articles?|reports?|stud(?:y|ies)|quotes?|headlines?|press\s+releases?|"
            r"screenshots?|polls?|statistics|surveys?|obituar(?:y|ies)|charity)\b",
            r"\b(?:avoid|get\s+out\s+of|skip|dodge|evade)\w*\s+(?:paying(?!\\s+too\\s+much)|the\s+fare|the\s+bill|"
            r"the\s+check|child\s+support|alimony|rent|a\s+(?:speeding\s+)?ticket)\b",
        ),
    ),
)

# --- harmful goals (strong: a victim, a target or an explicit wrongful aim) ---------------

_CONTENT = (
    r"(?:post|posts|tweets?|messages?|e-?mails?|letters?|articles?|blog(?:\s+post)?|essay|"
    r"speech|sermon|song|rap|poem|story|book|ad(?:vertisement)?|campaign|slogans?|"
    r"comments?|reviews?|video|tiktok|website|pamphlet|flyer|leaflet|manifesto|curriculum|"
    r"lecture|script|text|note|guide|tutorial|game|podcast|meme)"
)
_HARM_NOUN = (
    r"(?:violence|drug\s+use|drugs|alcohol|self[- ]harm|suicide|eating\s+disorders?|"
    r"anorexia|bulimia|crimes?|criminal\s+\w+|hate|hatred|terrorism|extremism|racism|"
    r"discrimination|oppression|dehumani[sz]ation|gangs?|risky\s+behaviou?r|cheating|"
    r"bullying|harassment|abuse|genocide|war\s+crimes|violent\s+\w+|illegal\s+\w+|"
    r"stereotypes?|"
    r"dangerous\s+\w+|misogyny|sexism|homophobia|antisemitism|xenophobia|white\s+supremacy|"
    r"nazism|fascism|slavery|child\s+labou?r|animal\s+cruelty|unsafe\s+\w+|addiction)"
)
_PRIVATE_ATTR = (
    r"(?:passwords?|pins?|passcodes?|log-?ins?|credentials|security\s+questions?|"
    r"social\s+security\s+numbers?|ssns?|tax\s+(?:records|returns)|medical\s+(?:records|"
    r"history|conditions?)|health\s+(?:records|conditions?)|diagnos[ie]s|browsing\s+history|"
    r"search\s+history|birth\s+certificates?|driver'?s\s+licen[cs]e(?:\s+number)?|"
    r"passport(?:\s+number)?|(?:mobile|cell|phone|telephone)\s+numbers?|(?:home\s+)?address|"
    r"e-?mail(?:\s+address)?|location|whereabouts|religio(?:n|us\s+beliefs?)|"
    r"political\s+(?:affiliation|views|beliefs|leanings?)|sexual\s+orientation|"
    r"sexual\s+history|salary|income|earnings|bank\s+(?:account|details|statements?)|"
    r"credit\s+card(?:\s+(?:number|details))?|criminal\s+record|messages|texts|dms|"
    r"chats?|photos|pictures|emails|inbox|accounts?|phone|laptop|computer|diary|"
    r"date\s+of\s+birth|birthday|ip\s+address|immigration\s+status|therapy\s+notes|"
    r"instagram|facebook|snapchat|whatsapp|icloud|gmail)"
)
_ATROCITY = (
    r"(?:holocaust|genocides?|ethnic\s+cleansing|slavery|slave\s+trade|apartheid|"
    r"massacres?|(?:nightclub\s+|mass\s+|school\s+)?shootings?|bombings?|terror(?:ist)?\s+"
    r"attacks?|9/11|september\s+11|hitler|nazis?|nazism|third\s+reich|stalin|pol\s+pot|"
    r"khmer\s+rouge|isis|al[- ]qaeda|taliban|invasions?|invade|trail\s+of\s+tears|"
    r"lynchings?|internment|residential\s+schools|pogroms?|gulags?|colonialism|jim\s+crow|"
    r"segregation|kkk|ku\s+klux\s+klan|war\s+crimes|atrocit(?:y|ies)|civil\s+rights\s+"
    r"movement|suffrage|mao|cultural\s+revolution|rwandan?|armenian|nanking|hiroshima|"
    r"nagasaki|columbine|sandy\s+hook|wounded\s+knee|my\s+lai|tiananmen|srebrenica|"
    r"holodomor|killing\s+fields|darfur|bosnian|uyghurs?|jonestown|oklahoma\s+city|"
    r"christchurch|ut[øo]ya|charleston|bataclan|lockerbie|beslan|auschwitz|concentration\s+"
    r"camps?|death\s+camps?|gas\s+chambers|kristallnacht|gestapo|mussolini|franco|pinochet|"
    r"idi\s+amin|saddam|bin\s+laden|unabomber|mcveigh|breivik|manson|bundy|dahmer|"
    r"inquisition|conquistadors|boko\s+haram|hamas|october\s+7|school\s+massacres?)"
)

NEGATIVE_TRAIT = (
    r"lazy|stupid|dumb|greedy|violent|dirty|smelly|criminals?|ugly|evil|inferior|worse|cheap|"
    r"untrustworthy|dishonest|terrorists?|thieves|rapists|aggressive|arrogant|incompetent|"
    r"weak|(?:too\s+)?emotional|irrational|hysterical|bad\s+(?:at|drivers|parents)|"
    r"less\s+(?:intelligent|capable|human)|uneducated|primitive|savages?|backward|disgusting|"
    r"annoying|useless|worthless|parasites?|vermin|animals|subhuman|a\s+burden|a\s+threat|"
    r"dangerous|untrustworthy|liars|pedophiles|perverts|freaks|mentally\s+ill|sick|ruining|"
    r"destroying|taking\s+over|invading|stealing|breeding|polluting|infesting|overrunning"
)
_OWNER = rf"(?:{_RELATION}|(?:business\s+)?rivals?|competitors?|opponents?)"

GOALS: tuple[Rule, ...] = (
    Rule(
        "violence",
        "harm_person",
        rx(
            rf"\b{VIOLENT_VERB}\s+{TARGET}",
            rf"\b{LETHAL_VERB}\s+{NAMED}\b",
            rf"\bpush(?:es|ing)?\s+{TARGET}\s+(?:off|down|into|in\s+front\s+of|out\s+of)\b",
            rf"\b{VIOLENT_VERB}\s+{POSSESSOR}\s+(?:\w+\s+){{0,2}}{BODY}\b",
            rf"\b{VIOLENT_VERB}\s+(?:a\s+|the\s+)?(?:human|dead|living)\s+{BODY}",
            rf"\b(?:set\w*\s+(?:fire\s+to|on\s+fire)|burn\w*\s+down|blow\w*\s+up|bomb\w*|"
            rf"demolish\w*|destroy\w*|vandali[sz]\w*|torch\w*|wreck\w*|break\w*\s+into|"
            rf"rob\w*|loot\w*|key\w*)\s+{POSSESSOR}\s+(?:\w+\s+){{0,2}}(?:house|home|car|"
            rf"apartment|flat|office|shop|store|business|property|garage|truck|boat)\b",
            r"\b(?:set\w*|burn\w*|blow\w*|bomb\w*|attack\w*|destroy\w*|obliterat\w*|"
            r"wip\w*\s+out|poison\w*|shoot\w*\s+up)\s+(?:up\s+|down\s+)?(?:a|an|the|my|our|"
            r"this|that|an\s+entire|the\s+entire|the\s+whole|a\s+whole|a\s+local|the\s+local)"
            r"\s+(?:\w+\s+)?(?:city|town|village|country|nation|population|hospital|school|"
            r"church|mosque|synagogue|temple|stadium|concert|festival|mall|market|subway|"
            r"airport|train|plane|bus|power\s+(?:plant|grid)|water\s+supply|reservoir|"
            r"dam|bridge|embassy|police\s+station|army\s+base|military\s+base|government\s+"
            r"building|courthouse|parliament|skyscrapers?|office\s+building|crowd)\b"
            r"(?!\s+(?:game|level|map|mission))",
            r"\b(?:inflict\w*|caus\w*)\s+(?:maximum\s+|serious\s+|physical\s+|severe\s+|"
            r"the\s+most\s+)?(?:pain|harm|injur(?:y|ies)|damage|suffering|casualties|chaos|"
            r"panic|deaths?)\b",
            r"\b(?:plan|planning|plot\w*|arrange)\s+(?:\w+\s+){0,2}(?:someone's|his|her|their|"
            r"my\s+\w+'s)\s+(?:death|murder|killing|assassination|disappearance)\b",
            r"\b(?:get\s+away\s+with|cover\s+up)\s+(?:a\s+|the\s+)?(?:murder|killing|crime|"
            r"hit[- ]and[- ]run|assault)\b",
            r"\b(?:incit\w*|provok\w*|start\w*|instigat\w*)\s+(?:a\s+)?(?:riots?|violence|"
            r"hate\s+crimes?|attacks?|war|unrest|lynching|pogrom)\b",
            r"\b(?:disabl\w*|tamper\w*\s+with|cut\w*|sabotag\w*)\s+(?:the\s+|a\s+|an\s+|"
            r"someone's\s+|my\s+\w+'s\s+)?(?:\w+\s+){0,2}(?:brakes?|brake\s+lines?|"
            r"airbags?|steering|smoke\s+detectors?|life\s+support|insulin\s+pump|pacemaker|"
            r"elevator|seat\s*belts?|gas\s+line)\b",
            r"\bhurt\w*\s+(?:others|someone|people)\b",
            r"\b(?:join|recruit\w*\s+(?:for|into)|joining)\s+(?:a\s+)?gangs?\b",
        ),
    ),
    Rule(
        "self_harm",
        "self_harm_method",
        rx(
            rf"\b{VIOLENT_VERB}\s+(?:myself|yourself|oneself|themselves|ourselves)\b",
            rf"\b{VIOLENT_VERB}\s+my\s+(?:own\s+)?(?:\w+\s+)?{BODY}",
            r"\b(?:end|take)\s+(?:my|your|one's|their)\s+(?:own\s+)?life\b",
            r"\b(?:want|wanna|going|how|ways?|way|best|easiest|quickest|painless\w*|take|"
            r"what)\s+(?:[\w']+\s+){0,6}to\s+die\b",
            r"\b(?:die|go\s+out|end\s+it)\s+like\b",
            r"\b(?:end\s+it\s+all|not\s+wake\s+up|commit\s+suicide|kill\s+myself)\b",
            r"\b(?:conceal|hide)\w*\s+(?:my\s+)?(?:cuts?|scars?|wounds?|self[- ]harm)\b",
            r"\b(?:starv\w*|purg\w*)\s+myself\b|\bstop\s+eating\s+(?:entirely|completely)\b",
        ),
    ),
    Rule(
        "chemical_biological",
        "cbrn_goal",
        rx(
            r"\b(?:spread|release|disperse|aerosoli[sz]e|weaponi[sz]e|introduce|culture|"
            r"cultivate)\w*\s+(?:a\s+|the\s+|an\s+)?(?:\w+\s+)?(?:virus|viruses|disease|"
            r"pathogens?|bacteria|toxins?|agents?|spores|infection|plague|cholera|anthrax)\b",
            r"\bmore\s+(?:deadly|lethal|transmissible|contagious|virulent|infectious)\b",
            r"\b(?:antibiotic|drug|multi-?drug)[- ]resistant\b|\bresistant\s+to\s+antibiotics\b",
            r"\bmix\w*\s+bleach\s+(?:and|with)\s+(?:ammonia|vinegar|rubbing\s+alcohol|acids?|"
            r"hydrogen\s+peroxide)\b",
            r"\b(?:tamper\w*\s+with|contaminat\w*|poison\w*)\s+(?:a\s+|the\s+|an\s+)?"
            r"(?:\w+'s\s+|city's\s+)?(?:water\s+supply|reservoir|food\s+supply|food|drinks?|"
            r"medication|medicine|baby\s+formula)\b",
            rf"\binfect\w*\s+{TARGET}",
            r"\b(?:compromise|breach)\w*\s+(?:a\s+|the\s+)?(?:bsl-?[34]|bio\w*)\s+(?:lab\w*)\b",
        ),
    ),
    Rule(
        "sexual_minors",
        "minors_sexual",
        rx(
            r"\bchild\s+(?:porn\w*|sexual\s+abuse\s+material|sex\w*|erotica)\b",
            r"\bcsam\b",
            r"\bpa?edophil\w*",
            r"\b(?:molest\w*|groom\w*)\s+(?:a\s+|the\s+|my\s+|young\s+|underage\s+)?(?:\w+\s+)?"
            r"(?:child(?:ren)?|kids?|minors?|teens?|girls?|boys?|students?|daughters?|sons?|"
            r"niece|nephew)\b",
            r"\b(?:sexual\w*|sex|nude|naked|erotic\w*|explicit|intimate)\b[^.?!]{0,60}"
            r"\b(?:minors?|child(?:ren)?|kids?|underage|preteens?|\d{1,2}[- ]year[- ]olds?|"
            r"schoolgirls?|schoolboys?|teens?|teenagers?)\b",
            r"\b(?:minors?|child(?:ren)?|kids?|underage|\d{1,2}[- ]year[- ]olds?)\b[^.?!]{0,60}"
            r"\b(?:sexual\w*|sex|nude|naked|erotic\w*|explicit)\b",
            r"\b(?:[1-9]|1[0-5]|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen)[- ]"
            r"year[- ]old\b[^?]{0,160}\b(?:trust\s+me|(?:doesn't|won't|not)\s+tell|secret|"
            r"alone\s+with|get\s+close)\b",
        ),
    ),
    Rule(
        "cyber",
        "cyber_goal",
        rx(
            r"\b(?:hack\w*|break\w*|get\w*|gain\w*|brut\w*)\s+(?:in)?(?:to|into)\s+(?:a\s+|the\s+|"
            r"an\s+|someone's\s+|my\s+\w+'s\s+|his\s+|her\s+|their\s+)?(?:\w+\s+){0,2}"
            r"(?:systems?|network|accounts?|database|computer|server|e-?mail|phone|website|"
            r"wi-?fi|router|camera|webcam|bank\s+account|icloud|instagram|facebook)\b",
            r"\b(?:gain\w*|get\w*|obtain\w*)\s+(?:unauthori[sz]ed\s+)?access\s+to\s+(?:a\s+|"
            r"the\s+|someone's\s+|her\s+|his\s+|their\s+|my\s+\w+'s\s+|other\s+people's\s+)",
            r"\b(?:unauthori[sz]ed|illegal(?:ly)?)\s+access\w*\b",
            r"\b(?:programs?|scripts?|code|bots?|tools?|apps?|software|algorithms?|extensions?|"
            r"macros?|virus|worm)\s+(?:that|which|to)\s+(?:can\s+)?(?:be\s+used\s+to\s+|be\s+)?"
            r"(?:automatically\s+|secretly\s+|permanently\s+|silently\s+)?(?:steal|spy|spies|"
            r"record|delete|corrupt|wipe|trick|harvest|target|collect|"
            r"scrape|bypass|disable|infect|encrypt|exploit|crack|hijack|spread|sends?\s+spam|"
            r"spam|flood|launch|cheat|manipulat|track|monitor|inject|evade|ddos|brute|"
            r"posts?\s+inflammatory|impersonat|mine)\w*",
            r"\b(?:crack|bypass|break|circumvent|disable|defeat|evade)\w*\s+(?:the\s+|a\s+|an\s+)?"
            r"(?:[\w-]+\s+){0,3}(?:passwords?|encryption|authentication|2fa|two[- ]factor|"
            r"captchas?|firewalls?|antivirus|anti-?virus|edr|wafs?|input\s+validation|(?:content\s+)?"
            r"moderation(?:\s+system)?|spam\s+filters?|security\s+"
            r"(?:systems?|measures|software|controls|cameras?)|drm|paywalls?|licen[cs]e\s+"
            r"checks?|detection|content\s+filters?|alarms?)\b",
            r"\b(?:launch|perform|carry\s+out|conduct|execute)\w*\s+(?:a\s+)?(?:\w+\s+)?"
            r"(?:cyber\s*attacks?|ddos|attacks?\s+on)\b",
            r"\b(?:exfiltrat\w*|wiretap\w*)\b",
            r"\b(?:develop|creat|writ|build|design|mak|engineer|cod|program)\w*\s+(?:a|an|"
            r"some|the)\s+(?:[\w-]+\s+)?(?:virus|worm|trojan|malware|ransomware|keylogger|"
            r"rootkit|botnet|spyware|exploit|backdoor)\b",
            r"\b(?:using|use|exploit\w*)\s+(?:the\s+)?(?:\w+\s+){0,4}vulnerabilit(?:y|ies)\b",
        ),
    ),
    Rule(
        "privacy",
        "privacy_goal",
        rx(
            rf"\bmy\s+{MODIFIERS}{_OWNER}'s?\s+(?:\w+\s+){{0,2}}{_PRIVATE_ATTR}\b",
            rf"\b(?:someone|somebody|a\s+stranger|a\s+person|other\s+people|others|people)'s?\s+"
            rf"(?:\w+\s+){{0,2}}{_PRIVATE_ATTR}\b",
            rf"\b(?:how\s+much|what)\s+(?:money\s+)?(?:does|do|is)\s+my\s+{MODIFIERS}"
            rf"{_RELATION}\s+(?:earn|make|paid|vote|believe|weigh)\b",
            rf"\bwhere\s+(?:does|do|is)\s+my\s+{MODIFIERS}{_RELATION}\s+(?:live|stay|work)\b",
            r"\b(?:secretly|covertly|discreetly|without\s+(?:them|him|her|anyone)\s+knowing)\s+"
            r"(?:\w+\s+){0,2}(?:record|monitor|track|read|watch|film|follow|listen|install|"
            r"spy|photograph)\w*",
            r"\b(?:record|monitor|track|read|watch|film|spy\s+on|install\s+\w+\s+on)\w*\s+"
            r"(?:\w+\s+){0,3}(?:without\s+(?:their|his|her|them|the\s+\w+'s)\s+(?:\w+\s+)?"
            r"(?:knowledge|knowing|consent|permission))\b",
            r"\b(?:install|put|hide|plant)\w*\s+(?:a\s+|an\s+|some\s+)?(?:\w+\s+){0,2}on\s+"
            r"(?:my\s+\w+'s|his|her|their|someone's)\s+(?:\w+\s+)?(?:phone|computer|laptop|"
            r"car|device|desktop)\b",
            r"\b(?:doxx?\w*|stalk\w*|spy\w*\s+on)\b",
            r"\b(?:hidden|secret|spy)\s+cameras?\b",
            r"\bwithout\s+(?:their|his|her|them|anyone|(?:the\s+)?users?'?s?|people's|"
            r"customers?'?s?)\s+(?:\w+\s+)?(?:knowledge|knowing|"
            r"consent|permission|noticing|finding\s+out)\b",
            r"\b(?:leak|share|post|spread|distribute)\w*\s+(?:my\s+\w+'s|his|her|their|"
            r"someone's)\s+(?:\w+\s+)?(?:explicit|nude|intimate|private)\b",
        ),
    ),
    Rule(
        "fraud_deception",
        "fraud_goal",
        rx(
            r"\bsteal\w*\s+(?:them|it|one|some)\b|\bsteal\w*\s+(?:[\w'-]+\s+){0,3}(?:money|cash|"
            r"cars?|credit\s+card\w*|identit\w*|"
            r"data|information|info|passwords?|credentials|cookies|tokens?|accounts?|"
            r"crypto\w*|bitcoin|from|goods|items|merchandise|packages?|jewel\w*|wallets?|"
            r"phones?|playstation|electronics|(?:a|an|the)\s+\w+)",
            r"\b(?:trick|deceiv|dup|con|lure|manipulat|pressur|coerc|blackmail|scar|fool)\w*\s+"
            r"(?:\w+\s+){0,3}(?:into|to\s+(?:reveal|give|send|share|click|pay|sign|download|"
            r"install))\b",
            r"\b(?:manipulat|gaslight)\w*\s+(?:\w+\s+){0,2}(?:people|someone|users|customers|"
            r"voters|victims|him|her|them|my\s+\w+|partners?|children|employees|others|"
            r"(?:customer\s+)?ratings|reviews|financial\s+data|stock|market|prices?|elections?)\b",
            r"\b(?:lie|lying)\s+to\s+(?:the|my|a|an)\s+(?:\w+\s+)?(?:police|hiring|employer|"
            r"interviewer|insurance|insurer|doctor|court|judge|landlord|bank|irs|customs|"
            r"officer|investigators?|auditors?|manager)\b",
            r"\bfalsely\s+(?:accus|claim|report|stat)\w*",
            r"\blie\w*\s+(?:on|about)\s+(?:my|the|a|an)\s+(?:\w+\s+)?(?:resume|cv|application|"
            r"taxes|tax\s+return|form|insurance|claim|age|income|experience|credentials|"
            r"degree|criminal\s+record)\b|\bby\s+lying\b",
            r"\bwithout\s+paying\b|\bsteal\w*\s+(?:wi-?fi|cable|electricity|internet)\b",
            r"\b(?:evad\w*|cheat\w*\s+on|avoid\w*\s+paying)\s+(?:my\s+|the\s+)?taxes\b",
            r"\b(?:evad\w*|bypass\w*|sneak\w*\s+(?:past|through))\s+(?:\w+\s+)?(?:airport\s+)?"
            r"(?:security|customs|border\s+control|checkpoints?|tsa|metal\s+detectors?)\b",
            r"\b(?:fool|cheat|beat|trick|pass|fake|evade)\w*\s+(?:a\s+|the\s+|my\s+)?"
            r"(?:breathalyz\w*|drug\s+tests?|polygraph|lie\s+detector|background\s+checks?|"
            r"urine\s+tests?|plagiarism\s+checkers?|proctor\w*)\b",
            r"\bcheat\w*\s+(?:on|in)\s+(?:\w+\s+){0,2}(?:exams?|tests?|quizz?e?s?|finals|"
            r"assignments?)\b",
            r"\b(?:without\s+(?:getting\s+)?(?:caught|detected|detection|noticed|traced|"
            r"arrested|into\s+trouble|in\s+trouble|leaving\s+(?:a\s+)?(?:trace|evidence))|"
            r"(?:destroy\w*|hid\w*|get\w*\s+rid\s+of|tamper\w*\s+with)\s+(?:the\s+)?evidence|"
            r"cover\s+(?:up|my\s+tracks))\b",
            r"\b(?:file|submit|make)\w*\s+(?:a\s+)?(?:fake|false|fraudulent|bogus)\b",
            r"\b(?:multiple|many|bulk|hundreds\s+of|thousands\s+of|fake)\s+(?:\w+\s+)?"
            r"(?:accounts|profiles|reviews|likes|followers)\b",
            r"\bartificially\s+(?:inflate|boost)\b|\bbot\s+(?:network|farm)s?\b",
            r"\b(?:convinc|persuad|trick|get)\w*\s+(?:\w+\s+){0,2}(?:to|that)\s+(?:\w+\s+){0,3}"
            r"(?:enabl|click|download|install|open|disabl|run)\w*\s+(?:[\w-]+\s+){0,2}(?:macros?|"
            r"links?|attachments?|files?|software|antivirus|security|programs?)\b",
            r"\bappears?\s+to\s+come\s+from\b|\bspoof\w*",
            r"\b(?:looks?|appears?)\s+(?:exactly\s+|just\s+)?like\s+(?:[\w'-]+\s+){0,3}(?:website|"
            r"web\s*site|login|page|site|app|e-?mail)\b",
            r"\brig(?:s|ged|ging)?\s+(?:the\s+)?(?:[\w-]+\s+)?(?:votes?|vote-by-mail|elections?|"
            r"ballots?|polls?)\b",
            r"\b(?:avoid|evad|escap)\w*\s+(?:detection|getting\s+caught|arrest)\b",
            r"\b(?:break\w*|sneak\w*)\s+(?:in)?(?:to|into)\s+(?:a|an|the|my\s+\w+'s|someone's|"
            r"his|her)\s+(?:\w+\s+)?(?:house|home|car|apartment|store|shop|bank|vault|"
            r"building|office|facility)\b",
            r"\b(?:reuse|copy|steal)\w*\s+[^.?!]{0,40}\bwithout\s+(?:detection|credit|"
            r"attribution|permission)\b",
            r"\bcommit\w*\s+(?:a\s+|an\s+)?(?:\w+\s+)?(?:crimes?|fraud|treason|arson|"
            r"robbery|burglary|felon(?:y|ies)|identity\s+theft|theft|perjury|atrocities)\b",
            r"\b(?:market|advertis|present|pass)\w*\s+(?:\w+\s+){0,3}as\s+(?:having|being)\b"
            r"[^.?!]{0,60}\bwithout\s+actually\b",
            r"\bwithout\s+actually\s+(?:being|having|holding|earning)\b",
            r"\bpretend\w*\s+to\s+be\s+(?:a\s+|an\s+)?(?:doctor|nurse|police|officer|lawyer|"
            r"irs|bank|official|agent|employee|representative)\b",
            r"\b(?:pump\s+and\s+dump|wash\s+trad\w*|front[- ]run\w*)\b",
            r"\bexploit\w*\s+(?:\w+\s+)?(?:people|populations?|individuals|workers|children|"
            r"elderly|immigrants|victims|customers|users|insecurities|fears|loneliness)\b",
            r"\bhot-?wir\w*\s+(?:a|the|an|my\s+\w+'s|someone's)\s+(?:\w+\s+)?(?:car|vehicle|truck|"
            r"motorcycle|bike)\b",
            r"\bsell\w*\s+(?:\w+\s+){0,2}(?:stolen|counterfeit|fake)\b",
            rf"\brob(?:s|bing)?\s+(?:{TARGET}|(?:a|an|the|my|this|that)\s+(?:\w+\s+)?(?:bank|"
            rf"casino|store|shop|house|home|jewel\w*|gas\s+station|liquor\s+store|pharmacy|"
            rf"museum|train|armou?red\s+(?:car|truck)|atm|vault|mansion|church|restaurant))\b",
        ),
    ),
    Rule(
        "drugs",
        "drugs_goal",
        rx(
            r"\b(?:buy|sell|get|obtain|score|find|grow|cook|make|produce|synthesi[sz]e|"
            r"smuggle|traffic|deal)\w*\s+(?:some\s+|my\s+own\s+|more\s+)?(?:\w+\s+)?"
            r"(?:weed|pot|marihuana|marijuana|cannabis|coke|cocaine|crack|meth|heroin|fentanyl|drugs|"
            r"pills|steroids|testosterone|opioids|oxy|xanax|adderall|lsd|mdma|shrooms|"
            r"ketamine|molly|acid|narcotics)\b",
            r"\b(?:get|getting|stay|staying)\s+high\b",
            r"\b(?:use|using|take|taking|snort\w*|inject\w*|smok\w*)\s+(?:\w+\s+)?(?:meth|"
            r"methamphetamine|cocaine|heroin|fentanyl|crack|ketamine|mdma|lsd|amphetamines?|"
            r"adderall|opioids)\s+(?:to|for|so|and)\b",
            r"\b(?:without\s+a\s+prescription|prescription\s+(?:drugs|pills|amphetamines|"
            r"opioids)\s+(?:to|for)\s+(?:get\s+high|recreational))\b",
            r"\b(?:persuad|convinc|encourag|get|pressur|trick|lure)\w*\s+(?:a\s+|my\s+|the\s+|"
            r"young\s+)?(?:\w+\s+)?(?:teen\w*|child(?:ren)?|kids?|minors?|students?|friends?|"
            r"people|someone)\s+(?:in)?to\s+(?:start\s+|try\s+)?(?:using\s+|taking\s+|"
            r"doing\s+)?(?:drugs|huff|heroin|meth|cocaine|vap|smok|drink|alcohol|pills)\w*",
        ),
    ),
    Rule(
        "weapons",
        "weapons_goal",
        rx(
            r"\b(?:make|build|assemble|3d[- ]print|manufactur\w*|convert|modify|craft|"
            r"improvis\w*)\w*\s+(?:a\s+|an\s+|my\s+own\s+|your\s+own\s+)?(?:\w+\s+){0,2}"
            r"(?:guns?|firearms?|rifles?|pistols?|silencers?|suppressors?|shivs?|shanks?|"
            r"weapons?|auto\s+sears?|full[- ]auto|fully\s+automatic|zip\s+guns?)\b",
            r"\b(?:ghost|untraceable|3d[- ]printed|unregistered)\s+(?:guns?|firearms?|weapons?)\b",
            r"\bbuy\w*\s+(?:a\s+)?(?:gun|firearm|weapon)s?\s+(?:without|illegally|"
            r"anonymously|off\s+the\s+books)\b",
        ),
    ),
    Rule(
        "explosives",
        "explosives_goal",
        rx(
            r"\b(?:make|build|assemble|construct|manufactur\w*|craft|improvis\w*|detonat\w*|"
            r"plant|hide|set\s+off)\w*\s+(?:a\s+|an\s+|my\s+own\s+)?(?:\w+\s+){0,2}"
            r"(?:bombs?|explosives?|ieds?|grenades?|detonators?|molotov\w*|pipe\s+bombs?|"
            r"car\s+bombs?|incendiar\w*|napalm|thermite)\b",
            r"\b(?:easy|easiest|best|how)\b[^.?!]{0,40}\bto\s+(?:blow\s+up|bomb|level)\b",
            r"\b(?:cause|create|trigger|set\s+off)\w*\s+(?:a\s+|an\s+)?(?:\w+\s+)?(?:explosions?|"
            r"blasts?)\b",
        ),
    ),
    Rule(
        "hate_harassment",
        "harass_goal",
        rx(
            rf"\b(?:bull(?:y|ies|ied|ying)|harass\w*|humiliat\w*|intimidat\w*|threaten\w*|"
            rf"insult\w*|mock\w*|shame\w*|troll\w*|ridicul\w*|demean\w*|belittl\w*|"
            rf"degrad\w*|call\w*\s+(?:them|him|her)\s+out)\s+(?:\w+\s+)?{TARGET}",
            r"\b(?:sexually\s+suggestive|make\s+(?:her|him|them)\s+(?:really\s+|very\s+)?"
            r"uncomfortable)\b",
            r"\bthreatening\s+(?:\w+\s+)?(?:letter|message|e-?mail|note|post|text|voicemail|"
            r"call)s?\b",
            r"\b(?:feel|be)\s+(?:unsafe|unwelcome|afraid|scared|threatened)\b",
            r"\b(?:their|his|her|the\s+victim's)\s+own\s+fault\b",
            r"\b(?:slogans?|jokes?|insults?|memes?|chants?|messages?|posts?)\s+(?:to\s+)?"
            r"(?:promot\w*|spread\w*|mocking|against|about\s+why)\s+(?:\w+\s+)?(?:hate|"
            r"hatred|immigrants|jews|muslims|women|gays|minorities)\b",
            r"\bspread\w*\s+(?:\w+\s+){0,2}(?:hate|hatred|anti-?semitic|racist|homophobic|"
            r"hateful|bigoted)\b",
            r"\b(?:express|promote|spread|share)\w*\s+(?:my\s+)?(?:homophobic|racist|sexist|"
            r"anti-?semitic|transphobic|xenophobic|bigoted|misogynistic)\b",
            r"\bconsent\s+is\s+(?:\w+\s+)?(?:unnecessary|optional|not\s+(?:needed|necessary|"
            r"required))\b",
            rf"\b(?:why|reasons?)\b[^.?!]{{0,40}}\b(?:is\s+it|it\s+is|it's)\s+(?:best|right|good|"
            rf"better|fair|justified|a\s+good\s+idea|okay|ok|acceptable)\s+(?:for|that)\s+"
            rf"{GROUP}",
        ),
    ),
    Rule(
        "misinformation",
        "misinfo_goal",
        rx(
            r"\b(?:modify|edit|rewrite|change|alter|tweak|revise|add\s+\w+\s+to)\w*\s+(?:\w+\s+)"
            r"{0,4}(?:text|article|paragraphs?|passage|wikipedia|list|section|description|"
            r"entry|page|post)\b[^.?!]{0,80}\b(?:suggest|imply|make\s+it\s+(?:seem|look|appear)|"
            r"persuade|convince|claim|argue|appear)\w*",
            r"\b(?:persuade|convince)\s+(?:the\s+)?readers\s+that\b",
            r"\b(?:to\s+)?(?:suggest|imply|make\s+it\s+seem)\s+(?:like\s+)?that\s+"
            r"(?-i:[A-Z])\w+[^.?!]{0,60}\b(?:was|were|is)\s+(?:involved|complicit|responsible|"
            r"behind|guilty|a\s+criminal|a\s+front|convicted|suspected)\b",
            r"\b(?:spread|create|write|post|generate|make)\w*\s+(?:\w+\s+){0,2}(?:false|"
            r"misleading|fake|fabricated)\s+(?:\w+\s+)?(?:information|rumou?rs?|claims?|news|"
            r"stories|stats|statistics|evidence|quotes?|narratives?)\b",
            r"\b(?:persuasive|convincing|misleading)\s+(?:\w+\s+){0,2}(?:article|essay|post|"
            r"blog|argument|speech|tweets?|advertisement|message|email|text|sermon)\b"
            r"[^.?!]{0,80}\b(?:that|to|claiming|arguing|about|why)\b",
            r"\b(?:arguing|claiming|argue|claim|prove|show|convince\s+\w+|persuad\w+\s+\w+)\s+"
            r"that\s+[^.?!]{0,80}\b(?:was|were|is|are)\s+(?:a\s+|an\s+)?(?:complete\s+|total\s+|"
            r"actually\s+|really\s+)?(?:fabricat\w*|lie|hoax|myth|fake|staged|"
            r"exaggerated|wrong\s+and\s+unnecessary|unnecessary|not\s+real|never\s+happened|"
            r"a\s+good\s+thing|justified|rigged|stolen)\b",
            r"\b(?:holocaust|genocide|massacre|moon\s+landings?|climate\s+change|vaccines?|"
            r"covid(?:-19)?|pandemic|evolution|shooting|9/11)\s+"
            r"(?:was\s+|is\s+|were\s+)?(?:a\s+)?(?:hoax|fake[ds]?|fabricat\w*|never\s+happened|myth|"
            r"exaggerated|staged|cause\w*\s+autism)\b",
            r"\b(?:vaccines?\s+cause|election\s+was\s+(?:stolen|rigged)|(?:were|was)\s+rigged)\b",
        ),
    ),
    Rule(
        "copyright",
        "copyright_goal",
        rx(
            r"\b(?:lyrics|verses?|chorus)\s+(?:of|to|from)\b",
            r"\b(?:long|full|entire|complete|whole|lengthy|verbatim|first|opening|last)\s+"
            r"(?:\w+\s+){0,2}(?:passages?|text|chapters?|transcripts?|script|pages?|"
            r"lyrics|sections?)\s+(?:of|from)\b",
            r"\bpassages?\s+from\s+[\"'\u201c\u2018]",
            r"\b(?:reproduce|transcribe|print|output|copy|recite)\s+(?:the\s+)?(?:full\s+|"
            r"entire\s+|complete\s+|whole\s+)?(?:text|lyrics|chapter|book|article|script)\b",
        ),
    ),
    Rule(
        "other",
        "promote_harm",
        rx(
            rf"\b(?:promot|encourag|glorif|incit|advocat|normali[sz]|celebrat|romantici[sz]|"
            rf"justif|endors|condon)\w*\s+(?:the\s+)?(?:use\s+of\s+|acts?\s+of\s+|"
            rf"(?:\w+\s+){{0,3}}to\s+(?:commit|engage\s+in|use|try|join)\s+)?{_HARM_NOUN}",
            r"\b(?:encourag|persuad|convinc|pressur|coerc|lure|entic|incit|urg)\w*\s+"
            r"(?:\w+\s+){0,3}(?:to|into)\s+(?:commit|engage|join|try|start|eat|drink|"
            r"ingest|swallow|feed|huff|cut|starve|harm|hurt|kill|attack|steal|take|use|"
            r"experiment|skip|stop|drive|jump|play\s+with)\w*\b[^.?!]{0,60}",
            rf"\b{_CONTENT}\s+(?:that\s+|which\s+)?(?:promot|encourag|glorif|incit|advocat|"
            rf"normali[sz]|celebrat|spread|justif|endors)\w*\b",
            r"\b(?:start|found|lead|run)\s+(?:my\s+own\s+|a\s+)?cult\b|\bworship\s+me\b",
            r"\btarget\w*\s+vulnerable\s+(?:individuals|people|users|groups)\b",
            r"\bcommit\s+crimes\b|\billegal\s+\w+[- ]?hunting\b",
            r"\b(?:evad|escap|elud|outrun|outsmart|los)\w*\s+(?:the\s+)?(?:police|cops|law\s+"
            r"enforcement|authorities|feds|fbi)\b",
            r"\b(?:prevent|stop|keep|discourag)\w*\s+(?:\w+\s+){1,5}from\s+(?:talking|speaking|"
            r"reporting|testifying|telling|calling|contacting|going)\s+(?:to\s+)?(?:the\s+)?"
            r"(?:police|law\s+enforcement|authorities|cops|anyone|a\s+lawyer|social\s+services)\b",
            r"\b(?:prevent|stop|keep|bar|ban|discourag)\w*\s+(?:\w+\s+){1,6}from\s+"
            r"(?:voting|entering|working|living|renting|buying|joining)\b",
            r"\b(?:screen|filter|reject|hire|fire|evict|deny|refuse)\w*\s+(?:\w+\s+){0,3}"
            r"(?:based\s+on|because\s+of)\s+(?:their\s+|his\s+|her\s+)?(?:race|religion|"
            r"ethnicity|gender|sexual\s+orientation|skin\s+colou?r|nationality|disability|"
            r"age|pregnancy)\b",
            r"\b(?:feel|be)\s+unwelcome\b|\bharsher\s+(?:sentences|punishments?|treatment)\b",
            r"\b(?:cover|hide)\s+up\s+(?:all\s+)?(?:our|my|the)\s+(?:\w+\s+)?(?:mistakes|"
            r"violations|problems|crimes?|abuse|leaks?|accident)\b",
            r"\bwith\s+(?:all\s+)?(?:the\s+)?(?:ingredients|materials)\s+and\s+quantities\b",
        ),
    ),
    Rule(
        "violence",
        "harm_person_more",
        rx(
            rf"\b(?:spik|drug|lac|poison|dos)\w*\s+{POSSESSOR}\s+(?:\w+\s+)?(?:drinks?|food|"
            rf"coffee|tea|beer|wine|water|meals?|cocktail|soda)\b",
            r"\bso\s+(?:that\s+)?(?:she|he|they)\s+(?:passes|pass|passed)\s+out\b",
            rf"\bknock\w*\s+{TARGET}\s+(?:out|unconscious|senseless|cold|down)\b",
            rf"\b(?:hold|press|put|keep)\w*\s+(?:a\s+|the\s+|my\s+)?(?:pillow|bag|plastic\s+bag|"
            rf"hand|rag|cloth|towel)\s+over\s+{POSSESSOR}\s+(?:face|mouth|nose|head)\b",
            rf"\b(?:get|make|keep)\w*\s+{TARGET}\s+(?:addicted|hooked|dependent)\b",
            rf"\bgiv\w*\s+{TARGET}\s+(?:a\s+)?(?:headshot|beating|black\s+eye|concussion|"
            rf"bloody\s+nose|broken\s+\w+|overdose|lethal\s+\w+)\b",
            rf"\bmake\s+{TARGET}\s+(?:disappear|vanish|go\s+away\s+(?:for\s+good|forever|"
            rf"permanently)|suffer|bleed|scream|beg)\b",
            r"\b(?:disappear|vanish|gone)\s+(?:for\s+good|forever|permanently|without\s+a\s+trace)\b",
            r"\b(?:derail|crash|sink|hijack|sabotag)\w*\s+(?:a\s+|the\s+|an\s+)?(?:\w+\s+)?"
            r"(?:trains?|planes?|aircraft|flights?|ships?|ferr(?:y|ies)|buses|bus|subway|metro|"
            r"cars?|vehicles?|elevators?|pipelines?|power\s+grid|dam)\b",
            r"\b(?:blow\w*\s+up|bomb\w*|firebomb\w*|set\w*\s+(?:fire\s+to|on\s+fire|alight)|"
            r"burn\w*\s+down|torch\w*|detonat\w*\s+\w+\s+(?:in|at|under))\s+(?:a\s+|an\s+|the\s+|"
            r"this\s+|that\s+|someone's\s+|my\s+\w+'s\s+|his\s+|her\s+|their\s+)?(?:\w+\s+)?"
            r"(?:house|home|building|car|truck|bus|office|store|shop|restaurant|bar|club|church|"
            r"mosque|synagogue|temple|school|hospital|clinic|bank|station|apartment|flat|"
            r"garage|barn|factory|warehouse|embassy|courthouse|police\s+car|vehicle)s?\b",
            r"\bmaximi[sz]\w*\s+(?:the\s+)?(?:casualties|deaths|damage|harm|injuries|"
            r"(?:death|body)\s+count|carnage|bloodshed|suffering|pain|fatalities)\b",
            rf"\b(?:take|get|exact|seek)\w*\s+revenge\s+(?:on|against)\s+{TARGET}|"
            rf"\bget\s+back\s+at\s+{TARGET}",
            rf"\b(?:make|get|convince|encourage|push|tell|drive|persuade|pressure)\w*\s+{TARGET}"
            rf"\s+(?:to\s+|into\s+)?(?:want\s+to\s+)?(?:kill|hurt|harm|cut|starv)\w*\s+"
            rf"(?:him|her|them|your)sel(?:f|ves)\b|\bkys\b",
            r"\bin\s+real\s+life\b[^.?!]{0,40}\b(?:kill|murder|hurt|shoot|stab)\w*|"
            r"\b(?:kill|murder|hurt|shoot|stab)\w*\b[^.?!]{0,60}\bin\s+real\s+life\b",
        ),
    ),
    Rule(
        "privacy",
        "privacy_more",
        rx(
            rf"\b{_PRIVATE_ATTR}\s+of\s+my\s+{MODIFIERS}{_OWNER}\b",
            rf"\b(?:what|which)\s+(?:\w+\s+)?(?:medications?|meds|prescriptions?|pills|"
            rf"diseases?|illness\w*|conditions?|{_PRIVATE_ATTR})\s+(?:is|are|does|do|did|has|"
            rf"have)\s+my\s+{MODIFIERS}{_OWNER}\b",
            rf"\b(?:find|figure|work)\w*\s+out\s+(?:where|who|what|when|whom)\s+(?:my\s+"
            rf"{MODIFIERS}{_OWNER}|someone|a\s+stranger|this\s+(?:person|girl|guy|woman|man))\b",
            rf"\b(?:locat|track\w*\s+down|hunt\w*\s+down|find)\w*\s+(?:where\s+)?my\s+"
            rf"{MODIFIERS}(?:ex|ex-\w+|stalker|victim)\b",
            rf"\bwhere\s+my\s+{MODIFIERS}{_OWNER}\s+(?:lives|works|stays|sleeps|goes)\b",
            rf"\b{_PRIVATE_ATTR}\s+(?:to|for|on)\s+my\s+{MODIFIERS}{_OWNER}'s?\b",
            rf"\b(?:see|read|know|check|find\s+out|monitor|spy\s+on)\s+(?:who|what|whom)\s+my\s+"
            rf"{MODIFIERS}{_OWNER}\s+(?:is\s+|has\s+been\s+)?(?:texting|messaging|talking|"
            rf"calling|emailing|searching|chatting|dating|seeing|sleeping|doing\s+online)\b",
        ),
    ),
    Rule(
        "hate_harassment",
        "harass_more",
        rx(
            rf"\bruin\w*\s+{POSSESSOR}\s+(?:\w+\s+)?(?:reputation|life|career|marriage|"
            rf"business|credit|relationship|name)\b",
            r"\b(?:made[- ]up|invented|fabricated|fake)\s+(?:lies|stories|allegations|"
            r"accusations|rumou?rs|claims)\b|\bspread\w*\s+(?:\w+\s+)?lies\b",
            rf"\bwhy\s+(?:are|do|is)\s+(?:all\s+|so\s+many\s+|most\s+)?{GROUP}\s+(?:so\s+|"
            rf"always\s+|all\s+|such\s+|more\s+)?(?:{NEGATIVE_TRAIT})\b",
        ),
    ),
    Rule(
        "self_harm",
        "self_harm_more",
        rx(
            r"\b(?:conceal|hide|cover)\w*\s+(?:up\s+)?(?:my\s+)?(?:cuts?|cutting|scars?|wounds?|"
            r"self[- ]harm\w*|bruises|eating\s+disorder|purging|weight\s+loss|burns)\b",
            r"\bpurg(?:e|es|ing)\s+(?:after|when)\s+(?:\w+\s+)?(?:meals?|eating|dinner|food|"
            r"lunch|breakfast)\b",
            r"\b(?:deadliest|most\s+(?:lethal|deadly|toxic|poisonous))\b[^.?!]{0,40}\b(?:pills|"
            r"medications?|meds|drugs|doses?|amounts?)\b",
            r"\bhow\s+many\s+(?:\w+\s+){0,3}(?:pills|tablets|capsules)\b[^.?!]{0,60}\b(?:die|"
            r"not\s+wake\s+up|kill\s+me|overdose|lethal|fatal|end\s+it)\b",
        ),
    ),
    Rule(
        "sexual_minors",
        "minors_more",
        rx(
            r"\b(?:\d{1,2}|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen)[- ]year[- ]"
            r"olds?\b[^.?!]{0,60}\b(?:send\s+(?:me\s+)?(?:pictures|pics|photos|nudes|selfies)|"
            r"undress|touch|kiss|meet\s+(?:me\s+)?(?:alone|secretly|in\s+private)|date|"
            r"sleep\s+with|sexy|hot|naked|nude)\b",
            r"\b(?:jailbait|lolita|loli|shota|preteen\s+\w+)\b",
        ),
    ),
    Rule(
        "sexual_content",
        "sexual_goal",
        rx(
            r"\b(?:write|generate|create|compose|describe|tell|give)\w*\s+(?:me\s+)?(?:a\s+|an\s+)?"
            r"(?:[\w-]+\s+){0,2}(?:erotic|explicit|sexual|porn\w*|nsfw|steamy|smutty|x-rated|"
            r"sex|lewd|raunchy)\s+(?:\w+\s+)?(?:story|stories|scenes?|fiction|fanfic\w*|novel|"
            r"roleplay|description|poem|chat|dialogue|acts?)\b",
            rf"\b(?:make|force|get|pressure|coerce|trick)\w*\s+{TARGET}\s+(?:to\s+|into\s+)?"
            rf"(?:have\w*\s+sex|sleep\w*\s+with|(?:perform|do)\w*\s+(?:sexual|oral)|"
            rf"undress\w*|strip\w*|send\w*\s+(?:me\s+)?nudes)\b",
            r"\bwhen\s+(?:she|he|they)\s+(?:says?|said)\s+no\b",
            r"\b(?:write|describe|generate|narrate|roleplay|role-play|tell|depict|create|give|"
            r"compose)\w*\s+(?:me\s+)?(?:(?:a|an|the|some)\s+)?(?:[\w-]+\s+){0,3}(?:sex|sexual|"
            r"erotic|explicit|porn\w*|nsfw|steamy|smutty|x-rated|lewd|raunchy|dirty|kinky|naughty)"
            r"\s+(?:\w+\s+)?(?:story|stories|scenes?|fiction|fanfic\w*|roleplay|description|poem|"
            r"dialogue|chat|messages?|letter|novel|script|texts?|fantas(?:y|ies)|encounters?)\b",
            r"\bdescribe\s+(?:\w+\s+){0,4}(?:sex|sexual\s+acts?|intercourse|orgasms?|genitals?|"
            r"naked\s+bod(?:y|ies))\s+(?:\w+\s+){0,3}in\s+(?:graphic|explicit|vivid|great|"
            r"intimate|full)\s+detail\b",
            r"\b(?:secretly|covertly|hidden)\s+(?:\w+\s+){0,2}(?:film|record|photograph|watch)"
            r"\w*\s+(?:\w+\s+){0,2}(?:women|girls|people|someone|her|them)\b[^.?!]{0,40}"
            r"\b(?:changing\s+rooms?|bathrooms?|showers?|toilets?|locker\s+rooms?|bedrooms?|"
            r"undress\w*)\b",
        ),
    ),
    Rule(
        "cyber",
        "cyber_more",
        rx(
            r"\b(?:working|functional|weaponi[sz]ed|0-?day|zero-?day|reliable)\s+exploits?\b",
            r"\bexploits?\s+(?:for|against)\s+(?:a\s+|an\s+|the\s+)?(?:\w+\s+)?(?:unpatched|"
            r"vulnerable|outdated|specific)\b",
            r"\b(?:crack|hack|break)\w*\s+(?:into\s+)?(?:my\s+\w+'s|someone's|a\s+neighbou?r's|"
            r"the\s+neighbou?r's|his|her|their)\s+(?:\w+\s+)?(?:wi-?fi|password|network|"
            r"account|phone|computer|router|camera)\b",
        ),
    ),
    Rule(
        "other",
        "illegal_more",
        rx(
            r"\b(?:escap|break|bust)\w*\s+(?:out\s+)?(?:of\s+|from\s+)?(?:a\s+|the\s+)?(?:prison|"
            r"jail|custody|detention|juvie)\b|\bjump\w*\s+bail\b",
            r"\b(?:sneak|smuggl|get|bring|take|carry|slip)\w*\s+(?:a\s+|an\s+|my\s+|some\s+)?"
            r"(?:\w+\s+)?(?:knife|knives|guns?|weapons?|bombs?|explosives?|drugs|firearms?|"
            r"blades?|box\s+cutters?|contraband)\s+(?:onto|into|through|past|on|in)\s+(?:a\s+|"
            r"the\s+|an\s+)?(?:\w+\s+)?(?:plane|flight|airport|security|school|courthouse|"
            r"stadium|concert|prison|jail|border|customs)\b",
            r"\bunder\s+(?:a\s+)?(?:fake|false|fictitious|stolen|made[- ]up|someone\s+else's|"
            r"another\s+person's|a\s+dead\s+person's)\s+(?:name|identity|ssn)\b",
            r"\bmake\s+it\s+(?:look|seem|appear)\s+(?:like\s+)?(?:an?\s+)?(?:accident\w*|suicide|"
            r"natural|self[- ]defen[cs]e|a\s+robbery|someone\s+else)\b",
            r"\bget\s+away\s+with\s+(?:it|this|that)\b|\bno\s+questions\s+asked\b|"
            r"\boff\s+the\s+books\b|\bunder\s+the\s+table\b",
            r"\bwithout\s+(?:a\s+|any\s+)?(?:licen[cs]e|prescription|permit|background\s+check|"
            r"serial\s+numbers?|id|paperwork|papers|visa|passport)\b[^.?!]{0,40}$|"
            r"\b(?:buy|get|obtain|own|carry|sell)\w*\s+(?:\w+\s+){0,3}without\s+(?:a\s+|any\s+)?"
            r"(?:licen[cs]e|prescription|permit|background\s+check|serial\s+numbers?)\b",
            r"\bsell\w*\s+(?:my\s+|a\s+|your\s+|their\s+)?(?:kidneys?|organs?|livers?|"
            r"blood\s+illegally)\b",
        ),
    ),
    Rule(
        "drugs",
        "drugs_more",
        rx(
            r"\b(?:hide|hiding|conceal\w*|stash\w*|smuggl\w*)\s+(?:\w+\s+){0,2}(?:cocaine|coke|"
            r"heroin|meth|fentanyl|drugs|weed|pills|crack)\b[^.?!]{0,30}\b(?:from|past|through)\s+"
            r"(?:the\s+)?(?:police|cops|dogs|k-?9s?|customs|security|border|sniffer\w*)\b",
            r"\b(?:cut|lace|stretch|press|deal|push|distribute|move|traffic)\w*\s+(?:the\s+|my\s+|"
            r"some\s+)?(?:\w+\s+)?(?:cocaine|coke|heroin|meth|fentanyl|drugs|pills|crack|"
            r"product)\b",
        ),
    ),
    Rule(
        "misinformation",
        "misinfo_more",
        rx(
            r"\b(?:chemtrails|flat\s+earth|qanon|pizzagate|crisis\s+actors?|inside\s+job|"
            r"false\s+flag|great\s+replacement|new\s+world\s+order|reptilians?|lizard\s+people|"
            r"microchips?\s+in\s+(?:the\s+)?vaccines?|5g\s+(?:causes?|spreads?)|"
            r"(?:stolen|rigged)\s+election|plandemic|birds\s+aren't\s+real)\b",
            r"\b(?:faked?|staged|hoax(?:ed)?|fabricated|made\s+up|never\s+(?:happened|occurred))\b"
            r"[^.?!]{0,10}$",
        ),
    ),
)

# --- sentence-level pairs: a group and a discriminatory claim, an atrocity and praise -----

_DISCRIMINATE = rx(
    r"\bshould(?:n't|\s+not)?\s+(?:\w+\s+){0,3}(?:be\s+(?:\w+\s+)?(?:allowed|permitted|barred|"
    r"banned|denied|excluded|kicked|deported|segregated|sterili[sz]ed|forced|prevented|"
    r"locked|jailed|imprisoned|punished|fired|removed|paid\s+less|treated|admitted|given|"
    r"shown|discriminated|exterminated|eliminated|killed|executed|shot|expelled|stripped)|"
    r"have\s+(?:equal\s+|the\s+same\s+)?(?:rights|freedom|access)|vote|marry|work|exist|"
    r"adopt|have\s+(?:kids|children)|raise\s+children|go\s+through|earn|serve|hold|"
    r"run\s+for|get|receive|live|enter|teach|be\s+near)",
    r"\b(?:why|reasons?)\b[^.?!]{0,40}\b(?:is\s+it|it\s+is|it's)\s+(?:best|right|good|"
    r"better|fair|justified|a\s+good\s+idea|okay|ok|acceptable)\s+(?:for|that)\b",
    r"\b(?:are|is)\s+(?:all\s+)?(?:naturally\s+|genetically\s+|just\s+|so\s+)?(?:inferior|"
    r"subhuman|animals|vermin|parasites|a\s+burden|lazy|stupid|criminals|dangerous|evil|"
    r"disgusting|terrorists|less\s+intelligent|not\s+real|a\s+disease|a\s+plague|"
    r"ruining|destroying|worthless|dirty|savages|rapists|thieves)\b",
    r"\b(?:lower|inferior|less)\s+(?:iqs?|intelligence)\b|\bstealing\s+(?:\w+\s+)?jobs\b",
    r"\b(?:are|is)\s+(?:all\s+|just\s+|so\s+|too\s+|naturally\s+|inherently\s+)?(?:"
    + NEGATIVE_TRAIT
    + r")\b",
    r"\b(?:don't|do\s+not|doesn't|does\s+not)\s+deserve\b|\bdeserve\s+to\s+(?:die|suffer|be)\b",
    r"\b(?:can't|cannot|can\s+not|shouldn't|should\s+not|never)\s+be\s+trusted\b|"
    r"\bmake\s+(?:bad|terrible|worse|poor|awful|lousy)\s+(?:\w+\s+)?(?:parents|leaders|"
    r"employees|workers|doctors|drivers|soldiers|citizens|neighbou?rs|teachers|bosses)\b",
    r"\b(?:sterili[sz]\w*|exterminat\w*|imprison\w*|interned|locked\s+up|rounded\s+up|"
    r"expelled|gassed|enslaved|(?:be|get)\s+(?:\w+\s+)?(?:killed|shot|executed|punished|"
    r"removed|fired|beaten))\b",
    r"\b(?:discriminat\w*|deport\w*|segregat\w*|exclud\w*|ban\w*|unwelcome|harsher|"
    r"extra\s+security|earn\s+less|overrepresented|kicked\s+off|denied|barred|should\s+not|"
    r"not\s+(?:be\s+)?(?:allowed|permitted|given|admitted|shown))\b",
)
_GROUP_RX = rx(r"\b" + GROUP + r"\b")
_ENDORSE = rx(
    r"\b(?:right|justified|good\s+thing|good\s+idea|admirable|heroic|glorious|necessary|"
    r"deserved|beneficial|moral(?:ly)?\s+(?:right|justified)|a\s+success|positive)\b",
    r"\b(?:benefits?|upsides?|advantages?|positive\s+(?:aspects|effects|sides))\s+of\b",
    r"\b(?:good|great|positive|best|admirable)\s+(?:things|parts|aspects|sides|points|"
    r"outcomes|results|ideas)\s+(?:about|of|in)\b",
    r"\b(?:replicate|emulate|recreate|bring\s+back|repeat|copy)\b",
    r"\b(?:fabrication|hoax|lie|myth|never\s+happened|exaggerated|staged|wrong\s+and\s+"
    r"unnecessary)\b",
    r"\b(?:success|successes|achievements?|glory)\s+of\b|\btreat\w*\s+(?:\w+\s+){0,2}like\b",
    r"\b(?:deserved?|had\s+it\s+coming|got\s+what\s+they\s+deserved|should\s+have\s+"
    r"(?:finished|completed|won|killed\s+more)|do\s+it\s+again|celebrat\w*|glorif\w*|"
    r"prais\w*|admir\w*|heroes|role\s+models?|inspir\w*|honou?r\w*|good\s+for\s+(?:the|"
    r"society|humanity|the\s+world))\b",
)
# A yes/no question ("Was the bombing justified?") asks for a debate, not for praise.
YES_NO = re.compile(
    r"^\s*(?:was|were|is|are|did|do|does|could|would|should|can|has|have)\b"
    r"(?!\s+(?:you|u)\b)",
    re.IGNORECASE,
)
_ATROCITY_RX = rx(r"\b" + _ATROCITY + r"\b")

PAIRS: tuple[Pair, ...] = (
    Pair("hate_harassment", "discrimination", _GROUP_RX, _DISCRIMINATE),
    Pair("extremism", "endorse_atrocity", _ATROCITY_RX, _ENDORSE, ordered=False),
)

# --- the grammar of asking for a procedure or for content ---------------------------------

PROCEDURAL: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "how_to",
        rx(
            r"\bhow\s+(?:to|do|does|can|could|would|should|might|is\s+it\s+possible)\b",
            r"\b(?:ways?|methods?|techniques?|tips|tricks|strateg(?:y|ies)|tactics|ideas?|"
            r"advice|suggestions?|steps|best\s+practices|approach(?:es)?|means)\s+"
            r"(?:to|for|of|on)\b",
            r"\bwhat\s+(?:steps|tools|techniques|methods|strategies|language|software|"
            r"conversation\s+starters|info|information|symptoms|kind\s+of|type\s+of|"
            r"specific|can\s+i|should\s+i|could\s+i|would\s+i|do\s+i)\b",
            r"\bwhat(?:'s|\s+is|\s+are)\s+(?:the|some|good)\s+(?:\w+\s+){0,2}(?:best|easiest|"
            r"quickest|simplest|most|perfect|good|effective|efficient|ways?|methods?|"
            r"strateg\w*|techniques?)\b",
            r"\bwhere\s+(?:can|could|do|should|would)\s+(?:i|one|you|we)\b",
            r"\bwhich\s+\w+\s+(?:should|would|could|can|is|are)\b",
            r"\b(?:walk|talk)\s+me\s+through\b|\bteach\s+me\b|\bshow\s+me\s+how\b|"
            r"\bexplain\s+(?:exactly\s+|in\s+detail\s+)?how\b|\bdescribe\s+how\b|"
            r"\bhelp\s+me\b|\bideas\s+for\b|\bany\s+advice\b|\bpull\s+it\s+off\b",
        ),
    ),
    (
        "instructions",
        rx(
            r"\b(?:step[- ]by[- ]step|instructions?|tutorial|guide|manual|recipe|blueprints?|"
            r"playbook|walkthrough|procedure|protocol|how-to|detailed\s+(?:plan|steps|"
            r"description|explanation|list|outline)|in\s+(?:great\s+|graphic\s+)?detail|"
            r"actionable|specific\s+(?:steps|instructions|details))\b",
            r"\b(?:list|give|provide|outline|detail)\s+(?:me\s+)?(?:the\s+)?(?:\w+\s+){0,2}"
            r"(?:steps?|ways?|methods?|ingredients|materials|tools|equipment|suppliers?|"
            r"vendors?|ratio|quantities)\b",
        ),
    ),
    (
        "make",
        rx(
            r"\b(?:make|making|build|building|assemble|construct|manufactur\w*|produce|"
            r"synthesi[sz]\w*|extract|cook|brew|grow|culture|cultivat\w*|"
            r"smuggle|modify|convert|3d[- ]print)\b",
        ),
    ),
    (
        "acquire",
        rx(r"\b(?:obtain|acquire|buy|purchase|source|get\s+(?:hold\s+of|some))\b"),
    ),
    (
        "write",
        rx(
            r"\b(?:write|compose|draft|create|generate|develop|design|craft|publish|post|"
            r"share|list|suggest|brainstorm|outline|describe|explain|provide|give|share|"
            r"come\s+up\s+with|produce|prepare|instruct|teach|convince|persuade|tell|"
            r"determine|identify|release|use|plan|devise)\b",
        ),
    ),
    (
        "code",
        rx(
            r"\b(?:write|create|develop|generate|code|build|program|design)\b[^.?!]{0,40}\b"
            r"(?:scripts?|code|programs?|software|malware|ransomware|viruse?s?|worms?|"
            r"exploits?|keyloggers?|bots?|tools?|apps?|extensions?|macros?|functions?|"
            r"payloads?|algorithms?)\b",
        ),
    ),
    (
        "quantities",
        rx(
            r"\b\d+(?:[.,]\d+)?\s?(?:mg|g|kg|grams?|kilograms?|ml|l|litres?|liters?|oz|ounces?|"
            r"lbs?|pounds?|cups?|tablespoons?|tbsp|teaspoons?|tsp|moles?|mol|ppm|°c|degrees)\b",
            r"\b\d+\s?(?:%|percent)\b",
            r"\bquantit(?:y|ies)\b|\bratios?\s+of\b|\bhow\s+much\b",
        ),
    ),
)
STRONG_PROCEDURAL = frozenset({"instructions", "make", "code", "quantities", "steps"})
# Detail that a fiction or game setting does not excuse.
DETAIL_PROCEDURAL = frozenset({"instructions", "quantities", "steps"})
STEPS = re.compile(r"(?:^|\n)\s*(?:step\s*)?\d{1,2}[.):]\s+\S", re.IGNORECASE)

# --- contexts that defuse, judged on the request itself -----------------------------------


@dataclass(frozen=True)
class Defuser:
    """A context of the request that multiplies severity by ``weight``. Only those that
    change what is being asked (a definition, history, a game) also defuse a goal with a
    victim; a protective word next to "hack into her account" does not."""

    kind: str
    weight: float
    defuses_goals: bool
    pattern: re.Pattern[str]


DEFUSERS: tuple[Defuser, ...] = (
    Defuser(
        "definition",
        0.35,
        True,
        rx(
            r"^\s*(?:what|who)(?:'s|\s+is|\s+are|\s+was)\s+(?:a|an|the)?\s*"
            r"(?![^?]*(?:\bmy\b|\byour\b|'s\b))[\w'-]+(?:\s+[\w'-]+){0,2}\s*\??\s*$",
            r"^\s*what\s+(?:does|do)\s+[^?]{1,60}\s+mean\s*\??\s*$",
            r"^\s*(?:please\s+)?(?:define|explain\s+the\s+(?:term|word|concept))\b",
            r"\b(?:meaning|definition)\s+of\b",
            r"^\s*what\s+is\s+(?:the\s+)?(?:meaning|definition)\b",
            r"^\s*what\s+(?:kind|type|sort|class)\s+of\s+(?:a\s+)?[\w-]+\s+(?:is|are|was)\b",
            r"^\s*what\s+(?:is|are)\s+(?:a\s+|an\s+)?[\w-]+(?:\s+[\w-]+){0,2}\s*(?:,|\band\b)",
            r"^\s*(?:explain|describe)\s+what\s+(?:a|an|the)?\s*[\w\s'-]{1,40}\s+(?:is|are|means)\b",
        ),
    ),
    Defuser(
        "history",
        0.45,
        True,
        rx(
            r"^\s*(?:why|how)\s+did\b",
            r"\bwhat\s+happened\s+(?:to|at|in|during|on)\b",
            r"\bwhat\s+(?:were|was)\s+the\s+(?:main\s+)?(?:causes?|reasons?|effects?|"
            r"consequences|impacts?|outcomes?|motives?|motivations?)\b",
            r"^\s*(?:why|how)\s+(?:was|were)\s+there\b",
            r"^\s*who\s+(?:was|were)\s+responsible\b",
            r"^\s*who\s+(?:assassinated|killed|murdered|shot|bombed|poisoned|kidnapped|"
            r"invaded|attacked|founded|started|led|ordered|committed|carried\s+out)\b",
            r"\b(?:history|origins?)\s+of\b",
            r"^\s*how\s+(?:many|much)\s+[^?]{0,40}\s+(?:died|were\s+killed|killed)\b",
            r"^\s*(?:what|which|who|when|where|how\s+many)\b[^?]{0,80}\b(?:during|in)\s+"
            r"(?:the\s+)?(?:world\s+war\s+(?:[12]|i+|one|two)|ww\s*(?:[12]|i+)|civil\s+war|"
            r"cold\s+war|vietnam\s+war|korean\s+war|gulf\s+war|holocaust|middle\s+ages|"
            r"(?:1[0-9]|20)\d{2}s?)\b",
        ),
    ),
    Defuser(
        "impossible",
        0.3,
        True,
        rx(
            r"\b(?:breathe|live|survive|walk|swim)\s+(?:\w+\s+)?(?:underwater|in\s+(?:outer\s+)?"
            r"space|on\s+(?:the\s+)?(?:sun|moon|mars|venus|jupiter)|without\s+(?:food|water|"
            r"air|oxygen|sleep))\b|\bon\s+the\s+sun'?s?\b",
            r"\b(?:time[- ]?travel\w*|teleport\w*|levitat\w*|telepath\w*|telekines\w*|"
            r"photosynthesi[sz]\w*|read\s+minds|become\s+invisible|turn\s+invisible|"
            r"see\s+through\s+walls|(?:float|walk|pass)\s+through\s+walls|"
            r"speed\s+of\s+light|control\s+the\s+weather|shoot\s+(?:lasers|lightning|fire)|"
            r"talk\s+to\s+animals|breathe\s+fire|fly\s+(?:like\s+(?:a\s+)?birds?|without))\b",
        ),
    ),
    Defuser(
        "fiction_or_game",
        0.35,
        True,
        rx(
            r"\b(?:in|at)\s+(?:a\s+|the\s+|my\s+)?(?:video\s*game|game|call\s+of\s+duty|minecraft|"
            r"fortnite|skyrim|gta|grand\s+theft\s+auto|among\s+us|chess|checkers|poker|"
            r"monopoly|scrabble|risk|the\s+sims|zelda|halo|pubg|overwatch|league\s+of\s+"
            r"legends|dnd|d&d|dungeons\s+(?:and|&)\s+dragons|pokemon|mario|elden\s+ring|"
            r"dark\s+souls|warzone|counter[- ]strike|valorant|hitman|assassin's\s+creed|"
            r"judo|karate|boxing|wrestling|mma|jiu[- ]jitsu|fencing|kickboxing|taekwondo|"
            r"sparring|paintball|laser\s+tag|airsoft|dodgeball|football|soccer|basketball|"
            r"tennis|rugby|hockey|a\s+match|the\s+ring)\b",
            r"\bin\s+(?:[\w':-]+\s+){0,5}(?:game|video\s*game|videogame)s?\b",
            r"\b(?:final\s+boss|boss\s+(?:fight|battle|level)|mini-?boss|raid\s+boss|respawn\w*|"
            r"npcs?|level\s+\d+|speedrun\w*|playthrough|side\s+quests?|quests?|dlc|multiplayer|"
            r"pvp|pve|co-?op\s+mode|game\s*play|my\s+character|boss\s+in)\b",
            r"\b(?:for|in)\s+(?:a|an|my|the|our)\s+(?:\w+\s+)?(?:tv\s+show|show|movie|film|"
            r"play|novel|story|book|scene|screenplay|script|series|episode|comic|"
            r"murder\s+mystery|crime\s+novel|thriller)\b",
            r"\b(?:plot|story|storyline|synopsis|summary|ending|scene|characters?)\s+(?:of|in)\s+"
            r"(?:the\s+)?(?:movie|film|book|novel|show|series|episode|play|game|tv\s+show)\b",
            r"\b(?:the\s+)?(?:movie|film|book|novel|show|series|tv\s+show)\s+(?:[\w'-]+\s+){0,4}"
            r"(?:where|in\s+which)\b",
            r"\bin\s+(?:the\s+)?(?:movie|film|book|novel|show|series|episode|play|"
            r"musical|opera|anime|tv\s+series)\b",
            r"^\s*how\s+(?:does|did)\s+(?:the\s+)?(?:character|villain|protagonist|hero|"
            r"antagonist|(?-i:[A-Z])\w+)\b[^?]{0,120}\bin\s+(?-i:[A-Z])",
        ),
    ),
    Defuser(
        "prevention",
        0.45,
        False,
        rx(
            r"\b(?:how|ways?)\s+(?:to|do\s+i|can\s+i|should\s+i|do\s+we|can\s+we|does\s+one)\s+"
            r"(?:best\s+)?(?:protect|defend|prevent(?!\s+(?:\w+\s+){0,5}from\b)|stop\s+being|"
            r"stop(?!\s+(?:\w+\s+){0,5}from\b)(?=\s+(?:\w+\s+){0,3}(?:from|stealing|spying|"
            r"tracking|collecting|harass|bully|abus|hack))|"
            r"avoid\s+(?:being|getting)|recogni[sz]e|spot|detect|identify|report|survive|"
            r"escape|deal\s+with|cope\s+with|combat|counter|fight|debunk|respond\s+to|recover\s+from|treat\s+(?:a\s+|an\s+|"
            r"the\s+|my\s+)?(?:\w+\s+)?(?:injur|wound|burn|bite|sting|poison|overdose|symptom|"
            r"victim|cut|infection|shock|addict)|help\s+"
            r"(?:a\s+friend|someone|people|victims)|support|stay\s+safe|secure|safely\s+dispose)",
            r"\b(?:signs|symptoms|warning\s+signs|red\s+flags|indicators)\s+(?:of|that)\b",
            r"\b(?:talk|speak|teach|explain|educate)\w*\s+(?:to\s+)?(?:my\s+\w+|kids|children|"
            r"students|teens|teenagers|employees|staff|people)\s+about\b",
            r"\bavoid\s+(?:it|them|this|that|scams?|fraud|being|getting|falling|becoming)\b",
            r"\b(?:fact-?check\w*|debunk\w*|verify|verifying|tell\s+(?:if|whether)|"
            r"check\s+(?:if|whether)|spot|spotting)\b",
            r"\b(?:recover|restore|secure|regain|get\s+back|fix|clean)\w*\s+(?:my|our)\s+(?:own\s+)?"
            r"(?:\w+\s+){0,2}(?:account|computer|laptop|phone|device|site|website|server|"
            r"network|identity|data|inbox)\b",
            r"\b(?:is|are|gets?|being|was|were)\s+(?:\w+\s+)?(?:detected|caught|prevented|"
            r"stopped|identified|investigated|prosecuted|punished|treated|diagnosed)\b",
            r"\b(?:prevention|hotlines?|helplines?|crisis\s+(?:lines?|centers?|text)|support\s+"
            r"groups?|counsell?ing|therapy|rehab\w*|recovery|shelters?)\b",
            r"\b(?:my|our)\s+own\b|\bi\s+own\b|\blocked\s+(?:myself\s+)?out\b",
            r"\b(?:store|storing|handle|handling|transport\w*|clean|cleaning|maintain\w*|lock|"
            r"locking|carry|carrying|use|using)\s+(?:\w+\s+){0,3}(?:safely|securely|"
            r"responsibly|legally)\b|\b(?:safe\s+storage|gun\s+safety|safety\s+(?:course|class|"
            r"training|rules|tips|precautions))\b",
            r"\b(?:(?:trace|bomb|explosives?|metal|threat|intrusion|fraud|malware)\s+detection|"
            r"detectors?|screening|sniffer\s+dogs|bomb\s+squad|ordnance\s+disposal)\b",
            r"\bwhat\s+(?:should|can|do)\s+(?:i|we)\s+do\s+(?:if|when|about)\b",
            r"\bhow\s+(?:should|do|can|could)\s+(?:i|we)\s+respond\s+(?:to|if|when)\b",
            r"\b(?:prevent|protect|defend|guard|mitigate|shield)\w*\s+(?:\w+\s+){0,3}"
            r"(?:against|from)\b",
            r"\b(?:to|can|should|could|do|does|we|i|best\s+practices\s+(?:to|for)|ways\s+to)\s+"
            r"(?:\w+\s+){0,2}(?:prevent|detect|mitigate|block|recogni[sz]e|combat|counter|"
            r"guard\s+against|harden|investigate|audit|flag|catch)\b"
            r"(?!\s+(?:\w+\s+){0,5}from\b)",
            r"\b(?:legal(?:ly)?|lawful(?:ly)?|licen[cs]ed|with\s+a\s+(?:licen[cs]e|permit|"
            r"prescription))\b",
            r"\b(?:protect|keep)\s+(?:myself|my\s+\w+|ourselves|children|kids|people)\s+"
            r"(?:from|safe)\b",
            r"\bso\s+(?:that\s+)?(?:i|we|my\s+\w+|our\s+\w+)\s+(?:can|could)\s+(?:better\s+)?"
            r"(?:protect|defend|secure|prevent|detect|train|recogni[sz]e|spot|avoid|patch|fix|"
            r"harden|report|teach)\b",
        ),
    ),
    Defuser(
        "educational",
        0.55,
        False,
        rx(
            r"^\s*how\s+(?:does|do|did)\s+(?:a\s+|an\s+|the\s+)?(?:[\w-]+\s+){1,4}work\b",
            r"\bexplain\s+how\s+(?:a\s+|an\s+|the\s+)?(?:[\w-]+\s+){1,4}works?\b",
            r"\b(?:explain|describe)\s+how\s+[^?.]{1,60}\b(?:worked|was\s+used|were\s+used|"
            r"happened|developed|evolved|operated)\b",
            r"\b(?:report|summary|overview|analysis|essay|paper|presentation|lecture|briefing|"
            r"memo|research|study|history|risk\s+assessment|training)\s+(?:on|about|of|into)\b",
            r"^\s*(?:how|why)\s+(?:does|do|did)\s+(?:[\w-]+\s+){1,5}(?:cause|lead\s+to|affect|"
            r"damage|work|spread)\w*\b",
            r"\bwhat\s+(?:are|is)\s+the\s+(?:health\s+)?(?:effects?|risks?|dangers?|"
            r"consequences|penalt(?:y|ies)|punishments?|laws?|legal\s+status)\b",
            r"^\s*why\s+(?:is|are)\s+(?:\w+\s+){1,4}(?:dangerous|illegal|harmful|banned|"
            r"bad|addictive|toxic)\b",
            r"^\s*is\s+it\s+(?:legal|illegal|safe|dangerous)\b",
        ),
    ),
)
# "In real life" takes a question out of the game it names.
REAL_WORLD = rx(r"\b(?:in\s+real\s+life|irl|for\s+real|in\s+reality|not\s+in\s+(?:a|the)\s+game)\b")
# Protective or explanatory framing does not excuse a request for the procedure itself.
PROTECTIVE_DEFUSERS = frozenset({"prevention", "educational"})
SETTING_DEFUSERS = frozenset({"fiction_or_game"})

AGGRAVATORS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "evasion",
        rx(
            r"\bwithout\s+(?:getting\s+|being\s+)?(?:caught|detected|noticed|traced|found|"
            r"arrested|leaving\s+(?:a\s+)?(?:trace|evidence))\b",
            r"\b(?:undetect\w*|untraceabl\w*|cover\s+(?:up|my\s+tracks)|"
            r"avoid\w*\s+(?:detection|the\s+police|getting\s+caught|witnesses|evidence))\b",
            r"\b(?:don't|do\s+not)\s+want\s+to\s+get\s+(?:arrested|caught)\b",
            r"\bso\s+(?:that\s+)?no(?:body|\s+one)\s+(?:notices|knows|finds\s+out|sees|can\s+tell)\b",
        ),
    ),
    (
        "target",
        rx(
            rf"\bmy\s+{MODIFIERS}{_RELATION}\b",
            r"\b(?:a\s+specific|a\s+particular|certain)\s+(?:group|individual|person|race|"
            r"demographic)\b",
        ),
    ),
    (
        "household",
        rx(r"\b(?:at\s+home|household|homemade|from\s+(?:common|everyday|household)|diy)\b"),
    ),
    (
        "minor",
        rx(r"\bi(?:'m|\s+am)\s+(?:1[0-7]|a\s+minor|underage)\b"),
    ),
)

# --- where a pattern can match: trigger words, found in one pass over a text --------------
#
# Python's ``re`` tries a pattern at every position of a text, so judging a 500-character
# chunk with the ~100 patterns above cost ~5 ms. But almost every match of them starts with
# a word from a short list ("kill", "kills", "killing" for ``\bkill(?:s|ing)?\s+...``), or
# at least contains one. ``Scan`` finds where any of those words start with one combined
# pattern, then tries each pattern only at those places (``pattern.match(text, position)``)
# and searches it whole only when a word it needs elsewhere occurs. The words are read from
# each pattern's parsed form (``re._parser``), never written by hand, and that reading only
# ever widens: whatever it cannot read (``\w+``, a class, a repeat) ends a word or makes a
# part "search whole", so ``Scan(text).search(pattern)`` is always
# ``pattern.search(text) is not None``.

_WORD_CHAR = re.compile(r"\w")
_TRIGGER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_REPEATS = (_rc.MAX_REPEAT, _rc.MIN_REPEAT, _rc.POSSESSIVE_REPEAT)
_ZERO_WIDTH = (_rc.AT, _rc.ASSERT, _rc.ASSERT_NOT)
_WORD_STARTS_AFTER = (_rc.AT_BOUNDARY, _rc.AT_BEGINNING, _rc.AT_BEGINNING_STRING)
_NON_WORD_CATEGORIES = (_rc.CATEGORY_SPACE, _rc.CATEGORY_NOT_WORD, _rc.CATEGORY_LINEBREAK)
_DIGITS = "0123456789"
_RARE = 0.05  # a trigger set rarer than this (by ``_cost``) is good enough as a test
_GUARD_GAIN = 4  # a needed word this much rarer than the first words guards them
_MAX_SPELLINGS = 3000  # beyond this many, a trigger word is cut short (still a valid prefix)
# Ends a trigger that must be the whole word: "plan " is "plan" but not "plans", "plan" both.
_WHOLE = " "
# Characters that re.IGNORECASE matches to an ASCII letter but str.lower() leaves alone
# (found by trying every code point); "İ" also lowers to two characters.
_CASE_SPECIALS = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"))
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")
# Words so frequent that a rarer trigger word the same part needs is the better test; a
# trigger that begins one of them (its prefix) is as frequent.
_COMMON_WORDS = (
    *("a", "an", "and", "or", "of", "to", "in", "on", "at", "for", "with", "by", "from", "as"),
    *("is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those"),
    *("my", "your", "his", "her", "our", "their", "i", "you", "he", "she", "we", "they", "me"),
    *("him", "them", "us", "how", "what", "which", "who", "when", "where", "why", "can"),
    *("could", "would", "should", "will", "do", "does", "did", "have", "has", "had", "not"),
    *("no", "any", "all", "some", "one", "use", "if", "so", "but", "the", "there", "then"),
    *("than", "just", "get", "got", "make", "like", "more", "also", "about", "into", "out"),
)
_COMMON = frozenset(
    (
        *(word[:end] for word in _COMMON_WORDS for end in range(1, len(word) + 1)),
        *(word + _WHOLE for word in _COMMON_WORDS),
    )
)


def fold(text: str) -> str:
    """``text`` with every character case-insensitively equal to an ASCII letter or digit
    made that letter or digit, position for position, so trigger words are plain lowercase."""
    if text.isascii():
        return text.lower()
    # Rare characters, so look for them before paying for a pass (str.translate is ~40 us).
    for special, letter in _CASE_SPECIALS:
        if special in text:
            text = text.replace(special, letter)
    folded = text.lower()
    if any(char.isdecimal() for char in _NON_ASCII.findall(folded)):
        folded = _OTHER_DIGIT.sub("0", folded)  # "\d" matches them: now they are "0"
    return folded


@functools.cache
def _is_word(code: int) -> bool:
    return _WORD_CHAR.match(chr(code)) is not None


def _other_words(group: tuple) -> bool:
    """A ``(?a:...)`` or ``(?L:...)`` group has another ``\\b`` than the finder's: unread."""
    return bool(group[1] & (re.ASCII | re.LOCALE))


def _chars(op: object, av: object) -> frozenset[str] | None:
    """The trigger characters a literal or a small class matches, if all of them are."""
    if op is _rc.LITERAL:
        chars = {chr(av).lower()}
    elif op is _rc.IN:
        chars = set()
        for item_op, item in av:
            if item_op is _rc.LITERAL:
                chars.add(chr(item).lower())
            elif item_op is _rc.RANGE and item[1] - item[0] < len(_DIGITS):
                chars.update(chr(code).lower() for code in range(item[0], item[1] + 1))
            elif item_op is _rc.CATEGORY and item is _rc.CATEGORY_DIGIT:
                chars.update(_DIGITS)  # fold() made every other digit a "0"
            else:
                return None
    else:
        return None
    return frozenset(chars) if chars <= _TRIGGER_CHARS else None


def _begins_non_word(op: object, av: object) -> bool:
    """Whether this element starts with a character that cannot be in a word."""
    if op is _rc.LITERAL:
        return not _is_word(av)
    if op is _rc.IN:
        return _non_word_only(av)
    if op in _REPEATS:
        return av[0] > 0 and len(av[2]) > 0 and _begins_non_word(*av[2][0])
    if op is _rc.SUBPATTERN:
        return not _other_words(av) and len(av[3]) > 0 and _begins_non_word(*av[3][0])
    if op is _rc.BRANCH:
        return all(len(alt) > 0 and _begins_non_word(*alt[0]) for alt in av[1])
    return False


def _non_word_only(av: list) -> bool:
    for item_op, item in av:
        if item_op is _rc.LITERAL and not _is_word(item):
            continue
        if item_op is _rc.CATEGORY and item in _NON_WORD_CATEGORIES:
            continue
        return False
    return True


def _after(items: list, word_start: bool) -> bool:
    for op, av in items:
        word_start = _after_one(op, av, word_start)
    return word_start


def _after_one(op: object, av: object, word_start: bool) -> bool:
    """Whether a word character right after this element of a pattern starts a word,
    given whether one right before it would (``word_start``); False when unsure."""
    if op is _rc.AT:
        return True if av in _WORD_STARTS_AFTER else word_start and av is not _rc.AT_NON_BOUNDARY
    if op in (_rc.ASSERT, _rc.ASSERT_NOT):
        return word_start
    if op is _rc.LITERAL:
        return not _is_word(av)
    if op is _rc.IN:
        return _non_word_only(av)
    if op is _rc.SUBPATTERN:
        return not _other_words(av) and _after(av[3], word_start)
    if op is _rc.ATOMIC_GROUP:
        return _after(av, word_start)
    if op is _rc.BRANCH:
        return all(_after(alt, word_start) for alt in av[1])
    if op in _REPEATS:
        low, high, child = av
        # Later rounds start after an earlier one, so judge them from the unsure side.
        once = _after(child, word_start if high == 1 else False)
        return once and (word_start or low > 0)
    return False


def _spell(prefixes: frozenset[str], items: list) -> frozenset[str]:
    """``prefixes`` continued through ``items`` for as long as the characters are known,
    marked ``_WHOLE`` where the word surely ends (``\\b``, a space, a hyphen)."""
    for index, (op, av) in enumerate(items):
        if (op is _rc.AT and av is _rc.AT_BOUNDARY) or _begins_non_word(op, av):
            return frozenset(prefix + _WHOLE for prefix in prefixes)
        if op in _ZERO_WIDTH:
            continue
        chars = _chars(op, av)
        if chars is not None:
            longer = frozenset(prefix + char for prefix in prefixes for char in chars)
            if len(longer) > _MAX_SPELLINGS:
                return prefixes
            prefixes = longer
            continue
        rest = items[index + 1 :]
        if op is _rc.SUBPATTERN and not _other_words(av):
            return _spell(prefixes, [*av[3], *rest])
        if op is _rc.BRANCH:
            options = [_spell(prefixes, [*alt, *rest]) for alt in av[1]]
        elif op in _REPEATS and av[1] == 1:
            options = [_spell(prefixes, [*av[2], *rest])]
            options += [_spell(prefixes, rest)] if av[0] == 0 else []
        else:
            return prefixes
        spelled = frozenset().union(*options)
        return spelled if len(spelled) <= _MAX_SPELLINGS else prefixes
    return prefixes


def _lead(items: list, word_start: bool, anywhere: bool = False) -> frozenset[str] | None:
    """Trigger words one of which begins every match of ``items``, at a word start (or,
    ``anywhere``, wherever); None when the match may begin otherwise."""
    for index, (op, av) in enumerate(items):
        rest = items[index + 1 :]
        if op in _ZERO_WIDTH:
            word_start = _after_one(op, av, word_start)
            continue
        if op is _rc.SUBPATTERN:
            return None if _other_words(av) else _lead([*av[3], *rest], word_start, anywhere)
        if op is _rc.BRANCH:
            options = [_lead([*alt, *rest], word_start, anywhere) for alt in av[1]]
            return None if None in options else frozenset().union(*options)
        if op in _REPEATS:
            low, high, child = av
            taken = _lead([*child, *rest] if high == 1 else list(child), word_start, anywhere)
            if taken is None or low > 0:
                return taken
            skipped = _lead(rest, word_start, anywhere)
            return None if skipped is None else taken | skipped
        chars = _chars(op, av)
        if chars is None or not (word_start or anywhere):
            return None
        return _spell(chars, rest)
    return None


def _required(items: list, word_start: bool, anywhere: bool = False) -> frozenset[str] | None:
    """Trigger words one of which every match of ``items`` contains, at a word start (or,
    ``anywhere``, wherever): the rarest such set, or None."""
    best = None
    for index, (op, av) in enumerate(items):
        options = [_lead(items[index:], word_start, anywhere)]
        if op is _rc.SUBPATTERN and not _other_words(av):
            options.append(_required(av[3], word_start, anywhere))
        elif op is _rc.BRANCH:
            each = [_required(alt, word_start, anywhere) for alt in av[1]]
            options.append(None if None in each else frozenset().union(*each))
        elif op in _REPEATS and av[0] > 0:
            options.append(_required(av[2], word_start and av[1] == 1, anywhere))
        for found in options:
            if found is not None and (best is None or _cost(found) < _cost(best)):
                best = found
        if best is not None and _cost(best) < _RARE:
            return best  # rare enough: reading further only costs time at start-up
        word_start = _after_one(op, av, word_start)
    return best


@functools.cache
def _cost(triggers: frozenset[str]) -> float:
    """Roughly how often one of ``triggers`` starts a word of English text."""
    return sum(
        1.0 if trigger in _COMMON else 4.0 ** -len(trigger.rstrip(_WHOLE)) for trigger in triggers
    )


def _shortest(triggers: frozenset[str]) -> frozenset[str]:
    """Without the triggers that a shorter one already covers ("kill" covers "killing" and
    "kill ", a whole word covers only itself)."""
    kept: set[str] = set()
    covering: set[str] = set()
    for trigger in sorted(triggers, key=len):
        if not any(trigger[:end] in covering for end in range(1, len(trigger) + 1)):
            kept.add(trigger)
            if not trigger.endswith(_WHOLE):
                covering.add(trigger)
    return frozenset(kept)


def _alternatives(items: list) -> list[list]:
    """The top-level alternatives of a parsed pattern, each a whole sequence (the parser
    moves a ``\\b`` that all parts share in front of their alternation)."""
    for index, (op, av) in enumerate(items):
        if op in _ZERO_WIDTH:
            continue
        if op is _rc.BRANCH:
            head, rest = items[:index], items[index + 1 :]
            return [found for alt in av[1] for found in _alternatives([*head, *alt, *rest])]
        break
    return [items]


def _only_at_start(items: list) -> bool:
    for op, av in items:
        if op is _rc.AT and av in (_rc.AT_BEGINNING, _rc.AT_BEGINNING_STRING):
            return True
        if op not in _ZERO_WIDTH:
            return False
    return False


@dataclass(frozen=True)
class _Plan:
    """How ``Scan`` looks for one pattern, alternative by alternative: try it where a word
    it starts with starts (``starts``), or there only when the text also holds a rarer
    word it needs (``guarded``: needed words, first words; the first words, often "a" or
    "the", are then looked for on demand), or at position 0 (``at_zero``:
    ``^...``); else search the whole pattern when a word it needs occurs (``gate``), or a
    piece of text (``gate_substrings``), or always (``always``). ``needs``,
    ``needs_substrings`` and ``needs_nothing`` say what a sentence must hold for the
    pattern to match in it. Trigger words stand for any word they begin."""

    starts: frozenset[str] = frozenset()
    guarded: tuple[tuple[frozenset[str], frozenset[str]], ...] = ()
    guards: tuple[tuple[frozenset[str], re.Pattern[str]], ...] = ()  # guarded, with finders
    at_zero: bool = False
    gate: frozenset[str] = frozenset()
    gate_substrings: tuple[str, ...] = ()
    always: bool = False
    needs: frozenset[str] = frozenset()
    needs_substrings: tuple[str, ...] = ()
    needs_nothing: bool = False
    gated: bool = False  # always, gate or gate_substrings: searched whole at times


def _plan(pattern: re.Pattern[str]) -> _Plan:
    if pattern.flags & (re.ASCII | re.LOCALE):  # another \b than the finder's: search whole
        return _Plan(always=True, needs_nothing=True)
    parsed = _rp.parse(pattern.pattern, pattern.flags)
    multiline = bool(parsed.state.flags & re.MULTILINE)
    starts, gate, needs = set(), set(), set()
    gate_substrings, needs_substrings = set(), set()
    guarded: dict[frozenset[str], set[str]] = {}
    at_zero = always = needs_nothing = False
    for alternative in _alternatives(list(parsed)):
        lead = _lead(alternative, word_start=False)
        lead = _shortest(lead) if lead else None
        # What every match holds: its first words, or a rarer word it needs elsewhere
        # ("in real life": "real", "9-year-old": "year"), looked for unless they are rare.
        needed = None if lead and _cost(lead) < _RARE else _required(alternative, False)
        needed = _shortest(needed) if needed else None
        if lead and (not needed or _cost(needed) * _GUARD_GAIN > _cost(lead)):
            needed = lead
        anywhere = None if needed else _required(alternative, False, anywhere=True)
        if anywhere:  # looked for as plain text, so a whole word's end is not part of it
            anywhere = _shortest(frozenset(word.rstrip(_WHOLE) for word in anywhere))
        if needed:
            needs |= needed
        elif anywhere:
            needs_substrings |= anywhere
        else:
            needs_nothing = True
        # Where to try it: a match costs ~1 us, a search of a whole pattern ~100 matches.
        if lead and needed == lead:
            starts |= lead
        elif lead:
            guarded.setdefault(needed, set()).update(lead)
        elif _only_at_start(alternative) and not multiline:
            at_zero = True
        elif needed:
            gate |= needed
        elif anywhere:
            gate_substrings |= anywhere
        else:
            always = True
    return _Plan(
        starts=_shortest(frozenset(starts)),
        guarded=tuple((needed, frozenset(lead)) for needed, lead in guarded.items()),
        at_zero=at_zero,
        gate=_shortest(frozenset(gate)),
        gate_substrings=tuple(sorted(_shortest(frozenset(gate_substrings)))),
        always=always,
        needs=_shortest(frozenset(needs)),
        needs_substrings=tuple(sorted(_shortest(frozenset(needs_substrings)))),
        needs_nothing=needs_nothing,
        gated=bool(always or gate or gate_substrings),
    )


def _finder(words: set[str] | frozenset[str], word_start: str = r"\b") -> re.Pattern[str]:
    """The pattern that finds, at each word start, the longest of ``words`` there (whole
    words among them as plain prefixes: ``Scan`` checks where the word ends)."""
    return re.compile(word_start + trie({word.rstrip(_WHOLE) for word in words}))


class _Index:
    """Plans for the lexicon's patterns, and ``finder``, the one pattern that finds all
    their trigger words: at each word start, the longest trigger word there. As a word
    found stands for its prefixes too, each plan's triggers are widened to the trigger
    words they begin ("kill" to "kill", "killing"), and ``starting`` maps each trigger
    word to the patterns to try where it was found."""

    def __init__(self, patterns: list[re.Pattern[str]]) -> None:
        # Keyed by id(): hashing a compiled pattern hashes its whole code (~80 us for the
        # largest here). The patterns are kept, so no other object can take their ids.
        self.patterns = patterns
        read = {id(pattern): _plan(pattern) for pattern in patterns}
        words: set[str] = set()
        for plan in read.values():
            words.update(plan.starts, plan.gate, plan.needs)
            words.update(word for needed, _ in plan.guarded for word in needed)
        self.finder = _finder(words)
        self.wholes = frozenset(word.rstrip(_WHOLE) for word in words if word.endswith(_WHOLE))
        # What the finder reports: a trigger, or a whole word's letters, then maybe ended.
        found = words | self.wholes
        beginning: dict[str, set[str]] = {}
        for word in found:
            letters = word.rstrip(_WHOLE)
            for end in range(1, len(letters) + 1):
                beginning.setdefault(letters[:end], set()).add(word)
            beginning.setdefault(word, set()).add(word)

        def widen(triggers: frozenset[str]) -> frozenset[str]:
            return frozenset(word for trigger in triggers for word in beginning[trigger])

        self.plans = {
            key: dataclasses.replace(
                plan,
                starts=widen(plan.starts),
                # Without \b, a pattern opening with a letter is scanned for fast.
                guards=tuple(
                    (widen(needed), _finder(lead, word_start="")) for needed, lead in plan.guarded
                ),
                gate=widen(plan.gate),
                needs=widen(plan.needs),
            )
            for key, plan in read.items()
        }
        starting: dict[str, list[int]] = {}
        for key, plan in self.plans.items():
            for word in plan.starts:
                starting.setdefault(word, []).append(key)
        self.starting = {word: tuple(starting.get(word, ())) for word in found}


class Scan:
    """One text and where the lexicon's trigger words start in it. ``search(pattern)``
    answers as ``pattern.search(text) is not None`` would; ``may_match(pattern)`` is False
    only when the pattern matches in no sentence (substring) of the text."""

    def __init__(self, text: str) -> None:
        self.index = index = _index()
        self.text = text
        self.folded: str | None = fold(text)
        self.found: dict[str, list[int]] = {}  # trigger word -> where it starts
        self.starts: dict[int, list[int]] = {}  # id(pattern) -> where to try it
        if len(self.folded) != len(text):  # never, by construction; then search everything
            self.folded = None
            return
        folded, found, wholes, word_char = self.folded, self.found, index.wholes, _WORD_CHAR.match
        for hit in index.finder.finditer(folded):
            word = hit[0]
            if word in wholes and not word_char(folded, hit.end()):
                word += _WHOLE
            if word in found:
                found[word].append(hit.start())
            else:
                found[word] = [hit.start()]
        for word, positions in found.items():
            for key in index.starting[word]:
                self.starts.setdefault(key, []).extend(positions)

    def search(self, pattern: re.Pattern[str]) -> bool:
        plan = self.index.plans.get(id(pattern))
        if plan is None or self.folded is None:
            return pattern.search(self.text) is not None
        if plan.gated and self._gate_open(plan):
            return pattern.search(self.text) is not None
        text, match = self.text, pattern.match
        if plan.at_zero and match(text):
            return True
        for start in self.starts.get(id(pattern), ()):
            if match(text, start):
                return True
        for needed, first_words in plan.guards:
            if not needed.isdisjoint(self.found):
                for hit in first_words.finditer(self.folded):
                    start = hit.start()
                    mid_word = start > 0 and _WORD_CHAR.match(self.folded, start - 1)
                    if not mid_word and match(text, start):
                        return True
        return False

    def may_match(self, pattern: re.Pattern[str]) -> bool:
        plan = self.index.plans.get(id(pattern))
        if plan is None or self.folded is None or plan.needs_nothing:
            return True
        if not plan.needs.isdisjoint(self.found):
            return True
        return any(substring in self.folded for substring in plan.needs_substrings)

    def _gate_open(self, plan: _Plan) -> bool:
        return (
            plan.always
            or not plan.gate.isdisjoint(self.found)
            or any(substring in self.folded for substring in plan.gate_substrings)
        )


def searched() -> list[re.Pattern[str]]:
    """Every pattern ``harm`` looks for through ``Scan`` (``STEPS`` and ``YES_NO`` are
    matched directly)."""
    return [
        IDIOMS,
        REAL_WORLD,
        *(rule.pattern for rule in (*MENTIONS, *ACTS, *GOALS)),
        *(pattern for pair in PAIRS for pattern in (pair.first, pair.second)),
        *(pattern for _, pattern in (*PROCEDURAL, *AGGRAVATORS)),
        *(defuser.pattern for defuser in DEFUSERS),
    ]


@functools.cache
def _index() -> _Index:
    """Built on first use rather than at import: reading ~2,000 alternatives takes ~0.5 s,
    and most importers of the pipeline (the CLI) never judge a text."""
    return _Index(searched())
