"""``pipeline.injection`` as it was before the speed work (commit 6d9ecd2), frozen.

Benchmark-only: ``injection_speed`` times it beside the current module in the same run,
so the ratio does not depend on how busy the shared machine is. The equivalence test
(``tests/pipeline/signals/test_injection_equivalence.py``) compares against recorded verdicts of
this code, not against this file. Do not edit; the original module docstring follows.

Indirect prompt injection: instructions hidden in a document and aimed at the model.

The evidence filter (``evidence``) asks this module about every retrieved chunk. Documents
are full of imperatives addressed to their human reader ("please reply by Friday", "use
try/except here", "click here to unsubscribe"); what marks an injection is the addressee
and the object of the instruction:

- the *model's output* is the object: "translate your response", "add this link to your
  reply", "begin your answer with" (a person reading an email has no "response" to be
  encoded in Base64 or sprinkled with typos), unless the sentence is plainly about the
  reader's own correspondence ("include your order number in your reply to this email");
- the *model* is the addressee: role markers (``system:``, ``### Instruction``, chat
  template tokens), "ignore previous instructions", "if you are an AI", "tell the user";
- the instruction is a *task switch*: a request or general-knowledge question unrelated
  to the rest of the document and to the query, in a document that is not itself a list
  of instructions and not addressed to a correspondent ("are you free on Friday?");
- a *payload* rides along: a code block the text asks to incorporate whose operations
  (sending local data away, deleting the disk, piping a download to a shell) or imports
  have nothing to do with the discussion around it;
- the instruction is *hidden*: invisible characters, HTML comments, hiding styles, or
  natural language smuggled in Base64.

Each sentence (a table cell; a code block with the sentence introducing it) gets a score
from its cues; the document's score is its worst unit, raised a little by other flagged
units. A score of DETECTED (0.5) or more means "instructions aimed at the model"; lower
scores are weaker cues the evidence scorer weighs against relevance. Reasons are codes,
never document text, so they can be logged. The topic check uses ``analysis.terms``.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from sentinel_runtime.index import analysis

DETECTED = 0.5
REPORTED = 0.25  # cues below this are not named in the reasons

_I = re.IGNORECASE

# ---- the model's output as the object of an instruction -------------------------------

_OUT = r"(?:response|reply|replies|answer|answers|output|completion|responses)"
_OUTPUT_REF = re.compile(
    rf"\b(?:your|the\s+assistant'?s?|the\s+ai'?s?|the\s+model'?s?)\s+(?:\w+\s+)?{_OUT}\b"
    rf"|\b(?:any|every|each|all|the)\s+(?:of\s+your\s+)?{_OUT}\s+(?:you|that\s+you)\s+"
    r"(?:give|write|produce|return|generate|provide|send|output)\b",
    _I,
)
_OUTPUT_WEAK_REF = re.compile(
    r"\byour\s+(?:\w+\s+)?(?:message|messages|text|words|writing|summary|result|sentences?)\b",
    _I,
)
_REPLY_IN = re.compile(r"\b(?:reply|respond|answer|write|speak|talk)\s+(?:in|using|with)\b", _I)
_LANGUAGE = (
    r"(?:english|spanish|german|french|italian|portuguese|russian|chinese|mandarin|japanese|"
    r"korean|arabic|hindi|bengali|urdu|turkish|dutch|swedish|norwegian|danish|finnish|polish|"
    r"czech|greek|hebrew|persian|farsi|thai|vietnamese|indonesian|swahili|latin|klingon|"
    r"esperanto|another\s+language|a\s+different\s+language|other\s+languages?)"
)
# Changes of form that nobody asks of a human correspondent's reply.
_TRANSFORM = re.compile(
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
_INSERT = re.compile(rf"\b{_INSERT_VERB}\b", _I)
_FORM_VERB = (
    r"(?:translate|render|encode|encrypt|convert|reverse|invert|replace|substitute|swap|shift|"
    r"group|combine|anagram|spell|format|present|display|express|reply|respond|answer|write|"
    r"apply|output|deliver|return|print|type|ignore|disregard|forget|stop|do|don't|never|"
    r"only|always)"
)
_LINK = re.compile(
    r"\b(?:https?://|www\.)\S+|\b[\w-]+\.(?:com|net|org|io|xyz|info|biz|co|ru|cn|top|link|"
    r"click|app|site|online)\b|\b[\w.+-]+@[\w-]+\.[\w.]+\b",
    _I,
)
# The reader's own data and correspondence: "include your order number in your reply to
# this email by Friday" is a request to a person, not to a model.
_READER = re.compile(
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
_ROLE_PREFIX = re.compile(
    r"^\s*(?:[#>*\-\[<(]+\s*)?(?:(?:the\s+)?(?:ai|a\.i\.)\s+)?(?:system|assistant|ai|a\.i\.|"
    r"chat\s?bot|llm|language\s+model|gpt|chatgpt|claude|gemini|copilot|model|"
    r"instructions?|new\s+instructions?|important\s+instructions?|system\s+prompt|"
    r"system\s+message)\s*(?::|\]|>|\)|-{2,})\s*",
    _I,
)
_ROLE_HEADING = re.compile(
    r"^\s*#{2,}\s*(?:instruction|instructions|system|response|assistant|task)\b", _I
)
_CHAT_TOKENS = re.compile(
    r"<\|(?:im_start|im_end|system|assistant|user|endoftext|eot_id|start_header_id|"
    r"end_header_id)\|>|\[/?INST\]|<<SYS>>|<</SYS>>|</?s>|\b(?:BEGIN|END)\s+(?:SYSTEM|ADMIN|"
    r"DEVELOPER)\s+(?:PROMPT|MESSAGE|INSTRUCTIONS?)\b",
    _I,
)
_OVERRIDE = re.compile(
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
_ADDRESS_AI = re.compile(
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
_CONCEAL = re.compile(
    r"\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose|tell|show|say)\s+(?:\w+\s+){0,3}"
    r"(?:instructions?|this\s+(?:message|note|text|request)|these\s+(?:lines|words)|"
    r"(?:to\s+)?the\s+user)\b|\bwithout\s+(?:telling|informing|alerting|notifying)\s+the\s+user\b",
    _I,
)
_FORCED = re.compile(
    r"\b(?:respond|reply|answer|output|say|print|return)\s+(?:only|just|solely|exclusively)\b"
    r"|\b(?:respond|reply|answer)\s+with\s+(?:\w+\s+){0,3}?(?:only|and\s+nothing\s+else)\b"
    r"|\b(?:output|print|repeat|say|return|reproduce|write)\s+(?:the\s+following|this|these|"
    r"exactly)\b[^.?!]{0,40}\b(?:verbatim|word\s+for\s+word|exactly\s+as\s+written)\b"
    r"|\b(?:begin|start|prefix|open|end|finish|conclude)\s+(?:each|every|all|your|the)\s+"
    rf"(?:\w+\s+)?{_OUT}\s+(?:with|by)\b",
    _I,
)
_THIRD_PARTY = re.compile(
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
_OPENER = (
    r"(?:(?:please|kindly|also|now|then|next|first|finally|and|just|always|remember\s+to|"
    r"make\s+sure\s+(?:to|that)|be\s+sure\s+to|don't\s+forget\s+to|do\s+not\s+forget\s+to|"
    rf"in\s+(?:your|the|each|every)\s+(?:\w+\s+)?{_OUT})\s*,?\s+)*"
)
_TASK_START = re.compile(
    rf"^{_OPENER}(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|i\s+(?:want|need|would\s+"
    rf"like)\s+you\s+to\s+)?{_TASK_VERB}\b(?!\s*(?:here|below|above|:))",
    _I,
)
_FORM_START = re.compile(rf"^{_OPENER}{_FORM_VERB}\b", _I)
# Any imperative opening, for judging whether a document is a list of instructions.
_IMPERATIVE_START = re.compile(
    rf"^(?:[A-Z][\w ]{{0,20}}:\s*)?{_OPENER}(?:{_INSERT_VERB}|{_FORM_VERB}|{_TASK_VERB}|open|"
    r"click|run|go|press|mix|bake|wait|check|choose|select|enter|install|restart|remove|turn|"
    r"set|try|call|visit|download|fill|send|contact|read|bring|take|store|avoid|follow|"
    r"prepare|practise|practice|study|complete|submit|return|sign|log|save|copy|paste|"
    r"type|pick|cut|stir|heat|pour|boil|serve|drink|eat|sleep|rest|stay)\b",
    _I,
)
_INSTRUCTIONAL_SHARE = 0.3
# The mood of an instruction: an imperative opening a clause, or a request or obligation
# put to "you".
_DIRECTIVE = re.compile(
    rf"(?:^|[,;:]\s*|\b(?:and|then)\s+){_OPENER}(?:{_INSERT_VERB}|{_FORM_VERB}|{_TASK_VERB})\b"
    r"|\b(?:can|could|would|will)\s+you\b|\byou\s+(?:must|should|shall|need\s+to|have\s+to|"
    r"are\s+(?:to|required\s+to|expected\s+to)|will\s+need\s+to)\b"
    r"|\bi\s+(?:want|need|would\s+like)\s+you\s+to\b|\bit\s+is\s+(?:important|essential|"
    r"crucial|necessary|vital|mandatory)\s+(?:that|to)\b|\bensure\b|\bmake\s+sure\b",
    _I,
)
_QUESTION_START = re.compile(
    r"^(?:who|whom|whose|what|what's|which|when|where|why|how|is|are|was|were|do|does|did|"
    r"can|could|should|would|will|has|have|had)\b",
    _I,
)
_GENERIC_YOU = re.compile(r"\bhow\s+(?:do|would|can)\s+you\s+(?:say|spell|pronounce|write)\b", _I)
_PARTICIPANT = re.compile(r"\b(?:you|your|yours|we|our|us)\b", _I)
# An apostrophe followed by a letter ("they'd") does not close a single-quoted span.
_QUOTED = re.compile(
    r"(?<!\w)'(?:[^'\n]|'(?=\w)){2,}'(?!\w)|\"[^\"\n]{2,}\"|\u201c[^\u201d\n]{2,}\u201d"
    r"|\u2018[^\u2019\n]{2,}\u2019"
)
_MIN_CONTEXT_TERMS = 8  # fewer, and "unrelated to the rest" cannot be judged well
_TINY_CONTEXT_TERMS = 4

# ---- payloads -----------------------------------------------------------------------------

_CODE_FOLLOWS = re.compile(
    r"\b(?:following|below|subsequent|next|this|these|attached|above)\s+(?:\w+\s+)?"
    r"(?:code|snippet|block|excerpt|section|lines?|script|function|commands?)\b",
    _I,
)
_YOUR_WORK = re.compile(
    r"\byour\s+(?:\w+\s+)?(?:code(?:base)?|implementation|solution|algorithm|program|script|"
    r"function|project|app|application|module|logic|functionality|response|answer|reply)\b"
    r"|\byour\s+code'?s\b",
    _I,
)
_NET = re.compile(
    r"\brequests\.(?:post|put|patch|get)\b|\burlopen\b|\bhttp\.client\b|\.sendall?\(|"
    r"\.connect\(\s*\(|\bsmtplib\b|\bftplib\b|\bparamiko\b|\bscp\b|\bcurl\b|\bwget\b|"
    r"\bnetcat\b|\bnc\s+-|Endpoint\(|socket\.socket\(|\bssh\s+-[LRD]\b|https?://",
    _I,
)
_LOCAL_DATA = re.compile(
    r"\bopen\(|clipboard|pbpaste|xclip|getpass|getuser|os\.environ|\bkeyboard\b|pynput|"
    r"keylog|screenshot|screencapture|imagegrab|x11grab|\bmss\b|working_set|platform\.|"
    r"uname|/etc/(?:passwd|shadow)|\.ssh\b|private[_ ]?key|cookies?|password|credential|"
    r"\.aws\b|history",
    _I,
)
_DESTRUCTIVE = re.compile(
    r"rmtree\(\s*[\"'](?:/|~|[a-z]:\\\\?)[\"']|\brm\s+-[a-z]*r[a-z]*f?\s+(?:/|~|\*)|"
    r"\bos\.fork\(\)|:\(\)\s*\{|\bmkfs\b|\bdd\s+if=|\bformat\s+[a-z]:|\bdel\s+/[sfq]\b|"
    r"(?:process_iter|net_connections|pids)\(\)[^\n]*\n[^\n]*\.(?:terminate|kill)\(|"
    r"\bshutdown\s+(?:-[hrs]|/[srf])|\bchmod\s+-R\s+777\s+/",
    _I,
)
_REMOTE_EXEC = re.compile(
    r"\b(?:curl|wget)\b[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z|k)?sh\b|"
    r"\b(?:exec|eval)\(\s*(?:requests|urlopen|urllib)|\|\s*python\d?\b|"
    r"/bin/(?:ba)?sh\s+-i|\bnc\s+-e\b|\bdup2\(",
    _I,
)
_LOOP = re.compile(
    r"\bwhile\s*\(?\s*(?:true|1)\s*\)?\s*:|\bwhile\s*\(\s*(?:true|1)\s*\)|\bfor\s*\(\s*;;\s*\)|"
    r"\brange\(\s*\d{3,}\s*\)",
    _I,
)
_SPAWN = re.compile(r"subprocess\.|\.Process\(|\.start\(\)|os\.system\(|Popen\(", _I)
_ENCRYPT = re.compile(r"\bFernet\b|\bCipher\(|\bAES\.new\b|\.encrypt\(", _I)
_WRITE_BACK = re.compile(r"[\"'](?:r\+b|wb|w\+b)[\"']")
_IMPORT = re.compile(r"^\s*(?:import\s+([\w., ]+)|from\s+([\w.]+)\s+import)", re.MULTILINE)

# ---- hidden text and segmentation ---------------------------------------------------------

_INVISIBLE = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_TAG_CHARS = re.compile("[\U000e0000-\U000e007f]")
_HTML_COMMENT = re.compile(r"<!--(.*?)-->", re.DOTALL)
_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:\.\d+)?(?:px|pt|em)?\b|"
    r"opacity\s*:\s*0(?:\.0+)?\b|color\s*:\s*(?:#fff(?:fff)?|white|transparent)\b",
    _I,
)
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=])")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|(?<=[.!?])(?=[A-Z][a-z])")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$|^[^|]*\|[^|]*\|")


@dataclass(frozen=True)
class InjectionAssessment:
    score: float  # 0 .. 1; >= DETECTED means instructions aimed at the model
    reasons: tuple[str, ...] = ()  # codes of the cues that scored >= REPORTED

    @property
    def detected(self) -> bool:
        return self.score >= DETECTED


CLEAN = InjectionAssessment(0.0)


@dataclass(frozen=True)
class _Unit:
    text: str
    kind: str  # "prose", "cell", "code" (a block and the sentence introducing it), "codeline"
    code: str = ""
    line_alone: bool = False  # the unit is a whole line of its own


Cue = tuple[str, float]


def _noisy_or(scores: list[float]) -> float:
    remaining = 1.0
    for score in scores:
        remaining *= 1.0 - max(0.0, min(1.0, score))
    return 1.0 - remaining


def _sentences(line: str) -> list[str]:
    """The sentences of a line; a quotation is never cut, whatever punctuation it holds."""
    masked = _QUOTED.sub(lambda m: "x" * len(m.group(0)), line)
    cuts = [0, *(m.end() for m in _SENTENCE_END.finditer(masked)), len(line)]
    parts = (line[a:b].strip() for a, b in itertools.pairwise(cuts))
    return [p for p in parts if p]


def _introduces_code(line: str) -> bool:
    stripped = line.strip()
    return stripped.endswith(":") and bool(_CODE_FOLLOWS.search(stripped))


def _units(text: str) -> list[_Unit]:
    units: list[_Unit] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if _FENCE.match(line):
            end = index + 1
            while end < len(lines) and not _FENCE.match(lines[end]):
                # A sentence introducing the next block cannot be inside this one: text
                # inserted into the middle of a code block would otherwise hide there.
                if (
                    _introduces_code(lines[end])
                    and end + 1 < len(lines)
                    and _FENCE.match(lines[end + 1])
                ):
                    break
                end += 1
            code = "\n".join(lines[index + 1 : end])
            intro = ""
            if units and units[-1].kind == "prose" and units[-1].text.rstrip().endswith(":"):
                intro = units.pop().text  # "add the following code:" travels with its block
            units.append(_Unit(intro, "code", code))
            # Comments and strings in code can carry instructions too.
            units.extend(_Unit(c.strip(), "codeline") for c in code.splitlines() if c.strip())
            index = end + 1 if end < len(lines) and _FENCE.match(lines[end]) else end
            continue
        stripped = line.strip()
        index += 1
        if not stripped:
            continue
        if _TABLE_ROW.match(stripped):
            units.extend(_Unit(c.strip(), "cell") for c in stripped.split("|") if c.strip())
            continue
        parts = _sentences(stripped)
        units.extend(_Unit(part, "prose", line_alone=len(parts) == 1) for part in parts)
    return units


# ---- cues ---------------------------------------------------------------------------------


def _directive_cues(text: str) -> list[Cue]:
    """Cues that the sentence instructs the model (its output, its role, its rules)."""
    cues: list[Cue] = []
    if _CHAT_TOKENS.search(text):
        cues.append(("role_marker", 0.9))
    elif _ROLE_PREFIX.match(text) or _ROLE_HEADING.match(text):
        cues.append(("role_marker", 0.6))
    if _OVERRIDE.search(text):
        cues.append(("override_instructions", 0.85))
    if _ADDRESS_AI.search(text):
        cues.append(("addressed_to_model", 0.8))
    if _CONCEAL.search(text):
        cues.append(("concealment", 0.7))
    if _FORCED.search(text):
        cues.append(("forced_output", 0.7))
    body = _ROLE_PREFIX.sub("", _QUOTED.sub(" ", text)).strip()
    if not _DIRECTIVE.search(body):
        return cues
    reader = bool(_READER.search(text))
    output_ref = _OUTPUT_REF.search(text)
    if _TRANSFORM.search(text) and (
        output_ref or _OUTPUT_WEAK_REF.search(text) or _REPLY_IN.search(text)
    ):
        cues.append(("output_transform", 0.4 if reader else 0.85))
    elif output_ref and _INSERT.search(text):
        score = 0.9 if _LINK.search(text) or _THIRD_PARTY.search(text) else 0.75
        cues.append(("content_insertion", 0.2 if reader else score))
    elif output_ref:
        cues.append(("output_directive", 0.15 if reader else 0.35))
    if _THIRD_PARTY.search(text) and not reader:
        cues.append(("user_redirect", 0.3))
    return cues


def _topic(text: str) -> set[str]:
    """Content terms without bare numbers: "2" in a table says nothing about its topic."""
    return {t for t in analysis.terms(text) if not t.isdigit()}


def _request_kind(text: str) -> str | None:
    """Whether ``text`` is an imperative ``"task"``, a ``"question"``, or neither (None)."""
    bare = _QUOTED.sub(" ", text).strip()
    if _TASK_START.match(bare):
        return "task"
    form = _FORM_START.match(bare)
    if form and _TRANSFORM.search(bare, form.end()):  # "Reverse osmosis ..." is no request
        return "task"
    if bare.endswith("?") and _QUESTION_START.match(bare):
        return "question"
    return None


def _task_switch(
    unit: _Unit,
    own: set[str],
    document: Counter[str],
    query: set[str],
    *,
    instructional: bool,
    tabular: bool,
) -> float:
    """A request unrelated to the rest of the ``document`` and to the ``query``.

    ``document`` counts, for every term, the units it occurs in; ``own`` is this unit's.
    """
    kind = _request_kind(unit.text) if unit.kind == "prose" else None
    if kind is None or not 3 <= len(unit.text.split()) <= 60 or len(own) < 2:
        return 0.0
    related = sum(1 for t in own if document[t] > 1 or t in query)
    if related / len(own) > 0.25:
        return 0.0
    around = len(document) - sum(1 for t in own if document[t] == 1)
    bare = _QUOTED.sub(" ", unit.text)
    if _READER.search(bare) or (_PARTICIPANT.search(bare) and not _GENERIC_YOU.search(bare)):
        return 0.2  # "are you free on Friday?", "send us your receipt": correspondence
    if around < _TINY_CONTEXT_TERMS:
        return 0.0  # a document that is only a question has nothing to switch from
    if tabular or unit.line_alone:
        score = 0.65 if kind == "task" else 0.6
    else:
        # A rhetorical question inside a paragraph is common prose; an inserted request
        # usually stands on a line of its own.
        score = 0.5 if kind == "task" else 0.4
    if instructional:
        score -= 0.2  # a how-to or a worksheet is made of requests
    if around < _MIN_CONTEXT_TERMS:
        score -= 0.15
    return score


def _imported_modules(code: str) -> set[str]:
    modules = {
        part.strip().split(".")[0].split(" as ")[0].strip()
        for match in _IMPORT.finditer(code)
        for group in match.groups()
        if group
        for part in group.split(",")
    }
    modules.discard("")
    return modules


def _code_cues(unit: _Unit, document_terms: Counter[str]) -> list[Cue]:
    if unit.kind != "code" or not unit.code.strip():
        return []
    cues: list[Cue] = []
    code = unit.code
    asked = bool(unit.text and _CODE_FOLLOWS.search(unit.text) and _YOUR_WORK.search(unit.text))
    if asked:
        cues.append(("code_insertion", 0.3))
        modules = _imported_modules(code)
        outside = document_terms - Counter(_topic(code))
        if modules and all(analysis.stem(m.lower()) not in outside for m in modules):
            cues.append(("foreign_code", 0.3))  # imports the discussion never mentions
    if _REMOTE_EXEC.search(code):
        cues.append(("remote_code_execution", 0.7))
    if _DESTRUCTIVE.search(code):
        cues.append(("destructive_code", 0.6))
    if _NET.search(code) and _LOCAL_DATA.search(code):
        cues.append(("exfiltration", 0.4))
    if _LOOP.search(code) and (_NET.search(code) or _SPAWN.search(code)):
        cues.append(("resource_abuse", 0.4))
    if _ENCRYPT.search(code) and _NET.search(code) and _WRITE_BACK.search(code):
        cues.append(("ransomware", 0.5))
    return cues


def _hidden_cues(raw: str) -> tuple[list[Cue], str]:
    """Cues of hidden text, and the text with what was hidden made visible."""
    cues: list[Cue] = []
    if _TAG_CHARS.search(raw):
        cues.append(("hidden_text", 0.9))  # Unicode tags smuggle invisible ASCII
    elif len(_INVISIBLE.findall(raw)) >= 3:
        cues.append(("hidden_text", 0.35))
    visible = unicodedata.normalize("NFKC", _INVISIBLE.sub("", raw))
    for comment in _HTML_COMMENT.findall(visible):
        inner = [s for _, s in _directive_cues(comment.strip())]
        if _request_kind(comment.strip()):
            inner.append(0.5)
        if inner:
            cues.append(("hidden_instructions", max(0.8, *inner)))
    if _HIDDEN_STYLE.search(visible):
        cues.append(("hidden_text", 0.3))
    for run in _BASE64_RUN.findall(visible):
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        letters = sum(ch.isalpha() or ch.isspace() for ch in decoded)
        if len(decoded.split()) >= 3 and letters > 0.8 * len(decoded):
            # Prose hidden in Base64 is unusual on its own; instructions in it are worse.
            inner = [s for _, s in _directive_cues(decoded)]
            cues.append(("encoded_instructions", max(0.5, *inner) if inner else 0.5))
    return cues, visible


# ---- the judge ----------------------------------------------------------------------------


def assess_injection(text: str, query: str = "") -> InjectionAssessment:
    """Judge ``text`` for instructions aimed at the model that reads it."""
    if not text or not text.strip():
        return CLEAN
    hidden, visible = _hidden_cues(text)
    units = _units(visible)
    unit_terms = [_topic(f"{u.text}\n{u.code}") for u in units]
    document_terms: Counter[str] = Counter()
    for unit, found in zip(units, unit_terms, strict=True):
        if unit.kind != "codeline":  # counted with its block
            document_terms.update(found)
    query_terms = _topic(query)
    tabular = sum(1 for line in visible.splitlines() if _TABLE_ROW.match(line.strip())) >= 3
    imperative = [u.kind == "prose" and bool(_IMPERATIVE_START.match(u.text)) for u in units]
    prose = sum(1 for u in units if u.kind == "prose")
    scored: list[tuple[float, list[str]]] = []
    for unit, own, is_imperative in zip(units, unit_terms, imperative, strict=True):
        cues = _directive_cues(unit.text) if unit.text else []
        others = sum(imperative) - is_imperative
        instructional = others >= max(1.0, _INSTRUCTIONAL_SHARE * (prose - 1))
        switch = _task_switch(
            unit, own, document_terms, query_terms, instructional=instructional, tabular=tabular
        )
        if switch:
            cues.append(("task_switch", switch))
        cues.extend(_code_cues(unit, document_terms))
        if cues:
            score = _noisy_or([s for _, s in cues])
            scored.append((score, [r for r, s in cues if s >= REPORTED]))
    if _CHAT_TOKENS.search(visible):
        # Template tokens can sit anywhere, even where "|" makes a line look like a table.
        scored.append((0.9, ["role_marker"]))
    if hidden:
        scored.append((_noisy_or([s for _, s in hidden]), [r for r, _ in hidden]))
    if not scored:
        return CLEAN
    scored.sort(key=lambda item: -item[0])
    top = scored[0][0]
    # Several flagged units say more than one, but weak cues never add up to a detection
    # on their own: the bonus is proportional to the worst unit.
    others = sum(1 for score, _ in scored[1:] if score >= REPORTED)
    score = min(1.0, top * (1.0 + min(0.15, 0.05 * others)))
    reasons = tuple(dict.fromkeys(r for s, rs in scored if s >= REPORTED for r in rs))
    return InjectionAssessment(round(score, 3), reasons)
