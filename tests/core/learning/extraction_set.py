"""A labelled set of operator messages, French and English, for the heuristic extractor.

Each example is a message as the operator would send it to the assistant (or to a friend, in an
imported chat) and the kind of memory a careful reviewer would keep from it, or None when
nothing durable is said: small talk, questions, requests, passing moods, feedback on a draft.
The kinds are those of core.memory.vocabulary (fact, preference, decision, ...); where two kinds are defensible the closest one is given, and
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
    batch: str = ""


def _fr(text: str, kind: str | None) -> Example:
    return Example(text, kind, "fr")


def _en(text: str, kind: str | None) -> Example:
    return Example(text, kind, "en")


def _batch(name: str, examples: list[Example]) -> list[Example]:
    return [e._replace(batch=name) for e in examples]


# Batches, in the order they were written: "tuning" (the patterns were revised against it),
# "review" (written before a second revision) and "held-out" (written after the patterns were
# frozen, and measured once): the held-out figures are the honest estimate for new messages.
TUNING: list[Example] = _batch(
    "tuning",
    [
        # -- French, worth keeping -----------------------------------------------------------
        _fr("Je suis allergique aux fruits à coque, même en traces.", "constraint"),
        _fr("On a signé avec Nordhaven hier soir, le contrat court sur deux ans.", "event"),
        _fr("Ma sœur Léa habite à Bordeaux depuis 2019.", "fact"),
        _fr("J'ai horreur des réunions le vendredi après-midi.", "preference"),
        _fr(
            "À partir de la semaine prochaine je bosse en télétravail le lundi et le vendredi.",
            "decision",
        ),
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
        # -- English, worth keeping -----------------------------------------------------------
        _en("My daughter starts at Lycée Ampère in September.", "event"),
        _en("I'm lactose intolerant, so no cheese boards for me.", "constraint"),
        _en("We decided to push the launch back to March 12.", "decision"),
        _en("My partner's name is Julien, he's a nurse at the Croix-Rousse hospital.", "fact"),
        _en("I can't stand long voice messages, just text me.", "preference"),
        _en("Our standup is at 9:45 every weekday.", "fact"),
        _en(
            "Never schedule anything on Wednesday afternoons, that's deep work time.", "constraint"
        ),
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
        # -- French, nothing durable -----------------------------------------------------------
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
        # -- English, nothing durable -----------------------------------------------------------
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
    ],
)

REVIEW: list[Example] = _batch(
    "review",
    [
        _fr("Mon frère Hugo se marie le 7 juin à Quimper.", "event"),
        _fr("Je garde Miso chez moi un week-end sur deux.", "pattern"),
        _fr("Au boulot on utilise Jira et Confluence, pas Notion.", "fact"),
        _fr("Je prends mon vélo pour aller au bureau, sauf quand il pleut.", "pattern"),
        _fr("Je suis enceinte de quatre mois !", "event"),
        _fr("Le dentiste, c'est le Dr Morel maintenant, à Lyon.", "fact"),
        _fr("J'ai arrêté de fumer il y a deux ans.", "event"),
        _fr("Mon médecin m'a interdit le sel.", "constraint"),
        _fr("On a embauché une nouvelle dev, Sofia, elle commence lundi.", "event"),
        _fr("Nos clients principaux sont Nordhaven et Petitjean SA.", "fact"),
        _fr("Je déteste qu'on m'appelle Cam.", "preference"),
        _fr("Le budget de la phase 2 est de 60 000 €.", "fact"),
        _fr("Je fais du yoga le jeudi soir.", "pattern"),
        _fr("Pour les comptes rendus, toujours un tableau récapitulatif en haut.", "preference"),
        _fr("Mon anniversaire c'est le 12 février.", "fact"),
        _en("My mum's birthday is on April 14th.", "fact"),
        _en("I'm training for the Lyon half marathon in October.", "event"),
        _en("We use GitHub Actions for CI, never Jenkins.", "fact"),
        _en("I take the 7:52 train to Paris every other Friday.", "pattern"),
        _en("I've switched to decaf after 2pm.", "preference"),
        _en("Our office moved to the 5th floor.", "event"),
        _en("I'm terrible with dates, always double-check deadlines for me.", "constraint"),
        _en("Karim is allergic to shellfish, keep that in mind for the team dinner.", "constraint"),
        _en("I speak German fluently but my Spanish is rusty.", "fact"),
        _en("We're hiring two backend engineers this quarter.", "decision"),
        _en("My sister just had a baby boy, his name is Noé.", "event"),
        _en("Don't ever book me on Ryanair.", "constraint"),
        _fr("Tu peux me rappeler ce qu'on a dit sur le budget ?", None),
        _fr("Ouf, enfin vendredi.", None),
        _fr("Je regarde un film, on verra plus tard.", None),
        _fr("Corrige les fautes dans ce texte stp.", None),
        _fr("Il fait 35 degrés à Lyon, c'est l'enfer.", None),
        _fr("Bien reçu, merci.", None),
        _fr("J'adore cette idée !", None),
        _fr("Mets ça en gras.", None),
        _en("Nice, thanks!", None),
        _en("What time does the pharmacy close on Sundays?", None),
        _en("Give me a regex that matches French phone numbers.", None),
        _en("I'm stuck in a meeting, can't talk.", None),
        _en("That's hilarious 😂", None),
        _en("Ugh, Monday.", None),
        _en("Write three subject lines for the newsletter.", None),
        _en("Hmm not sure, let me think about it.", None),
    ],
)

HELD_OUT: list[Example] = _batch(
    "held-out",
    [
        _fr("on a fixé la date du déménagement : samedi 18 mai", "event"),
        _fr("Ma coloc part vivre à Montréal en août, je vais devoir chercher quelqu'un.", "event"),
        _fr("Le mot de passe de la box c'est celui écrit sous le routeur", "fact"),
        _fr("Jamais de rendez-vous le lundi matin, c'est réunion d'équipe.", "constraint"),
        _fr("Je suis myope, je porte des lentilles la journée.", "fact"),
        _fr("Notre fournisseur d'électricité c'est Ekwateur depuis mars.", "fact"),
        _fr("Je me lève à 6h tous les jours de la semaine.", "pattern"),
        _fr("Finalement on prend le chalet à Chamonix pour Noël.", "decision"),
        _fr("Je ne mange pas de poisson cru.", "preference"),
        _fr("Julien travaille de nuit cette semaine et la suivante.", "fact"),
        _fr("J'ai perdu mon père en 2019.", "event"),
        _fr("Je vote toujours par procuration, je ne suis jamais là le dimanche.", "pattern"),
        _en("I'm diabetic, type 1, so watch the sugar in recipe suggestions.", "constraint"),
        _en("we shipped v2 of the dashboard yesterday 🎉", "event"),
        _en("My landlord is Mr. Duval, he prefers phone calls to emails.", "fact"),
        _en("I'll be off the grid from July 6 to July 21.", "event"),
        _en("I prefer meetings in the morning, I'm useless after 4pm.", "preference"),
        _en("The VPN only works with the WireGuard client, not OpenVPN.", "fact"),
        _en("My son is in CE2 this year, Mme Roux is his teacher.", "fact"),
        _en("I decided to stop taking on freelance work.", "decision"),
        _en("Please never use emojis in emails you draft for me.", "constraint"),
        _en("I've been playing the cello since I was 8.", "fact"),
        _en("Our rent is split 60/40 with Julien.", "fact"),
        _fr("ok ça marche", None),
        _fr("tu connais un bon resto japonais vers Bellecour ?", None),
        _fr("Je suis en retard, désolée !", None),
        _fr("Envoie-moi le lien du document.", None),
        _fr("On en est où du ticket ATL-212 ?", None),
        _fr("Pfff ce bug me rend dingue", None),
        _fr("super merci 🙏", None),
        _en("Make this sound more formal.", None),
        _en("where did I put the notes from yesterday's call?", None),
        _en("That meeting was a waste of time.", None),
        _en("Cool, see you tomorrow then.", None),
        _en("It's freezing in the office today.", None),
        _en("Can you shorten this to 280 characters?", None),
    ],
)

EXAMPLES: list[Example] = TUNING + REVIEW + HELD_OUT
