"""Reading the graph and the corpus: ``GET /graph/entity``, ``/graph/edge``, ``/graph/communities``,
``/chunks/{chunk_id}`` and ``/corpus``. No ``from __future__ import annotations``: FastAPI must see the real request-model types.
"""

from typing import Annotated, Any

from fastapi import HTTPException, Path, Query

from medgraph import lang as languages
from serve.api_app import Caller, IngressBase, app, error_responses
from serve.api_models import CHUNK_ID, MESH_ID, LanguageCode, Text


def entity_body(found: dict[str, Any], lang: str | None, names_in: str | None = None) -> dict[str, Any]:
    """``lang``: the language the entity was asked in (its names in that language only);
    ``names_in``: the language every shown name is in (the reader's; default ``lang``), English where
    an entity has no name in it."""
    entity = found["entity"]
    nodes = found["nodes"]
    shown = names_in or lang

    def names(e: Any) -> dict[str, list[str]]:
        return {lang: e.names.get(lang, [])} if lang else dict(e.names)

    def display(e: Any) -> str:
        localised = e.names.get(shown, []) if shown and shown != languages.PIVOT else []
        return str(localised[0]) if localised else str(e.name)

    return {
        "mesh_id": entity.mesh_id, "name": display(entity), "names": names(entity),
        "labels": ["Entity", entity.category] if entity.category else ["Entity"], "category": entity.category,
        "neighbours": [{"mesh_id": i, "name": display(e), "category": e.category} for i, e in nodes.items()
                       if i != entity.mesh_id],
        "edges": [{"source": s, "target": t, "type": "CO_OCCURS_WITH", "weight": w} for s, t, w in found["edges"]],
        "communities": found.get("communities", []),  # MEMBER_OF, coarsest first (jobs.build_communities)
    }


class GraphRoutes(IngressBase):
    @app.get("/graph/entity", responses=error_responses(404, 429, 503))
    async def graph_entity(
        self,
        principal: Caller,
        name: Annotated[Text | None, Query(min_length=1, max_length=200)] = None,
        mesh_id: Annotated[str | None, Query(alias="id", max_length=10, pattern=MESH_ID)] = None,
        lang: LanguageCode | None = None,
        hops: int = Query(default=1, ge=1, le=2),
        limit: int = Query(default=25, ge=1, le=200),
        names_in: LanguageCode | None = None,
    ) -> dict[str, Any]:
        """An entity and its neighbourhood: by ``name`` (any language, linked to MeSH) or by ``id``
        (a MeSH descriptor ID, looked up as it is: what the explorer sends to expand a node).
        ``names_in``: the language the entity's and its neighbours' names are shown in (the reader's;
        English where one has no name in it), whatever language the name was asked in."""
        if (name is None) == (mesh_id is None):
            raise HTTPException(400, "give exactly one of name (an entity name, linked to MeSH) "
                                     "or id (a MeSH descriptor ID such as D063373)")
        async with self._work(principal):
            if mesh_id is None:
                mesh_id = await self._call(self.analyzer.link_name, name, lang)
                if mesh_id is None:
                    raise HTTPException(404, f"no MeSH entity matches {name!r}")
            found = await self._call(self.retriever.entity, mesh_id, hops, limit, timeout=self.cfg.store_timeout_s)
        if found is None:
            what = f"{mesh_id} ({name!r})" if name is not None else mesh_id
            raise HTTPException(404, f"{what} is not mentioned in the corpus")
        return entity_body(found, lang, names_in)

    @app.get("/graph/edge", responses=error_responses(404, 429, 503))
    async def graph_edge(
        self,
        principal: Caller,
        source: Annotated[str, Query(max_length=10, pattern=MESH_ID)],
        target: Annotated[str, Query(max_length=10, pattern=MESH_ID)],
        limit: int = Query(default=20, ge=1, le=100),
    ) -> dict[str, Any]:
        """The evidence of a co-occurrence edge: up to ``limit`` chunks that mention both entities
        (by chunk ID); ``weight`` is how many were found. 404 for an unknown entity or no shared chunk."""
        if source == target:
            raise HTTPException(400, "source and target must be two different entities")
        async with self._work(principal):
            found = await self._call(self.retriever.edge, source, target, limit, timeout=self.cfg.store_timeout_s)
        if found["unknown"]:
            raise HTTPException(404, f"not mentioned in the corpus: {', '.join(found['unknown'])}")
        if not found["chunks"]:
            raise HTTPException(404, f"{source} and {target} are not mentioned together in any chunk")
        return {"source": source, "target": target, "weight": len(found["chunks"]), "chunks": found["chunks"]}

    @app.get("/chunks/{chunk_id}", responses=error_responses(404, 429, 503))
    async def chunk(self, principal: Caller,
                    chunk_id: Annotated[str, Path(min_length=16, max_length=16, pattern=CHUNK_ID)]) -> dict[str, Any]:
        """One stored passage (a citation's ``chunk_id``): where it is from, its language and text."""
        async with self._work(principal):
            found: dict[str, Any] | None = await self._call(self.retriever.chunk, chunk_id,
                                                            timeout=self.cfg.store_timeout_s)
        if found is None:
            raise HTTPException(404, f"no chunk {chunk_id}")
        return found

    @app.get("/corpus", responses=error_responses(429, 503))
    async def corpus(self, principal: Caller, limit: int = Query(default=20, ge=1, le=200)) -> dict[str, Any]:
        """Store counts and the latest builds, newest first, each with its failures (first 50) and
        their count; a running build's ``summary`` is its progress."""
        async with self._work(principal):
            return dict(await self._call(self.retriever.corpus, limit, timeout=self.cfg.store_timeout_s))

    @app.get("/graph/communities", responses=error_responses(429, 503))
    async def graph_communities(
        self,
        principal: Caller,
        level: int | None = Query(default=None, ge=0, le=10),
        limit: int = Query(default=50, ge=1, le=500),
        offset: int = Query(default=0, ge=0, le=1_000_000),
    ) -> dict[str, Any]:
        """One page of the communities of the co-occurrence graph, by level then largest first: level,
        parent, size, summary, citations; ``total`` (of the level asked, or all) and ``levels`` (each
        level's count), so one call draws the communities view."""
        async with self._work(principal):
            return dict(await self._call(self.retriever.communities, level, limit, offset,
                                         timeout=self.cfg.store_timeout_s))
