"""The patterns behind ``injection.assess_injection`` (data, no scoring).

What an instruction aimed at the model looks like: the model's output as the object
(``OUTPUT_REF``, ``TRANSFORM``, ``INSERT``; ``READER`` for a person's own correspondence),
the model as the addressee (``ROLE_PREFIX``, ``CHAT_TOKENS``, ``OVERRIDE``, ``ADDRESS_AI``,
``CONCEAL``, ``FORCED``), requests an assistant serves (``TASK_START``, ``QUESTION_START``),
code payloads (``NET``, ``DESTRUCTIVE``, ``REMOTE_EXEC`` ...), hidden text, and how a
document is cut into sentences, table cells and code blocks. ``injection`` weighs them;
nothing here decides.

The last section states what each searched pattern cannot match without (``*_NEEDS``,
``Hints``, ``may_request``): cheap proofs that let the judge skip a pattern on the many
sentences where it cannot match. Changing a pattern means checking its entry there.
"""

from __future__ import annotations

import bisect
import itertools
import re

_I = re.IGNORECASE

# ---- the model's output as the object of an instruction -------------------------------

_OUT = r"(?:response|reply|replies|answer|answers|output|completion|responses)"
OUTPUT_REF = re.compile(
    rf"\b(?:your|the\s+assistant'?s?|the\s+ai'?s?|the\s+model'?s?)\s+(?:\w+\s+)?{_OUT}\b"
    rf"|\b(?:any|every|each|all|the)\s+(?:of\s+your\s+)?{_OUT}\s+(?:you|that\s+you)\s+"
    r"(?:give|write|produce|return|generate|provide|send|output)\b",
    _I,
)
OUTPUT_WEAK_REF = re.compile(
    r"\byour\s+(?:\w+\s+)?(?:message|messages|text|words|writing|summary|result|sentences?)\b",
    _I,
)
REPLY_IN = re.compile(r"\b(?:reply|respond|answer|write|speak|talk)\s+(?:in|using|with)\b", _I)
_LANGUAGE = (
    r"(?:english|spanish|german|french|italian|portuguese|russian|chinese|mandarin|japanese|"
    r"korean|arabic|hindi|bengali|urdu|turkish|dutch|swedish|norwegian|danish|finnish|polish|"
    r"czech|greek|hebrew|persian|farsi|thai|vietnamese|indonesian|swahili|latin|klingon|"
    r"esperanto|another\s+language|a\s+different\s+language|other\s+languages?)"
)
# Changes of form that nobody asks of a human correspondent's reply.
TRANSFORM = re.compile(
    rf"\btranslat\w*|\brender\w*\s+\w+\s+in\b|\bin\s+{_LANGUAGE}\b"
    r"|\bbase\s?-?(?:16|32|58|64|85)\b|\b(?:encod|encrypt|cipher|caesar|rot-?13|morse|"
    r"binary|hexadecimal|leet|pig\s+latin)\w*"
    r"|\b(?:revers\w*|backwards?|invert\w*|mirror\w*|upside[- ]down)\b"
    r"|\bemojis?\b|\banagram\w*|\btypos?\b|\bmisspell\w*|\bspelling\s+mistakes?\b"
    r"|\bwithout\s+(?:any\s+)?(?:spaces|punctuation|vowels)\b|\bno\s+spaces\b"
    r"|\b(?:vowels?|consonants?|letters?|characters?)\b[^.?!]{0,40}\b(?:numbers?|digits?|"
    r"symbols?|emojis?|positions?|order|alphabet|sets?\s+of)\b"
    r"|\b(?:numbers?|symbols?|digits?)\s+for\s+(?:vowels?|letters?)\b"
    r"|\b(?:all\s+caps|uppercase|upper\s+case|capital\s+letters)\b"
    r"|\bshift\s+(?:each|every|all)\b|\bsubstitut\w*\s+(?:letters?|words?|characters?)\b"
    r"|\b(?:group|combine|merge|join)\s+(?:the\s+)?(?:letters|words|characters)\b",
    _I,
)
_INSERT_VERB = (
    r"(?:add|adding|include|including|inclusion|insert|append|prepend|integrat\w*|incorporat\w*|"
    r"embed|weave|mention|put|place|attach|feature[ds]?|enhance|augment|modify|alter|change|"
    r"end|begin|start|conclude|close|finish|sign\s+off|promote|advertise|recommend|suggest|"
    r"invite|inviting|remind|encourage|urge|direct|point|link|reference|cite|state|say|write|"
    r"note|tell|ask|hint|allude|tease|blend|employ|utili[sz]e|leverage|use|ensure|make|let|"
    r"consider|keep|remember|upgrade|refine|adjust|optimi[sz]e|fine-tune|offer|share|provide|"
    r"introduce|inject|slip|sprinkle|emphasi[sz]e|highlight|spread|claim)"
)
INSERT = re.compile(rf"\b{_INSERT_VERB}\b", _I)
_FORM_VERB = (
    r"(?:translate|render|encode|encrypt|convert|reverse|invert|replace|substitute|swap|shift|"
    r"group|combine|anagram|spell|format|present|display|express|reply|respond|answer|write|"
    r"apply|output|deliver|return|print|type|ignore|disregard|forget|stop|do|don't|never|"
    r"only|always)"
)
LINK = re.compile(
    r"\b(?:https?://|www\.)\S+|\b[\w-]+\.(?:com|net|org|io|xyz|info|biz|co|ru|cn|top|link|"
    r"click|app|site|online)\b|\b[\w.+-]+@[\w-]+\.[\w.]+\b",
    _I,
)
# The reader's own data and correspondence: "include your order number in your reply to
# this email by Friday" is a request to a person, not to a model.
READER = re.compile(
    r"\b(?:include|add|attach|mention|state|provide|quote|enclose|give)\s+(?:\w+\s+){0,2}"
    r"your\s+(?:\w+\s+)?(?:number|id|name|address|details|account|reference|order|invoice|"
    r"availability|ticket|phone|contact|date|signature|feedback|comments?|questions?|receipt|"
    r"confirmation|code|membership|policy|claim|booking)\b"
    r"|\b(?:include|add|attach|mention|state|provide|quote|enclose|give)\s+(?:\w+\s+){0,2}"
    r"the\s+(?:\w+\s+)?(?:number|id|reference|(?:discount|promo|confirmation|booking|"
    r"verification|order|tracking)\s+code)\b"
    r"|\b(?:write|give|submit|send|type|enter|post|check|review|justify|mark|circle|record|"
    rf"hand\s+in|fill\s+in)\s+(?:down\s+)?(?:all\s+)?your\s+(?:final\s+)?{_OUT}\b"
    rf"|\byour\s+(?:\w+\s+)?{_OUT}\s+to\s+(?:the|this|that|each|every|a|an|my|our|question|"
    r"questions|survey|exercise|\d)\b"
    r"|\b(?:to|with|for)\s+(?:this|the|our|my|that)\s+(?:e-?mail|message|letter|ticket|thread|"
    r"invitation|request|survey|questionnaire|form|team|office|department)\b"
    r"|\b(?:to|with)\s+(?:us|me|him|her|them)\b|\bby\s+(?:monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|tomorrow|tonight|noon|the\s+(?:end|deadline)|end\s+of|eod|cob|"
    r"\d{1,2}(?::\d\d)?\s*(?:am|pm)\b|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*)"
    r"|\bbefore\s+(?:the\s+)?(?:deadline|meeting|monday|tuesday|wednesday|thursday|friday)\b"
    r"|\bwe\s+(?:look\s+forward|await|appreciate)\b",
    _I,
)

