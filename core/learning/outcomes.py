"""Recurring outcomes read from what people write, in French and English: how long something
usually takes ("le bureau de Lyon répond en général en 2 jours", "the build takes ~10 min"),
what happens every time ("leurs PDF sont toujours des scans"), when a place is closed ("le
véto est fermé le lundi"). Each becomes an `Outcome`: a sub-bucket, a subject, a prediction
and the clause it was read from; the environment job (core.learning.environment) groups them
by subject into proposals for the environment tier.

Precision over recall: a clause needs a subject and one of a recurrence marker, a closing
day, or a duration after an answering/taking verb; questions, future plans and bare rules
("jamais avant 10h") are not outcomes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.learning.attribution import looks_french
from core.recall.lexical import fold, terms

BUCKETS = ("people", "services", "tools", "places", "documents")

_DAYS = (
    r"(?:lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|week-end|weekend|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?"
)
_NUMBER = (
    r"(?:\d+(?:[.,]\d+)?|un|une|deux|trois|quatre|cinq|six|sept|huit|dix|quinze|vingt|trente|"
    r"a|an|one|two|three|four|five|six|ten|fifteen|twenty|thirty)"
)
_UNIT = r"(?:minutes?|mins?|min|h|heures?|hours?|jours?|days?|semaines?|weeks?|mois|months?)"
_APPROX = (
    r"(?:en|in|within|sous|about|around|environ|~|≈|a peu pres|moins de|less than|plus de|"
    r"more than|au moins|at least|roughly|une bonne|a good)"
)
_MARKER = re.compile(
    r"\b(en general|generalement|d'habitude|habituellement|toujours|a chaque fois|chaque fois|"
    r"systematiquement|tout le temps|jamais|souvent|la plupart du temps|comme d'hab(?:itude)?|"
    r"usually|always|every time|each time|never|often|typically|generally|tends? to|"
    r"most of the time|as usual)\b"
)
_CLOSED = re.compile(
    rf"\b((?:est |sont |is |are )?(?:ferme|fermee|fermes|fermees|closed|shut)"
    rf"(?: (?:le|les|tous les|on|every))? {_DAYS})"
)
_DURATION = re.compile(
    r"\b(prend|prennent|met|mettent|dure|durent|repond|repondent|rappelle|rappellent|livre|"
    r"livrent|arrive|arrivent|valide|valident|traite|traitent|takes?|lasts?|answers?|replies|"
    r"reply|responds?|calls? back|delivers?|ships?|arrives?|validates?|processes)\b"
    rf"[^.;!?]{{0,30}}?(?:{_APPROX}\s*)+({_NUMBER}\s*{_UNIT})\b"
    rf"|\b(prend|prennent|met|mettent|dure|durent|takes?|lasts?)\s+({_NUMBER}\s*{_UNIT})\b"
)
# Not an observation of the world: a plan, a hypothesis, or a question.
_NOT_OBSERVED = re.compile(
    r"\b(tu vas|je vais|on va|nous allons|vous allez|will|won't|going to|would|pourrait|"
    r"devrait|si jamais|if|est-ce que|s'il (?:te|vous) plait|stp|please)\b"
)
_FILLER = re.compile(
    r"^(?:au fait|franchement|attention|bref|sinon|heads up|fyi|btw|by the way|also|aussi|et|"
    r"and|oh|ah|bon|alors|donc|en fait|d'ailleurs|rappel|note|pfff?|encore|again|oui|non|yes|"
    r"no|ok|okay|yeah|ouais)\b[,:!\s]*",
    re.I,
)
_PRONOUNS = {"il", "elle", "ils", "elles", "on", "ca", "it", "they", "he", "she", "this",
             "that", "c'est", "ce", "cela", "tu", "you", "je", "i", "we", "nous", "y", "there"}  # fmt: skip
_FRENCH = re.compile(r"\b(?:il|elle|ils|elles|de|du|est|sont|jamais|toujours|souvent|n'\w+)\b")
_SPLIT = re.compile(r"(?<=[.!?…;])\s+|\n+|\s*,?\s+(?:mais|but|sauf que|except that)\s+", re.I)

_BUCKET_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("documents", ("pdf", "scan", "scans", "scanne", "scannes", "scanned", "document",
                   "documents", "facture", "factures", "invoice", "devis", "quote", "fichier",
                   "fichiers", "file", "files", "piece jointe", "attachment", "contrat",
                   "contract", "releve", "statement", "export", "exports")),
    ("tools", ("build", "ci", "deploy", "deploiement", "script", "staging", "serveur", "server",
               "pipeline", "backup", "compile", "compilation", "tests", "test", "app", "appli",
               "laptop", "ordinateur", "imprimante", "printer", "wifi", "vpn", "dashboard")),
    ("places", ("ferme", "fermee", "closed", "ouvert", "open", "restaurant", "resto",
                "magasin", "shop", "store", "boulangerie", "marche", "market", "pharmacie",
                "pharmacy", "veto", "veterinaire", "vet", "musee", "museum", "gare", "station",
                "piscine", "salle", "cafe", "bar")),
    ("services", ("api", "support", "service", "banque", "bank", "poste", "post", "livraison",
                  "delivery", "sncf", "train", "tgv", "transporteur", "carrier", "agence",
                  "agency", "assurance", "insurance", "mutuelle", "impots", "syndic", "regie",
                  "demenageurs", "movers", "fournisseur", "provider", "doctolib", "finance",
                  "rh", "hr", "bureau", "office", "administration")),
)  # fmt: skip


@dataclass(frozen=True)
class Outcome:
    """One recurring outcome read from a clause."""

    bucket: str
    subject: str
    prediction: str
    clause: str
    terms: tuple[str, ...]  # the subject's distinctive words, for grouping and triggers

    @property
    def text(self) -> str:
        """The outcome as one statement."""
        return self.clause


def bucket_of(words: str) -> str:
    """The sub-bucket a subject and its predicate belong to (people when nothing else fits)."""
    folded = f" {fold(words)} "
    for bucket, vocabulary in _BUCKET_WORDS:
        if any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", folded) for w in vocabulary):
            return bucket
    return "people"


def _clean(text: str) -> str:
    text = " ".join(text.replace("’", "'").split())
    text = re.sub(r"[\U0001F000-\U0001FFFF\u2600-\u27BF\uFE0F]+", "", text).strip(" ,:;-–")
    while (m := _FILLER.match(text)) and m.end() > 0:
        text = text[m.end() :].strip(" ,:;-–")
    return text


def _subject_terms(subject: str) -> tuple[str, ...]:
    """The subject's distinctive words, folded and singular ("Nordhaven's PDFs" → nordhaven,
    pdf), so two mentions of the same thing share them."""
    words = [t for t in terms(subject) if t not in _PRONOUNS and not t.isdigit()]
    words = [t[:-1] if len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t
             for t in words if not _MARKER.fullmatch(t)]  # fmt: skip
    return tuple(dict.fromkeys(words))[:4]


_VERB = re.compile(
    r"(?:^|\s)(?:n'|ne )?(is|are|was|were|has|have|had|does|do|gets?|goes|sends?|returns?|"
    r"answers?|replies|takes?|est|sont|etait|etaient|a|ont|avait|fait|font|prend|prennent|met|"
    r"mettent|repond|repondent|arrive|arrivent|envoie|envoient|renvoie|renvoient|tombe|tombent|"
    r"plante|plantent|marche|marchent|coupe|coupent)\b"
)


def _prediction(folded: str, clause: str) -> tuple[int, int, str] | None:
    """Where the predicate starts and ends in the clause, and the prediction it states."""
    duration = _DURATION.search(folded)
    if duration:
        v, a = (1, 2) if duration.group(1) else (3, 4)
        verb = clause[duration.start(v) : duration.end(v)]
        amount = clause[duration.start(a) : duration.end(a)]
        return duration.start(v), _end(folded, duration.end()), f"{verb} ~{_amount(amount)}"
    closed = _CLOSED.search(folded)
    marker = closed or _MARKER.search(folded)
    if marker is None:
        return None
    # The predicate starts at the verb before the marker ("répond en général…", "sont toujours
    # des scans", "PDFs are scanned images every time"): the subject is what precedes it.
    head = folded[: marker.start(1)]
    verbs = list(_VERB.finditer(head))
    verb = verbs[-1] if verbs else None  # the one closest to the marker
    if verb is not None:
        start = verb.start(1) - (2 if head[: verb.start(1)].endswith("n'") else 0)
    else:
        start = marker.start(1)
    end = _end(folded, marker.end())
    return start, end, clause[start:end].strip(" .!")


def _end(folded: str, after: int) -> int:
    """The predicate stops at the next comma or dash: what follows is another thought."""
    cut = re.search(r",\s|\s[-–]\s|\s\(", folded[after:])
    return after + cut.start() if cut else len(folded)


def _amount(text: str) -> str:
    text = re.sub(r"\s+", " ", text.strip())
    return re.sub(r"^(\d+(?:[.,]\d+)?)\s*", r"\1 ", text)


def read_outcomes(text: str) -> list[Outcome]:
    """Every recurring outcome stated in one message (often none)."""
    found: list[Outcome] = []
    previous = ""
    for raw in _SPLIT.split(text or ""):
        clause = _clean(raw)
        if not clause:
            continue
        folded = fold(clause)
        observed = 12 <= len(clause) <= 300 and not clause.rstrip().endswith("?")
        outcome = None
        if observed and not _NOT_OBSERVED.search(folded):
            outcome = _outcome(clause, folded, previous)
        if outcome is not None:
            found.append(outcome)
        previous = clause
    return found


def _outcome(clause: str, folded: str, previous: str) -> Outcome | None:
    # fold() keeps one character per character for the scripts we read (accents are dropped
    # from their letter), so positions in the folded clause are positions in the clause.
    if len(folded) != len(clause):
        return None
    found = _prediction(folded, clause)
    if found is None:
        return None
    start, end, prediction = found
    clause = clause[:end].strip(" ,.")
    subject = clause[:start].strip(" ,:;-–")
    if not subject:  # "jamais avant 10h", "always cc Tom": a rule, not an observation
        return None
    if "," in subject:  # "Essaie sur Doctolib, il y a souvent…": the pronoun's antecedent
        before, _, last = subject.rpartition(",")
        if not _subject_terms(last):
            subject = before.strip()
    words = _subject_terms(subject)
    if not words and previous:  # "… de Charonne, mais il n'a jamais de place"
        subject, words = previous, _subject_terms(previous)
        french = looks_french(clause) or _FRENCH.search(folded)
        clause = f"{previous} : {clause}" if french else f"{previous}: {clause}"
    if not words or len(prediction) < 4:
        return None
    statement = clause[0].upper() + clause[1:]
    return Outcome(bucket_of(f"{subject} {prediction}"), subject, prediction,
                   statement.rstrip(" ."), words)  # fmt: skip
