"""The extractor that needs no model: explicit "remember" statements, first-person preferences,
decisions, constraints, habits, facts about oneself and one's circle, and dated events, in
French and English.

Patterns run on folded text (lowercase, no accents). Two filters keep precision: a preference
aimed at "this one" / "cette version" is feedback on the conversation, and a message anchored in
the next few minutes ("back in 20", "dans 5 minutes") is a passing state, not a memory.
"""

from __future__ import annotations

import re

from core.learning.candidates import Candidate
from core.recall.lexical import fold

_EXPLICIT = re.compile(
    r"^(?:.*?[,.;!]\s+)?(?:please\s+|stp\s+|s'il te plait\s+)?(?:"
    r"(?:remember|souviens[- ]toi|rappelle[- ]toi|retiens|n'oublie pas|don't forget|do not forget)"
    r"\s*(?:that|que|qu'|:)?|(?:note|keep in mind|note bien|garde en memoire|prends note)"
    r"\s*(?:that|que|qu'|:))\s*(.{3,}[^?\s])\s*$"
)
# ", ok?" / ", d'accord ?" closing an instruction does not make it a question.
_TAG_QUESTION = re.compile(
    r"[,\s]+(?:ok|okay|d'accord|please|stp|s'il te plait|tu veux bien|right|ca marche|merci)"
    r"\s*\?+\s*$"
)
_DATE = (
    r"(?:le \d{1,2}(?:er)?\b|on the \d{1,2}(?:st|nd|rd|th)?\b|\d{1,2}(?:st|nd|rd|th)? (?:of )?"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|(?:en|in|fin|debut|end of|early) "
    r"(?:janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|novembre|decembre|"
    r"january|february|march|april|may|june|july|august|september|october|november|december)|"
    r"(?:next|la semaine|le mois|l'annee) (?:week|month|year|prochaine?)|(?:lundi|mardi|mercredi|"
    r"jeudi|vendredi|samedi|dimanche|monday|tuesday|wednesday|thursday|friday|saturday|sunday) "
    r"(?:prochain|next)|next (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))"
)
# The operator's circle, as the subject of a sentence: "ma sœur Léa", "my partner's".
_CIRCLE = (
    r"(?:my|our|mon|ma|mes|notre|nos) (?:(?:little|big|older|younger|grand|petite?) )?"
    r"(?:sister|brother|mum|mom|mother|dad|father|parents|wife|husband|partner|son|daughter|kids|"
    r"children|boss|manager|colleague|friend|girlfriend|boyfriend|soeur|frere|mere|pere|maman|papa|"
    r"femme|mari|conjoint|conjointe|compagnon|compagne|fils|fille|enfants|chef|cheffe|collegue|"
    r"ami|amie|copain|copine|grand-mere|grand-pere|oncle|tante|cousin|cousine)(?:'s)?"
)
_PREFERENCE = re.compile(
    r"\b(i (?:really |much |do |kind of )?(?:prefer|like|love|hate|dislike|enjoy|adore|"
    r"can't stand|cannot stand)|i'd rather|i'm (?:not )?(?:a (?:big )?)?fan of|my favou?rite|"
    r"my go-to|i'm (?:a )?(?:vegetarian|vegan)|i don't (?:like|eat|drink)|i no longer (?:eat|drink)|"
    r"drives? me (?:nuts|crazy|mad)|gets? on my nerves|"
    r"j'(?:adore|aime|prefere|deteste)|j'ai horreur|je (?:prefere|deteste|n'aime pas|n'aime|"
    r"ne supporte pas|suis fan|ne (?:mange|bois) (?:pas|plus|jamais)|suis (?:vegetarien|"
    r"vegetarienne|vegan|vegane))|(?:mon|ma|mes) .{2,30} (?:prefere|preferee|preferes|preferees)|"
    r"me rend(?:ent)? (?:fou|folle|dingue)|m'enerve(?:nt)?|"
    r"reponds?[- ]moi (?:en|toujours|plutot|en bref)|answer me (?:in|briefly)|call me|"
    r"appelle[- ]moi|tutoie[- ]moi|vouvoie[- ]moi|(?:keep|make) (?:your )?(?:answers|replies|"
    r"responses) |be (?:brief|concise)|sois (?:bref|breve|concis|concise)|"
    r"(?:tes|vos) reponses)"
)
_DECISION = re.compile(
    r"\b(i(?:'ve| have)? decided|we(?:'ve| have)? decided|from now on|going forward|"
    r"we will go with|we(?:'re| are)? going with|we went with|let's go with|we (?:chose|picked|"
    r"opted for|settled on)|i (?:chose|picked|opted for|settled on)|it's (?:settled|decided|final)|"
    r"final answer|j'ai decide|on a decide|nous avons decide|desormais|a partir de maintenant|"
    r"dorenavant|on part sur|on est parti sur|j'ai choisi|on a choisi|on a opte pour|"
    r"j'ai opte pour|c'est (?:acte|decide|tranche|valide)|"
    rf"(?:a partir d[eu']|starting|as of) ?{_DATE})"
)
_CONSTRAINT = re.compile(
    r"\b(i(?:'m| am) (?:allergic|intolerant|lactose|gluten)|allergi(?:c|que)|intoleran(?:t|ce|te)|"
    r"i can't (?:eat|drink|work|do|travel)|i cannot|i never \w+|"
    r"never (?:book|schedule|call|send|use|put|plan)|always (?:book|schedule|cc|send|use|check)|"
    r"must not|no meetings|je suis allergique|je ne peux pas|je ne \w+ jamais|"
    r"jamais (?:de|le|la|les|avant|apres)|toujours (?:mettre|envoyer|verifier|utiliser)|"
    r"pas de reunion|il ne faut (?:jamais|pas)|"
    r"(?:^|[,.;:] )(?:always|never|don't ever|do not ever|toujours|ne jamais|jamais) \w+|"
    r"(?:m'a|m'ont|is|are|suis|est) (?:interdit|forbidden|deconseille)|not allowed to|"
    r"pas le droit d|"
    r"(?:pas d[e']|jamais d[e']|no) ?\w+ (?:avant|apres|before|after) \d+\w*)\b"
)
_PATTERN = re.compile(
    r"\b(tous les (?:jours|matins|soirs|lundis|mardis|mercredis|jeudis|vendredis|samedis|"
    r"dimanches|week-ends|ans|mois)|chaque (?:jour|matin|soir|semaine|lundi|mardi|mercredi|jeudi|"
    r"vendredi|samedi|dimanche|annee|mois)|every (?:day|morning|evening|night|week|weekday|"
    r"weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday|year|month)|"
    r"i (?:usually|always|often|tend to)|d'habitude|en general je|le plus souvent|"
    r"every other \w+|(?:un|une) [\w-]+ sur (?:deux|trois)|once a (?:week|month)|"
    r"(?:une|deux|trois) fois par (?:jour|semaine|mois)|"
    r"(?:je|on|nous) \w+ .*\ble (?:lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)"
    r"(?: (?:matin|midi|soir|apres-midi))?\s*(?:[,.!]|$))"
)
_EVENT = re.compile(
    r"\b(i (?:moved|started|quit|finished|signed|got married|got engaged|graduated|booked|"
    r"cancelled|canceled|resigned|bought|sold|adopted|joined|left)|i got (?:promoted|married|"
    r"engaged|hired|fired|laid off|my)|i passed|we (?:moved|signed|launched|shipped|adopted|bought|"
    r"sold|hired)|"
    r"j'ai (?:demenage|commence|quitte|fini|signe|reserve|eu mon|eu ma|obtenu|adopte|achete|"
    r"vendu|rejoint|demissionne)|j'ai ete (?:promu|promue|embauche|embauchee|licencie)|"
    r"on a (?:demenage|signe|lance|livre|adopte|achete|vendu|embauche)|"
    r"nous avons (?:demenage|signe|lance|adopte|achete)|je demenage|we're moving|i'm moving|"
    r"(?:my|our|mon|ma|mes|notre|nos) [\w'-]+(?: [\w'-]+)? (?:starts|started|begins|moves|moved|"
    r"graduates|retires|commence|demenage|entre|part)|"
    rf"(?:i'm|i am|je) (?:flying|travelling|traveling|going|heading|pars|vais|serai) .*{_DATE}|"
    rf"(?:my|mon|ma) (?:flight|train|appointment|interview|surgery|exam|wedding|vol|rendez-vous|"
    rf"rdv|entretien|operation|examen|mariage) .*{_DATE}|"
    rf"(?:i'm|i am|i'll|i will|we're|we will|je|j'|on|nous) .*{_DATE}|"
    rf"{_CIRCLE} .*{_DATE}|"
    r"(?:i|we) \w+ .*\b(?:years?|months?|weeks?) ago|(?:j'ai|on a|nous avons) \w+ .*\bil y a \w+ "
    r"(?:ans?|mois|semaines?)|i've (?:switched|moved|started|stopped|quit)|j'ai arrete)"
)
_FACT = re.compile(
    r"\b((?:my|our) (?:[\w'-]+ ){0,2}(?:is|are|was|lives|live|works|work|expires|costs|renews) |"
    r"i live in|i work (?:at|for|on|in)|i was born|i grew up|i have (?:a|two|three) |"
    r"i'm learning|i speak |"
    r"(?:mon|ma|mes|notre|nos) (?:[\w'-]+ ){0,3}(?:est|sont|c'est|s'appelle|s'appellent|habite|"
    r"habitent|vit|vivent|travaille|travaillent|expire|coute|passe a) |j'habite|je vis a|"
    r"je travaille (?:chez|a|pour|sur|comme)|je suis ne|j'ai grandi|j'apprends|"
    r"j'ai (?:un|une|deux|trois) |"
    # what a role is held by, whoever holds it: "Tom is the tech lead", "Karim est mon manager"
    r"(?:is|est) (?:the|my|our|le|la|mon|ma|notre) (?:[\w'-]+ )?(?:lead|manager|boss|ceo|cto|"
    r"head|chef|cheffe|responsable|directeur|directrice|referent|referente|contact|owner|"
    r"dentist|dentiste|doctor|docteur|medecin|lawyer|avocat|avocate|accountant|comptable|"
    r"landlord|proprietaire)\b|"
    rf"^{_CIRCLE} |"
    r"(?:we|on|nous) (?:use|utilise|utilisons|bosse avec|work with) |"
    r"(?:is|est|sont|are|c'est) (?:de |about |around |environ )?\d[\d  .,]*(?:k|m)? ?"
    r"(?:€|eur|euros|\$|dollars|usd)|"
    # reference data: codes, numbers, addresses, servers
    r"(?:code|mot de passe|password|pin|numero|number|adresse|address|iban|login|identifiant|"
    r"username|server|serveur|host|url) (?:[\w'.-]+ ){0,5}(?:is|est|c'est|:) )"
)
_QUESTION = re.compile(r"\?\s*$|^(?:est-ce|do you|did you|can you|could you|peux-tu|pourrais-tu)\b")
# A preference about something on screen right now ("I like this one", "j'aime bien cette
# version") is feedback on the conversation, not a lasting taste.
_DEICTIC = re.compile(
    r"\b(?:like|love|prefer|hate|aime|adore|prefere|deteste)(?: (?:bien|beaucoup|mieux))? "
    r"(?:this|that|these|those|it|cette|cet|ce|ces|ca|celle|celui)\b"
)
# Anchored in the next few minutes: a passing state (events and explicit saves are kept).
_TRANSIENT = re.compile(
    r"\b(?:back in \d+|in \d+ ?(?:min|mins|minutes)\b|dans \d+ ?(?:min|minutes)\b|right now|"
    r"brb|tout de suite|a tout de suite|en ce moment|at the moment)"
)