# ---- the model as the addressee -----------------------------------------------------------

_AI = (
    r"(?:ai|a\.i\.|assistant|chat\s?bot|bot|language\s+model|llm|gpt|chatgpt|claude|gemini|"
    r"copilot|agent|model)"
)
# "Agent:" and "Bot:" open lines of ordinary support transcripts; these do not.
ROLE_PREFIX = re.compile(
    r"^\s*(?:[#>*\-\[<(]+\s*)?(?:(?:the\s+)?(?:ai|a\.i\.)\s+)?(?:system|assistant|ai|a\.i\.|"
    r"chat\s?bot|llm|language\s+model|gpt|chatgpt|claude|gemini|copilot|model|"
    r"instructions?|new\s+instructions?|important\s+instructions?|system\s+prompt|"
    r"system\s+message)\s*(?::|\]|>|\)|-{2,})\s*",
    _I,
)
ROLE_HEADING = re.compile(
    r"^\s*#{2,}\s*(?:instruction|instructions|system|response|assistant|task)\b", _I
)
CHAT_TOKENS = re.compile(
    r"<\|(?:im_start|im_end|system|assistant|user|endoftext|eot_id|start_header_id|"
    r"end_header_id)\|>|\[/?INST\]|<<SYS>>|<</SYS>>|</?s>|\b(?:BEGIN|END)\s+(?:SYSTEM|ADMIN|"
    r"DEVELOPER)\s+(?:PROMPT|MESSAGE|INSTRUCTIONS?)\b",
    _I,
)
OVERRIDE = re.compile(
    r"\b(?:ignore|disregard|forget|override|overwrite|bypass|abandon|discard|drop|skip)\s+"
    r"(?:\w+\s+){0,3}?(?:previous|prior|above|earlier|preceding|original|initial|all|any|your|"
    r"system|safety|existing|other|former)\s+(?:\w+\s+){0,2}?(?:instructions?|prompts?|rules|"
    r"guidelines|directions|directives|context|constraints|restrictions|policies|programming|"
    r"guardrails|commands|orders|tasks?|requests?|messages?)\b"
    r"|\bnew\s+(?:instructions?|task|role|rules|objective|directive)s?\s*:"
    r"|\byour\s+(?:new|real|true|actual|only)\s+(?:task|role|instructions?|goal|objective|"
    r"purpose|job)\b"
    r"|\bfrom\s+now\s+on\b[^.?!]{0,30}\byou\b|\byou\s+are\s+now\b"
    r"|\byou\s+must\s+now\b|\binstead\s*,?\s+you\s+(?:must|should|will|shall)\b",
    _I,
)
ADDRESS_AI = re.compile(
    rf"\b(?:dear|hey|hi|hello|attention|note\s+(?:to|for)|instructions?\s+for|message\s+for)\s+"
    rf"(?:the\s+|any\s+|all\s+)?(?:ai\s+)?{_AI}s?\b"
    rf"|\bif\s+you\s+are\s+(?:an?\s+)?(?:\w+\s+)?{_AI}\b"
    rf"|\b{_AI}s?\s+(?:reading|processing|summari[sz]ing|parsing|analy[sz]ing)\s+(?:this|these)\b"
    rf"|\bto\s+(?:any|the|all)\s+{_AI}s?\s+(?:reading|processing|that)\b"
    # A vocative: "AI, please ...", "P.S. assistant: add ...".
    rf"|(?:^|[.:;!]\s*|\bp\.?s\.?\s*)(?:the\s+)?{_AI}\s*[,:]\s*(?:please|you|now|also|do|don't|"
    r"ignore|add|include|write|tell|say|make|list|reply|respond|answer)\b"
    # The model's own task named as the occasion: "when summarising this email, ...".
    r"|\b(?:when|while|if|before)\s+(?:you\s+are\s+)?(?:summari[sz]\w*|process\w*|pars\w*|"
    r"analy[sz]\w*|answer\w*\s+(?:questions?\s+)?(?:about|on))\s+(?:this|the)\s+(?:document|"
    r"e-?mail|page|text|file|message|article|content|context)\b",
    _I,
)
CONCEAL = re.compile(
    r"\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose|tell|show|say)\s+(?:\w+\s+){0,3}"
    r"(?:instructions?|this\s+(?:message|note|text|request)|these\s+(?:lines|words)|"
    r"(?:to\s+)?the\s+user)\b|\bwithout\s+(?:telling|informing|alerting|notifying)\s+the\s+user\b",
    _I,
)
FORCED = re.compile(
    r"\b(?:respond|reply|answer|output|say|print|return)\s+(?:only|just|solely|exclusively)\b"
    r"|\b(?:respond|reply|answer)\s+with\s+(?:\w+\s+){0,3}?(?:only|and\s+nothing\s+else)\b"
    r"|\b(?:output|print|repeat|say|return|reproduce|write)\s+(?:the\s+following|this|these|"
    r"exactly)\b[^.?!]{0,40}\b(?:verbatim|word\s+for\s+word|exactly\s+as\s+written)\b"
    r"|\b(?:begin|start|prefix|open|end|finish|conclude)\s+(?:each|every|all|your|the)\s+"
    rf"(?:\w+\s+)?{_OUT}\s+(?:with|by)\b",
    _I,
)
THIRD_PARTY = re.compile(
    r"\b(?:tell|ask|instruct|advise|urge|direct|encourage|invite|remind|convince|persuade|"
    r"inform|suggest|recommend|prompt)\w*\s+(?:to\s+)?(?:the\s+)?(?:users?|readers?|"
    r"person\s+asking|requester)\b|\b(?:for|to)\s+(?:the\s+)?(?:users?|readers?)\s+to\b",
    _I,
)

