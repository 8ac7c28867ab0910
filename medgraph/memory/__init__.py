"""Memory of the agent: chat sessions (short-term) and per-user long-term memory, in the app database
(SQLite, or PostgreSQL for replicated serving).

``SessionStore`` keeps each conversation's turns; ``LongTermMemory`` keeps an authenticated
user's interests and past answers, anchored on MeSH IDs, with exponential decay.
"""

from medgraph.memory.longterm import LongTermMemory, Memory, relative_time_label
from medgraph.memory.sessions import ChatMessage, ChatSession, SessionForbidden, SessionNotFound, SessionStore

__all__ = [
    "ChatMessage",
    "ChatSession",
    "LongTermMemory",
    "Memory",
    "SessionForbidden",
    "SessionNotFound",
    "SessionStore",
    "relative_time_label",
]
