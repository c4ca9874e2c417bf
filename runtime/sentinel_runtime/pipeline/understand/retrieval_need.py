"""Does a turn need the user's documents? (stage 1's retrieval necessity)

Every question retrieves: behind a RAG runtime, "What is Kestrel?" is most likely about the
indexed corpus, and skipping retrieval turns it into "not in the documents". Only turns no
document could help with need none: greetings, thanks and small talk, arithmetic, and
rewriting, translating, summarising or proofreading text pasted into the same message.
Every verdict carries a reason code, so the trace and the gate's plan can say why.
``introspection`` calls :func:`assess` for non-harmful prompts; ``gate`` turns "none" into
no_retrieve. English and German.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sentinel_runtime.pipeline.types import RetrievalNeed


@dataclass(frozen=True)
class NeedAssessment:
    need: RetrievalNeed
    # greeting, thanks, small_talk, arithmetic, pasted_text_task (need none);
    # document_reference (required); question, information_request, open_request (optional).
    reason: str


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE)


_NEEDS_DOCUMENTS = _rx(
    r"\b(?:my|our|the|this|these|attached|uploaded|provided|internal|company)\s+(?:\w+\s+)?"
    r"(?:documents?|docs|files?|pdfs?|reports?|contracts?|polic(?:y|ies)|handbook|manual|"
    r"notes|records|knowledge\s+base|wiki|runbooks?|tickets?|emails?|spreadsheets?|"
    r"slides|transcripts?|minutes|specs?|specifications)\b",
    r"\b(?:according\s+to|based\s+on|from|in)\s+(?:the|our|my)\s+(?:\w+\s+)?(?:sources?|"
    r"index|corpus|context|documentation|data)\b",
    r"\b(?:our|my\s+company's|the\s+company's)\b",
    r"\bcite\b|\bcitations?\b|\bsources?\b",
    # German: "unser" is the "our" of a company's own material; the rest mirrors the above.
    r"\bunser(?:e|er|em|en|es)?\b",
    r"\b(?:die|der|das|den|dem|diese[mnrs]?|meine[mnrs]?|beigefügte[mnrs]?|angehängte[mnrs]?|"
    r"hochgeladene[mnrs]?|interne[mnrs]?)\s+(?:\w+\s+)?(?:dokument(?:e|en|s)?|unterlagen|"
    r"dateien|datei|handbuch(?:s|es)?|richtlinien?|verträgen?|vertrag(?:s|es)?|berichte?n?|"
    r"protokoll(?:e|en|s)?|notizen|wiki|tickets?|e-?mails?|folien|spezifikation(?:en)?)\b",
    r"\b(?:laut|gemäß)\s+(?:den|dem|der)\s+(?:\w+\s+)?(?:quellen?|index|dokument(?:en)?|"
    r"unterlagen|daten|dokumentation)\b",
    r"\bquellen?\b|\bzitier\w*\b",
)

# --- Small talk: every fragment of the turn is a greeting, a thank-you or a pleasantry.
_FRAGMENT_BREAK = re.compile(r"[,.!?;:()\n]+|\s+-\s+")
_FRAGMENT_EDGES = re.compile(r"^[^\w']+|[^\w']+$")
_WH_WORD = r"(?:what|who|when|where|which|why|how|was|wer|wann|wo|warum|wie|welche\w*)"
_GREETING = re.compile(
    r"^(?:hi|hello|hey|hiya|heya|howdy|yo|greetings|good\s+(?:morning|afternoon|evening|day)|"
    r"morning|evening|hallo|guten\s+(?:morgen|tag|abend)|moin(?:\s+moin)?|servus|"
    r"grüß\s+gott|grüezi)"
    # One addressee ("Hi Anna", "hello there"), never a question word ("hi what ...").
    rf"(?:\s+(?!{_WH_WORD}\b)[\w'-]+)?$",
    re.IGNORECASE,
)
_THANKS = re.compile(
    r"^(?:thanks|thank\s+(?:you|u)|thx|ty|tysm|cheers|many\s+thanks|much\s+appreciated|"
    r"(?:i\s+)?appreciate\s+it|danke(?:\s+schön|\s+sehr)?|dankeschön|vielen\s+dank|"
    r"besten\s+dank|herzlichen\s+dank|merci)"
    r"(?:\s+(?:so\s+much|a\s+lot|very\s+much|again|a\s+bunch|everyone|all|you|sehr|vielmals|"
    r"nochmal|dir|ihnen|euch))*"
    r"(?:\s+(?:for|für)(?:\s+[\w'-]+){1,4})?$",
    re.IGNORECASE,
)
_PLEASANTRY = re.compile(
    r"^(?:how\s+are\s+(?:you|u)(?:\s+(?:doing|today))*|how(?:'s|\s+is)\s+it\s+going|"
    r"how\s+are\s+things|what'?s\s+up|sup|how\s+do\s+you\s+do|nice\s+to\s+meet\s+you|"
    r"good\s+to\s+see\s+you|(?:good\s*)?bye(?:\s+bye)?|see\s+(?:you|ya)(?:\s+(?:later|soon|"
    r"tomorrow))?|talk\s+(?:to\s+you\s+)?(?:later|soon)|have\s+a\s+(?:nice|good|great)\s+"
    r"(?:day|evening|weekend)|ok(?:ay)?|cool|great|awesome|perfect|nice|got\s+it|"
    r"sounds\s+good|all\s*right|you'?re\s+welcome|no\s+problem|np|lol|"
    r"wie\s+geht(?:'s|s|\s+es)(?:\s+(?:dir|ihnen|euch))?|alles\s+klar|tschüss?|ciao|"
    r"auf\s+wiedersehen|bis\s+(?:später|bald|dann|morgen)|schönen\s+(?:tag|abend)|super|"
    r"prima|toll|passt|gut|sehr\s+gut)$",
    re.IGNORECASE,
)

# --- Arithmetic: an expression of numbers and operators, maybe after "what is" or "berechne".
_POLITE = (
    r"(?:(?:please|pls|kindly|bitte)\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?|"
    r"(?:kannst|könntest)\s+du\s+(?:bitte\s+)?|(?:können|könnten)\s+sie\s+(?:bitte\s+)?)?"
)
_NUMBER = r"-?\d+(?:[.,]\d+)*"
_PREFIX_OPERATOR = (
    r"(?:(?:the\s+)?square\s+root\s+of|sqrt|(?:die\s+)?(?:quadrat)?wurzel\s+(?:aus|von))"
)
_INFIX_OPERATOR = (
    r"(?:[-+*/\u00d7÷^x·]|plus|minus|times|multiplied\s+by|divided\s+by|over|mod(?:ulo)?|"
    r"to\s+the\s+power\s+of|(?:%|percent|prozent)\s*(?:of|von)|mal|(?:geteilt\s+)?durch|hoch)"
)
# Each run of spaces has one place to go: ambiguous spacing would backtrack exponentially on
# a long "1 + 1 + ... x" that fails at its end.
_OPERAND = rf"[\s(]*(?:{_PREFIX_OPERATOR}[\s(]*)?{_NUMBER}(?:\s*(?:squared|cubed|%))?[\s)]*"
_ARITHMETIC = re.compile(
    rf"^{_POLITE}(?:(?:what\s+is|what's|whats|what\s+are|how\s+much\s+(?:is|are)|calculate|"
    r"compute|evaluate|solve|work\s+out|was\s+(?:ist|sind|ergibt|ergeben)|"
    r"wie\s*viel\s+(?:ist|sind|ergibt)|berechne|rechne)\s+)?"
    rf"(?P<expression>{_OPERAND}(?:{_INFIX_OPERATOR}{_OPERAND})*)"
    r"\s*=?\s*(?:aus\s*)?[?.!]*$",
    re.IGNORECASE,
)
# An operation, so that "What is 2027?" stays a question (about something called 2027).
_OPERATION = re.compile(
    rf"\d\s*(?:{_INFIX_OPERATOR})\s*[\s(]*-?\d|{_PREFIX_OPERATOR}|squared|cubed", re.IGNORECASE
)

# --- Pasted text: a rewrite request, then the text to rewrite after ":", a line, a quote, or
# (when the request points at it: "this", "the following") after the request's full stop.
_REWRITE_VERB = (
    r"(?:rephrase|reword|rewrite|re-write|paraphrase|translate|summari[sz]e|sum\s+up|condense|"
    r"shorten|proof-?read|übersetze|übersetzen|fasse|formuliere|paraphrasiere|kürze|lektoriere)"
)
# Verbs that also take non-text objects ("fix the VPN error: ...") count only with a text noun.
_EDIT_VERB = (
    r"(?:fix|correct|check|improve|edit|polish|simplify|tidy\s+up|clean\s+up|korrigiere|"
    r"verbessere|überarbeite|prüfe|vereinfache)"
)
_TEXT_NOUN = (
    r"(?:grammar|spelling|typos?|punctuation|wording|phrasing|tone|style|text|sentences?|"
    r"paragraphs?|e-?mails?|messages?|letters?|passages?|drafts?|essay|copy|grammatik|"
    r"rechtschreibung|zeichensetzung|satz|sätze|absatz|absätze|nachricht|brief|entwurf|"
    r"formulierung)"
)
_RESHAPE = (
    r"(?:make\s+(?:this|it|the\s+following)\s+(?:shorter|longer|clearer|simpler|more\s+\w+|"
    r"less\s+\w+|sound\s+\w+)|turn\s+(?:this|the\s+following)\s+into)"
)
_TASK_START = re.compile(
    rf"^{_POLITE}(?:{_REWRITE_VERB}|{_EDIT_VERB}(?=[^:\n]*\b{_TEXT_NOUN}\b)|{_RESHAPE})\b",
    re.IGNORECASE,
)
_TASK_SEPARATOR = re.compile(
    r"(?P<colon>:\s)|(?P<line>\n)|(?P<quote>[\"“„«]|(?<!\w)['\u2018])|(?P<stop>(?<=[.!?])\s)"
)
# "this", "the following email": words that point at the pasted text (with their noun).
_POINTS_AT_TEXT = re.compile(
    r"\b(?:(?:this|these|the\s+following|folgenden?|diese[nrs]?)(?:\s+[\w-]+)?|below|dies)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+")

# --- Question forms (all retrieve; the code only tells the trace which form it was).
_QUESTION = _rx(
    r"\?\s*$",
    r"^(?:what|what's|whats|who|who's|whom|whose|when|where|where's|which|why|how|how's|is|"
    r"are|was|were|do|does|did|can|could|should|would|will|has|have|had|may|might|must|shall|"
    r"isn't|aren't|doesn't|don't|didn't|can't)\b",
    r"^(?:wer|wen|wem|wessen|wann|wo|woher|wohin|wozu|warum|weshalb|wieso|wie|welche[rsmn]?|"
    r"ist|sind|gibt|kann|können|darf|dürfen|muss|müssen|soll|sollte|hat|haben|wird|werden|"
    r"war|waren)\b",
)
_INFORMATION_REQUEST = _rx(
    rf"^{_POLITE}(?:explain|define|definition\s+of|meaning\s+of|describe|compare|contrast|"
    r"tell\s+me|list|name|give\s+me|show\s+me|summari[sz]e|outline|clarify|elaborate|"
    r"walk\s+me\s+through|find|look\s+up|search|i\s+(?:want|need|would\s+like)\s+to\s+know)\b",
    rf"^{_POLITE}(?:erkläre|erklär|erklären\s+sie|definiere|beschreibe|vergleiche|nenne|"
    r"liste|zeige|zeig|gib\s+mir|sag\s+mir|erzähl|erzähle|fasse|finde|suche)\b",
)


def assess(text: str) -> NeedAssessment:
    """The retrieval need of one user turn, with the reason code of the rule that decided."""
    turn = text.strip()
    request = _pasted_text_request(turn)
    if request is not None:
        # "Rewrite this per our style guide: ..." still needs the guide; "shorten this email:"
        # names the pasted text, not a document of the corpus.
        if _NEEDS_DOCUMENTS.search(_POINTS_AT_TEXT.sub(" ", request)):
            return NeedAssessment("required", "document_reference")
        return NeedAssessment("none", "pasted_text_task")
    small_talk = _small_talk(turn)
    if small_talk is not None:
        return NeedAssessment("none", small_talk)
    if _is_arithmetic(turn):
        return NeedAssessment("none", "arithmetic")
    if _NEEDS_DOCUMENTS.search(turn):
        return NeedAssessment("required", "document_reference")
    if _QUESTION.search(turn):
        return NeedAssessment("optional", "question")
    if _INFORMATION_REQUEST.search(turn):
        return NeedAssessment("optional", "information_request")
    # Anything else ("Kestrel pricing") may be about the corpus too: retrieving costs little,
    # skipping answers "not in the documents" when it was.
    return NeedAssessment("optional", "open_request")


def _pasted_text_request(turn: str) -> str | None:
    """The request part of a rewrite task with its text pasted in, or None."""
    if not _TASK_START.match(turn):
        return None
    separator = _TASK_SEPARATOR.search(turn)
    if separator is None:
        return None
    request, pasted = turn[: separator.start()], turn[separator.end() :]
    if separator.group("stop") and not _POINTS_AT_TEXT.search(request):
        return None  # "Summarise the onboarding guide. Keep it short." pastes nothing
    return request if _WORD.search(pasted) else None


def _small_talk(turn: str) -> str | None:
    """The kind (greeting, thanks, small_talk) of a turn made only of such fragments."""
    fragments = [_FRAGMENT_EDGES.sub("", f) for f in _FRAGMENT_BREAK.split(turn)]
    kinds = [_small_talk_kind(f) for f in fragments if f]
    if not kinds or None in kinds:
        return None
    return kinds[0]


def _small_talk_kind(fragment: str) -> str | None:
    if _GREETING.match(fragment):
        return "greeting"
    if _THANKS.match(fragment):
        return "thanks"
    if _PLEASANTRY.match(fragment):
        return "small_talk"
    return None


def _is_arithmetic(turn: str) -> bool:
    match = _ARITHMETIC.match(turn)
    return match is not None and _OPERATION.search(match.group("expression")) is not None
