"""The HTTP ingress: one FastAPI app in front of the Serve deployments.

Endpoints: ``POST /chat``, ``POST /chat/stream`` (Server-Sent Events), ``POST /v1/chat/completions``
(OpenAI-compatible, streaming or not; model ``medgraph`` routes, ``medgraph-small|medium|large``
forces a tier, any other model is a 404 in OpenAI's error shape; earlier messages are the
conversation the rewriter reads), ``GET /v1/models``, ``POST /route`` (the routing decision alone),
``GET /graph/entity`` (by ``name``, linked, or by MeSH ``id``), ``GET /graph/edge`` (the chunks two
entities share), ``GET /graph/communities``, ``GET /chunks/{chunk_id}`` (one stored passage),
``GET /corpus`` (store counts, recent builds and their failures), ``GET /health/live``, ``GET /health/ready``
(stores and LLM tiers), ``GET /metrics`` (Prometheus text: tier wakes, sleeps, latencies, memory
freed), ``POST /tiers/{engine}/sleep|wake`` (``serve.tier_admin``), and for admins
``GET /admin/status`` (pipeline, stores, tiers, usage), ``GET|POST /admin/users``,
``POST /admin/users/{id}/keys``, ``DELETE /admin/keys/{key_id}``.

Questions go to the agent deployment (``serve/agent.py``: the LangGraph agent). The ingress does
what must happen before it:
- identity, one dependency (``caller``) on every route but liveness: ``Authorization: Bearer <key>``
  or ``X-API-Key``; keys stored hashed, roles admin/user. With ``auth.required`` every route needs a
  key, ``/metrics`` and tier administration an admin key, and readiness tells a caller without an
  admin key only up or down. Without it, callers without a key are anonymous: they may continue
  only sessions the server started for them (IDs carrying a keyed tag), never a chosen ID.
- the per-user and global daily quotas (429) and the global concurrency cap for every route that
  does work (questions, ``/route``, ``/graph/*``): requests over ``auth.max_concurrent`` wait in a
  FIFO queue (``/chat/stream`` sends ``{"status": "queued", "position": n}`` while waiting) and only
  a full queue (``auth.max_queue``) is refused (503); ``/chunks`` and ``/corpus`` read one record
  or a few and take neither. Choosing the tier is ``auth.force_tier``'s.
- limits: a body over ``serve.max_body_bytes`` is a 413; strings with NUL or lone surrogates, IDs
  the stores would refuse or could not hold (MeSH and chunk IDs by their pattern), too many or too
  long messages are 422 with the reason.
Bad requests get 4xx with a message; a store that cannot answer within ``serve.store_timeout_s``
(or raises ``StoreUnavailable``), or a tier that cannot wake or run, gives 503, never a hang.

``Ingress`` takes its config and the deployment handles in the constructor. It carries
``@serve.ingress(app)`` here, at import time, because each replica re-imports this module and
the class-based routes must be rewritten in that process; ``serve/app.py`` only deploys it.
The routes live by resource in ``routes_chat.py``, ``routes_graph.py`` and ``routes_admin.py``
(subclasses of ``api_app.IngressBase``); the app, its error handlers and the shared steps in
``api_app.py``, the request bodies in ``api_models.py``.
"""

from ray import serve

from serve.api_app import app
from serve.routes_admin import AdminRoutes
from serve.routes_chat import ChatRoutes
from serve.routes_graph import GraphRoutes


@serve.ingress(app)
class Ingress(ChatRoutes, GraphRoutes, AdminRoutes):
    """The ingress deployment: every route of the three resources on one FastAPI app."""
