import pytest

from core.storage.db import Database


@pytest.fixture
def db(tmp_path):
    """A migrated SQLite file of its own, closed after the test (a short busy timeout: a test
    that waits on a lock fails fast)."""
    database = Database(f"sqlite:///{tmp_path / 'elora.db'}", busy_timeout_ms=50)
    with database.session():  # create and migrate the file
        pass
    yield database
    database.close()
