"""Facts that change over months of FR/EN chat, for the knowledge-update benchmark.

Each fact is stated, then changed once or twice (some changes stated by the other person, some
without any cue word, some reverted), and sometimes an old value comes up again after the change.
`noise` holds statements of the same kind about something else (Léa's cat's vet next to Pixel's).
Each fact is asked twice, in English and in French, so one question is in the other language.
Written by hand, phrased the way people write; not derived from the detector's cue lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Who speaks in each chat ("me" is the operator, Camille Roche).
CHATS = {
    "lea": ("Léa Martin", 2001, "personal_chat"),
    "hugo": ("Hugo Bernard", 2002, "personal_chat"),
    "sam": ("Sam Taylor", 2003, "personal_chat"),
    "maman": ("Maman", 2004, "personal_chat"),
    "notes": (None, 2005, "saved_messages"),
}


@dataclass
class Fact:
    """One fact: its statements (when, who, text, value), later stale mentions, questions."""

    key: str
    chat: str
    says: list[tuple[str, str, str, str]]
    ask: tuple[str, str]
    stale: list[tuple[str, str, str, str]] = field(default_factory=list)
    noise: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def current(self) -> str:
        """The value the last statement gives."""
        return self.says[-1][3]


FACTS = [
    Fact("vet-pixel", "lea", [
        ("2024-09-12 18:30", "me", "Pixel a rendez-vous jeudi à la clinique vétérinaire des Brotteaux, c'est là qu'il est suivi depuis qu'il est chaton", "brotteaux"),
        ("2025-02-03 19:02", "me", "Depuis le déménagement on a changé de véto pour Pixel : c'est le Dr Morel, rue Francis de Pressensé à Villeurbanne", "morel"),
    ], ("Who is Pixel's vet?", "C'est qui le véto de Pixel ?"),
        stale=[("2025-04-10 08:15", "lea", "Je suis passée devant la clinique des Brotteaux ce matin, ça m'a fait penser à Pixel 🐱", "brotteaux")],
        noise=[("2025-03-02 20:11", "lea", "Moka (mon chat) est suivi à la clinique du Tonkin, ils sont adorables avec lui")]),
    Fact("phone-lea", "lea", [
        ("2024-09-20 12:40", "lea", "Au fait j'ai un téléphone pro maintenant, mais mon numéro perso reste le 06 71 42 88 19", "0671"),
        ("2025-01-15 09:05", "lea", "Note mon nouveau numéro : 07 58 21 64 30, l'ancien ne marche plus", "0758"),
    ], ("What's Léa's phone number?", "C'est quoi le numéro de Léa ?")),
    Fact("address-lea", "lea", [
        ("2024-10-01 21:10", "lea", "Je t'envoie mon adresse pour la carte d'anniversaire : 14 rue Saint-Maur, 75011 Paris", "saint-maur"),
        ("2025-03-20 18:45", "lea", "J'ai signé le bail ! Je m'installe au 3 place Bellecour à Lyon fin mars, on sera voisines", "bellecour"),
    ], ("Where does Léa live?", "Elle habite où, Léa ?")),
    Fact("christmas-dinner", "lea", [
        ("2024-11-05 19:30", "lea", "Le repas de Noël chez Maman c'est le 24 au soir, comme d'hab", "24"),
        ("2024-12-02 13:12", "lea", "Maman préfère finalement faire ça le 25 à midi", "25"),
        ("2024-12-15 10:02", "lea", "Changement de programme : Noël chez Maman le 26, Papa travaille le 25", "26"),
    ], ("When is Christmas dinner at Mum's?", "C'est quand le repas de Noël chez Maman ?")),
    Fact("job-lea", "lea", [
        ("2024-09-08 17:20", "lea", "Toujours à la librairie Decitre, je fais les plannings du rayon jeunesse", "decitre"),
        ("2025-02-18 08:50", "lea", "Premier jour chez Gallimard aujourd'hui comme éditrice junior, je stresse !", "gallimard"),
    ], ("Where does Léa work?", "Léa travaille où ?")),
    Fact("door-code-maman", "lea", [
        ("2024-09-15 11:00", "lea", "Le code de l'immeuble de Maman c'est 4B21", "4b21"),
        ("2024-12-10 16:25", "lea", "Attention le code de chez Maman a changé : 7A93", "7a93"),
        ("2025-02-25 19:40", "lea", "Ils sont revenus à l'ancien code chez Maman, 4B21, le nouveau boîtier est en panne", "4b21"),
    ], ("What's the door code at Mum's building?", "C'est quoi le code de l'immeuble de Maman ?")),
    Fact("boyfriend-lea", "lea", [
        ("2024-09-30 22:05", "lea", "Je te présente Karim samedi, on est ensemble depuis cet été", "karim"),
        ("2025-04-05 23:10", "lea", "Avec Karim c'est fini... je vois quelqu'un d'autre, il s'appelle Romain", "romain"),
    ], ("Who is Léa dating?", "Léa sort avec qui ?")),
    Fact("team-meeting", "hugo", [
        ("2024-09-09 08:55", "hugo", "Point d'équipe tous les lundis à 10h en salle Jura", "lundi"),
        ("2025-01-06 09:10", "hugo", "À partir de cette semaine le point d'équipe passe le mardi à 9h30, même salle", "mardi"),
    ], ("When is the weekly team meeting?", "C'est quand le point d'équipe ?")),
    Fact("phone-hugo", "hugo", [
        ("2024-09-10 10:20", "hugo", "Mon portable si besoin : 06 33 18 27 45", "0633"),
        ("2025-03-03 14:02", "hugo", "I switched carriers, my number is now 07 81 66 09 12", "0781"),
    ], ("What's Hugo's mobile number?", "Quel est le numéro de Hugo ?")),
    Fact("v1-deadline", "hugo", [
        ("2024-10-14 11:30", "hugo", "Le client veut la V1 du portail pour le 15 novembre", "15nov"),
        ("2024-11-04 15:45", "me", "Le client a décalé la livraison de la V1 au 2 décembre", "2dec"),
        ("2024-11-25 09:20", "hugo", "Bad news, the client pulled the V1 delivery forward to November 29", "29nov"),
    ], ("When is the V1 of the portal due?", "C'est quand la livraison de la V1 du portail ?")),
    Fact("wifi-office", "hugo", [
        ("2024-09-12 09:00", "hugo", "Le wifi invité du bureau : BureauLyon2024!", "bureaulyon"),
        ("2025-01-08 08:40", "hugo", "Mot de passe du wifi invité pour 2025 : Confluence#25", "confluence"),
    ], ("What's the guest wifi password at the office?", "C'est quoi le mot de passe du wifi invité au bureau ?")),
    Fact("manager", "hugo", [
        ("2024-09-16 12:10", "hugo", "Pour les congés tu vois avec Nadia Benali, c'est elle notre manager", "nadia"),
        ("2025-02-10 17:30", "hugo", "Thomas Girard takes over the team on Monday, Nadia is off to the Paris office", "thomas"),
    ], ("Who's my manager?", "C'est qui mon manager ?")),
    Fact("contact-altura", "hugo", [
        ("2024-10-02 10:05", "hugo", "Chez Altura, notre contact c'est Julie Fabre", "julie"),
        ("2025-04-01 16:20", "me", "J'ai eu Marc Lefort au téléphone, c'est lui qui gère notre compte chez Altura maintenant", "marc"),
    ], ("Who is our contact at Altura?", "Qui est notre contact chez Altura ?"),
        noise=[("2025-02-11 11:00", "hugo", "Chez Novalis, le contact c'est Julie Roussel, pas la même Julie")]),
    Fact("parking", "hugo", [
        ("2024-09-20 18:00", "hugo", "Ta place de parking c'est la 112 au niveau -2", "112"),
        ("2025-01-20 09:15", "hugo", "Réorganisation du parking : tu as la 47 au -1", "47"),
    ], ("Which parking spot is mine?", "C'est quoi ma place de parking ?"),
        noise=[("2025-02-04 09:30", "hugo", "Moi j'ai récupéré la 113, juste à côté de l'ascenseur")]),
    Fact("train-workshop", "hugo", [
        ("2025-02-27 19:00", "me", "Je prends le TGV de 7h04 pour l'atelier du 12 mars à Paris", "0704"),
        ("2025-03-05 11:45", "hugo", "La SNCF a supprimé ton train de 7h04, je t'ai rebookée sur celui de 6h34", "0634"),
    ], ("What time is my train to Paris for the workshop?", "À quelle heure part mon train pour l'atelier à Paris ?")),
    Fact("remote-day", "hugo", [
        ("2024-09-23 17:50", "me", "Je télétravaille le mercredi, appelle-moi si besoin", "mercredi"),
        ("2025-02-03 10:30", "me", "Je passe mon jour de télétravail au vendredi à partir de février", "vendredi"),
    ], ("Which day do I work from home?", "C'est quel jour mon télétravail ?")),
    Fact("preprod", "hugo", [
        ("2024-10-10 14:00", "hugo", "La préprod tourne sur preprod-01.altura.internal", "preprod-01"),
        ("2025-01-30 15:10", "hugo", "On a migré la préprod sur staging-eu.altura.internal, preprod-01 est éteint", "staging-eu"),
    ], ("What's the preprod server?", "C'est quoi le serveur de préprod ?"),
        stale=[("2025-03-12 10:40", "me", "J'avais encore un vieux script qui pointait sur preprod-01, corrigé", "preprod-01")]),
    Fact("badge", "hugo", [
        ("2024-09-09 09:05", "hugo", "Ton badge d'accès c'est le n° 2231", "2231"),
        ("2025-01-13 08:30", "hugo", "Les badges ont été refaits, le tien c'est le 7719", "7719"),
    ], ("What's my access badge number?", "C'est quoi mon numéro de badge ?")),
    Fact("lunch-thursday", "hugo", [
        ("2024-10-03 12:05", "hugo", "Le jeudi on déjeune à la cantine Les Halles, tu viens ?", "halles"),
        ("2025-02-06 11:55", "hugo", "Les Halles ont fermé, le jeudi on va chez Bento Ya", "bento"),
    ], ("Where do we have lunch on Thursdays?", "On déjeune où le jeudi ?")),
    Fact("standup", "hugo", [
        ("2024-09-09 09:20", "hugo", "Daily standup is at 9:15 on Teams", "0915"),
        ("2025-03-10 09:50", "hugo", "From Monday the standup is at 9:45, half the team is in Montreal", "0945"),
    ], ("What time is the daily standup?", "C'est à quelle heure le daily ?")),
    Fact("address-sam", "sam", [
        ("2024-09-05 20:15", "sam", "My new flat is at 22 Carver Street, Sheffield, come visit!", "carver"),
        ("2025-01-28 21:30", "sam", "Moved again! We're at 5 Abbey Road, Bristol", "abbey"),
    ], ("Where does Sam live?", "Il habite où, Sam ?")),
    Fact("book-club", "sam", [
        ("2024-09-18 19:00", "sam", "Book club is every first Thursday of the month at Foyles", "thursday"),
        ("2025-02-01 10:20", "sam", "We've moved book club to the last Sunday of the month, online", "sunday"),
    ], ("When is book club?", "C'est quand le club de lecture ?")),
    Fact("job-sam", "sam", [
        ("2024-10-12 18:40", "sam", "Still teaching maths at Westfield Academy, the Year 9s are wild", "westfield"),
        ("2025-03-14 17:05", "sam", "Handed in my notice! I start at the Open University as a course designer in April", "open-university"),
    ], ("What does Sam do for work?", "Que fait Sam comme travail ?")),
    Fact("holiday", "sam", [
        ("2024-11-20 21:00", "me", "For the summer we booked a week in Porto in July", "porto"),
        ("2025-03-01 12:30", "me", "We cancelled Porto, it's Edinburgh in August instead", "edinburgh"),
    ], ("Where are we going on holiday this summer?", "On part où en vacances cet été ?"),
        noise=[("2025-03-02 09:10", "sam", "We're doing Cornwall again this summer, can't beat it")]),
    Fact("pub", "sam", [
        ("2024-09-28 22:40", "sam", "See you at The Red Lion as usual?", "red-lion"),
        ("2025-02-22 19:15", "sam", "The Red Lion closed down :( we go to The Crown these days", "crown"),
    ], ("What's our usual pub with Sam?", "C'est quoi le pub habituel avec Sam ?")),
    Fact("phone-sam", "sam", [
        ("2024-09-06 11:11", "sam", "Number's still +44 7700 900123 if you need me", "900123"),
        ("2024-12-01 15:30", "sam", "Lost my phone, temporary number +44 7700 900888 until I sort it out", "900888"),
        ("2024-12-20 10:45", "sam", "Got my old number back, +44 7700 900123 works again, ditch the temporary one", "900123"),
    ], ("What's Sam's phone number?", "C'est quoi le numéro de Sam ?")),
    Fact("party-sam", "sam", [
        ("2025-04-02 20:00", "sam", "Party for my 40th on Saturday May 17 at our place", "17may"),
        ("2025-04-25 18:30", "sam", "Party's on Sunday May 18 now, the caterer couldn't do Saturday", "18may"),
    ], ("When is Sam's birthday party?", "C'est quand l'anniversaire de Sam ?")),
    Fact("email-sam", "sam", [
        ("2024-09-07 09:30", "sam", "My email is samtaylor84@gmail.com by the way", "gmail"),
        ("2025-03-16 16:00", "sam", "Use sam@taylordesigns.co.uk from now on, I'm closing the gmail", "taylordesigns"),
    ], ("What's Sam's email address?", "C'est quoi l'adresse mail de Sam ?")),
    Fact("flight-sam", "sam", [
        ("2025-04-10 13:00", "sam", "Flight booked: landing in Lyon on June 6 at 14:20", "1420"),
        ("2025-05-12 08:25", "sam", "Easyjet changed my flight, I land on June 6 at 18:45", "1845"),
    ], ("When does Sam land in Lyon?", "À quelle heure Sam atterrit à Lyon ?")),
    Fact("gp-maman", "maman", [
        ("2024-09-25 10:00", "maman", "Mon médecin traitant c'est le Dr Lambert, à Caluire", "lambert"),
        ("2025-01-12 18:20", "maman", "Le Dr Lambert prend sa retraite, je suis suivie par le Dr Nguyen à Rillieux", "nguyen"),
    ], ("Who is Mum's GP?", "C'est qui le médecin de Maman ?"),
        noise=[("2025-02-03 11:00", "maman", "Papa reste chez le Dr Lambert fils, à Caluire")]),
    Fact("physio-maman", "maman", [
        ("2025-03-01 09:40", "maman", "J'ai kiné le mardi à 17h", "mardi"),
        ("2025-03-20 12:15", "me", "J'ai appelé le cabinet, ta kiné passe au jeudi 17h", "jeudi"),
        ("2025-04-15 17:30", "maman", "La kiné c'est le lundi à 16h, j'ai changé de kiné", "lundi"),
    ], ("When is Mum's physio?", "C'est quand la kiné de Maman ?")),
    Fact("phone-maman", "maman", [
        ("2024-10-05 19:00", "maman", "Mon fixe : 04 78 23 45 67", "fixe"),
        ("2025-02-14 20:10", "maman", "J'ai résilié le fixe, appelle-moi sur le portable 06 24 91 37 58", "portable"),
    ], ("What number should I call Mum on?", "Sur quel numéro j'appelle Maman ?")),
    Fact("catsitter", "maman", [
        ("2024-12-15 15:00", "maman", "Pour les vacances c'est Mme Petit, la voisine, qui nourrit Pixel", "petit"),
        ("2025-05-20 19:45", "me", "Cette année c'est Inès, la fille des voisins, qui gardera Pixel pendant les vacances", "ines"),
    ], ("Who looks after Pixel during the holidays?", "Qui garde Pixel pendant les vacances ?")),
    Fact("surgery-papa", "maman", [
        ("2025-01-10 11:30", "maman", "L'opération du genou de Papa est prévue le 4 février", "4fev"),
        ("2025-01-28 09:15", "maman", "L'opération de Papa est reportée au 18 mars, le chirurgien est malade", "18mars"),
    ], ("When is Dad's knee surgery?", "C'est quand l'opération de Papa ?")),
    Fact("dentist", "maman", [
        ("2025-02-10 08:00", "me", "J'ai pris rendez-vous chez le dentiste, le Dr Sabatier, le 12 mars à 9h", "12mars"),
        ("2025-03-03 18:40", "maman", "Le cabinet dentaire a appelé à la maison, ton rendez-vous est le 19 mars à 10h au lieu du 12", "19mars"),
    ], ("When is my dentist appointment?", "C'est quand mon rendez-vous chez le dentiste ?")),
    Fact("restaurant-maman", "maman", [
        ("2025-03-10 20:30", "me", "Pour ton anniversaire j'ai réservé au Bouchon des Filles", "bouchon"),
        ("2025-03-25 21:00", "me", "J'ai dû annuler le Bouchon des Filles, on ira chez Paul Bocuse !", "bocuse"),
    ], ("Which restaurant is booked for Mum's birthday?", "Quel resto pour l'anniversaire de Maman ?")),
    Fact("car", "notes", [
        ("2024-09-02 09:00", "me", "Voiture : Clio IV immatriculée GH-412-KL", "clio"),
        ("2025-03-08 16:00", "me", "Vendu la Clio ! Zoé électrique, immat FR-993-TB", "zoe"),
    ], ("What's my car's registration?", "C'est quoi l'immatriculation de ma voiture ?")),
    Fact("gym", "notes", [
        ("2024-09-03 07:30", "me", "Inscrite à la salle Fitness Park Part-Dieu, badge 55102", "fitness-park"),
        ("2025-01-05 19:00", "me", "Résilié Fitness Park, je nage à la piscine du Rhône 3 fois par semaine", "piscine"),
    ], ("Where do I work out?", "Je fais du sport où ?")),
    Fact("bank", "notes", [
        ("2024-10-15 14:00", "me", "Conseillère banque : Mme Durand, agence Saxe", "durand"),
        ("2025-02-20 11:20", "me", "Mme Durand est partie, mon conseiller bancaire est M. Kaci", "kaci"),
    ], ("Who is my bank adviser?", "C'est qui mon conseiller à la banque ?")),
    Fact("internet", "notes", [
        ("2024-09-10 20:00", "me", "Box internet : Free, identifiant client 88412345", "free"),
        ("2025-04-02 18:30", "me", "Passée chez Orange pour la fibre, contrat 4471-2290", "orange"),
    ], ("Who's my internet provider?", "C'est quoi mon fournisseur internet ?")),
    Fact("locker", "notes", [
        ("2025-01-06 19:10", "me", "Casier piscine : code 3141", "3141"),
        ("2025-03-15 18:50", "me", "Casier piscine changé, l'autre était cassé : code 2718", "2718"),
    ], ("What's my pool locker code?", "C'est quoi le code de mon casier à la piscine ?"),
        stale=[("2025-05-02 08:00", "me", "Penser à rendre le cadenas du casier 3141 à l'accueil", "3141")]),
    Fact("landlord", "notes", [
        ("2024-09-01 10:00", "me", "Propriétaire : M. Vidal, 06 11 22 33 44", "vidal"),
        ("2025-01-25 13:00", "me", "L'appart a été vendu : propriétaire Mme Carrel, gestion par l'agence Foncia Lyon 6", "carrel"),
    ], ("Who is my landlord?", "C'est qui mon propriétaire ?")),
    Fact("office-address", "notes", [
        ("2024-09-04 08:30", "me", "Bureau : 12 quai Perrache, 2e étage", "perrache"),
        ("2025-03-31 08:45", "me", "Nouveaux bureaux à partir d'avril : 40 cours Lafayette, 3e étage", "lafayette"),
    ], ("What's the office address?", "C'est quoi l'adresse du bureau ?")),
    Fact("electricity", "notes", [
        ("2024-10-20 21:00", "me", "Électricité EDF, mensualité 74 €", "74"),
        ("2025-02-15 10:10", "me", "Mensualité EDF passée à 89 € après la régularisation", "89"),
    ], ("How much is my monthly electricity payment?", "Combien je paie d'électricité par mois ?")),
    Fact("yoga", "notes", [
        ("2024-09-15 20:00", "me", "Yoga le jeudi soir à 19h", "jeudi"),
        ("2024-11-10 20:30", "me", "Yoga déplacé au mardi 19h ce trimestre", "mardi"),
        ("2025-01-12 21:00", "me", "Retour au yoga du jeudi 19h à partir de janvier", "jeudi"),
    ], ("When is my yoga class?", "C'est quand mon cours de yoga ?")),
    Fact("pixel-food", "notes", [
        ("2024-10-02 18:00", "me", "Pixel mange des croquettes Royal Canin Indoor", "royal-canin"),
        ("2025-03-18 19:30", "me", "Le Dr Morel a mis Pixel aux croquettes Hill's Urinary, fini les Royal Canin", "hills"),
    ], ("What food does Pixel eat?", "Pixel mange quelles croquettes ?")),
]  # fmt: skip
