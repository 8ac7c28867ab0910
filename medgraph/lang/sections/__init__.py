"""The section types of a ``LanguagePack``, one module per concern (what the consumers read)."""