# ---- requests an assistant serves (task switches) -----------------------------------------

_TASK_VERB = (
    r"(?:write(?!\s+(?:to|back|down|off|in)\b)|draft|compose|develop|create|generate|produce|"
    r"summari[sz]e|analy[sz]e|explain|describe|list|provide|give|show|tell|suggest|recommend|"
    r"translate|determine|classify|calculate|compute|compare|contrast|outline|define|identify|"
    r"evaluate|assess|rewrite|rephrase|paraphrase|design|plan|propose|break\s+down|elaborate|"
    r"discuss|name|predict|brainstorm|recite|teach|prepare|detail|review|critique|rate|"
    r"estimate|research|investigate|come\s+up\s+with|find|convert|solve|debug|proofread|"
    r"illustrate|narrate|forecast|interpret)"
)
_OPENER_WORD = (
    r"(?:please|kindly|also|now|then|next|first|finally|and|just|always|remember\s+to|"
    r"make\s+sure\s+(?:to|that)|be\s+sure\s+to|don't\s+forget\s+to|do\s+not\s+forget\s+to|"
    rf"in\s+(?:your|the|each|every)\s+(?:\w+\s+)?{_OUT})"
)
_OPENER = rf"(?:{_OPENER_WORD}\s*,?\s+)*"
TASK_START = re.compile(
    rf"^{_OPENER}(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|i\s+(?:want|need|would\s+"
    rf"like)\s+you\s+to\s+)?{_TASK_VERB}\b(?!\s*(?:here|below|above|:))",
    _I,
)
FORM_START = re.compile(rf"^{_OPENER}{_FORM_VERB}\b", _I)
# Any imperative opening, for judging whether a document is a list of instructions.
_ROUTINE_VERBS = (
    r"open|click|run|go|press|mix|bake|wait|check|choose|select|enter|install|restart|remove|"
    r"turn|set|try|call|visit|download|fill|send|contact|read|bring|take|store|avoid|follow|"
    r"prepare|practise|practice|study|complete|submit|return|sign|log|save|copy|paste|"
    r"type|pick|cut|stir|heat|pour|boil|serve|drink|eat|sleep|rest|stay"
)
IMPERATIVE_START = re.compile(
    rf"^(?:[A-Z][\w ]{{0,20}}:\s*)?{_OPENER}(?:{_INSERT_VERB}|{_FORM_VERB}|{_TASK_VERB}|"
    rf"{_ROUTINE_VERBS})\b",
    _I,
)
# The mood of an instruction: an imperative opening a clause, or a request or obligation
# put to "you".
DIRECTIVE = re.compile(
    rf"(?:^|[,;:]\s*|\b(?:and|then)\s+){_OPENER}(?:{_INSERT_VERB}|{_FORM_VERB}|{_TASK_VERB})\b"
    r"|\b(?:can|could|would|will)\s+you\b|\byou\s+(?:must|should|shall|need\s+to|have\s+to|"
    r"are\s+(?:to|required\s+to|expected\s+to)|will\s+need\s+to)\b"
    r"|\bi\s+(?:want|need|would\s+like)\s+you\s+to\b|\bit\s+is\s+(?:important|essential|"
    r"crucial|necessary|vital|mandatory)\s+(?:that|to)\b|\bensure\b|\bmake\s+sure\b",
    _I,
)
QUESTION_START = re.compile(
    r"^(?:who|whom|whose|what|what's|which|when|where|why|how|is|are|was|were|do|does|did|"
    r"can|could|should|would|will|has|have|had)\b",
    _I,
)
GENERIC_YOU = re.compile(r"\bhow\s+(?:do|would|can)\s+you\s+(?:say|spell|pronounce|write)\b", _I)
PARTICIPANT = re.compile(r"\b(?:you|your|yours|we|our|us)\b", _I)
# An apostrophe followed by a letter ("they'd") does not close a single-quoted span.
QUOTED = re.compile(
    r"(?<!\w)'(?:[^'\n]|'(?=\w)){2,}'(?!\w)|\"[^\"\n]{2,}\"|\u201c[^\u201d\n]{2,}\u201d"
    r"|\u2018[^\u2019\n]{2,}\u2019"
)

