"""The environment tier fills from what Elora observes: recurring outcomes and durations people
write about, PDFs that keep arriving without text, models and tools that keep failing, kinds of
request that keep needing a stronger model — each a proposal with a sub-bucket, a prediction
and its evidence, scored by A-MAC, recalled when a task matches."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from core.cli.main import main
from core.learning import admission
from core.learning.candidates import Candidate
from core.learning.environment import document_family, observe
from core.learning.outcomes import read_outcomes
from core.learning.review import approve
from core.recall.pack import build_pack
from tests.core.learning.support import NOW, capture, proposals


@pytest.mark.parametrize(
    ("text", "bucket", "prediction", "statement"),
    [
        ("Le bureau de Lyon répond en général en 2 jours", "services", "répond ~2 jours",
         "Le bureau de Lyon répond en général en 2 jours"),
        ("Heads up: the build takes ~10 min, grab a coffee", "tools", "takes ~10 min",
         "The build takes ~10 min"),
        ("Miso a mal à la patte. Le véto est fermé le lundi, j'irai mardi", "places",
         "est fermé le lundi", "Le véto est fermé le lundi"),
        ("Their contract PDFs are scanned images every time", "documents",
         "are scanned images every time", "Their contract PDFs are scanned images every time"),
        ("Dr Benali rue de Charonne, mais il n'a jamais de place", "people",
         "n'a jamais de place", "Dr Benali rue de Charonne : il n'a jamais de place"),
        ("Nordhaven's finance team usually takes about a week to sign off", "services",
         "takes ~a week", "Nordhaven's finance team usually takes about a week to sign off"),
    ],
)  # fmt: skip
def test_recurring_outcomes_are_read_in_french_and_english(text, bucket, prediction, statement):
    [outcome] = read_outcomes(text)

    assert (outcome.bucket, outcome.prediction, outcome.text) == (bucket, prediction, statement)


@pytest.mark.parametrize(
    "text",
    [
        "Est-ce que le bureau de Lyon répond toujours en 2 jours ?",  # a question
        "Je vais toujours au marché le samedi, tu viens ?",  # a plan, and a question
        "Rappel : daily à 10h15, jamais avant 10h s'il vous plaît",  # a rule
        "Always cc Tom on Nordhaven emails",  # a rule
        "J'arrive demain 11h à Perrache finalement",  # a one-off
        "Le train avait 40 min de retard mais ça va",  # a one-off
        "The build will take 10 min",  # a forecast, not an observation
    ],
)
def test_plans_questions_rules_and_one_offs_are_not_outcomes(text):
    assert read_outcomes(text) == []


def test_a_document_family_stars_numbers_and_dates():
    assert document_family("Releve_BNP_2024-03.pdf") == "releve_bnp_*.pdf"
    assert document_family("scan0001.PDF") == "scan*.pdf"


async def test_outcomes_written_twice_make_one_proposal_with_both_messages(services):
    first = capture(services, "Le build de l'ingestion prend toujours ~10 min, je lance",
                    NOW - timedelta(days=40), sender="Karim Haddad", operator=False)  # fmt: skip
    second = capture(services, "The build takes ~10 min, every single time", NOW)
    capture(services, "Sakura Maki est fermé le lundi, j'avais oublié", NOW)

    outcome = await observe(services)

    assert outcome["from_messages"] == 2 and outcome["proposed"] == 2
    by_bucket = {p.candidate["bucket"]: p for p in proposals(services)}
    build = by_bucket["tools"]
    assert (build.tier, build.kind, build.origin) == ("environment", "pattern", "environment")
    assert build.source_capture_ids == [first, second]
    assert build.candidate["prediction"] == "takes ~10 min"
    assert build.candidate["observations"] == 2
    closed = by_bucket["places"]
    # Two observations and a prediction are worth more to the environment than one.
    gain = "environment_prediction_improvement"
    assert build.scores[gain] > closed.scores[gain] >= 0.8
    assert closed.status == "recommended"


async def test_a_contact_s_outcome_says_whose_it_is_and_consent_holds(services):
    from core.learning.consent import add_never_store_rule

    capture(services, "Le véto est fermé le lundi, je l'emmène mardi", sender="Léa Martin",
            operator=False)  # fmt: skip
    capture(services, "La banque répond toujours en 3 jours, ne retiens pas ça")
    add_never_store_rule(services, "dentiste")
    capture(services, "Le dentiste répond en général en 2 jours")

    outcome = await observe(services)

    [proposal] = proposals(services)
    assert proposal.text == "D'après Léa Martin : Le véto est fermé le lundi"
    assert outcome["proposed"] == 1


async def test_a_rerun_proposes_only_what_is_new(services):
    capture(services, "Le build prend toujours 10 min")
    assert (await observe(services))["proposed"] == 1

    again = await observe(services)
    capture(services, "La régie répond en général en 2 jours")
    third = await observe(services)

    assert again["proposed"] == 0 and third["proposed"] == 1
    assert len(proposals(services)) == 2


async def test_an_approved_prediction_keeps_bucket_prediction_and_evidence(services):
    source = capture(services, "La régie de la rue Dumenge répond en général en 2 jours")
    await observe(services)
    [proposal] = proposals(services)

    saved = approve(services, proposal.id)

    assert (saved.tier, saved.kind, saved.observations) == ("environment", "pattern", 1)
    assert saved.attributes["bucket"] == "services"
    assert saved.attributes["prediction"] == "répond ~2 jours"
    assert [s["capture_id"] for s in saved.sources] == [source]


def test_prediction_gain_rewards_a_prediction_and_its_evidence():
    bare = Candidate(text="Le build est lent", kind="pattern", tier="environment")
    predicted = bare.model_copy(update={"prediction": "takes ~10 min"})
    observed = predicted.model_copy(update={"observations": 3})
    fact = Candidate(text="Camille habite Lyon", kind="fact")

    gains = [admission.prediction_gain(c)[0] for c in (bare, predicted, observed, fact)]

    assert gains == [0.6, 0.8, 1.0, admission.ENVIRONMENT_GAIN["semantic"]]
    assert bare.bucket == "general"  # an environment candidate always has a sub-bucket


# -- Elora's own experience ----------------------------------------------------------------


def _blank_pdf(path) -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)  # a page with no text layer, like a scan
    with path.open("wb") as f:
        writer.write(f)


def test_pdfs_that_keep_arriving_without_text_become_a_prediction(home, tmp_path, capsys):
    for month in ("2025-01", "2025-02"):
        scan = tmp_path / f"Releve_BNP_{month}.pdf"
        _blank_pdf(scan)
        assert main(["ask", "Que dit ce relevé ?", "--file", str(scan)]) == 1
        assert "no readable text" in capsys.readouterr().err

    assert main(["jobs", "run", "environment", "--json"]) == 0
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["from_experience"] == 1 and outcome["by_bucket"] == {"documents": 1}
    assert main(["proposals", "--json"]) == 0
    [proposal] = json.loads(capsys.readouterr().out)
    assert proposal["tier"] == "environment"
    assert "releve_bnp_*.pdf" in proposal["text"] and "scanned" in proposal["text"]
    assert proposal["candidate"]["bucket"] == "documents"
    assert len(proposal["candidate"]["attributes"]["evidence_traces"]) == 2


async def test_a_model_that_keeps_failing_becomes_a_prediction(make_services, llm):
    from core.pipeline import Request
    from tests.llm_server import Reply

    svc = make_services(MODEL_LITE_FALLBACKS="openai/fake-lite-2")
    for n in range(3):
        llm.enqueue("fake-lite", Reply(status=503))
        llm.enqueue("fake-lite-2", f"Answer {n} from the fallback.")
        reply = await svc.assistant.handle(Request(surface="cli", chat_id="c1", text=f"Salut {n}",
                                                   user_id="operator", sender="operator"))  # fmt: skip
        assert reply.status == "answered"

    outcome = await observe(svc)

    assert outcome["from_experience"] == 1
    [proposal] = [p for p in proposals(svc) if p.candidate["bucket"] == "services"]
    assert proposal.text.startswith("The model openai/fake-lite fails often")
    assert "openai/fake-lite-2 answered instead" in proposal.text
    assert len(proposal.candidate["attributes"]["evidence_traces"]) == 3


async def test_failing_tools_and_needed_escalations_become_predictions(services):
    for n in range(4):
        services.traces.record(
            surface="telegram", classification={"intent": "task"},
            escalations=[{"from": "LITE", "to": "FLASH"}] if n < 3 else [],
            tool_calls=[{"name": "search_memory", "ok": n == 3, "error": "timeout"}],
        )  # fmt: skip

    outcome = await observe(services)

    texts = sorted(p.text for p in proposals(services))
    assert outcome["from_experience"] == 2
    assert texts == [
        "Requests of kind task usually need the FLASH tier: 3 of 4 escalated in 30 days",
        "The search_memory tool fails often: 3 of 4 calls in 30 days (timeout)",
    ]


# -- recall --------------------------------------------------------------------------------


def _prediction(services, memory_id: str, text: str, bucket: str, topics: list[str]):
    from core.memory.api import save_memory
    from tests.core.learning.support import entry

    return save_memory(services, entry(
        memory_id, text, kind="pattern", tier="environment", importance=2, topics=topics,
        attributes={"bucket": bucket, "prediction": "scanned, no text layer"},
    ))  # fmt: skip


def test_a_matching_task_recalls_the_prediction_labelled_as_such(services):
    _prediction(services, "pattern.nordhaven-pdf", "Les PDF de Nordhaven sont toujours des scans",
                "documents", ["documents", "pdf", "nordhaven"])  # fmt: skip

    _prediction(services, "pattern.build", "Le build de l'ingestion prend toujours ~10 min",
                "tools", ["tools", "build", "ingestion"])  # fmt: skip

    # A task (no focused recall needed) still gets the predictions it names, and only those.
    task = build_pack(services, "Extrais les chiffres du PDF que Nordhaven vient d'envoyer")

    items = {i["id"]: i for i in task.items()}
    item = items["pattern.nordhaven-pdf"]
    assert (item["tier"], item["tier_meaning"], item["layer"]) == ("environment", "prediction",
                                                                   "L1")  # fmt: skip
    assert item["prediction"] == "scanned, no text layer" and item["bucket"] == "documents"
    assert item["reason"] == "prediction about pdf"
    assert "pattern.build" not in items
    question = build_pack(services, "Combien de temps prend le build de l'ingestion ?")
    assert "pattern.build" in [i["id"] for i in question.items()]


def test_predictions_are_not_essentials_of_every_pack(services):
    _prediction(services, "pattern.nordhaven-pdf", "Les PDF de Nordhaven sont toujours des scans",
                "documents", ["documents", "pdf", "nordhaven"])  # fmt: skip

    pack = build_pack(services, "Qu'est-ce que je fais ce week-end ?")

    assert "pattern.nordhaven-pdf" not in [i["id"] for i in pack.layers["L1"].items]


async def test_with_a_model_extraction_proposes_predictions_too(model_services, lite):
    from tests.core.learning.support import ask, extraction

    question = (
        "I've been vegetarian for three years, what could I cook tonight? The build takes ages"
    )
    lite.enqueue("fake-lite", "Try a chickpea curry.", extraction(
        {"text": "The Atlas build usually takes about 10 minutes", "kind": "pattern",
         "tier": "environment", "bucket": "Tools", "prediction": "about 10 minutes",
         "observations": 40, "topics": ["build"], "confidence": 0.8, "messages": [1]},
    ))  # fmt: skip

    await ask(model_services, question)

    [proposal] = proposals(model_services)
    assert (proposal.tier, proposal.candidate["bucket"]) == ("environment", "tools")
    assert proposal.candidate["observations"] == 1  # a model does not vouch for evidence
    saved = approve(model_services, proposal.id)
    assert saved.attributes["prediction"] == "about 10 minutes"
