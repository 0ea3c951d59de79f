"""The heuristic extractor measured on the labelled set: precision and recall must not regress."""

from __future__ import annotations

from collections import defaultdict

from core.learning.heuristics import heuristic_candidates
from tests.core.learning.extraction_set import EXAMPLES, Example

# Measured: precision 0.965, recall 0.865, kind agreement 0.904 over the whole set; precision
# 0.933, recall 0.609 on the held-out batch, which says more about new messages. The floors
# leave a little room, not a lot.
PRECISION_FLOOR = 0.9
RECALL_FLOOR = 0.8
HELD_OUT_RECALL_FLOOR = 0.55
KIND_AGREEMENT_FLOOR = 0.85


def _score(examples: list[Example]) -> dict[str, float]:
    tp = fp = fn = same_kind = 0
    for example in examples:
        found = heuristic_candidates(example.text)
        kind = found[0].kind if found else None
        if kind and example.kind:
            tp += 1
            same_kind += kind == example.kind
        elif kind:
            fp += 1
        elif example.kind:
            fn += 1
    return {
        "n": len(examples),
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "kind_agreement": same_kind / tp if tp else 1.0,
    }


def test_the_labelled_set_is_large_varied_and_bilingual():
    assert len(EXAMPLES) >= 60
    assert len({e.text for e in EXAMPLES}) == len(EXAMPLES)
    by = defaultdict(int)
    for e in EXAMPLES:
        by[(e.lang, e.kind is None)] += 1
    assert all(by[(lang, empty)] >= 15 for lang in ("fr", "en") for empty in (True, False))
    assert {e.kind for e in EXAMPLES} >= {
        None, "fact", "preference", "decision", "constraint", "event", "pattern",
    }  # fmt: skip


def test_heuristic_extractor_precision_and_recall_stay_above_their_floors():
    overall = _score(EXAMPLES)
    batches = {b: _score([e for e in EXAMPLES if e.batch == b]) for b in ("tuning", "review",
               "held-out")}  # fmt: skip
    languages = {lang: _score([e for e in EXAMPLES if e.lang == lang]) for lang in ("fr", "en")}
    for name, s in {"all": overall, **batches, **languages}.items():
        print(f"{name:>9}: n={s['n']:3d} precision={s['precision']:.3f} "
              f"recall={s['recall']:.3f} kind agreement={s['kind_agreement']:.3f}")  # fmt: skip

    assert overall["precision"] >= PRECISION_FLOOR
    assert overall["recall"] >= RECALL_FLOOR
    assert overall["kind_agreement"] >= KIND_AGREEMENT_FLOOR
    assert batches["held-out"]["recall"] >= HELD_OUT_RECALL_FLOOR


def test_a_heuristic_candidate_keeps_the_operators_words_and_cites_the_message():
    found = [
        (e, c) for e in EXAMPLES for c in heuristic_candidates(e.text, "cap-1")
        if c.authority == "heuristic"
    ]  # fmt: skip

    assert len(found) > 60
    for example, candidate in found:
        assert candidate.source_capture_ids == ["cap-1"]
        assert candidate.text.lower() in " ".join(example.text.split()).lower()