# ---- payloads -----------------------------------------------------------------------------

CODE_FOLLOWS = re.compile(
    r"\b(?:following|below|subsequent|next|this|these|attached|above)\s+(?:\w+\s+)?"
    r"(?:code|snippet|block|excerpt|section|lines?|script|function|commands?)\b",
    _I,
)
YOUR_WORK = re.compile(
    r"\byour\s+(?:\w+\s+)?(?:code(?:base)?|implementation|solution|algorithm|program|script|"
    r"function|project|app|application|module|logic|functionality|response|answer|reply)\b"
    r"|\byour\s+code'?s\b",
    _I,
)
NET = re.compile(
    r"\brequests\.(?:post|put|patch|get)\b|\burlopen\b|\bhttp\.client\b|\.sendall?\(|"
    r"\.connect\(\s*\(|\bsmtplib\b|\bftplib\b|\bparamiko\b|\bscp\b|\bcurl\b|\bwget\b|"
    r"\bnetcat\b|\bnc\s+-|Endpoint\(|socket\.socket\(|\bssh\s+-[LRD]\b|https?://",
    _I,
)
LOCAL_DATA = re.compile(
    r"\bopen\(|clipboard|pbpaste|xclip|getpass|getuser|os\.environ|\bkeyboard\b|pynput|"
    r"keylog|screenshot|screencapture|imagegrab|x11grab|\bmss\b|working_set|platform\.|"
    r"uname|/etc/(?:passwd|shadow)|\.ssh\b|private[_ ]?key|cookies?|password|credential|"
    r"\.aws\b|history",
    _I,
)
DESTRUCTIVE = re.compile(
    r"rmtree\(\s*[\"'](?:/|~|[a-z]:\\\\?)[\"']|\brm\s+-[a-z]*r[a-z]*f?\s+(?:/|~|\*)|"
    r"\bos\.fork\(\)|:\(\)\s*\{|\bmkfs\b|\bdd\s+if=|\bformat\s+[a-z]:|\bdel\s+/[sfq]\b|"
    r"(?:process_iter|net_connections|pids)\(\)[^\n]*\n[^\n]*\.(?:terminate|kill)\(|"
    r"\bshutdown\s+(?:-[hrs]|/[srf])|\bchmod\s+-R\s+777\s+/",
    _I,
)
REMOTE_EXEC = re.compile(
    r"\b(?:curl|wget)\b[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z|k)?sh\b|"
    r"\b(?:exec|eval)\(\s*(?:requests|urlopen|urllib)|\|\s*python\d?\b|"
    r"/bin/(?:ba)?sh\s+-i|\bnc\s+-e\b|\bdup2\(",
    _I,
)
LOOP = re.compile(
    r"\bwhile\s*\(?\s*(?:true|1)\s*\)?\s*:|\bwhile\s*\(\s*(?:true|1)\s*\)|\bfor\s*\(\s*;;\s*\)|"
    r"\brange\(\s*\d{3,}\s*\)",
    _I,
)
SPAWN = re.compile(r"subprocess\.|\.Process\(|\.start\(\)|os\.system\(|Popen\(", _I)
ENCRYPT = re.compile(r"\bFernet\b|\bCipher\(|\bAES\.new\b|\.encrypt\(", _I)
WRITE_BACK = re.compile(r"[\"'](?:r\+b|wb|w\+b)[\"']")
IMPORT = re.compile(r"^\s*(?:import\s+([\w., ]+)|from\s+([\w.]+)\s+import)", re.MULTILINE)

