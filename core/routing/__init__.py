"""Routing: which model answers (LITE, FLASH, PRO), with tools, escalation, fallbacks and cost."""
