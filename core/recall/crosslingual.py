"""The question in the archive's other language (French <-> English), word by word.

People write in two languages and ask in either: "C'est quand le club de lecture ?" about "Book
club is every first Thursday of the month". The bundled e5 model matches a French question with
the French small talk near it far above an English statement of its answer (on bench_updates,
such statements stood past the 1,500th nearest turn; the same question asked in English found
them among the first 50). So a question is also searched in the other language, rendered word
by word from a glossary of everyday words (people, home, work, health, contact, schedule,
leisure, travel, money): grammar matters little to an embedding, the words' meaning does.
Names and words the glossary lacks (often shared by both languages: "pub", "Netflix") stay.
It is done only when the archive holds both languages, so a one-language archive is searched as
before.
"""

from __future__ import annotations

import logging
import re
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import numpy as np

from core.errors import EloraError
from core.recall.lexical import STOPWORDS, fold

if TYPE_CHECKING:
    from core.recall.vocabulary import Vocabulary
    from core.services import Services

log = logging.getLogger(__name__)

# French = English, alternatives after "/" (the first is the one written); several words
# make a phrase, matched before its words. Lower case; accents kept for the embedding.
_GLOSSARY = """
c'est quoi=what is|c'est qui=who is|c'est quand=when is|c'est où=where is|c'est combien=how much is
qu'est-ce que=what|est-ce que=do|à quelle heure=what time|quel jour=which day|combien de=how many
quel/quelle/quels/quelles=which/what|qui=who|que=what/that|comme=as/like|va=goes|aller=go|pendant=during|cet/cette/ce=this|quoi=what|quand=when|où=where|comment=how
combien=how much|pourquoi=why|est/c'est=is|sont=are|était=was|ont=have|fait=does/do
je=i|tu=you|il=he|elle=she|on/nous=we|vous=you|ils/elles=they
mon/ma/mes=my|ton/ta/tes=your|son/sa/ses=his/her|notre/nos=our|votre/vos=your|leur/leurs=their
moi=me|toi=you|lui=him|le/la/les/l'=the|un/une=a|des=some|du/de/d'=of|au/aux/à=at/to
chez=at|avec=with|pour=for|dans=in|sur=on|sous=under|par=by|sans=without|et=and|ou=or
maintenant=now|actuellement=currently|toujours=still/always|encore=again|déjà=already
habituel/habituelle=usual|d'habitude=usually|nouveau/nouvelle=new|ancien/ancienne=old
prochain/prochaine=next|dernier/dernière=last|actuel/actuelle=current
famille=family|maman/mère=mum/mom/mother|papa/père=dad/father|parents=parents
frère=brother|sœur=sister|fils=son|fille=daughter/girl|enfant/enfants=child/children/kids
bébé=baby|mari=husband|femme=wife/woman|copain/petit ami=boyfriend|copine/petite amie=girlfriend
cousin/cousine=cousin|oncle=uncle|tante=aunt|grand-mère/mamie=grandmother/grandma
grand-père/papi=grandfather/grandpa|ami/amie/pote=friend|voisin/voisine=neighbour/neighbor
collègue=colleague|chef/patron=boss|manager/responsable=manager|équipe=team|client=client
sort avec=dating|sortir avec=go out with|mariage=wedding/marriage|marié/mariée=married
divorcé=divorced|anniversaire=birthday|fête=party|soirée=party/evening|naissance=birth
médecin/docteur=doctor/gp|médecin traitant=gp|dentiste=dentist|véto/vétérinaire=vet
kiné/kinésithérapeute=physio/physiotherapist|pharmacie=pharmacy/chemist|hôpital=hospital
opération=surgery/operation|chirurgien=surgeon|rendez-vous/rdv=appointment|santé=health
malade=ill/sick|groupe sanguin=blood type|allergie=allergy|médicaments=medication
coiffeur/coiffeuse=hairdresser/barber|cheveux=hair|baby-sitter/nounou=babysitter/nanny
plombier=plumber|électricien=electrician|garagiste=mechanic|avocat=lawyer|notaire=notary
comptable=accountant|propriétaire=landlord/owner|locataire=tenant|agence=agency
conseiller/conseillère=adviser/advisor|banque=bank|assurance=insurance|assureur=insurer
maison=house/home|appartement/appart=flat/apartment|adresse=address|rue=street|immeuble=building
habite/habiter/vit/vivre=lives/live|déménagement=move|déménager=move|loyer=rent|bail=lease
code=code|porte=door|clé/clés=key/keys|boîte aux lettres=mailbox|étage=floor|parking=parking
place de parking=parking spot|garage=garage|voiture=car|immatriculation=registration/plate
vélo=bike|train=train|avion/vol=plane/flight|billet/billets=ticket/tickets|gare=station
aéroport=airport|atterrit/atterrir=lands/land|arrive/arriver=arrives/arrive|part/partir=leaves/go
vacances=holiday/holidays/vacation|voyage=trip|été=summer|hiver=winter|printemps=spring
automne=autumn|week-end=weekend|hôtel=hotel|billet d'avion=plane ticket
travail/boulot=work/job|travaille/bosse=works/work|métier=job|poste=position/post
poste de travail/bureau=desk|bureau/bureaux=office|entreprise/société=company|projet=project
réunion=meeting|point d'équipe=team meeting|télétravail=remote work/work from home
salaire=salary|congés=leave/time off|badge=badge|mot de passe=password|serveur=server
notes de frais/frais=expenses|outil=tool|livraison=delivery|échéance/date limite=deadline
cours=class/course|école=school|université/fac=university/uni|professeur/prof=teacher
téléphone/portable=phone/mobile|numéro=number|numéro de téléphone=phone number
fixe=landline|adresse mail/mail/e-mail/courriel=email/email address|fournisseur=provider
internet/box=internet|abonnement=subscription|contrat=contract|facture=bill
électricité=electricity|gaz=gas|eau=water|mensualité=monthly payment|par mois=per month
paie/payer=pay|prix=price|argent=money|compte=account|carte=card
sport=sport|salle de sport/salle=gym|piscine=pool/swimming pool|nage/nager=swim
casier=locker|course/courir=run/running|foot/football=football/soccer|match=game/match
grimpe/escalade=climbing|yoga=yoga|club=club|lecture=reading|livre=book
club de lecture=book club|concert=gig/concert|cinéma=cinema/movies|film=film/movie
restaurant/resto=restaurant|déjeune/déjeuner=lunch|dîner/repas=dinner/meal|petit-déjeuner=breakfast
café=coffee/cafe|bar/pub=pub/bar|cantine=canteen|boulangerie=bakery|magasin=shop/store
supermarché=supermarket|marché=market|noël=christmas|réveillon=new year's eve
chat=cat|chien=dog|croquettes=food/kibble|mange/manger=eats/eat|s'appelle/appelle=called/call
nom=name|âge=age|heure=time|jour=day|semaine=week|mois=month|année/an=year
lundi=monday|mardi=tuesday|mercredi=wednesday|jeudi=thursday|vendredi=friday
samedi=saturday|dimanche=sunday|matin=morning|soir=evening|nuit=night|midi=noon
aujourd'hui=today|demain=tomorrow|hier=yesterday|janvier=january|février=february
mars=march|avril=april|mai=may|juin=june|juillet=july|août=august|septembre=september
octobre=october|novembre=november|décembre=december|garde/garder=looks after/look after
récupère/récupérer=picks up/pick up|chercher=fetch|joue/jouer=plays/play|utilise/utiliser=use
"""

