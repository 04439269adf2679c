"""What a CLI printed, as one line: Rich's panel borders taken out and its line wrapping undone (where Rich wraps
depends on the terminal's width and on the lengths of the paths it prints, so tests read messages this way)."""

from __future__ import annotations


def plain(output: str) -> str:
    """``output`` without Rich's borders (│) and with every run of whitespace one space."""
    return " ".join(output.replace("│", " ").split())
