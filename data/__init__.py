"""The shipped examples (skills/*/SKILL.md, identity.md), installed as `core.shipped.examples`.

The rest of data/ is the default runtime home (ELORA_HOME) and is neither tracked nor shipped.
"""