# ---- hidden text and segmentation ---------------------------------------------------------

INVISIBLE = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
TAG_CHARS = re.compile("[\U000e0000-\U000e007f]")
HTML_COMMENT = re.compile(r"<!--(.*?)-->", re.DOTALL)
HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:\.\d+)?(?:px|pt|em)?\b|"
    r"opacity\s*:\s*0(?:\.0+)?\b|color\s*:\s*(?:#fff(?:fff)?|white|transparent)\b",
    _I,
)
BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=])")
FENCE = re.compile(r"^\s*(```|~~~)")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|(?<=[.!?])(?=[A-Z][a-z])")
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$|^[^|]*\|[^|]*\|")

# ---- what a pattern cannot match without ------------------------------------------------
#
# Most sentences of a document carry no cue, and searching each of them with every pattern
# was most of the judge's time. The checks below are necessary conditions of the patterns,
# cheap to test: when one fails, its patterns cannot match and are not run.
#
# They look at the text lower-cased after folding the only four non-ASCII characters that
# IGNORECASE matches to an ASCII letter (U+0130 and U+0131 to "i", U+017F to "s", U+212A to
# "k"), so a dotted capital I in "ignore" is found as the patterns find it. Lower-casing
# keeps every other character's length and whether it is a word character, so a whole word
# stays one run of letters. Changing a pattern above means checking its entry here; the
# tests check these conditions on a large corpus and every recorded verdict.
_FOLDED = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"), ("\u212a", "k"))


