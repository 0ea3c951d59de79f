"""Storage: the SQLite database (SQLModel, WAL, FTS5) and the vector index (Chroma)."""
