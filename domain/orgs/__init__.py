"""Organisations: the stores, partners and agent builders that run private tests, and their consents."""
