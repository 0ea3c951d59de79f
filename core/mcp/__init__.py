"""Elora's memory for other agents over the Model Context Protocol (`elora mcp`).

`tools` holds the thin calls into core (the same functions every other surface uses), with
scope, consent and trace rules; `server` binds them to the `mcp` SDK (imported only there).
"""
