"""Operations: ``GET /health/live``, ``/health/ready``, ``/metrics``, tier sleep and wake, and the
admin routes (status, users, keys). No ``from __future__ import annotations``: FastAPI must see the real request-model types.
"""

from typing import Annotated, Any, Literal

from fastapi import Header, HTTPException, Path, Query
from fastapi.responses import PlainTextResponse

from medgraph.config.llm import TIER_NAMES
from serve.api_app import (
    STATUS_DESCRIPTIONS,
    Admin,
    Caller,
    IngressBase,
    ServiceUnavailable,
    admin,
    app,
    error_responses,
)
from serve.api_models import KEY_ID, USER_ID, NewUser
from serve.metrics import prometheus_text

MAX_KEYS_LISTED = 10_000  # the keys of one page of users, at most


class AdminRoutes(IngressBase):
    @app.get("/health/live")
    async def live(self) -> dict[str, str]:
        """Liveness: the ingress answers (never needs a key)."""
        return {"status": "live"}

    async def tier_stats(self) -> dict[str, Any]:
        """Stats of each engine deployment; engines allowed to scale to zero are not polled."""
        out: dict[str, Any] = {}
        for name, handle in self.engines.items():
            auto = self.tiers.engines[name].deployment.autoscaling
            if auto is not None and auto.min_replicas == 0:
                out[name] = {"state": "not polled (min_replicas 0: polling would start a replica)"}
                continue
            try:
                out[name] = await self._call(handle.stats, timeout=self.cfg.store_timeout_s)
            except ServiceUnavailable as exc:
                out[name] = {"state": "unreachable", "last_error": str(exc)}
        return {"map": {t: self.tiers.engine_for(t) for t in TIER_NAMES}, "engines": out}

    @app.get("/health/ready", responses={503: STATUS_DESCRIPTIONS[503], 401: STATUS_DESCRIPTIONS[401], 400: STATUS_DESCRIPTIONS[400]})
    async def ready(self, authorization: str | None = Header(default=None),
                    x_api_key: str | None = Header(default=None)) -> dict[str, Any]:
        """Ready or not. The stores' counts, the last build and the tiers go only to an admin key
        (without ``auth.required``: to anyone); everyone else, a probe included, gets the status alone."""
        detail = not self.auth_cfg.required
        if authorization or x_api_key:
            principal = await self.blocking(self.principal, authorization, x_api_key)  # a bad key is still a 401
            detail = detail or (principal is not None and principal.role == "admin")
        try:
            counts = await self._call(self.retriever.ready, timeout=self.cfg.store_timeout_s)
        except ServiceUnavailable:
            if detail:
                raise
            raise ServiceUnavailable("not ready") from None
        if not detail:
            return {"status": "ready"}
        return {"status": "ready", "stores": counts, "tiers": await self.tier_stats()}

    @app.get("/metrics", responses=error_responses(403))
    async def metrics(self, principal: Caller) -> PlainTextResponse:
        """Prometheus text; with ``auth.required`` an admin key (a scrape job's bearer token)."""
        if self.auth_cfg.required:
            await admin(principal)
        stats = await self.tier_stats()
        return PlainTextResponse(prometheus_text(stats["engines"]), media_type="text/plain; version=0.0.4")

    @app.post("/tiers/{engine}/{action}", responses=error_responses(403, 404, 503))
    async def tier_action(self, principal: Caller, engine: Annotated[str, Path(max_length=64)],
                          action: Literal["sleep", "wake"]) -> dict[str, Any]:
        """Put an engine to sleep (refused while it has requests in flight) or wake it
        (``serve.tier_admin``; an admin key when ``auth.required``)."""
        if self.auth_cfg.required:
            await admin(principal)
        if not self.cfg.tier_admin:
            raise HTTPException(403, "tier administration is disabled (serve.tier_admin: false)")
        if engine not in self.engines:
            raise HTTPException(404, f"unknown engine {engine!r}; deployed: {sorted(self.engines)}")
        handle = self.engines[engine]
        method = handle.sleep if action == "sleep" else handle.wake
        return dict(await self._call(method, timeout=self._answer_timeout()))

    # --- administration (admin role) ------------------------------------------------------------

    @app.get("/admin/status", responses=error_responses(403, 503))
    async def admin_status(self, _: Admin) -> dict[str, Any]:
        """Pipeline and service status: store counts and the last corpus build, tiers, usage."""
        stores = await self._call(self.retriever.ready, timeout=self.cfg.store_timeout_s)
        a = self.auth_cfg
        # the shared gate's counts are a blocking Redis call: off the event loop, as the quota's
        active, queued = await self.blocking(lambda: (self.gate.active, self.gate.queued))
        return {"stores": stores, "last_run": stores.get("last_run"), "tiers": await self.tier_stats(),
                "usage": await self.blocking(self.quota.usage), "limits": {"per_user_daily": a.per_user_daily, "global_daily": a.global_daily},
                "concurrency": {"active": active, "queued": queued, "max_concurrent": a.max_concurrent}}

    @app.get("/admin/users", responses=error_responses(403))
    async def admin_users(self, _: Admin, limit: int = Query(default=100, ge=1, le=1000),
                          offset: int = Query(default=0, ge=0, le=1_000_000)) -> dict[str, Any]:
        """One page of the users by ID, with their keys (IDs, roles, state; never a secret);
        ``total``: how many users there are."""
        def page() -> dict[str, Any]:
            users = self.keys.list_users(limit, offset)
            keys = self.keys.list_keys(user_ids=[u["user_id"] for u in users], limit=MAX_KEYS_LISTED)
            return {"total": self.keys.count_users(), "users": users, "keys": keys}

        return dict(await self.blocking(page))

    @app.post("/admin/users", status_code=201, responses=error_responses(403, 409))
    async def admin_create_user(self, user: NewUser, _: Admin) -> dict[str, Any]:
        """Creates the user and its first API key; the key is shown in this response only."""
        if await self.blocking(self.keys.has_user, user.user_id):
            raise HTTPException(409, f"user {user.user_id!r} exists; POST /admin/users/{user.user_id}/keys for a key")
        try:
            await self.blocking(self.keys.create_user, user.user_id, user.role)
        except ValueError as exc:  # e.g. the reserved name of unauthenticated callers
            raise HTTPException(422, str(exc)) from None
        key_id, key = await self.blocking(self.keys.issue_key, user.user_id)
        return {"user_id": user.user_id, "role": user.role, "key_id": key_id, "api_key": key}

    @app.post("/admin/users/{user_id}/keys", status_code=201, responses=error_responses(403, 404))
    async def admin_issue_key(self, user_id: Annotated[str, Path(max_length=64, pattern=USER_ID)],
                              _: Admin) -> dict[str, Any]:
        """A new API key for an existing user; the key is shown in this response only."""
        if not await self.blocking(self.keys.has_user, user_id):
            raise HTTPException(404, f"no user {user_id!r}")
        key_id, key = await self.blocking(self.keys.issue_key, user_id)
        return {"user_id": user_id, "key_id": key_id, "api_key": key}

    @app.delete("/admin/keys/{key_id}", responses=error_responses(403, 404))
    async def admin_revoke_key(self, key_id: Annotated[str, Path(max_length=12, pattern=KEY_ID)],
                               _: Admin) -> dict[str, Any]:
        """Revoke a key: it is refused from then on."""
        if not await self.blocking(self.keys.revoke, key_id):
            raise HTTPException(404, f"no active key {key_id!r}")
        return {"key_id": key_id, "revoked": True}
