from datetime import datetime

from core.archive.records import CaptureIn


def test_capture_is_stored_and_indexed(services):
    result = services.archive.capture(
        CaptureIn(
            surface="cli",
            chat_id="1",
            text="Je déménage à Lyon en mai",
            sent_at=datetime(2024, 5, 1),
        )
    )
    assert result.status == "stored" and result.indexed
    hits = services.vectorspace.query("archive", "where am I moving?", 3)
    assert len(hits) == 1
