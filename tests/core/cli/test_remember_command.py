"""`elora remember` of something already kept says so and confirms the one entry."""

import json
import re

from core.cli.main import main


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def listed(capsys) -> list[dict]:
    code, out = run(capsys, "memories", "--json")
    assert code == 0
    return json.loads(out)


def test_remembering_the_same_sentence_five_times_confirms_one_entry(home, capsys):
    sentence = "Camille n'aime pas la coriandre"
    code, out = run(capsys, "remember", sentence, "--kind", "preference")
    assert code == 0 and out.startswith("remembered pref.camille-aime-pas-coriandre ")
    touched = [listed(capsys)[0]["last_touched"]]
    for n in range(2, 6):
        code, out = run(capsys, "remember", sentence, "--kind", "preference")
        assert code == 0
        assert re.fullmatch(
            rf"already remembered — confirmed pref\.camille-aime-pas-coriandre \(said {n} times\)"
            r" \(undo with `elora undo [0-9a-f]{8}`\)",
            out.strip(),
        )
        touched.append(listed(capsys)[0]["last_touched"])

    [entry] = listed(capsys)
    assert entry["memory_id"] == "pref.camille-aime-pas-coriandre"
    assert entry["observations"] == 5
    assert touched == sorted(touched) and len(set(touched)) == 5  # fresher at every confirmation


def test_the_json_output_says_whether_it_was_a_confirmation(home, capsys):
    _, first = run(capsys, "remember", "Le garage ferme à 18h", "--json")
    _, again = run(capsys, "remember", "le garage ferme a 18h.", "--json")

    assert json.loads(first)["confirmed"] is False
    second = json.loads(again)
    assert second["confirmed"] is True and second["observations"] == 2
