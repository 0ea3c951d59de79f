"""Latest value wins: for a question about how things are now, the newest statement first.

Facts change ("new number", "the appointment moved to the 19th", "we go to The Crown these
days"), and the statement that best matches a question is often the first one, which names the
subject in full; the update that replaced it may not repeat the question's words at all. So the
best-matching statements are taken as anchors, and later messages about the same subject are
looked for from each anchor: close to it in meaning, sharing its distinctive words (people name
what they update: "Karim", "Fitness Park", "EDF"), relevant to the question. A subject's newest
statement comes first, the older ones follow as its dated history; a later message that only
mentions an old value again (no change cue, no new words) does not become the current one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from core.recall.lexical import fold, terms
from core.recall.turn_search import TurnHit, nearest_turns, turn_hits
from core.recall.vocabulary import Vocabulary

if TYPE_CHECKING:
    from core.services import Services

ANCHORS = 3  # best statements whose successors are looked for
ANCHOR_GAP = 0.15  # an anchor scores within this of the best turn
SUCCESSOR_FETCH = 20  # later messages per anchor, by meaning and by words
DISTINCTIVE = 4  # the anchor's rarest words, searched in later messages
REPLACED_FETCH = 15  # ranked statements an anchor may replace (the best ones)
SHARED_WORDS = 0.2  # share of the anchor's own word match (Vocabulary.shared)
CLOSE = 0.75  # calibrated pair similarity: a paraphrase-like restatement
# Saying that something changed needs less: one shared name, or some closeness in meaning.
CUE_WORDS = 0.1
CUE_CLOSE = 0.5
RELEVANT = 0.3  # calibrated relevance to the question a successor needs on its own
SAME_CHAT = 0.3  # an update usually comes in the chat where the fact was stated
WORDS_WEIGHT = 2.0
CUE_WEIGHT = 0.3
SIMILAR = 0.7  # calibrated pair similarity for two ranked statements to be one subject
BAND_GAP = 0.3  # ranked statements joined to a subject score within this of the best
MAX_HISTORY = 3  # older statements shown with the current one (the newest of them)

CHANGE_CUE = re.compile(
    r"\b(nouveau|(?<!des )(?<!de )nouvelles?|nouveaux|change|changes|changee|changement|finalement|"
    r"desormais|dorenavant|maintenant|a partir d[eu]|plus que|n'est plus|ne \w+ plus|remplace|"
    r"remplacee|decale|decalee|reporte|reportee|avance|avancee|deplace|deplacee|annule|annulee|"
    r"au lieu d[eu]|a la place|revenu|revenus|revenue|retour|passe a|passe au|passee a|"
    r"now|new|changed|change of|moved|switched|no longer|not anymore|anymore|instead|from now on|"
    r"replaced|postponed|rescheduled|pushed back|pulled forward|brought forward|cancelled|"
    r"canceled|back to|again|takes over|took over|these days|since then|moving to|updated|"
    r"ferme|fermee|closed|closing|resilie|resiliee|annuler|cancel|vendu|vendue|sold|migre|"
    r"migree|migrated|refait|refaits|redone|parti|partie|left|retraite|retired|quitte|quit|"
    r"fini|finie|over|ended|rebooke|rebookee|rebooked|demenage|demenagee|devenu|devenue|became)\b"
)
# Words that hold a value even in lower case: days, months, times.
_VALUE_WORDS = re.compile(
    r"\b(lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|"
    r"novembre|decembre|january|february|march|april|june|july|august|september|october|"
    r"november|december|\d+h\d*)\b"
)


def has_change_cue(text: str) -> bool:
    """Whether a message says that something changed (French or English)."""
    return bool(CHANGE_CUE.search(fold(text)))


@dataclass
class Subject:
    """Statements of one fact: the newest first, then the older ones (newest to oldest)."""

    current: TurnHit
    older: list[TurnHit] = field(default_factory=list)
    score: float = 0.0


def latest_first(
    services: Services,
    question: str,
    query_vector: np.ndarray | None,
    ranked: list[TurnHit],
    chats: list[str] | None,
    vocabulary: Vocabulary | None = None,
) -> tuple[list[TurnHit], dict[int, list[TurnHit]]]:
    """The ranking with each subject's newest statement where its best one stood; returns the
    new ranking and, by current turn rowid, the older statements it replaces."""
    if not ranked or query_vector is None:
        return ranked, {}
    vocabulary = vocabulary or Vocabulary(services)
    best = ranked[0].score
    anchors = [t for t in ranked[:ANCHORS] if t.score >= best - ANCHOR_GAP and t.vector is not None]
    near = [t for t in ranked if t.score >= best - BAND_GAP and t.vector is not None]
    subjects: list[Subject] = []
    claimed: set[int] = set()
    for anchor in anchors:
        if anchor.rowid in claimed:
            continue
        members = [anchor]
        later = _successor(services, vocabulary, query_vector, anchor, chats, claimed)
        if later is not None:
            later.score = anchor.score
            members.append(later)
        others = [t for t in near if t.rowid not in claimed and t.rowid != anchor.rowid]
        members += _replaced(services, vocabulary, query_vector, anchor, others[:REPLACED_FETCH])
        taken = {t.rowid for t in members}
        members += _restatements(services, vocabulary, anchor, others, taken)
        claimed.update(t.rowid for t in members)
        if len(members) > 1:
            subjects.append(_order(members, max(t.score for t in members)))
    if not subjects:
        return ranked, {}
    return _rerank(ranked, subjects)


def _update_score(services, qvec, old: TurnHit, new: TurnHit, words) -> float | None:
    """How surely `new` updates `old` (None: it does not); `words()` gives how much of old's
    wording `new` shares (Vocabulary.shared), asked only when it decides.

    People name what they update ("Karim", "Fitness Park"), so an update shares words with the
    statement it replaces; and it says that something changed (a cue), or restates it closely
    with a new value ("the standup is at 9:45" after "... at 9:15"). A later message merely on
    the same topic is not an update. Closeness in meaning is weighed less than shared words: a
    turn's meaning also carries the turn it answers, which drifts to unrelated chatter.
    """
    if new.vector is None or old.vector is None or new.sent_at <= old.sent_at:
        return None
    calibrate = services.embedder.calibrate
    closeness = calibrate(float(new.vector @ old.vector), "pair")
    cue = has_change_cue(new.text)
    if not cue and closeness < CLOSE:
        return None
    # An update is read with the statement it replaces: as close to it as a restatement, it is
    # about what the question asks even in other words (another language, the new value's name).
    relevance = calibrate(float(new.vector @ qvec))
    if closeness >= CLOSE:
        relevance = max(relevance, closeness * calibrate(float(old.vector @ qvec)))
    if relevance < RELEVANT:
        return None
    shared = words()
    if cue:
        linked = shared >= CUE_WORDS or closeness >= CUE_CLOSE
    else:
        fresh = _values(new) - _distinct(old.text)
        linked = shared >= SHARED_WORDS and bool(fresh)
    if not linked:
        return None
    score = relevance + closeness + WORDS_WEIGHT * shared + CUE_WEIGHT * cue
    return score + (SAME_CHAT if new.chat_id == old.chat_id else 0.0)


def _successor(services, vocabulary, qvec, anchor: TurnHit, chats, taken) -> TurnHit | None:
    """The later message anywhere in the archive that most surely updates the anchor."""
    near = nearest_turns(
        services, anchor.vector, SUCCESSOR_FETCH, chats=chats, after=anchor.sent_at
    )
    words = vocabulary.rarest(anchor.text, DISTINCTIVE)
    later = turn_hits(
        services, list(near), words, after=anchor.sent_at, chats=chats, limit=SUCCESSOR_FETCH
    )
    shares = vocabulary.shared(anchor, later)
    scored = [
        (_update_score(services, qvec, anchor, t, lambda t=t: shares.get(t.rowid, 0.0)), t)
        for t in later
        if t.rowid not in taken and t.rowid != anchor.rowid
    ]
    scored = [(score, t) for score, t in scored if score is not None]
    return max(scored, key=lambda x: x[0])[1] if scored else None


def _replaced(services, vocabulary, qvec, anchor: TurnHit, others: list[TurnHit]) -> list[TurnHit]:
    """Older ranked statements the anchor updates (the newest one ranked first)."""
    older = [t for t in others if t.sent_at < anchor.sent_at]
    replaced = []
    for old in older:

        def words(old: TurnHit = old) -> float:
            return vocabulary.shared(old, [anchor]).get(anchor.rowid, 0.0)

        if _update_score(services, qvec, old, anchor, words) is not None:
            replaced.append(old)
    return replaced


def _restatements(services, vocabulary, anchor: TurnHit, others, taken) -> list[TurnHit]:
    """Ranked statements that say the anchor's thing again: close in meaning and sharing its
    distinctive words (not merely a name everyone uses)."""
    calibrate = services.embedder.calibrate
    close = [
        t
        for t in others
        if t.rowid not in taken and calibrate(float(t.vector @ anchor.vector), "pair") >= SIMILAR
    ]
    words = vocabulary.shared(anchor, close)
    return [t for t in close if words.get(t.rowid, 0.0) >= SHARED_WORDS]


def _distinct(text: str) -> set[str]:
    return {w for w in terms(text) if len(w) > 2 or w.isdigit()}


def _order(members: list[TurnHit], score: float) -> Subject:
    """The current statement: the newest that changes something; a later message that only
    repeats words of older statements, without a change cue, is a mention of an old value."""
    members = sorted(members, key=lambda t: t.sent_at, reverse=True)
    current = members[0]
    for candidate in members:
        older = [t for t in members if t.sent_at < candidate.sent_at]
        seen = set().union(*(_distinct(t.text) for t in older)) if older else set()
        new_words = _distinct(candidate.text) - seen
        if has_change_cue(candidate.text) or not older or new_words & _values(candidate):
            current = candidate
            break
    older = [t for t in members if t is not current and t.sent_at < current.sent_at]
    later = [t for t in members if t is not current and t.sent_at >= current.sent_at]
    return Subject(current, (older + later)[:MAX_HISTORY], score)


_SENTENCE_START = re.compile(r"(^|[.!?:;\n]\s*)$")


def _values(turn: TurnHit) -> set[str]:
    """The words of a turn that hold a value: numbers, times, days, months, and names (a
    capital where no sentence starts)."""
    values = set(_VALUE_WORDS.findall(fold(turn.text)))
    for m in re.finditer(r"[\w'-]+", turn.text):
        word = m.group(0)
        capital = word[0].isupper() and not _SENTENCE_START.search(turn.text[: m.start()])
        if capital or any(c.isdigit() for c in word):
            values.update(terms(word))
    return values


def _rerank(ranked: list[TurnHit], subjects: list[Subject]):
    by_member = {t.rowid: s for s in subjects for t in [s.current, *s.older]}
    out: list[TurnHit] = []
    placed: set[int] = set()
    history: dict[int, list[TurnHit]] = {}
    for turn in ranked:
        subject = by_member.get(turn.rowid)
        if subject is None:
            out.append(turn)
            continue
        if subject.current.rowid in placed:
            continue
        subject.current.score = max(subject.score, subject.current.score)
        out.append(subject.current)
        placed.add(subject.current.rowid)
        history[subject.current.rowid] = subject.older
    for subject in subjects:  # a subject whose members were all found as successors
        if subject.current.rowid not in placed:
            subject.current.score = max(subject.score, subject.current.score)
            out.insert(0, subject.current)
            history[subject.current.rowid] = subject.older
    return out, history