def fold(text: str) -> str:
    """``text`` as the checks below read it (see above)."""
    if not text.isascii():
        for char, letter in _FOLDED:
            if char in text:
                text = text.replace(char, letter)
    return text.lower()


def _with_plurals(*words: str) -> set[str]:
    return {*words, *(f"{word}s" for word in words)}


# Necessary conditions of the searched patterns: every match of a pattern holds one of the
# entries of its set. An entry is a whole word (the pattern bounds it by \b or whitespace),
# the start of a word ("pars*"), a mark (any other substring), or GLUED.
GLUED = "<glued>"  # a match of _GLUED_ADDRESSEE
_GLUED_ADDRESSEE = re.compile(rf"p\.?s{_AI}\s*[,:]")  # "P.S." glued to the addressee: "psai,"
_AI_WORDS = (
    *("ai", "assistant", "chatbot", "bot", "model", "llm", "gpt", "chatgpt", "claude"),
    *("gemini", "copilot", "agent"),
)
ROLE_PREFIX_NEEDS = frozenset(
    # Its roles, after "#", "[", "(" ... and before ":", "]", ">", ")" or "--".
    {"system", "assistant", "ai", "a.i.", "chatbot", "bot", "llm", "model", "gpt", "chatgpt"}
    | {"claude", "gemini", "copilot", "instruction", "instructions"}
)
ROLE_HEADING_NEEDS = frozenset({"##"})
CHAT_TOKENS_NEEDS = frozenset(
    # "<|...|>", "[INST]" and "[/INST]", "<s>", "</s>", "<<SYS>>"; "BEGIN SYSTEM PROMPT".
    {"<|", "inst]", "s>", "system", "admin", "developer"}
)
OVERRIDE_NEEDS = frozenset(
    # Its verbs; "new instructions:" ("s?" after the noun); "your new task"; "(from) now
    # (on)", "you are now", "you must now"; "instead, you must".
    {"ignore", "disregard", "forget", "override", "overwrite", "bypass", "abandon", "discard"}
    | {"drop", "skip", "now", "instead", "goal", "purpose", "job"}
    | _with_plurals("instruction", "instructions", "task", "role", "rules", "objective")
    | _with_plurals("directive")
)
ADDRESS_AI_NEEDS = frozenset(
    # A model as the addressee (_AI, then "s?\b"), "a.i.", or glued to "P.S."; or the
    # model's own task ("when summarising this e-mail").
    {*_with_plurals(*_AI_WORDS), "a.i.", GLUED}
    | {"summari*", "process*", "pars*", "analy*", "answer*"}
)
CONCEAL_NEEDS = frozenset(
    # What is not to be mentioned; "without telling the user".
    {"mention", "reveal", "disclose", "tell", "show", "say", "user"}
)
OUTPUT_REF_NEEDS = frozenset(
    # _OUT.
    {"response", "responses", "reply", "replies", "answer", "answers", "output", "completion"}
)
FORCED_NEEDS = frozenset(
    # "reply only", "reply with", "... verbatim", "word for word", "exactly as written",
    # "begin your response with" (_OUT).
    {"respond", "reply", "answer", "output", "say", "print", "return", "verbatim", "word"}
    | {"written"}
    | OUTPUT_REF_NEEDS
)
OUTPUT_WEAK_REF_NEEDS = frozenset({"your"})
REPLY_IN_NEEDS = frozenset({"reply", "respond", "answer", "write", "speak", "talk"})
THIRD_PARTY_NEEDS = frozenset({"user", "users", "reader", "readers", "person", "requester"})
# In code blocks.
REMOTE_EXEC_NEEDS = frozenset(
    # "curl ... | sh", "| python"; "exec(requests..."; "/bin/sh -i"; "nc -e"; "dup2(".
    {"|", "exec(", "eval(", "/bin/", "-e", "dup2("}
)
DESTRUCTIVE_NEEDS = frozenset(
    {"rmtree(", "rm", "fork()", ":()", "mkfs", "if=", "format", "del", "shutdown", "chmod"}
    | {"process_iter()", "net_connections()", "pids()"}
)
NET_NEEDS = frozenset(
    # "https?://" and "http.client" start with "http".
    {"requests.", "urlopen", "http*", ".send", ".connect(", "smtplib", "ftplib", "paramiko"}
    | {"scp", "curl", "wget", "netcat", "nc", "endpoint(", "socket.socket(", "ssh"}
)
LOOP_NEEDS = frozenset({"while*", ";;", "range("})
ENCRYPT_NEEDS = frozenset({"fernet", "cipher(", "aes.new", ".encrypt("})
# Searched over a whole document only.
HIDDEN_STYLE_NEEDS = frozenset({"display*", "visibility*", "font-size", "opacity*", "color*"})
_DOCUMENT_NEEDS = HIDDEN_STYLE_NEEDS | {"begin", "end"}  # and CHAT_TOKENS' "BEGIN SYSTEM"
# Every byte but a lower-case ASCII letter, as a space: splitting the UTF-8 of folded text
# then gives its runs of letters, as "[a-z]+" would (the bytes of a non-ASCII character are
# all above 127), three times faster.
_LETTERS_ONLY = bytes(byte if ord("a") <= byte <= ord("z") else ord(" ") for byte in range(256))
_NONE: frozenset[str] = frozenset()