FRENCH, ENGLISH = "fr", "en"
# Words telling the two languages apart in a question and in the archive.
_MARKERS = {
    FRENCH: ("est", "les", "une", "pas", "je", "avec", "pour", "c'est", "quoi", "quand", "où"),
    ENGLISH: ("the", "is", "and", "you", "with", "for", "what", "when", "where", "my", "it's"),
}
# Words most messages of a language hold (single index terms), to tell whether it is spoken.
_SPOKEN = {
    FRENCH: ("est", "les", "pas", "une", "pour", "avec"),
    ENGLISH: ("the", "and", "you", "is", "for", "with"),
}
BOTH_SPOKEN = 0.05  # the other language's words in this share of the messages: it is spoken
COVERED = 0.5  # share of a question's content words the glossary must render
TEXTS_CACHED = 4096  # texts whose language is kept (language)
_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]")


@cache
def _tables() -> dict[str, dict[tuple[str, ...], str]]:
    """{language asked: {folded words: words written in the other language}}."""
    tables: dict[str, dict[tuple[str, ...], str]] = {FRENCH: {}, ENGLISH: {}}
    for entry in _GLOSSARY.replace("\n", "|").split("|"):
        if "=" not in entry:
            continue
        french, english = (side.split("/") for side in entry.split("="))
        for source, target, table in ((french, english, FRENCH), (english, french, ENGLISH)):
            for phrase in source:
                tables[table].setdefault(_words(phrase), target[0])
    return tables


