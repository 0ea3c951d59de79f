import json

from core.cli.main import main
from core.jobs.registry import JOBS


def test_jobs_list_shows_every_registered_job(home, capsys):
    assert main(["jobs", "list", "--json"]) == 0

    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == list(JOBS)
    assert "replay-spool" in {r["name"] for r in rows}
    assert all(r["description"] and r["every_minutes"] > 0 for r in rows)


def test_jobs_list_as_text_names_each_job_on_its_line(home, capsys):
    assert main(["jobs", "list"]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(JOBS)
    for line, name in zip(lines, JOBS, strict=True):
        assert line.startswith(name)


def test_running_an_unknown_job_fails_with_the_known_names(home, capsys):
    assert main(["jobs", "run", "no-such-job"]) == 1

    err = capsys.readouterr().err
    assert "no-such-job" in err and "replay-spool" in err
