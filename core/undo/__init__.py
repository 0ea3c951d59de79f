"""Undo: what the operator did to memory can be taken back for ELORA_UNDO_MINUTES.

`context` says who is acting and collects what an action changed; `log` keeps undoable actions
on disk (never a forgotten text); `reverse` undoes them; a forget's undo is held only in the
memory of the process that made it (core/memory/unforget.py).
"""
