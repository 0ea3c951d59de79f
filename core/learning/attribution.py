"""Facts are about their speaker: what a contact says of herself becomes a statement about
her, named ("I'm off 6-10 May" from Léa → "Léa Martin is off 6-10 May"), never one about the
operator.

The rewrite turns first-person French and English into the third person around the speaker's
name; a statement with no first person keeps its words and says whose they are.
"""

from __future__ import annotations

import re

from core.recall.lexical import fold

_EN_FIXED = {
    "i'm": "is", "i am": "is", "i was": "was", "i've": "has", "i have": "has", "i'll": "will",
    "i'd": "would", "i don't": "doesn't", "i do not": "does not", "i do": "does",
    "i'm not": "is not", "i am not": "is not", "i haven't": "hasn't", "i have not": "has not",
}  # fmt: skip
_EN_MODALS = (
    "can't|cannot|can|could|will|won't|would|wouldn't|should|shouldn't|must|might|may|did|"
    "didn't|had|hadn't|wasn't|usually|always|often|never|really|just|also|still|already|"
    "finally|recently|sometimes|now"
)
_FR_IRREGULAR = {
    "suis": "est", "ai": "a", "vais": "va", "peux": "peut", "veux": "veut", "dois": "doit",
    "fais": "fait", "sais": "sait", "vis": "vit", "dis": "dit", "lis": "lit", "mets": "met",
    "bois": "boit", "crois": "croit", "vois": "voit", "recois": "recoit", "reçois": "reçoit",
    "ecris": "ecrit", "écris": "écrit",
}  # fmt: skip
_FR_POSSESSIVE = {"mon": "son", "ma": "sa", "mes": "ses", "Mon": "Son", "Ma": "Sa", "Mes": "Ses"}
_FRENCH_WORDS = {
    "je", "j", "suis", "ai", "est", "le", "la", "les", "des", "du", "un", "une", "et", "pas",
    "ne", "mon", "ma", "mes", "pour", "avec", "sur", "dans", "au", "aux", "que", "qui", "en",
}  # fmt: skip
_ENGLISH_WORDS = {
    "i", "i'm", "am", "is", "the", "a", "an", "and", "not", "my", "for", "with", "on", "in",
    "at", "to", "of", "that", "who", "off", "be", "have",
}  # fmt: skip


def looks_french(text: str) -> bool:
    """A rough language guess from function words (enough to pick a phrasing)."""
    words = re.findall(r"[\w']+", fold(text))
    french = sum(w in _FRENCH_WORDS or w.startswith(("j'", "l'", "d'", "qu'")) for w in words)
    return french > sum(w in _ENGLISH_WORDS for w in words)


def mentions(text: str, name: str) -> bool:
    """Whether the text already names the speaker (by first name, case and accents aside)."""
    first = fold(name).split()[0] if name.strip() else ""
    return bool(first) and re.search(rf"\b{re.escape(first)}\b", fold(text)) is not None


def _third_person_en(verb: str) -> str:
    low = verb.lower()
    if low.endswith("ed") or low in ("got", "went", "left", "moved", "took", "made", "had"):
        return verb
    if re.search(r"(s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


def _third_person_fr(verb: str) -> str:
    low = verb.lower()
    if low in _FR_IRREGULAR:
        return _FR_IRREGULAR[low]
    if low.endswith("ai") and len(low) > 3:  # future: serai → sera
        return verb[:-1]
    if low.endswith("ais"):  # imperfect, conditional: étais → était
        return verb[:-1] + "t"
    if low.endswith("ds"):  # prends → prend
        return verb[:-1]
    if low.endswith(("s", "x")):  # pars → part, finis → finit
        return verb[:-1] + "t"
    return verb  # travaille, habite, adore


def _english(text: str, name: str, first: str) -> str:
    said = {"done": False}

    def who() -> str:
        if said["done"]:
            return first
        said["done"] = True
        return name

    fixed = "|".join(sorted((re.escape(k) for k in _EN_FIXED), key=len, reverse=True))
    pattern = re.compile(
        rf"\b(?P<fixed>(?i:{fixed}))\b|\b[Ii] (?P<modal>{_EN_MODALS})\b|\b[Ii] (?P<verb>[a-z]+)\b|"
        r"\b(?P<my>[Mm]y|[Mm]ine)\b|\b(?P<me>me|myself)\b"
    )

    def replace(m: re.Match) -> str:
        if m.group("fixed"):
            return f"{who()} {_EN_FIXED[m.group('fixed').lower()]}"
        if m.group("modal"):
            return f"{who()} {m.group('modal')}"
        if m.group("verb"):
            return f"{who()} {_third_person_en(m.group('verb'))}"
        if m.group("my"):
            return f"{who()}'s"
        return who()

    return pattern.sub(replace, text.replace("’", "'"))


def _french(text: str, name: str, first: str) -> str:
    said = {"done": False}

    def who() -> str:
        if said["done"]:
            return first
        said["done"] = True
        return name

    pattern = re.compile(
        r"\b(?:[Jj]e (?P<neg>ne |n')(?P<nverb>\w+)|[Jj]e (?P<refl>me |m')(?P<rverb>\w+)|"
        r"[Jj]'(?P<ev>\w+)|[Jj]e (?P<verb>\w+))|\b(?P<poss>[Mm]on|[Mm]a|[Mm]es)\b|"
        r"\b(?P<moi>moi)\b"
    )

    def replace(m: re.Match) -> str:
        if m.group("nverb"):
            return f"{who()} {m.group('neg')}{_third_person_fr(m.group('nverb'))}"
        if m.group("rverb"):
            reflexive = "se " if m.group("refl") == "me " else "s'"
            return f"{who()} {reflexive}{_third_person_fr(m.group('rverb'))}"
        if m.group("ev"):
            return f"{who()} {_third_person_fr(m.group('ev'))}"
        if m.group("verb"):
            return f"{who()} {_third_person_fr(m.group('verb'))}"
        if m.group("poss"):
            return _FR_POSSESSIVE[m.group("poss")]
        return who()

    return pattern.sub(replace, text.replace("’", "'"))


def about_speaker(text: str, speaker: str) -> str:
    """The statement as one about its (non-operator) speaker, with their name in it."""
    name = " ".join(speaker.split())
    if not name or mentions(text, name):
        return text
    first = name.split()[0]
    french = looks_french(text)
    rewritten = (_french if french else _english)(text, name, first)
    if mentions(rewritten, name):
        return rewritten[0].upper() + rewritten[1:]
    # No first person: what they said, and that they said it.
    return f"D'après {name} : {text}" if french else f"According to {name}: {text}"
