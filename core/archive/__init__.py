"""The archive: verbatim captures, their chunks, the spool that protects them, their indexing."""
