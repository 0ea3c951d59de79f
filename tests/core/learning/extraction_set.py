"""A labelled set of operator messages, French and English, for the heuristic extractor.

Each example is a message as the operator would send it to the assistant (or to a friend, in an
imported chat) and the kind of memory a careful reviewer would keep from it, or None when
nothing durable is said: small talk, questions, requests, passing moods, feedback on a draft.
The kinds follow SPEC section 3; where two kinds are defensible the closest one is given, and
the precision/recall figures count detection (worth keeping or not), with kind agreement
reported beside them.
"""

from __future__ import annotations

from typing import NamedTuple


class Example(NamedTuple):
    """One message and what is worth remembering in it."""

    text: str
    kind: str | None
    lang: str


def _fr(text: str, kind: str | None) -> Example:
    return Example(text, kind, "fr")


def _en(text: str, kind: str | None) -> Example:
    return Example(text, kind, "en")


EXAMPLES: list[Example] = [
    # -- French, worth keeping ---------------------------------------------------------------
    _fr("Je suis allergique aux fruits à coque, même en traces.", "constraint"),
    _fr("On a signé avec Nordhaven hier soir, le contrat court sur deux ans.", "event"),
    _fr("Ma sœur Léa habite à Bordeaux depuis 2019.", "fact"),
    _fr("J'ai horreur des réunions le vendredi après-midi.", "preference"),
    _fr("À partir de la semaine prochaine je bosse en télétravail le lundi et le vendredi.",
        "decision"),  # fmt: skip
    _fr("Mon vol pour Montréal est le 3 octobre à 10h40, départ de CDG.", "event"),
    _fr("Mon numéro client EDF c'est le 4012338901, au cas où.", "fact"),
    _fr("Je ne bois plus d'alcool depuis janvier.", "preference"),
    _fr("Pas d'appel avant 9h s'il te plaît, je dors encore à cette heure-là.", "constraint"),
    _fr("J'ai commencé le piano en septembre, cours le mardi soir.", "event"),
    _fr("Mon manager s'appelle Karim Haddad.", "fact"),
    _fr("Bon, on part sur Postgres pour stocker les événements.", "decision"),
    _fr("Le code wifi du bureau de Lyon c'est Atlas2024!", "fact"),
    _fr("L'après-midi je préfère le thé au café.", "preference"),
    _fr("Mes parents vivent à Nantes, dans la maison où j'ai grandi.", "fact"),
    _fr("Ça y est, j'ai eu mon permis !", "event"),
    _fr("Réponds-moi toujours en français, même quand j'écris en anglais.", "preference"),
    _fr("On a adopté un chat la semaine dernière, il s'appelle Miso.", "event"),
    _fr("Mon loyer passe à 910 € en juillet.", "fact"),
    _fr("J'évite le gluten, ce n'est pas une mode, j'ai une vraie intolérance.", "constraint"),
    _fr("Je cours tous les dimanches matin le long des quais du Rhône.", "pattern"),
    _fr("Je travaille chez Lumen Logistics depuis trois ans, comme cheffe de projet.", "fact"),
    _fr("Note que je ne prends jamais l'avion pour moins de 4h de train.", "constraint"),
    _fr("C'est acté : le séminaire d'équipe aura lieu à Annecy.", "decision"),
    # -- English, worth keeping --------------------------------------------------------------
    _en("My daughter starts at Lycée Ampère in September.", "event"),
    _en("I'm lactose intolerant, so no cheese boards for me.", "constraint"),
    _en("We decided to push the launch back to March 12.", "decision"),
    _en("My partner's name is Julien, he's a nurse at the Croix-Rousse hospital.", "fact"),
    _en("I can't stand long voice messages, just text me.", "preference"),
    _en("Our standup is at 9:45 every weekday.", "fact"),
    _en("Never schedule anything on Wednesday afternoons, that's deep work time.", "constraint"),
    _en("I got promoted to head of delivery last week!", "event"),
    _en("My go-to editor is Neovim with a LazyVim setup.", "preference"),
    _en("I cancelled my gym membership, it was way too expensive.", "event"),
    _en("The staging server is staging.atlas.internal, prod sits behind the VPN.", "fact"),
    _en("I'm flying to Berlin on the 14th for the conference.", "event"),
    _en("We went with Stripe over Adyen for payments.", "decision"),
    _en("Emails that open with 'hope this finds you well' drive me nuts.", "preference"),
    _en("I was born in Rennes but grew up in Brest.", "fact"),
    _en("Keep your answers short please, bullet points are fine.", "preference"),
    _en("My passport expires in November 2026.", "fact"),
    _en("Tom is the tech lead on Atlas and Karim handles ops.", "fact"),
    _en("I signed the lease for the new flat this morning.", "event"),
    _en("I don't eat pork, for religious reasons.", "constraint"),
    _en("I'm learning Italian, I have a class every Thursday evening.", "fact"),
    _en("Let's go with the blue logo, final answer.", "decision"),
    # -- French, nothing durable -------------------------------------------------------------
    _fr("Merci beaucoup, c'est parfait !", None),
    _fr("Tu peux me résumer ce PDF ?", None),
    _fr("Quelle heure est-il à Tokyo ?", None),
    _fr("Il pleut encore, quelle journée.", None),
    _fr("Ok, on en reparle demain.", None),
    _fr("Traduis ça en anglais : je serai en retard de dix minutes.", None),
    _fr("Haha trop drôle", None),
    _fr("Écris un mail à la régie pour signaler la fuite sous l'évier.", None),
    _fr("C'est quoi la différence entre un PEA et une assurance vie ?", None),
    _fr("Je suis crevée ce soir.", None),
    _fr("Bonne nuit !", None),
    _fr("Donne-moi trois idées de dîner rapide.", None),
    _fr("Le train a dix minutes de retard.", None),
    _fr("Attends, je reviens dans cinq minutes.", None),
    _fr("Tu en penses quoi, de cette formulation ?", None),
    _fr("Rappelle-moi demain à 8h d'appeler le garage.", None),
    _fr("J'aime bien cette version, on garde.", None),
    _fr("J'ai une réunion dans 5 minutes, on reprend après.", None),
    _fr("Mon café est froid, évidemment.", None),
    _fr("Reformule le deuxième paragraphe, il est trop long.", None),
    # -- English, nothing durable ------------------------------------------------------------
    _en("Thanks, that's exactly what I needed.", None),
    _en("Can you check whether this SQL query is correct?", None),
    _en("What's a good name for a grey cat?", None),
    _en("lol ok", None),
    _en("Draft a polite reply declining the invitation.", None),
    _en("I'm so tired today.", None),
    _en("Traffic is terrible this morning.", None),
    _en("Sounds good, let's do that.", None),
    _en("I like this one better, go with option B.", None),
    _en("I have a headache, any tips?", None),
    _en("Could you explain how OAuth refresh tokens work?", None),
    _en("Brb, meeting.", None),
    _en("I think it's going to rain.", None),
    _en("My coffee went cold again 🙃", None),
    _en("Summarize the last three messages from Tom.", None),
    _en("I'm going to grab lunch, back in 20.", None),
    _en("My laptop is at 3% battery, quick answer please.", None),
]
