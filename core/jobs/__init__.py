"""Scheduled jobs: plain async functions taking the services; the scheduler only registers them."""
