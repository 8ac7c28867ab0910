"""The web interface's strings in French (only some: the rest fall back to English)."""

UI = {"skip": "Aller au contenu", "language": "Langue", "chat.title": "Posez une question médicale",
      "chat.ask": "Demander", "error": "Erreur", "loading": "Chargement…"}
