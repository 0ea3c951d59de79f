"""Learning under review: candidates become proposals; only approval writes the canon."""
