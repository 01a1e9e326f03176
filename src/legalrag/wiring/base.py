"""What every part of the composition root shares: the saved settings in effect."""

from __future__ import annotations

from legalrag.settings import Settings, load_settings


def current_settings(settings: Settings | None = None) -> Settings:
    """``settings``, else those in effect (environment and the default settings file)."""
    return settings if settings is not None else load_settings()