class _Entries:
    """The entries of some ``*_NEEDS`` sets, split by how they are looked for."""

    def __init__(self, *needs: frozenset[str]) -> None:
        entries = frozenset().union(*needs)
        self._words = frozenset(entry.encode() for entry in entries if entry.isalpha())
        # Word starts and marks, by the substring to look for.
        self._substrings = {
            entry.rstrip("*"): entry for entry in entries if not entry.isalpha() and entry != GLUED
        }
        self._glued = GLUED in entries

    def found_in(self, folded: str) -> set[str]:
        """The entries that the folded text holds."""
        runs = folded.encode("utf-8", "surrogatepass").translate(_LETTERS_ONLY).split()
        found = {word.decode() for word in self._words.intersection(runs)}
        found.update(entry for sub, entry in self._substrings.items() if sub in folded)
        if self._glued and _GLUED_ADDRESSEE.search(folded):
            found.add(GLUED)
        return found


_SENTENCE_ENTRIES = _Entries(
    ROLE_PREFIX_NEEDS,
    ROLE_HEADING_NEEDS,
    CHAT_TOKENS_NEEDS,
    OVERRIDE_NEEDS,
    ADDRESS_AI_NEEDS,
    CONCEAL_NEEDS,
    FORCED_NEEDS,
    OUTPUT_REF_NEEDS,
    OUTPUT_WEAK_REF_NEEDS,
    REPLY_IN_NEEDS,
    THIRD_PARTY_NEEDS,
    _DOCUMENT_NEEDS,
)
_CODE_ENTRIES = _Entries(REMOTE_EXEC_NEEDS, DESTRUCTIVE_NEEDS, NET_NEEDS, LOOP_NEEDS, ENCRYPT_NEEDS)


def found_in_code(code: str) -> set[str]:
    """The entries of the code patterns' ``*_NEEDS`` sets that ``code`` holds."""
    return _CODE_ENTRIES.found_in(fold(code))


