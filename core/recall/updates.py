"""Latest value wins: for a question about how things are now, the newest statement first.

Facts change ("new number", "the appointment moved to the 19th", "we go to The Crown these
days"), and the statement that best matches a question is often the first one, which names the
subject in full; the update that replaced it may not repeat the question's words at all. So the
best-matching statements are taken as anchors, and later messages about the same subject are
looked for from each anchor: close to it in meaning, sharing its distinctive words (people name
what they update: "Karim", "Fitness Park", "EDF"), relevant to the question. A subject's newest
statement comes first, the older ones follow as its dated history; a later message that only
mentions an old value again (no change cue, no new words) does not become the current one.

An update may share no word with what it replaces ("Passée chez Orange pour la fibre" after
"Box internet : Free"), or be in the other language. It is then found by meaning, among the
later turns of the anchor's chat nearest to the anchor and the question together: the one that
stands out from the others (a z-score over them, since e5's cosines are compressed and differ by
language: no absolute threshold) and says a change or gives a new value for an old one.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from core.errors import EloraError
from core.offload import beside
from core.recall.change_cues import (
    IDENTIFIERS,
    asked_kinds,
    change_cue_about,
    distinct,
    distinct_values,
    has_change_cue,
    keeps_names,
    kinds,
    names,
    new_values,
    rejects,
    replaces,
    same_kind,
    values,
)
from core.recall.crosslingual import language, translate
from core.recall.lexical import terms
from core.recall.turn_probe import turn_meta
from core.recall.turn_search import TurnHit, turn_hits
from core.recall.vocabulary import Vocabulary

if TYPE_CHECKING:
    from core.services import Services

log = logging.getLogger(__name__)

ANCHORS = 3  # best statements whose successors are looked for
ANCHOR_GAP = 0.15  # an anchor scores within this of the best turn
SUCCESSOR_FETCH = 20  # later messages per anchor, by meaning and by words
DISTINCTIVE = 6  # the anchor's rarest words, searched in later messages
COMMON_WORD = 0.01  # ... but those in more than this share of messages (Vocabulary.rarest)
REPLACED_FETCH = 15  # ranked statements an anchor may replace (the best ones)
SHARED_WORDS = 0.2  # share of the anchor's own word match (Vocabulary.shared)
CLOSE = 0.75  # calibrated pair similarity: a paraphrase-like restatement
# Saying that something changed needs less: one shared name, or closeness in meaning (standing
# out in the chat when that was measured, see _later_turns).
CUE_WORDS = 0.1
CUE_CLOSE = 0.5
RELEVANT = 0.3  # calibrated relevance to the question a successor needs on its own
ANSWERS = 0.6  # calibrated relevance of a statement that answers the question by itself
FOUND_CLOSE = 0.4  # calibrated pair similarity two such statements still need to be one subject
SAME_CHAT = 0.3  # an update usually comes in the chat where the fact was stated
WORDS_WEIGHT = 2.0
CUE_WEIGHT = 0.3
SIMILAR = 0.7  # calibrated pair similarity for two ranked statements to be one subject
BAND_GAP = 0.3  # ranked statements joined to a subject score within this of the best
MAX_HISTORY = 3  # older statements shown with the current one (the newest of them)
# An update in other words ("Passée chez Orange pour la fibre" after "Box internet : Free") is
# found by meaning: the later turns nearest to the anchor and the question together, and among
# those of the anchor's chat, the one that stands out from the rest (z-score over them, so
# e5's compressed cosines need no absolute threshold).
MEANING_PROBE = 60  # the spread is measured over this many nearest (it shapes the z-scores)
STANDOUT = 3.0  # z-score among the anchor chat's later turns in the probe (_later_turns)
STANDOUT_PEERS = 8  # fewer same-chat turns than this: no spread to stand out from
STANDOUT_WEIGHT = 0.5
SAME_CHAT_FETCH = 5  # the anchor chat's nearest later turns, candidates whether they stand out
# A successor is checked against the other statements it may update (_updates_another): the
# surest CHECKED candidates, each against the EARLIER_FETCH earlier turns of its chat found by
# its rarest words.
CHECKED = 2
EARLIER_FETCH = 10


@dataclass
class Subject:
    """Statements of one fact: the newest first, then the older ones (newest to oldest)."""

    current: TurnHit
    older: list[TurnHit] = field(default_factory=list)
    score: float = 0.0
    # Older statements past MAX_HISTORY: not shown, nor ranked on their own before the current.
    dropped: list[TurnHit] = field(default_factory=list)


def latest_first(
    services: Services,
    question: str,
    query_vector: np.ndarray | None,
    ranked: list[TurnHit],
    chats: list[str] | None,
    vocabulary: Vocabulary | None = None,
    also: np.ndarray | None = None,
) -> tuple[list[TurnHit], dict[int, list[TurnHit]]]:
    """The ranking with each subject's newest statement where its best one stood; returns the
    new ranking and, by current turn rowid, the older statements it replaces. `also`: the
    question's vector in the archive's other language (core.recall.crosslingual): a statement
    is as relevant as it is close to either."""
    if not ranked or query_vector is None:
        return ranked, {}
    if also is not None:
        query_vector = np.stack([query_vector, also])
    vocabulary = vocabulary or Vocabulary(services)
    best = ranked[0].score
    anchors = [t for t in ranked[:ANCHORS] if t.score >= best - ANCHOR_GAP and t.vector is not None]
    near = [t for t in ranked if t.score >= best - BAND_GAP and t.vector is not None]
    # A question asking for a kind of value ("Where does Sam live?": an address) is answered
    # by a statement giving one, however much small talk its speaker's name ranks above it.
    wanted = asked_kinds(question)
    typed = next((t for t in near if wanted & kinds(t.text)), None) if wanted else None
    if typed is not None and typed not in anchors:
        anchors.append(typed)
    subjects: list[Subject] = []
    claimed: set[int] = set()
    # Each anchor's successor is looked for at once, the later anchors' on other threads (their
    # searches are SQLite's and Chroma's, which release the GIL), with nothing claimed yet; one
    # whose pick an earlier subject claimed is looked for again below, as it always was.
    # An anchor an earlier subject claims needs no successor: its search stops where it is.
    unneeded = [threading.Event() for _ in anchors[1:]]
    early = [
        beside(
            _successor, services, vocabulary, question, query_vector, a, chats, set(), near,
            stop=stop,
        )
        for a, stop in zip(anchors[1:], unneeded, strict=True)
    ]  # fmt: skip
    for n, anchor in enumerate(anchors):
        if anchor.rowid in claimed:
            if n:
                early[n - 1].cancel()
                unneeded[n - 1].set()
            continue
        members = [anchor]
        later = early[n - 1].result() if n else None
        if n == 0 or (later is not None and later.rowid in claimed):
            later = _successor(
                services, vocabulary, question, query_vector, anchor, chats, claimed, near
            )
        if later is not None:
            later.score = anchor.score
            members.append(later)
        others = [t for t in near if t.rowid not in claimed and t.rowid != anchor.rowid]
        members += _replaced(
            services, vocabulary, question, query_vector, anchor, others[:REPLACED_FETCH]
        )
        taken = {t.rowid for t in members}
        members += _restatements(services, vocabulary, anchor, others, taken)
        if len(members) > 1:
            claimed.update(t.rowid for t in members)
            subjects.append(_order(members, max(t.score for t in members)))
        elif anchor is not typed:  # the statement of a kind asked for stays linkable below
            claimed.add(anchor.rowid)
    # Statements the question ranks near the best are linked among themselves too, with no
    # search more (each was found by the question itself): the newer one updating an older
    # one of its chat leads it, whichever of them ranked higher.
    band = [t for t in near[:REPLACED_FETCH] if t.rowid not in claimed]
    for members in _linked(services, vocabulary, question, query_vector, band):
        claimed.update(t.rowid for t in members)
        subjects.append(_order(members, max(t.score for t in members)))
    members = {t.rowid for s in subjects for t in [s.current, *s.older, *s.dropped]}
    lone = [a for a in anchors if a.rowid not in members]
    ranked_near = {t.rowid for t in near}
    subjects = _chain(services, vocabulary, question, query_vector, subjects, lone, ranked_near)
    if not subjects:
        return ranked, {}
    return _rerank(ranked, subjects)


def _chain(
    services, vocabulary, question, qvec, subjects: list[Subject], lone: list[TurnHit], found
):
    """Subjects (and anchors left alone) whose newest statement a later subject's updates,
    joined under it: "pulled the V1 delivery forward to November 29" after "décalé la
    livraison de la V1 au 2 décembre" after "la V1 pour le 15 novembre", each found apart.
    The later one must be ranked near the best by the question itself (`found`: rowids) and
    name the subject (share as much of its words as a restatement): a change said in the same
    chat near in meaning, or naming someone everyone names there ("Papa est malade, on décale
    à samedi"), is not enough between two facts found apart."""
    units = subjects + [Subject(a, [], a.score) for a in lone]
    units.sort(key=lambda u: u.current.sent_at, reverse=True)
    joined: list[Subject] = []
    taken: set[int] = set()
    for n, unit in enumerate(units):
        if unit.current.rowid in taken:
            continue
        members = [unit.current, *unit.older, *unit.dropped]
        if unit.current.rowid not in found:
            if unit.older:
                joined.append(unit)
            continue
        for older in units[n + 1 :]:
            old = older.current
            if old.rowid in taken or old.chat_id != unit.current.chat_id:
                continue
            shared = vocabulary.shared(old, [unit.current]).get(unit.current.rowid, 0.0)
            if shared < SHARED_WORDS:
                continue
            score = _update_score(
                services, qvec, old, unit.current, lambda s=shared: s, question=question
            )
            if score is not None:
                members += [old, *older.older, *older.dropped]
                taken.add(old.rowid)
        if len(members) > 1:
            ranked = {t.rowid: t for t in members}
            joined.append(
                _order(list(ranked.values()), max(unit.score, *(t.score for t in members)))
            )
    return joined


def _update_score(
    services, qvec, old: TurnHit, new: TurnHit, words, standout=None, question="", found=False
) -> float | None:
    """How surely `new` updates `old` (None: it does not); `words()` gives how much of old's
    wording `new` shares (Vocabulary.shared), asked only when it decides; `standout` whether
    `new` stands out in meaning among the later turns of old's chat (None: not measured);
    `found` whether the question itself ranked both near its best.

    People name what they update ("Karim", "Fitness Park"), so an update shares words with the
    statement it replaces; and it says that something changed (a cue), or restates it closely
    with a new value ("the standup is at 9:45" after "... at 9:15"). A later message merely on
    the same topic is not an update. Closeness in meaning is weighed less than shared words: a
    turn's meaning also carries the turn it answers, which drifts to unrelated chatter.
    """
    if new.vector is None or old.vector is None or new.sent_at <= old.sent_at:
        return None
    # An update gives the new value (a name, a number, a day, a time); a message without any
    # ("oh no, not the user interviews again…") says nothing that could replace a fact, nor
    # one whose values are all of other kinds (a phone number for an address).
    if not values(new) or not same_kind(old, new):
        return None
    # An address, a phone number, an email is replaced by another one: asked for one ("Where
    # does Sam live?"), an update of a statement giving it gives one too; and a change said in
    # the chat with one ("Moved again! We're at 5 Abbey Road") names the subject well enough.
    typed = asked_kinds(question) & IDENTIFIERS & kinds(old.text)
    if typed and not typed & kinds(new.text):
        return None
    calibrate = services.embedder.calibrate
    closeness = calibrate(float(new.vector @ old.vector), "pair")
    cue = _cue(old, new, question)
    if not cue and closeness < CLOSE:
        return None
    # An update is read with the statement it replaces: as close to it as a restatement, it is
    # about what the question asks even in other words (another language, the new value's name).
    # Shared words alone do not carry the question's relevance over: a value named again in
    # chatter ("(n°15)" after "le 15 mai") would make any later message with a cue an update.
    shared = words()
    # The old statement's relevance carries over in proportion to how close the update is to
    # it: "Easyjet changed my flight, I land on June 6 at 18:45" is far from "When does Sam
    # land in Lyon?" for e5, not from "Flight booked: landing in Lyon on June 6 at 14:20".
    asked = language(question)
    answers = _relevance(services, new, qvec, asked), _relevance(services, old, qvec, asked)
    relevance = max(answers[0], closeness * answers[1])
    # A change that names the old statement's value ("Thomas Girard takes over the team,
    # Nadia is off to the Paris office" after "c'est Nadia notre manager") is about its fact,
    # in whatever words (or language) it says the new one.
    if cue and _hands_over(old, new, question):
        relevance = max(relevance, answers[1])
    if relevance < RELEVANT:
        return None
    if cue:
        # Without a shared name, closeness in meaning links a change only where it stands out
        # from the chat's other later turns: chatter with a cue word ("on a avancé sur la mise
        # en prod") is often as close to a statement as its real update.
        close = closeness >= CUE_CLOSE if standout is None else standout
        # Two statements of one chat the question ranks near its best, each answering it by
        # itself, are about its subject however far apart in words ("Box internet : Free" and
        # "Passée chez Orange pour la fibre" for "Who's my internet provider?").
        # Still, they are near in meaning (Free and Orange: 0.47): a question naming someone
        # ranks that person's unrelated turns near its best too, each "answering" it by the name.
        close = close or (found and min(answers) >= ANSWERS and closeness >= FOUND_CLOSE)
        linked = shared >= CUE_WORDS or close or bool(typed)
        if new.chat_id != old.chat_id:
            # From another chat, a change is about this fact only when it names it as well as
            # means it: there, a cue and a shared word ("client", a phone's "06") are common.
            linked = shared >= SHARED_WORDS and closeness >= CUE_CLOSE
    else:
        linked = shared >= SHARED_WORDS and replaces(old, new) and keeps_names(question, old, new)
    if not linked:
        return None
    score = relevance + closeness + WORDS_WEIGHT * shared + CUE_WEIGHT * cue
    return score + (SAME_CHAT if new.chat_id == old.chat_id else 0.0)


def _hands_over(old: TurnHit, new: TurnHit, question: str) -> bool:
    """Whether `new` names someone or something the old statement named, other than what the
    question names (its subject, named in anything said about it)."""
    subject = names(question)
    return bool((names(old.text) - subject) & names(new.text))


def _cue(old: TurnHit, new: TurnHit, question: str) -> bool:
    """Whether `new` says that `old` changed: a change cue ("new" only of the old statement's
    words or the question's: not "la nouvelle saison de The Bear"), or an old value negated
    while the names the question asks about stay ("Chez Novalis, le contact c'est Julie
    Roussel, pas la même Julie" is not about Altura's contact)."""
    if change_cue_about(new.text, set(terms(old.text)) | _asked(question)):
        return True
    return rejects(old, new, frozenset(names(question))) and keeps_names(question, old, new)


@lru_cache(maxsize=64)
def _asked(question: str) -> frozenset[str]:
    """The question's words, and their rendering in the other language."""
    words = set(terms(question))
    source = language(question)
    if source is not None:
        words |= set(terms(translate(question, source)))
    return frozenset(words)


def _relevance(services, turn: TurnHit, qvec, asked: str | None) -> float:
    """How relevant a turn is to the question: to the question's own vector, or for a turn in
    the other language than the question's (`asked`), to the nearer of its vectors."""
    vectors = np.atleast_2d(qvec)
    if asked is not None and language(turn.text) in (None, asked):
        vectors = vectors[:1]
    return services.embedder.calibrate(float(np.max(vectors @ turn.vector)))


def _successor(
    services, vocabulary, question, qvec, anchor: TurnHit, chats, taken, found=(), stop=None
) -> TurnHit | None:
    """The later message anywhere in the archive that most surely updates the anchor: linked
    to it by shared words and cues (_update_score), or, in its chat, by standing out in meaning
    and saying a change or a new value. A later message the question found by itself (`found`,
    ranked near the best) needs no standing out: closeness to the anchor links its change.
    `stop`: set once the answer is not needed (None is returned from then on)."""
    ranked = {t.rowid for t in found if t.sent_at > anchor.sent_at}
    near, spread = _later_turns(services, anchor, qvec, chats)
    if stop is not None and stop.is_set():
        return None
    near += [t.capture_id for t in found if t.rowid in ranked]
    standouts = {i: z for i, z in spread.items() if z >= STANDOUT}
    nearest = sorted(spread, key=spread.get, reverse=True)[:SAME_CHAT_FETCH]
    words = vocabulary.rarest(anchor.text, DISTINCTIVE, COMMON_WORD)
    later = turn_hits(
        services, list(near) + nearest, words, after=anchor.sent_at, chats=chats,
        limit=SUCCESSOR_FETCH,
    )  # fmt: skip
    shares = vocabulary.shared(anchor, later)
    scored = []
    for t in later:
        if t.rowid in taken or t.rowid == anchor.rowid:
            continue
        z = standouts.get(t.capture_id)
        standout = None if z is None and t.rowid in ranked else z is not None
        score = _update_score(
            services, qvec, anchor, t, lambda t=t: shares.get(t.rowid, 0.0), standout, question,
            t.rowid in ranked,
        )  # fmt: skip
        # Standing out alone links only a message that says a change, or that names the
        # anchor's subject and gives it a new value ("Les notes de frais passent par Spendesk"
        # after "Expenses go through Concur"): a new value elsewhere in the chat ("Box
        # internet : Free" after "Propriétaire : M. Vidal") is another fact.
        if score is None:
            says = _cue(anchor, t, question) or (
                shares.get(t.rowid, 0.0) >= CUE_WORDS and new_values(anchor, t)
            )
        else:
            says = _cue(anchor, t, question) or replaces(anchor, t)
        if z is not None and says:
            score = (score or 0.0) + STANDOUT_WEIGHT * z
        if score is not None:
            scored.append((score, t))
    # The surest first, unless it is rather the update of another statement of its chat.
    scored.sort(key=lambda x: x[0], reverse=True)
    for _, t in scored[:CHECKED]:
        if not _updates_another(services, vocabulary, anchor, t):
            return t
    return None


def _updates_another(services, vocabulary, anchor: TurnHit, new: TurnHit) -> bool:
    """Whether `new` is rather the update of another earlier statement of its chat: one that
    names more of the values `new` gives (names, numbers) than the anchor does, and is near it in
    meaning. People name what they update: "J'ai eu Marc Lefort, c'est lui qui gère notre compte
    chez Altura maintenant" updates "Chez Altura, notre contact c'est Julie Fabre", not "c'est
    elle notre manager", however close "gère" is to a manager. The earlier statements are found
    by `new`'s rarest words that other messages hold too."""
    given = distinct_values(new)
    words = vocabulary.rarest(new.text, DISTINCTIVE, COMMON_WORD, seen=2) if given else None
    if words is None:
        return False
    earlier = turn_hits(
        services, [], words, before=new.sent_at, chats=[new.chat_id], limit=EARLIER_FETCH
    )
    calibrate = services.embedder.calibrate
    named = len(given & distinct_values(anchor))  # how many of them the anchor names
    typed = kinds(new.text) & kinds(anchor.text)  # an address replacing an address...
    for old in earlier:  # (all sent before `new`: turn_hits' bound)
        if old.rowid == anchor.rowid or old.vector is None:
            continue
        if typed and not typed & kinds(old.text):  # ... updates no statement without one
            continue
        if len(given & distinct_values(old)) <= named:
            continue
        if calibrate(float(new.vector @ old.vector), "pair") >= CUE_CLOSE:
            return True
    return False


def _later_turns(services, anchor: TurnHit, qvec, chats) -> tuple[list[str], dict[str, float]]:
    """The later turns nearest to the anchor and the question together (capture ids, at most
    SUCCESSOR_FETCH), and, for those of the anchor's chat, how much each stands out in meaning
    from the others ({capture id: z-score}). One unfiltered probe (in place of the anchor's own
    nearest turns: no query more), kept to the scope and the dates from the hits' metadata."""
    if anchor.vector is None:
        return [], {}
    both = anchor.vector + np.atleast_2d(qvec)[0]
    both = both / (np.linalg.norm(both) or 1.0)
    since = (anchor.sent_at - datetime(1970, 1, 1)).total_seconds()
    allowed = set(chats) if chats is not None else None
    try:
        # Ids and distances only: Chroma's metadata costs several times the search; the chat
        # and date it holds are read from the captures.
        hits = services.vectors.query("turns", both.tolist(), MEANING_PROBE, metadata=False)
    except EloraError as exc:
        log.warning("turn vector search failed, updates linked by words only: %s", exc)
        return [], {}
    meta = turn_meta(services, [h.id for h in hits])
    later = [
        h
        for h in hits
        if h.id != anchor.capture_id
        and meta.get(h.id, {}).get("sent_at", 0) > since
        and (allowed is None or meta[h.id].get("chat_id") in allowed)
    ]
    near = [h.id for h in later[:SUCCESSOR_FETCH]]
    same = {h.id: h.similarity for h in later if meta[h.id].get("chat_id") == anchor.chat_id}
    if len(same) < STANDOUT_PEERS:
        return near, {}
    sims = np.array(list(same.values()))
    spread = float(sims.std()) or 1.0
    mean = float(sims.mean())
    return near, {i: (s - mean) / spread for i, s in same.items()}


def _replaced(
    services, vocabulary, question, qvec, anchor: TurnHit, others: list[TurnHit]
) -> list[TurnHit]:
    """Older ranked statements the anchor updates (the newest one ranked first)."""
    older = [t for t in others if t.sent_at < anchor.sent_at]
    replaced = []
    for old in older:

        def words(old: TurnHit = old) -> float:
            return vocabulary.shared(old, [anchor]).get(anchor.rowid, 0.0)

        if _update_score(services, qvec, old, anchor, words, question=question, found=True):
            replaced.append(old)
    return replaced


def _linked(services, vocabulary, question, qvec, band: list[TurnHit]) -> list[list[TurnHit]]:
    """The band's statements grouped by subject: each older one joins the newer statement of
    its chat that most surely updates it (_update_score), not merely the newest that says some
    change; chains join."""
    parent: dict[int, int] = {}
    for old in band:
        best = None
        for new in band:
            if new.chat_id != old.chat_id or new.sent_at <= old.sent_at:
                continue

            def words(new: TurnHit = new, old: TurnHit = old) -> float:
                return vocabulary.shared(old, [new]).get(new.rowid, 0.0)

            score = _update_score(services, qvec, old, new, words, question=question, found=True)
            if score is None:
                continue
            # The surest, not the newest: "We're doing Cornwall again this summer" (Sam's own
            # summer) is newer than "We cancelled Porto, it's Edinburgh in August instead" and
            # says a change too, but shares less with "we booked a week in Porto in July".
            if best is None or score > best[0]:
                best = (score, new.rowid)
        if best is not None:
            parent[old.rowid] = best[1]

    def root(rowid: int) -> int:
        while rowid in parent:
            rowid = parent[rowid]
        return rowid

    groups: dict[int, list[TurnHit]] = {}
    for turn in band:
        groups.setdefault(root(turn.rowid), []).append(turn)
    return [members for members in groups.values() if len(members) > 1]


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


def _order(members: list[TurnHit], score: float) -> Subject:
    """The current statement: the newest that changes something; a later message that only
    repeats words of older statements, without a change cue, is a mention of an old value."""
    members = sorted(members, key=lambda t: t.sent_at, reverse=True)
    current = members[0]
    for candidate in members:
        older = [t for t in members if t.sent_at < candidate.sent_at]
        seen = set().union(*(distinct(t.text) for t in older)) if older else set()
        new_words = distinct(candidate.text) - seen
        changes = has_change_cue(candidate.text) or any(rejects(t, candidate) for t in older)
        if changes or not older or new_words & values(candidate):
            current = candidate
            break
    older = [t for t in members if t is not current and t.sent_at < current.sent_at]
    later = [t for t in members if t is not current and t.sent_at >= current.sent_at]
    rest = older + later
    return Subject(current, rest[:MAX_HISTORY], score, rest[MAX_HISTORY:])


def _rerank(ranked: list[TurnHit], subjects: list[Subject]):
    """Each subject's current statement where its best member ranked, its history with it; an
    older statement past the history keeps its own place, never before its current one."""
    by_member = {t.rowid: s for s in subjects for t in [s.current, *s.older]}
    beyond = {t.rowid: s for s in subjects for t in s.dropped}
    out: list[TurnHit] = []
    placed: set[int] = set()
    history: dict[int, list[TurnHit]] = {}
    for turn in ranked:
        subject = by_member.get(turn.rowid) or beyond.get(turn.rowid)
        if subject is None:
            out.append(turn)
            continue
        if subject.current.rowid not in placed:
            subject.current.score = max(subject.score, subject.current.score)
            out.append(subject.current)
            placed.add(subject.current.rowid)
            history[subject.current.rowid] = subject.older
        if turn.rowid in beyond:
            out.append(turn)
    for subject in subjects:  # a subject whose members were all found as successors
        if subject.current.rowid not in placed:
            subject.current.score = max(subject.score, subject.current.score)
            out.insert(0, subject.current)
            history[subject.current.rowid] = subject.older
    return out, history
