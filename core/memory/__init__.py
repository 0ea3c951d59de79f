"""Memory entries: the canon, its five tiers, links, forgetting; later admission and promotion."""
