"""What a later message says about an earlier one: a change cue ("nouveau", "moved", "n'est
plus"), the values a statement holds (names, numbers, days, times, addresses), and whether a
restatement replaces one of them (core.recall.updates links updates with these)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from core.recall.lexical import fold, terms

if TYPE_CHECKING:
    from core.recall.turn_search import TurnHit

CHANGE_CUE = re.compile(
    r"\b(nouveau|(?<!des )(?<!de )nouvelles?|nouveaux|change|changes|changee|changement|finalement|"
    r"au final|"
    r"desormais|dorenavant|maintenant|a partir d(?:e|u|')|plus que|n'est plus|ne \w+ plus|remplace|"
    r"remplacee|decale|decalee|reporte|reportee|avance|avancee|deplace|deplacee|annule|annulee|"
    r"au lieu d[eu]|a la place|revenu|revenus|revenue|retour|passe a|passe au|passee a|"
    r"now|new|changed|change of|moved|switched|no longer|not anymore|anymore|instead|from now on|"
    r"replaced|postponed|rescheduled|pushed back|pulled forward|brought forward|cancelled|"
    r"canceled|back to|again|takes over|took over|these days|since then|moving to|updated|"
    r"ferme|fermee|closed|closing|resilie|resiliee|annuler|cancel|vendu|vendue|sold|migre|"
    r"migree|migrated|refait|refaits|redone|parti|partie|left|retraite|retired|quitte|quit|"
    r"from (next|this|now|today|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday)|starting|as of|des (lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|demain)|"
    r"je commence|i start|emmenage|emmenagee|m'installe|passee? chez|"
    r"(pulled|brought|pushed|moved) (\w+ ){1,3}(forward|back|up)|"
    r"fini|finie|over|ended|rebooke|rebookee|rebooked|demenage|demenagee|devenu|devenue|became)\b"
)
# Words that hold a value even in lower case: days, months, times.
_VALUE_WORDS = re.compile(
    r"\b(lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|"
    r"novembre|decembre|january|february|march|april|june|july|august|september|october|"
    r"november|december|\d+h\d*)\b"
)
# The readings below depend on a message's text alone, and one pack reads the same few hundred
# messages again for every pair of statements it weighs (thousands of calls): each is cached
# by text, as a frozenset no caller can change.
TEXTS_CACHED = 4096


# Kinds of value a statement may give: an update gives a value of the kind it replaces.
_KINDS = {
    "phone": re.compile(r"(?<![\w.])\+?\d(?:[ .-]?\d){7,}(?![\w.])"),
    "email": re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+"),
    "time": re.compile(r"\b\d{1,2}(?:h\d{0,2}|:\d{2})\b|\b\d{1,2} ?(?:am|pm)\b"),
    "money": re.compile(r"\d\s?(?:€|eur|euros?|\$|£)|[€$£]\s?\d"),
    "address": re.compile(
        r"\b\d+(?:bis|ter)?,?\s+(?:[\w'-]+\s+){0,2}(?:rue|avenue|av|boulevard|bd|place|quai|cours|allee|chemin|"
        r"impasse|route|street|st|road|rd|avenue|lane|square|close|drive)\b"
    ),
}


@lru_cache(maxsize=TEXTS_CACHED)
def kinds(text: str) -> frozenset[str]:
    """The kinds of value a message gives (phone, email, time, money, address)."""
    folded = fold(text)
    return frozenset(kind for kind, pattern in _KINDS.items() if pattern.search(folded))


# What kind of value a question asks for (its expected answer type, French or English).
_ASKS = {
    "address": re.compile(
        r"\b(live|lives|living|address|habite|habites|habitent|vit|vis|vivent|adresse)\b"
    ),
    "phone": re.compile(r"\b(phone|number|mobile|landline|numero|telephone|portable|fixe)\b"),
    "email": re.compile(r"\b(e-?mail|mail|courriel)\b"),
    "time": re.compile(r"\b(when|what time|quand|heure|horaire|horaires)\b"),
    "money": re.compile(r"\b(how much|cost|costs|price|rent|combien|coute|prix|loyer)\b"),
}


IDENTIFIERS = frozenset({"address", "phone", "email"})  # replaced whole, by one of their kind


def asked_kinds(question: str) -> set[str]:
    """The kinds of value a question asks for ("Where does Sam live?": an address)."""
    folded = fold(question).replace("’", "'")
    return {kind for kind, pattern in _ASKS.items() if pattern.search(folded)}


def same_kind(old: TurnHit, new: TurnHit) -> bool:
    """False when both messages give typed values and none of the same kind: a new phone
    number does not replace an address ("Note mon nouveau numéro" after "mon adresse : 14 rue
    Saint-Maur"), an email does not replace a phone number."""
    old_kinds, new_kinds = kinds(old.text), kinds(new.text)
    return not (old_kinds and new_kinds) or bool(old_kinds & new_kinds)


def has_change_cue(text: str) -> bool:
    """Whether a message says that something changed (French or English)."""
    return bool(CHANGE_CUE.search(fold(text)))


# "New" says what changed in the words after it: "mon nouveau numéro" changes a number, "la
# nouvelle saison de The Bear" changes nothing anyone asked about.
_NEW = re.compile(
    r"\b(nouveau|nouvel|(?<!des )(?<!de )nouvelles?|nouveaux|new)\b((?:\s+[\w'-]+){1,2})"
)


def change_cue_about(text: str, about: set[str]) -> bool:
    """Whether a message says that something changed, a "new" counting only when it qualifies
    one of these (folded) words: the old statement's or the question's."""
    cued, qualified = _change_words(text)
    if cued:
        return True
    if not qualified:
        return False
    about = {_singular(w) for w in about}
    return any(words & about for words in qualified)


@lru_cache(maxsize=TEXTS_CACHED)
def _change_words(text: str) -> tuple[bool, tuple[frozenset[str], ...]]:
    """Whether a message says a change in so many words, and the (singular) words each of its
    "new"s qualifies: an update's search asks this of the same candidates many times."""
    folded = fold(text)
    if CHANGE_CUE.search(_NEW.sub(" ", folded)):
        return True, ()
    return False, tuple(
        frozenset(_singular(w) for w in terms(m.group(2))) for m in _NEW.finditer(folded)
    )


def _singular(word: str) -> str:
    """A word without its plural mark ("bureaux" / "bureau", "flats" / "flat")."""
    return word[:-1] if len(word) > 3 and word[-1] in "sx" else word


# A value named only to say it no longer holds ("Garcia doesn't come out to Villeurbanne",
# "Plus de Corse, trop cher", "la MAIF c'est terminé"): the message replaces it.
_NEGATION = re.compile(
    r"\b(not|no|never|isn't|aren't|doesn't|don't|won't|can't|wasn't|didn't|ne|n'|pas|plus de|"
    r"jamais|terminee?|finie?|fini)\b|n't\b"
)


NEGATION_REACH = 3  # words between a negation and the value it negates


def rejects(old: TurnHit, new: TurnHit, subject: frozenset[str] = frozenset()) -> bool:
    """Whether the new message negates one of the old statement's values, next to it
    ("Garcia doesn't come out", "Plus de Corse"; not "Thanks, Gina! … I'm not sure"); the
    `subject`'s words (the question's names) are what the values are about, not values."""
    named = (_written_values(old.text) - subject) & set(terms(new.text))
    if not named:
        return False
    words = re.findall(r"[\w'-]+", fold(new.text).replace("’", "'"))
    at = [i for i, w in enumerate(words) if set(terms(w)) & named]
    negations = [m.start() for m in _NEGATION.finditer(" ".join(words))]
    starts = [len(" ".join(words[:i])) + (i > 0) for i in range(len(words))]
    said = [max(i for i, s in enumerate(starts) if s <= n) for n in negations]
    return any(abs(i - j) <= NEGATION_REACH for i in at for j in said)


@lru_cache(maxsize=TEXTS_CACHED)
def _written_values(text: str) -> frozenset[str]:
    """Numbers and words written with a capital past the first ("Plombier : M. Garcia",
    "Assurance : MAIF"): a note's value often follows a colon or an abbreviation."""
    words = re.findall(r"[\w'-]+", text)[1:]
    return frozenset(
        t
        for w in words
        if w[0].isupper() or any(c.isdigit() for c in w)
        for t in terms(w)
        if len(t) > 2 or t.isdigit()
    )


def new_values(old: TurnHit, new: TurnHit) -> bool:
    """Whether the new statement gives a value the old one does not hold."""
    return bool(distinct_values(new) - set(terms(old.text)))


def replaces(old: TurnHit, new: TurnHit) -> bool:
    """Said without a change cue, a restatement is an update when it gives a new value in place
    of one of the old ones ("the standup is at 9:45" after "... at 9:15"); one that keeps every
    old value and adds others ("Papa reste chez le Dr Lambert fils") says something else."""
    old_values, new_values = distinct_values(old), distinct_values(new)
    return bool(new_values - set(terms(old.text))) and bool(old_values - set(terms(new.text)))


def distinct_values(turn: TurnHit) -> set[str]:
    """The turn's values, without the short words that hold none ("Dr", "M.")."""
    return {v for v in values(turn) if len(v) > 2 or v.isdigit()}


def keeps_names(question: str, old: TurnHit, new: TurnHit) -> bool:
    """A restatement keeps the names the question asks about that the old statement holds:
    "Chez Novalis, le contact c'est Julie Roussel" restates "Chez Altura, notre contact c'est
    Julie Fabre" for another company, not for the Altura the question names."""
    held = names(question) & (distinct(old.text) | distinct(old.speaker or ""))
    return held <= (distinct(new.text) | distinct(new.speaker or ""))


@lru_cache(maxsize=TEXTS_CACHED)
def names(text: str) -> frozenset[str]:
    """Words written with a capital where no sentence starts."""
    found: set[str] = set()
    for m in re.finditer(r"[\w'-]+", text):
        word = m.group(0)
        if word[0].isupper() and not _SENTENCE_START.search(text[: m.start()]):
            found.update(terms(word))
    return frozenset(found)


def distinct(text: str) -> set[str]:
    """The text's words that may hold a value (longer than two letters, or numbers)."""
    return {w for w in terms(text) if len(w) > 2 or w.isdigit()}


_SENTENCE_START = re.compile(r"(^|[.!?:;\n]\s*)$")


def values(turn: TurnHit) -> frozenset[str]:
    """The words of a turn that hold a value: numbers, times, days, months, and names (a
    capital where no sentence starts)."""
    return _values(turn.text)


@lru_cache(maxsize=TEXTS_CACHED)
def _values(text: str) -> frozenset[str]:
    values = set(_VALUE_WORDS.findall(fold(text))) | names(text)
    for word in re.findall(r"[\w'@.-]*\w", text):
        # numbers, and addresses (an email, a host name: "sam@taylordesigns.co.uk")
        if any(c.isdigit() for c in word) or "@" in word or re.search(r"\w\.\w", word):
            values.update(terms(word))
    return frozenset(values)