class Hints:
    """The entries of the sentence patterns' ``*_NEEDS`` sets in a document, to test the
    document and its sentences by.

    A sentence's whole words are whole words of the document too when the sentence is cut
    from it at a line break, whitespace, a "|" or sentence punctuation, as the judge cuts
    it; the other entries are plain substrings. So a document without any entry proves all
    its sentences clean at once, and a sentence is then tested for the few its document
    has, or not at all when its line (as ``str.splitlines`` cuts the document) has none.
    """

    def __init__(self, document: str) -> None:
        folded = fold(document)
        self.found = _SENTENCE_ENTRIES.found_in(folded)
        # What to look for in a sentence: (substring, entry); a word as a substring too.
        sentence_entries = self.found - _DOCUMENT_NEEDS - {GLUED}
        self._present = [(entry.rstrip("*"), entry) for entry in sentence_entries]
        self._glued = GLUED in self.found
        self._lines = self._lines_with_entries(folded)

    def _lines_with_entries(self, folded: str) -> set[int] | None:
        """The numbers of the lines where an entry occurs (None: maybe any line)."""
        if self._glued:
            return None  # rare, and its whitespace may span lines: no line is ruled out
        ends = list(itertools.accumulate(map(len, folded.splitlines(keepends=True))))
        lines = set()
        for sub, _ in self._present:
            start = folded.find(sub)
            while start >= 0:
                lines.add(bisect.bisect_right(ends, start))
                start = folded.find(sub, start + 1)
        return lines

    def quiet(self, line: int | None) -> bool:
        """True when no entry occurs on the document's ``line`` (a line number as
        ``str.splitlines`` cuts the document; None: unknown)."""
        if not self._present and not self._glued:
            return True
        return line is not None and self._lines is not None and line not in self._lines

    def found_in(self, sentence: str) -> frozenset[str] | set[str]:
        """The entries in ``sentence``, cut from the document: all those it holds, and maybe
        a few more (a word is looked for as a substring: "yours" gives "your")."""
        if not self._present and not self._glued:
            return _NONE
        folded = fold(sentence)
        found = {entry for sub, entry in self._present if sub in folded}
        if self._glued and _GLUED_ADDRESSEE.search(folded):
            found.add(GLUED)
        return found

    def may_hold_chat_tokens(self) -> bool:
        """False when CHAT_TOKENS cannot match anywhere in the document."""
        return bool(self.found & {"<|", "inst]", "s>"}) or (
            bool(self.found & {"begin", "end"})
            and bool(self.found & {"system", "admin", "developer"})
        )


def _starts(alternation: str) -> tuple[str, ...]:
    """The literal beginning of each alternative of ``"(?:a|b...)"`` or ``"a|b..."``: how
    folded text begins where one matches (``"summari"`` for ``summari[sz]e``)."""
    inner = alternation[3:-1] if alternation.startswith("(?:") else alternation
    alternatives, depth, current = [], 0, ""
    for char in inner:
        depth += (char == "(") - (char == ")")
        if char == "|" and depth == 0:
            alternatives.append(current)
            current = ""
        else:
            current += char
    starts = tuple(re.split(r"[^a-z']", part, maxsplit=1)[0] for part in [*alternatives, current])
    if not all(starts):
        raise ValueError(f"an alternative opens with no literal: {alternation}")
    return starts


def _by_first_letter(starts: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """``starts`` grouped by first letter: a sentence is compared with its letter's only."""
    groups: dict[str, list[str]] = {}
    for start in starts:
        groups.setdefault(start[0], []).append(start)
    return {letter: tuple(group) for letter, group in groups.items()}


# TASK_START and FORM_START open with an opener, "can/could/would/will you", "i want you
# to", or their verb; IMPERATIVE_START with a "Label:" of up to 21 characters, or with an
# opener or any of its verbs.
_REQUEST_STARTS = (
    *_starts(_OPENER_WORD),
    *("can", "could", "would", "will", "i"),
    *_starts(_TASK_VERB),
    *_starts(_FORM_VERB),
)
_REQUEST_BY_LETTER = _by_first_letter(_REQUEST_STARTS)
_IMPERATIVE_BY_LETTER = _by_first_letter(
    (*_REQUEST_STARTS, *_starts(_INSERT_VERB), *_starts(_ROUTINE_VERBS))
)
_LABEL_END = 22  # IMPERATIVE_START's label: a letter, up to 20 more, then ":"


def may_request(sentence: str) -> bool:
    """False when neither TASK_START nor FORM_START can match ``sentence``."""
    folded = fold(sentence)
    return folded.startswith(_REQUEST_BY_LETTER.get(folded[:1], ()))


def may_be_imperative(sentence: str) -> bool:
    """False when IMPERATIVE_START cannot match ``sentence``."""
    if ":" in sentence[:_LABEL_END]:
        return True
    folded = fold(sentence)
    return folded.startswith(_IMPERATIVE_BY_LETTER.get(folded[:1], ()))
