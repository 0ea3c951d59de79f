"""The relevance floor of `elora memories --search`, on a labelled set of entries and queries.

    python -m tests.bench.bench_search_floor

Each query lists the entries that answer it (none for an off-topic query). For each cut-off
(an absolute floor on the hybrid score, and a share of the best hit's score), the bench prints
how many shown results are relevant (precision), how many relevant ones are still shown
(recall), and how many off-topic queries show nothing (as they should). The defaults in
core/memory/api.py were chosen here.
"""

from __future__ import annotations

import os

os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["ANONYMIZED_TELEMETRY"] = "False"

import tempfile
from pathlib import Path

ENTRIES = {
    "dentist": "Camille's dentist is Dr Benali in Lyon",
    "coffee": "Je bois mon café sans sucre, avec un nuage de lait",
    "garage": "Le garage Dupont ferme à 18h le samedi",
    "flight": "My flight to Oslo leaves on Tuesday",
    "cello": "Camille joue du violoncelle le mardi",
    "office": "The Lyon office answers emails in about two days",
    "rent": "Le loyer est de 980 € depuis juillet",
    "sister": "Léa, la soeur de Camille, habite à Bordeaux",
    "answers": "Camille prefers short answers in French",
    "wifi": "The wifi password at the cottage is written on the fridge",
    "move": "Je déménage à Lyon en septembre",
    "peanuts": "Camille is allergic to peanuts",
    "locker": "Le code du casier de la piscine est 4711",
    "cat": "Mon chat s'appelle Pixel",
    "meeting": "Team meeting every Monday at 10am",
    "job": "Camille works at Lumen Logistics",
    "bike": "Le vélo de Camille est au garage pour une crevaison",
    "doctor": "Le médecin traitant est le Dr Morel, cabinet rue Garibaldi",
    "train": "Camille prend le TER de 7h42 pour aller au bureau",
    "gift": "Offrir un livre de cuisine japonaise à Léa pour son anniversaire",
}
QUERIES = {
    "Quel est le dentiste de Camille ?": {"dentist"},
    "dentist": {"dentist"},
    "Where does Léa live?": {"sister"},
    "café": {"coffee"},
    "loyer": {"rent"},
    "When does my flight leave?": {"flight"},
    "mot de passe wifi": {"wifi"},
    "what is my cat's name": {"cat"},
    "allergies": {"peanuts"},
    "Lyon": {"dentist", "office", "move"},
    "médecin": {"doctor", "dentist"},
    "Quand est-ce que je déménage ?": {"move"},
    "anniversaire de Léa": {"gift"},
    "how does Camille get to work": {"train", "job"},
    "réparation vélo": {"bike"},
    "quantum chromodynamics": set(),
    "recette de la tarte tatin": set(),
    "football scores yesterday": set(),
    "le prix de l'essence": set(),
    "best hiking trails in Norway": set(),
    "la météo de demain": set(),
}
FLOORS = (0.0, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6)
SHARES = (0.0, 0.5, 0.6, 0.7)


def main() -> None:
    from core.config import load_settings
    from core.embeddings import LocalE5Embedder
    from core.memory.api import remember
    from core.services import Services

    os.environ["ELORA_HOME"] = str(Path(tempfile.mkdtemp()) / "home")
    services = Services(load_settings(), embedder=LocalE5Embedder())
    ids = {key: remember(services, text, memory_id=f"fact.{key}").memory_id
           for key, text in ENTRIES.items()}  # fmt: skip
    ranked = {}
    for query in QUERIES:
        hits, _ = services.memory.search(query, 10)
        ranked[query] = [(h.entry.memory_id, h.score) for h in hits]
    print(f"{len(ENTRIES)} entries, {len(QUERIES)} queries (top 10 each)")
    print("floor share  precision  recall  off-topic-empty  shown")
    for floor in FLOORS:
        for share in SHARES:
            shown = relevant = wanted = empty = 0
            for query, answers in QUERIES.items():
                hits = ranked[query]
                top = hits[0][1] if hits else 0.0
                kept = [m for m, s in hits if s >= floor and s >= share * top]
                good = {ids[a] for a in answers}
                shown += len(kept)
                relevant += len(good & set(kept))
                wanted += len(good)
                empty += not answers and not kept
            off = sum(1 for a in QUERIES.values() if not a)
            precision = relevant / shown if shown else 1.0
            print(f"{floor:5.2f} {share:5.2f}  {precision:9.2f}  {relevant / wanted:6.2f}  "
                  f"{empty:>7}/{off}        {shown}")  # fmt: skip
    services.close()


if __name__ == "__main__":
    main()