def _clean(text: str) -> str:
    text = text.strip().strip("\"'«» ")
    return text[0].upper() + text[1:] if text else text


def heuristic_candidates(
    text: str, capture_id: str | None = None, speaker: str | None = None
) -> list[Candidate]:
    """Candidates found in one message (at most one); `speaker` names who said it when it was
    not the operator: the statement is then about them, and never an order to Elora."""
    found = _candidates(text, capture_id)
    if speaker:
        from core.learning.attribution import about_speaker

        for c in found:
            c.text = about_speaker(c.text, speaker)
            if c.authority == "operator":  # "remember that…" said to someone else, not to Elora
                c.authority, c.confidence, c.reason = "heuristic", 0.7, f"said by {speaker}"
    return found


def _candidates(text: str, capture_id: str | None) -> list[Candidate]:
    raw = " ".join(text.split())
    if len(raw) < 8 or len(raw) > 1000:
        return []
    raw = _TAG_QUESTION.sub("", raw.replace("’", "'")).rstrip(" ,")
    folded = fold(raw)
    sources = [capture_id] if capture_id else []

    explicit = _EXPLICIT.match(folded)
    if explicit:
        start = len(raw) - len(explicit.group(1))
        body = _clean(raw[start:])
        kind = _kind_of(fold(body))
        return [
            Candidate(text=body, kind=kind, importance=3, confidence=0.95, authority="operator",
                      source_capture_ids=sources, reason="explicit remember statement")
        ]  # fmt: skip
    if _QUESTION.search(folded):
        return []
    kind, reason = _classify(folded)
    if kind is None:
        return []
    if kind != "event" and _TRANSIENT.search(folded):
        return []
    if kind == "preference" and _DEICTIC.search(folded):
        return []
    return [
        Candidate(text=_clean(raw), kind=kind, importance=2, confidence=0.7, authority="heuristic",
                  source_capture_ids=sources, reason=reason,
                  temporality="dated" if kind == "event" else "permanent")
    ]  # fmt: skip


_ORDER = (
    (_CONSTRAINT, "constraint", "first-person constraint"),
    (_DECISION, "decision", "decision"),
    (_PREFERENCE, "preference", "first-person preference"),
    (_EVENT, "event", "dated personal event"),
    (_PATTERN, "pattern", "habit"),
    (_FACT, "fact", "fact about the operator or their circle"),
)


def _classify(folded: str) -> tuple[str | None, str]:
    for pattern, kind, reason in _ORDER:
        if pattern.search(folded):
            return kind, reason
    return None, ""


def _kind_of(folded: str) -> str:
    """The kind an explicit statement is about (fact when nothing more specific shows)."""
    return _classify(folded)[0] or "fact"


def guess_kind(text: str) -> str:
    """The kind of memory an explicit statement is (`/remember` without a kind): fact when
    nothing more specific shows."""
    return _kind_of(fold(text))
