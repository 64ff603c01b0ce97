"""Reporters turn diagnostics into text for people and machines; positions become text only here."""
