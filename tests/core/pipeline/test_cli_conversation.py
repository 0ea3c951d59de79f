"""`elora ask` and `elora chat`: the same pipeline from a terminal, with its trace on demand."""

import io
import json
import sys
import threading

from core.cli.main import main
from tests.core.learning.support import extraction


def test_ask_json_prints_the_answer_and_its_trace(llm, capsys):
    llm.enqueue("fake-lite", "Paris.")

    code = main(["ask", "What is the capital of France?", "--json"])

    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert (out["text"], out["status"], out["final_tier"]) == ("Paris.", "answered", "LITE")
    assert out["trace_id"] and out["capture_id"]
    assert out["models"][0]["model"] == "openai/fake-lite"
    assert out["classification"]["intent"] == "task"
    assert (out["tokens_in"], out["tokens_out"], out["cost"]) == (50, 10, None)
    assert out["gate"]["tier"] == "LITE"


def test_ask_prints_just_the_answer_without_json(llm, capsys):
    llm.enqueue("fake-lite", "Paris.")

    code = main(["ask", "What is the capital of France?"])

    assert (code, capsys.readouterr().out) == (0, "Paris.\n")


def test_ask_prints_the_answer_before_learning_from_it(llm, monkeypatch, capsys):
    monkeypatch.setenv("ELORA_LEARNING_EXTRACTOR", "model")
    release, arrived = threading.Event(), threading.Event()
    llm.answer_when("worth remembering", extraction(), hold=release, arrived=arrived)
    llm.default_text = "Noted, Tuesday at 7."
    codes: list[int] = []
    asking = threading.Thread(
        target=lambda: codes.append(main(["ask", "My flight to Oslo leaves Tuesday at 7"]))
    )
    asking.start()
    try:
        assert arrived.wait(60), "no extraction call"
        # Learning waits on the model: the answer is on screen already.
        assert capsys.readouterr().out == "Noted, Tuesday at 7.\n"
    finally:
        release.set()
        asking.join(60)
    assert codes == [0]


def test_each_ask_starts_a_new_conversation_unless_told_which(llm, capsys):
    llm.enqueue("fake-lite", "Noted.", "I don't know.", "Noted.", "Tuesday.")

    main(["ask", "My flight to Oslo leaves on Tuesday, ok?", "--json"])
    first = json.loads(capsys.readouterr().out)["chat_id"]
    main(["ask", "When does my flight leave?"])
    main(["ask", "My flight to Oslo leaves on Tuesday, ok?", "--chat", "trip"])
    main(["ask", "When does my flight leave?", "--chat", "trip"])

    fresh, continued = llm.requests_for("fake-lite")[1], llm.requests_for("fake-lite")[3]
    assert first.startswith("ask-")
    assert "My flight to Oslo leaves on Tuesday, ok?" not in [
        m["content"] for m in fresh["messages"]]  # fmt: skip
    assert "My flight to Oslo leaves on Tuesday, ok?" in [
        m["content"] for m in continued["messages"]]  # fmt: skip


def test_ask_without_a_model_explains_and_fails(llm, monkeypatch, capsys):
    for tier in ("LITE", "FLASH", "PRO"):
        monkeypatch.delenv(f"ELORA_MODEL_{tier}")

    code = main(["ask", "What is the capital of France?"])

    assert code == 1
    assert "ELORA_MODEL_LITE" in capsys.readouterr().out


def test_chat_answers_each_line_and_shows_the_trace(llm, monkeypatch, capsys):
    llm.enqueue("fake-lite", "Hi! How can I help?")
    monkeypatch.setattr(sys, "stdin", io.StringIO("hello\n/trace\n/quit\n"))

    code = main(["chat"])

    out = capsys.readouterr().out
    assert code == 0
    assert "elora> Hi! How can I help?" in out
    assert "question: hello" in out  # the evidence pack, rendered
    assert "intent=chitchat" in out
    trace = json.loads(out[out.index("{") : out.rindex("}") + 1])
    assert trace["final_tier"] == "LITE"
    assert trace["models"][0]["model"] == "openai/fake-lite"
    assert "text" not in trace  # the answer was already printed
    assert len(llm.requests_for("fake-lite")) == 1  # /trace and /quit are not sent to the model


def test_chat_remembers_earlier_lines_of_the_session(llm, monkeypatch, capsys):
    llm.enqueue("fake-lite", "Noted.", "Tuesday.")
    lines = "My flight to Oslo leaves on Tuesday, ok?\nWhen does my flight leave?\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(lines))  # ends with EOF instead of /quit

    assert main(["chat"]) == 0

    second = llm.requests_for("fake-lite")[1]
    contents = [m["content"] for m in second["messages"]]
    assert "My flight to Oslo leaves on Tuesday, ok?" in contents
    assert "elora> Tuesday." in capsys.readouterr().out
