"""Recall: classifying a request and assembling its bounded evidence pack (L0-L3)."""
