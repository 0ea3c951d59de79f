"""A labelled recall set: six months of Camille's Telegram chats, facts stated once, questions.

Facts are said once, in one chat, in French or English, inside ordinary small talk; some are
updated later (the later message is then the right answer, unless the question names a period
when the older one held). Near-topic distractors (someone else's address, someone else's
dentist) and thousands of lines of chatter surround them. Every question lists the keys of the
messages that answer it; `build()` turns keys into (chat_id, message_id) pairs.

Tags: `direct` (shares the message's key words) or `paraphrase` (different wording);
`cross_lingual` (question and answer in different languages); `temporal` (the question names a
period, parsed with parse_period at NOW); `update` (the fact changed; the label is the version
that answers the question).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.archive.records import CaptureIn
from tests.bench.synthetic import (
    EN_DAYS,
    EN_FRIENDS,
    EN_WORK,
    FR_DAYS,
    FR_FRIENDS,
    FR_WORK,
    OPERATOR,
    Chat,
    MessageIds,
    capture,
    chatter,
    user_id_of,
)

NOW = datetime(2025, 7, 2, 10, 0)  # a Wednesday: "last week" is 23-29 June
START = datetime(2025, 1, 6)

CHATS = {
    "notes": Chat("100", "fr", (OPERATOR,)),
    "lea": Chat("201", "fr", ("Léa",)),
    "sam": Chat("202", "en", ("Sam",)),
    "priya": Chat("203", "en", ("Priya",)),
    "julien": Chat("204", "fr", ("Julien",)),
    "oliver": Chat("205", "en", ("Oliver",)),
    "hugo": Chat("206", "fr", ("Hugo",)),
    "work": Chat("-300", "fr", ("Marc", "Priya", "Hélène")),
    "famille": Chat("-301", "fr", ("Maman", "Papa", "Julien")),
}
# Share of the background chatter each chat gets.
CHAT_WEIGHTS = {
    "notes": 6, "lea": 18, "sam": 12, "priya": 8, "julien": 6, "oliver": 8, "hugo": 10,
    "work": 20, "famille": 12,
}  # fmt: skip


@dataclass(frozen=True)
class Said:
    """One scripted message: a key to label it by, where, when, who, and the text."""

    key: str
    chat: str
    at: str
    speaker: str
    text: str


@dataclass(frozen=True)
class Question:
    """A question, its tags, and the keys of the messages that answer it."""

    text: str
    tags: tuple[str, ...]
    answers: tuple[str, ...]


def _s(key: str, chat: str, at: str, speaker: str, text: str) -> Said:
    return Said(key, chat, at, speaker, text)


C = OPERATOR
FACTS = [
    _s("addr_old", "famille", "2025-01-20 18:32", C,
       "Pour la carte de Mamie, mon adresse c'est toujours le 14 rue des Lilas, 69003 Lyon."),
    _s("addr_plumber", "famille", "2025-05-14 08:05", C,
       "Le plombier vient jeudi à l'appart de la rue des Lilas, je dois être là à 8h."),
    _s("addr_moving_plan", "lea", "2025-05-12 21:10", C,
       "Ça y est c'est signé : je quitte Lyon, on déménage à Nantes mi-juin !"),
    _s("addr_new", "sam", "2025-06-16 20:45", C,
       "My new address is 8 Harbour Street, 44000 Nantes. We got the keys on Saturday!"),
    _s("dentist_old", "notes", "2025-03-10 07:50", C,
       "Dentiste vendredi à 17h, j'espère que la couronne tiendra."),
    _s("dentist_new", "notes", "2025-06-25 12:20", C,
       "Dentist moved my appointment to July 8 at 9:30, Dr Morel wants to check the crown again."),
    _s("allergy", "lea", "2025-02-03 19:40", C,
       "Attention pour samedi : je suis allergique aux noix de cajou, pas de curry aux cajous "
       "pour moi 🙏"),
    _s("sam_bday", "sam", "2025-03-02 11:15", "Sam",
       "btw my birthday is on the 14th of April, don't forget this time 😅"),
    _s("wifi", "famille", "2025-01-12 15:02", "Papa",
       "Le code wifi de la maison c'est Tournesol-2024, tout attaché."),
    _s("demo_old", "work", "2025-04-03 10:12", "Marc",
       "La démo Atlas pour le client Verdane est fixée au 22 mai."),
    _s("demo_new", "work", "2025-05-15 16:40", "Priya",
       "Heads up: Verdane pushed the Atlas demo to June 5, same time."),
    _s("ramen", "sam", "2025-02-14 20:05", C,
       "I could eat ramen every single day, Ippudo on rue Sainte-Anne is my go-to place."),
    _s("coffee", "notes", "2025-01-08 08:01", C,
       "Mon café : sans sucre, avec un peu de lait d'avoine. Toujours."),
    _s("car_sold", "julien", "2025-03-20 18:22", C,
       "J'ai vendu la Clio ! Maintenant je fais tout en vélo électrique."),
    _s("climb_start", "lea", "2025-04-14 21:30", C,
       "Je me suis inscrite à l'escalade ! Cours le mardi soir à Climb Up Gerland."),
    _s("climb_move", "lea", "2025-06-02 19:12", C,
       "L'escalade passe au jeudi soir, le mardi c'était trop rush avec le boulot."),
    _s("manager", "work", "2025-02-10 09:30", "Priya",
       "Starting next month Hélène Dubois will be our new manager, replacing Tom."),
    _s("passport", "notes", "2025-05-20 13:00", C,
       "Passport renewal: appointment at the town hall on June 3 at 14:15, bring two photos and "
       "the old passport."),
    _s("ficus", "famille", "2025-03-05 12:45", "Maman",
       "N'oublie pas d'arroser le ficus une fois par semaine, pas plus, sinon les racines "
       "pourrissent."),
    _s("baby", "lea", "2025-04-28 07:55", "Léa",
       "Ça y est, le bébé est né cette nuit ! Elle s'appelle Jeanne, 3,2 kg, tout le monde va "
       "bien ❤️"),
    _s("eurostar", "sam", "2025-06-17 22:10", C,
       "Booked it: Eurostar to London on June 27, arriving St Pancras at 11:30. Pints?"),
    _s("vitd", "notes", "2025-01-28 18:00", C,
       "Le médecin m'a prescrit de la vitamine D : une ampoule par mois pendant six mois."),
    _s("book_may", "lea", "2025-05-06 20:00", "Léa",
       "Pour le club de lecture on lit 'Le Mage du Kremlin', on se retrouve le 3 juin chez moi."),
    _s("book_july", "lea", "2025-06-05 21:30", "Léa",
       "Pour juillet au club de lecture on part sur 'Yoga' d'Emmanuel Carrère."),
    _s("julien_phone", "julien", "2025-02-20 12:10", "Julien",
       "Nouveau numéro : 06 12 34 56 78, l'ancien ne marche plus."),
    _s("cat", "sam", "2025-01-15 19:20", C,
       "We adopted a cat! Her name is Miso, she's a grey tabby and already rules the flat."),
    _s("biarritz", "famille", "2025-05-25 17:30", "Maman",
       "On a réservé la maison à Biarritz du 2 au 16 août, tu viens quand ?"),
    _s("offer", "priya", "2025-06-12 18:50", C,
       "I got an offer from Northwind, 58k, but I'm not sure I want to leave Atlas."),
    _s("offer_declined", "priya", "2025-06-26 09:15", C,
       "Decided: I'm staying at Atlas. I declined Northwind this morning."),
    _s("insurance", "notes", "2025-02-25 10:30", C,
       "Assurance habitation : contrat MAIF n° 4471-22, échéance le 1er mars."),
    _s("coriander", "lea", "2025-03-15 13:00", C,
       "Je déteste la coriandre, ça a un goût de savon 🤢"),
    _s("sam_job", "sam", "2025-04-10 17:45", "Sam",
       "I start at the BBC next Monday, finally a proper job!"),
    _s("anniv", "julien", "2025-05-02 20:20", "Julien",
       "Les 35 ans de mariage des parents c'est le 21 juin, on organise un truc ?"),
    _s("laptop", "work", "2025-01-22 11:05", "Priya",
       "Camille, your new laptop (ThinkPad X1) is ready for pickup at IT, desk 4B."),
    _s("japanese", "sam", "2025-02-18 08:30", C,
       "I've started learning Japanese on Duolingo, 15 minutes every morning on the tram."),
    _s("boiler", "notes", "2025-01-30 19:10", C,
       "Chaudière en panne. Le chauffagiste, M. Petit, passe lundi : 06 98 76 54 32."),
    _s("reply_style", "notes", "2025-02-01 09:00", C,
       "Elora, réponds-moi plutôt en bref, en puces, pas de longs paragraphes."),
    _s("standup", "work", "2025-06-24 11:00", "Marc",
       "Le point hebdo passe au jeudi 10h à partir de maintenant."),
    _s("run", "notes", "2025-07-01 20:15", C,
       "Ran 10 km in 52 minutes this evening, new personal best!"),
    _s("hugo_loan", "hugo", "2025-04-07 22:00", "Hugo",
       "Je te rends les 50 € du concert samedi, promis."),
    _s("parking", "notes", "2025-06-30 08:40", C,
       "Parked on level -2, spot B14, at Nantes station."),
    _s("gift_lea", "notes", "2025-05-28 21:05", C,
       "Idée cadeau pour l'anniversaire de Léa : le coffret de thés de Mariage Frères."),
]  # fmt: skip

# Near-topic messages that must not be taken for the answers (never labelled).
DISTRACTORS = [
    _s("x_addr_lea", "lea", "2025-03-03 20:10", "Léa",
       "Notre nouvelle adresse : 3 impasse des Tilleuls, Villeurbanne. Venez pendre la "
       "crémaillère !"),
    _s("x_addr_priya", "priya", "2025-04-22 19:30", "Priya",
       "We finally moved too, new flat in Croydon right by the tram stop."),
    _s("x_addr_oliver", "oliver", "2025-06-18 18:00", "Oliver",
       "Send me your address, I've got a parcel of yours that came here by mistake."),
    _s("x_dent_lea", "lea", "2025-06-24 09:00", "Léa",
       "Jeanne a sa première visite chez le pédiatre demain, je stresse."),
    _s("x_dent_sam", "sam", "2025-06-26 21:40", "Sam",
       "Had a root canal at the dentist today, my face is still numb lol"),
    _s("x_dent_hugo", "hugo", "2025-03-12 18:30", "Hugo",
       "Mon dentiste m'a encore fait la leçon sur le fil dentaire 🙄"),
    _s("x_bday_oliver", "oliver", "2025-03-20 12:00", "Oliver",
       "It's Grace's birthday on Friday, shall we get her a cake?"),
    _s("x_bday_hugo", "hugo", "2025-04-12 11:00", "Hugo",
       "C'est l'anniversaire de ma sœur demain, j'ai toujours pas de cadeau"),
    _s("x_wifi_work", "work", "2025-02-03 09:15", "Marc",
       "Le wifi invité du bureau a changé, le code est affiché à l'accueil."),
    _s("x_demo_orion", "work", "2025-05-20 14:00", "Marc",
       "Pour Orion la démo c'est le 12 juin, pas de changement."),
    _s("x_food_oliver", "oliver", "2025-02-16 19:00", "Oliver",
       "Best ramen in Brighton is that tiny place by the station, trust me."),
    _s("x_coffee_work", "work", "2025-01-09 10:00", "Marc",
       "La machine à café du 3e est encore en panne, qui a le numéro du service ?"),
    _s("x_car_hugo", "hugo", "2025-03-25 08:30", "Hugo",
       "Ma voiture est au garage, tu peux me déposer demain ?"),
    _s("x_sport_hugo", "hugo", "2025-05-05 20:00", "Hugo",
       "Je me suis mis au padel, c'est trop fun, tu devrais essayer."),
    _s("x_manager_priya", "priya", "2025-03-04 17:00", "Priya",
       "My old manager at Contoso just messaged me, weird."),
    _s("x_passport_sam", "sam", "2025-05-21 12:00", "Sam",
       "Don't forget your passport this time, remember Dublin?"),
    _s("x_plant_lea", "lea", "2025-03-06 18:00", "Léa",
       "Mon monstera perd ses feuilles, je l'arrose trop je crois."),
    _s("x_baby_work", "work", "2025-04-29 09:30", "Hélène",
       "Félicitations à Marc dont le fils Paul est né ce week-end !"),
    _s("x_book_oliver", "oliver", "2025-06-06 20:00", "Oliver",
       "Our book club is doing Tomorrow, and Tomorrow, and Tomorrow next month."),
    _s("x_phone_notes", "notes", "2025-02-21 09:00", C,
       "Numéro du garage : 04 78 11 22 33, demander Karim."),
    _s("x_cat_oliver", "oliver", "2025-01-18 15:00", "Oliver",
       "My sister's cat is called Pixel, she's a menace."),
    _s("x_holiday_priya", "priya", "2025-05-26 13:00", "Priya",
       "We're off to Lisbon for the holidays in August, can't wait."),
    _s("x_salary_work", "work", "2025-06-13 16:00", "Hélène",
       "Les entretiens annuels et la révision des salaires commencent lundi."),
    _s("x_insurance_fam", "famille", "2025-02-26 19:00", "Papa",
       "L'assurance de la voiture a encore augmenté, c'est du vol."),
    _s("x_herb_lea", "lea", "2025-03-16 12:00", "Léa",
       "J'ai planté du basilic et de la menthe sur le balcon."),
    _s("x_job_priya", "priya", "2025-04-11 10:00", "Priya",
       "Ben got a new job at the Guardian, good for him."),
    _s("x_anniv_oliver", "oliver", "2025-05-03 21:00", "Oliver",
       "Our wedding anniversary dinner was lovely, thanks for the restaurant tip."),
    _s("x_laptop_hugo", "hugo", "2025-01-23 19:00", "Hugo",
       "Mon ordi a rendu l'âme, tu connais un bon réparateur ?"),
    _s("x_lang_lea", "lea", "2025-02-19 20:00", "Léa",
       "Je me remets à l'espagnol pour les vacances, c'est dur !"),
    _s("x_boiler_fam", "famille", "2025-02-02 10:00", "Papa",
       "La chaudière de la maison a été révisée, tout va bien."),
    _s("x_style_notes", "notes", "2025-03-01 09:00", C,
       "Penser à écrire un long mail détaillé à Marc sur la roadmap."),
    _s("x_meeting_work", "work", "2025-06-10 11:00", "Priya",
       "The retro stays on Friday at 4pm for now."),
    _s("x_run_sam", "sam", "2025-06-29 10:00", "Sam",
       "Did a parkrun this morning, 27 minutes, not bad."),
    _s("x_money_lea", "lea", "2025-04-08 21:00", "Léa",
       "Je t'ai fait le virement pour le resto, 23 €."),
    _s("x_parking_work", "work", "2025-06-27 09:00", "Marc",
       "Le parking du bureau est fermé lundi pour travaux."),
    _s("x_gift_fam", "famille", "2025-05-29 18:00", "Maman",
       "Pour la fête des pères, une idée de cadeau pour Papa ?"),
]  # fmt: skip

QUESTIONS = [
    Question("What's my current address?", ("direct", "update"), ("addr_new",)),
    Question("Quelle est ma nouvelle adresse ?", ("direct", "cross_lingual", "update"),
             ("addr_new",)),
    Question("en mai, où est-ce que j'habitais ?", ("paraphrase", "temporal"),
             ("addr_plumber", "addr_moving_plan")),
    Question("In January, what address did I give for Mamie's card?",
             ("direct", "cross_lingual", "temporal"), ("addr_old",)),
    Question("Which city am I moving to?", ("paraphrase",), ("addr_moving_plan", "addr_new")),
    Question("what did I say about the dentist last week?", ("direct", "temporal"),
             ("dentist_new",)),
    Question("Qu'est-ce que j'ai dit sur le dentiste la semaine dernière ?",
             ("direct", "cross_lingual", "temporal"), ("dentist_new",)),
    Question("When is my next dental appointment?", ("paraphrase", "update"), ("dentist_new",)),
    Question("Qu'est-ce que j'ai noté sur le dentiste en mars ?", ("direct", "temporal"),
             ("dentist_old",)),
    Question("Which nuts am I allergic to?", ("direct", "cross_lingual"), ("allergy",)),
    Question("Y a-t-il un aliment que je ne dois surtout pas manger ?", ("paraphrase",),
             ("allergy",)),
    Question("When is Sam's birthday?", ("direct",), ("sam_bday",)),
    Question("C'est quand l'anniversaire de Sam ?", ("direct", "cross_lingual"), ("sam_bday",)),
    Question("Quel est le mot de passe du wifi chez mes parents ?", ("paraphrase",), ("wifi",)),
    Question("What's the wifi password at my parents' house?", ("paraphrase", "cross_lingual"),
             ("wifi",)),
    Question("When is the Atlas demo with Verdane?", ("direct", "update"), ("demo_new",)),
    Question("C'est quand la démo Verdane maintenant ?", ("direct", "cross_lingual", "update"),
             ("demo_new",)),
    Question("In April, when was the Verdane demo planned?",
             ("direct", "cross_lingual", "temporal"), ("demo_old",)),
    Question("What kind of food do I love?", ("paraphrase",), ("ramen",)),
    Question("C'est quoi mon resto préféré ?", ("paraphrase", "cross_lingual"), ("ramen",)),
    Question("How do I take my coffee?", ("direct", "cross_lingual"), ("coffee",)),
    Question("Comment je prends mon café ?", ("direct",), ("coffee",)),
    Question("Do I still own a car?", ("paraphrase", "cross_lingual"), ("car_sold",)),
    Question("Qu'est-ce que j'ai fait de ma voiture ?", ("paraphrase",), ("car_sold",)),
    Question("What sport did I take up in April?", ("paraphrase", "cross_lingual", "temporal"),
             ("climb_start",)),
    Question("Quel soir je fais de l'escalade maintenant ?", ("direct", "update"),
             ("climb_move",)),
    Question("Which evening do I go climbing?", ("paraphrase", "cross_lingual", "update"),
             ("climb_move",)),
    Question("Qui est ma nouvelle manageuse ?", ("paraphrase", "cross_lingual"), ("manager",)),
    Question("Who replaced Tom?", ("paraphrase",), ("manager",)),
    Question("Quand est mon rendez-vous pour le passeport ?", ("direct", "cross_lingual"),
             ("passport",)),
    Question("What do I need to bring for the passport renewal?", ("direct",), ("passport",)),
    Question("How often should I water the ficus?", ("direct", "cross_lingual"), ("ficus",)),
    Question("Tous les combien je dois arroser la plante ?", ("paraphrase",), ("ficus",)),
    Question("What is the name of Léa's baby?", ("paraphrase", "cross_lingual"), ("baby",)),
    Question("Comment s'appelle la fille de Léa ?", ("paraphrase",), ("baby",)),
    Question("Comment je vais à Londres ?", ("paraphrase", "cross_lingual"), ("eurostar",)),
    Question("What did I book two weeks ago?", ("paraphrase", "temporal"), ("eurostar",)),
    Question("What supplement did the doctor prescribe me?", ("paraphrase", "cross_lingual"),
             ("vitd",)),
    Question("Combien de temps je dois prendre la vitamine D ?", ("direct",), ("vitd",)),
    Question("Quel est le prochain livre du club de lecture ?", ("direct", "update"),
             ("book_july",)),
    Question("Which book are we reading next for the book club?",
             ("direct", "cross_lingual", "update"), ("book_july",)),
    Question("En mai, quel livre on lisait au club de lecture ?", ("direct", "temporal"),
             ("book_may",)),
    Question("What's my brother's phone number?", ("paraphrase", "cross_lingual"),
             ("julien_phone",)),
    Question("Quel est le nouveau numéro de Julien ?", ("direct",), ("julien_phone",)),
    Question("Comment s'appelle mon chat ?", ("direct", "cross_lingual"), ("cat",)),
    Question("What's my pet called?", ("paraphrase",), ("cat",)),
    Question("Where are my parents going on holiday this summer?",
             ("paraphrase", "cross_lingual"), ("biarritz",)),
    Question("Où partent mes parents en vacances ?", ("paraphrase",), ("biarritz",)),
    Question("Quel salaire m'a proposé Northwind ?", ("paraphrase", "cross_lingual"),
             ("offer",)),
    Question("Did I accept the Northwind offer?", ("paraphrase", "update"), ("offer_declined",)),
    Question("Qu'est-ce que j'ai décidé la semaine dernière pour Northwind ?",
             ("direct", "cross_lingual", "temporal", "update"), ("offer_declined",)),
    Question("What's my home insurance contract number?", ("direct", "cross_lingual"),
             ("insurance",)),
    Question("Which herb can't I stand?", ("paraphrase", "cross_lingual"), ("coriander",)),
    Question("Où travaille Sam maintenant ?", ("paraphrase", "cross_lingual"), ("sam_job",)),
    Question("When is my parents' wedding anniversary?", ("direct", "cross_lingual"),
             ("anniv",)),
    Question("Où je récupère mon nouvel ordinateur ?", ("paraphrase", "cross_lingual"),
             ("laptop",)),
    Question("Quelle langue j'apprends ?", ("paraphrase", "cross_lingual"), ("japanese",)),
    Question("Who is coming to fix the boiler?", ("paraphrase", "cross_lingual"), ("boiler",)),
    Question("Le numéro du chauffagiste ?", ("direct",), ("boiler",)),
    Question("How do I like answers formatted?", ("paraphrase", "cross_lingual"),
             ("reply_style",)),
    Question("What did Marc change last week?", ("paraphrase", "cross_lingual", "temporal"),
             ("standup",)),
    Question("Quand a lieu le point hebdo ?", ("direct",), ("standup",)),
    Question("Qu'est-ce que j'ai fait hier soir ?", ("paraphrase", "cross_lingual", "temporal"),
             ("run",)),
    Question("What was my best 10k time?", ("paraphrase",), ("run",)),
    Question("How much money does Hugo owe me?", ("paraphrase", "cross_lingual"),
             ("hugo_loan",)),
    Question("Hugo m'a dit qu'il me rendait combien ?", ("paraphrase",), ("hugo_loan",)),
    Question("Où est-ce que je me suis garée avant-hier ?",
             ("paraphrase", "cross_lingual", "temporal"), ("parking",)),
    Question("What gift idea did I have for Léa?", ("direct", "cross_lingual"), ("gift_lea",)),
]  # fmt: skip

TAGS = ("direct", "paraphrase", "cross_lingual", "temporal", "update")

# Lines about the same everyday topics as the facts, for lexical and semantic competition.
NEAR_TOPIC = {
    "fr": [
        "j'ai rendez-vous {day}, je te dis après",
        "tu as l'adresse du resto pour {day} ?",
        "c'est bientôt l'anniversaire de {friend}, on fait quoi ?",
        "le code de l'immeuble a changé ?",
        "je prends un café et j'arrive",
        "la démo de {work} s'est bien passée",
        "j'ai fini le livre que tu m'as prêté",
        "tu as le numéro de {friend} ?",
        "on part en vacances quand déjà ?",
        "je dois arroser les plantes de {friend} ce week-end",
        "le médecin dit que c'est rien de grave",
        "je vais à la salle {day} soir",
        "le train est encore en retard, je serai là vers 19h",
    ],
    "en": [
        "got an appointment {day}, will tell you after",
        "what's the address of the place for {day}?",
        "{friend}'s birthday is coming up, any ideas?",
        "grabbing a coffee, be right there",
        "the {work} demo went fine",
        "finished the book you lent me",
        "do you have {friend}'s number?",
        "when are we off on holiday again?",
        "the doctor says it's nothing serious",
        "gym {day} evening?",
        "train's delayed again, there around 7",
        "booked a table for {day}",
    ],
}


def _background(rng: random.Random, count: int) -> list[tuple[str, datetime, str, str]]:
    """(chat key, time, speaker, text) for `count` lines of chatter in bursts."""
    keys = list(CHAT_WEIGHTS)
    weights = [CHAT_WEIGHTS[k] for k in keys]
    span = (NOW - START).total_seconds()
    out: list[tuple[str, datetime, str, str]] = []
    while len(out) < count:
        key = rng.choices(keys, weights)[0]
        chat = CHATS[key]
        at = START + timedelta(seconds=rng.uniform(0, span - 3600))
        at = at.replace(hour=rng.choice([8, 9, 12, 13, 18, 19, 20, 21, 22]))
        for _ in range(rng.randint(2, 9)):
            speaker = OPERATOR if rng.random() < 0.5 else rng.choice(chat.members)
            out.append((key, at, speaker, _line(rng, chat)))
            at += timedelta(seconds=rng.randint(20, 300))
    return out[:count]


def _line(rng: random.Random, chat: Chat) -> str:
    if rng.random() < 0.12:
        fr = chat.lang == "fr"
        return rng.choice(NEAR_TOPIC[chat.lang]).format(
            day=rng.choice(FR_DAYS if fr else EN_DAYS),
            friend=rng.choice(FR_FRIENDS if fr else EN_FRIENDS),
            work=rng.choice(FR_WORK if fr else EN_WORK),
        )
    return chatter(rng, chat.lang)


def _context(rng: random.Random, said: Said) -> list[tuple[str, datetime, str, str]]:
    """The scripted message inside a small exchange: a line or two before, maybe one after."""
    chat = CHATS[said.chat]
    at = datetime.strptime(said.at, "%Y-%m-%d %H:%M")
    lines = []
    for n in range(rng.randint(1, 2), 0, -1):
        speaker = rng.choice([OPERATOR, *chat.members])
        lines.append((said.chat, at - timedelta(minutes=3 * n), speaker, _line(rng, chat)))
    lines.append((said.chat, at, said.speaker, said.text))
    if rng.random() < 0.6:
        speaker = rng.choice([OPERATOR, *chat.members])
        lines.append((said.chat, at + timedelta(minutes=2), speaker, _line(rng, chat)))
    return lines


@dataclass
class RecallSet:
    """The captures to archive and, per scripted key, the (chat_id, message_id) to look for."""

    captures: list[CaptureIn]
    where: dict[str, tuple[str, str]]
    questions: list[Question]


def build(background: int = 5000, seed: int = 2025) -> RecallSet:
    """Captures (chatter + facts + distractors, in time order, ids per chat) and labels."""
    rng = random.Random(seed)
    rows = [(*row, None) for row in _background(rng, background)]
    for said in [*FACTS, *DISTRACTORS]:
        context = _context(rng, said)
        rows.extend((*row, said.key if row[3] == said.text else None) for row in context)
    rows.sort(key=lambda r: r[1])
    ids = MessageIds()
    captures, where = [], {}
    for key, at, speaker, text, label in rows:
        chat = CHATS[key]
        message_id = ids(chat.chat_id)
        captures.append(capture(chat, speaker, text, at, message_id, user_id_of(speaker)))
        if label is not None:
            where[label] = (chat.chat_id, message_id)
    missing = {k for q in QUESTIONS for k in q.answers} - set(where)
    if missing:
        raise ValueError(f"questions refer to unknown messages: {sorted(missing)}")
    return RecallSet(captures, where, list(QUESTIONS))