def _tokens(text: str) -> list[tuple[str, str]]:
    """(as written, folded) words and marks, an elision split off ("l'école": "l'", "école")."""
    out: list[tuple[str, str]] = []
    for token in _TOKEN.findall(text.replace("’", "'")):
        token = token.removesuffix("'s").removesuffix("'S") or token  # whose: "Mum's" -> "Mum"
        head, apostrophe, rest = token.partition("'")
        if apostrophe and rest and len(head) <= 2 and fold(token) not in _KEEP:
            out += [(head + "'", fold(head + "'")), (rest, fold(rest))]
        else:
            out.append((token, fold(token)))
    return out


def _words(text: str) -> tuple[str, ...]:
    return tuple(folded for _, folded in _tokens(text))


# "what's" is "what is"; another "'s" says whose (kept with its word: "Sam's").
_CONTRACTED = re.compile(r"(?i)\b(what|who|where|when|how|it|that|there)'s\b")
_KEEP = {"c'est", "aujourd'hui", "qu'est-ce", "d'habitude", "s'appelle", "it's"}


@lru_cache(maxsize=TEXTS_CACHED)
def language(text: str) -> str | None:
    """French or English: which of them the glossary knows more of its words in (None: as
    many, or none); kept for the texts last asked about (an update's search asks it of the
    same candidates many times)."""
    tables = _tables()
    words = _words(_CONTRACTED.sub(r"\1 is", text.replace("’", "'")))
    counts = {
        side: sum((w,) in tables[side] and (w,) not in tables[other] for w in words)
        for side, other in ((FRENCH, ENGLISH), (ENGLISH, FRENCH))
    }
    if counts[FRENCH] == counts[ENGLISH]:
        return None
    return FRENCH if counts[FRENCH] > counts[ENGLISH] else ENGLISH


def translate(question: str, source: str) -> str:
    """The question word by word in the other language (names and unknown words kept)."""
    table = _tables()[source]
    longest = max(len(k) for k in table)
    tokens = _tokens(_CONTRACTED.sub(r"\1 is", question.replace("’", "'")))
    folded = tuple(f for _, f in tokens)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        for size in range(min(longest, len(tokens) - i), 0, -1):
            found = table.get(folded[i : i + size])
            if found is not None:
                out.append(found)
                i += size
                break
        else:
            out.append(tokens[i][0])
            i += 1
    text = " ".join(out)
    return re.sub(r"\s+([?!.,])", r"\1", text).replace("' ", "'")


def other_language(question: str, vocabulary: Vocabulary) -> str | None:
    """The question in the archive's other language when the archive holds both (None when
    it does not, or the question's language is unclear)."""
    source = language(question)
    if source is None:
        return None
    other = ENGLISH if source == FRENCH else FRENCH
    if vocabulary.share(_SPOKEN[other]) < BOTH_SPOKEN:
        return None
    if covered(question, source) < COVERED:
        return None
    translated = translate(question, source)
    return translated if fold(translated) != fold(question) else None


def covered(question: str, source: str) -> float:
    """The share of the question's content words (not names, numbers or stopwords) that the
    glossary renders: "Which city am I relocating to?" has none, and a rendering that keeps
    them as they are would match the other language's turns on its grammar words alone."""
    table = _tables()[source]
    tokens = _tokens(_CONTRACTED.sub(r"\1 is", question.replace("’", "'")))
    content = [
        (i, folded)
        for i, (written, folded) in enumerate(tokens)
        if re.fullmatch(r"[^\W\d_][\w'-]+", folded) and folded not in STOPWORDS
        and not (written[0].isupper() and i > 0)
    ]  # fmt: skip
    if not content:  # names and grammar only: nothing a rendering could lose
        return 1.0
    folded = tuple(f for _, f in tokens)
    known = set()
    for i in range(len(tokens)):
        for size in range(1, 4):
            if folded[i : i + size] in table:
                known.update(range(i, i + size))
    return sum(i in known for i, _ in content) / len(content)


def other_vector(services: Services, question: str, vocabulary: Vocabulary) -> np.ndarray | None:
    """The query vector of the question in the archive's other language (other_language), or
    None."""
    translated = other_language(question, vocabulary)
    if translated is None:
        return None
    try:
        return np.asarray(services.embedder.embed_query(translated), dtype=np.float32)
    except EloraError as exc:
        log.warning("could not embed the question in the other language: %s", exc)
        return None
