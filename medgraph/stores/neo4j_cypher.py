"""The Cypher of the Neo4j graph store, one named, parameterised query per operation.

Every value reaches Neo4j as a ``$parameter``; nothing here is built from user text. In order:
projection and path settings, writes (documents, chunks, entities, mentions, completion, deletes),
reads (counts, the graph's signature, incidence pages, chunks, mentions, neighbourhoods,
connecting evidence), GDS PageRank on a named projection, and communities (co-occurrence
projection, Leiden, storage). Used by ``medgraph.stores.neo4j_store.Neo4jGraphStore``; the
benchmarks that time GDS directly run the same queries.
"""

from __future__ import annotations

from typing import LiteralString

PROJECTION_PREFIX = "medgraph_ppr_"
MAX_PATH = 3

SCHEMA: tuple[LiteralString, ...] = (
    "CREATE CONSTRAINT medgraph_entity IF NOT EXISTS FOR (n:Entity) REQUIRE n.mesh_id IS UNIQUE",
    "CREATE CONSTRAINT medgraph_chunk IF NOT EXISTS FOR (n:Chunk) REQUIRE n.chunk_id IS UNIQUE",
    "CREATE CONSTRAINT medgraph_document IF NOT EXISTS FOR (n:Document) REQUIRE n.doc_id IS UNIQUE",
    "CREATE CONSTRAINT medgraph_run IF NOT EXISTS FOR (n:Run) REQUIRE n.run_id IS UNIQUE",
    "CREATE CONSTRAINT medgraph_failure IF NOT EXISTS FOR (n:Failure) REQUIRE (n.source, n.stage) IS UNIQUE",
    "CREATE INDEX medgraph_chunk_doc IF NOT EXISTS FOR (n:Chunk) ON (n.doc_id)",
    "CREATE INDEX medgraph_document_updated IF NOT EXISTS FOR (n:Document) ON (n.updated_at)",
    "CREATE INDEX medgraph_run_started IF NOT EXISTS FOR (n:Run) ON (n.started)",
    "CREATE INDEX medgraph_failure_run IF NOT EXISTS FOR (n:Failure) ON (n.run_id)",
)

UPSERT_DOCUMENTS: LiteralString = """
UNWIND $rows AS row
MERGE (d:Document {doc_id: row.doc_id})
SET d.status = CASE WHEN d.content_hash = row.content_hash THEN d.status ELSE 'partial' END,
    d.content_hash = row.content_hash, d.title = row.title, d.language = row.language,
    d.source_id = row.source_id, d.source_path = row.source_path, d.n_chunks = row.n_chunks,
    d.updated_at = row.updated_at
WITH d
CALL (d) { MATCH (c:Chunk {doc_id: d.doc_id}) WHERE NOT (c)-[:FROM_DOC]->(d) MERGE (c)-[:FROM_DOC]->(d) }
"""
UPSERT_CHUNKS: LiteralString = """
UNWIND $rows AS row
MERGE (c:Chunk {chunk_id: row.chunk_id})
SET c += row.props
WITH c, row
CALL (c, row) { MATCH (d:Document {doc_id: row.props.doc_id}) MERGE (c)-[:FROM_DOC]->(d) }
"""
UPSERT_ENTITIES: LiteralString = """
UNWIND $rows AS row
MERGE (e:Entity {mesh_id: row.mesh_id})
SET e.name = row.name, e.category = row.category, e.tree_numbers = row.tree_numbers,
    e.names_json = row.names_json
WITH e, row
WHERE NOT (size(labels(e)) = 1 + size(row.labels) AND all(l IN row.labels WHERE l IN labels(e)))
REMOVE e:$([l IN labels(e) WHERE l <> 'Entity'])
WITH e, row
SET e:$(row.labels)
"""
UPSERT_MENTIONS: LiteralString = """
UNWIND $rows AS row
MATCH (c:Chunk {chunk_id: row.chunk_id})
MERGE (e:Entity {mesh_id: row.mesh_id}) ON CREATE SET e.name = row.mesh_id, e.category = ''
WITH c, e, row
CALL (c, e, row) {
  MATCH (other:Entity)-[old:MENTIONED_IN {start: row.start, `end`: row.end}]->(c) WHERE other <> e DELETE old
}
MERGE (e)-[m:MENTIONED_IN {start: row.start, `end`: row.end}]->(c)
SET m.surface = row.surface, m.method = row.method, m.score = row.score
"""
LOCK_DOCUMENTS: LiteralString = "UNWIND $ids AS id MATCH (d:Document {doc_id: id}) SET d._lock = true REMOVE d._lock"
COMPLETE: LiteralString = """
UNWIND range(0, size($ids) - 1) AS i
MATCH (d:Document {doc_id: $ids[i]})
WITH i, d, d.status = 'complete' AS already
CALL (d, already) {
  OPTIONAL MATCH (c:Chunk {doc_id: d.doc_id}) WHERE NOT already
  RETURN count(CASE WHEN c.doc_hash = d.content_hash THEN 1 END) AS written,
         collect(CASE WHEN c.doc_hash <> d.content_hash THEN c.chunk_id END) AS stale
}
WITH i, d, already, written, stale WHERE already OR written >= d.n_chunks
SET d.status = 'complete'
RETURN d.doc_id AS doc_id, stale ORDER BY i
"""
DOC_CHUNKS: LiteralString = """
UNWIND $ids AS id MATCH (d:Document {doc_id: id})
OPTIONAL MATCH (c:Chunk {doc_id: id})
WITH d, c ORDER BY c.doc_hash, c.idx, c.chunk_id
RETURN d.doc_id AS doc_id, collect(c.chunk_id) AS chunk_ids
"""
DELETE_CHUNKS: LiteralString = """
UNWIND $ids AS id MATCH (c:Chunk {chunk_id: id})
OPTIONAL MATCH (e:Entity)-[:MENTIONED_IN]->(c)
WITH c, collect(DISTINCT e.mesh_id) AS ents
DETACH DELETE c
RETURN ents
"""
DELETE_ORPHANS: LiteralString = """
UNWIND $ids AS id MATCH (e:Entity {mesh_id: id}) WHERE NOT (e)-[:MENTIONED_IN]->()
DELETE e RETURN count(*) AS removed
"""
COUNTS: LiteralString = """
CALL () { MATCH (d:Document) RETURN count(CASE WHEN d.status = 'complete' THEN 1 END) AS documents,
                                     count(CASE WHEN d.status <> 'complete' THEN 1 END) AS documents_partial }
CALL () { MATCH (c:Chunk) RETURN count(c) AS chunks }
CALL () { MATCH ()-[m:MENTIONED_IN]->() RETURN count(m) AS mentions }
CALL () { MATCH (e:Entity) RETURN count(e) AS entities }
RETURN documents, documents_partial, chunks, mentions, entities
"""
SIGNATURE: LiteralString = """
CALL () { MATCH (c:Chunk) RETURN count(c) AS chunks }
CALL () { MATCH (e:Entity) RETURN count(e) AS entities }
CALL () { MATCH ()-[m:MENTIONED_IN]->() RETURN count(m) AS mentions }
CALL () { MATCH (d:Document) WHERE d.updated_at IS NOT NULL
          WITH d.updated_at AS at ORDER BY at DESC LIMIT 1 RETURN collect(at) AS at }
RETURN [chunks, entities, mentions] + at AS signature
"""
# a page of the incidence: the next $page chunks by chunk_id (index-ordered) with their mentions' entities
INCIDENCE_PAGE_QUERY: LiteralString = """
MATCH (c:Chunk) WHERE c.chunk_id > $after
WITH c ORDER BY c.chunk_id LIMIT $page
RETURN c.chunk_id AS chunk_id, [(e:Entity)-[:MENTIONED_IN]->(c) | e.mesh_id] AS mesh_ids
"""
INCIDENCE_PAGE = 20_000  # chunks per read transaction
GET_CHUNKS: LiteralString = """
UNWIND $ids AS id MATCH (c:Chunk {chunk_id: id})
OPTIONAL MATCH (d:Document {doc_id: c.doc_id})
RETURN c {.*} AS chunk, d.source_id AS source_id
"""
CHUNK_MENTIONS: LiteralString = """
MATCH (e:Entity)-[m:MENTIONED_IN]->(:Chunk {chunk_id: $id})
RETURN m.start AS start, m.`end` AS end, m.surface AS surface, e.mesh_id AS mesh_id, e.category AS category,
       m.method AS method, m.score AS score ORDER BY start, end
"""
CHUNK_ENTITIES: LiteralString = """
UNWIND $ids AS id MATCH (e:Entity)-[:MENTIONED_IN]->(:Chunk {chunk_id: id})
RETURN id, collect(DISTINCT e.mesh_id) AS mesh_ids
"""
# connecting evidence of two entities: chunks that mention both, and bridge entities
BOTH: LiteralString = """
MATCH (:Entity {mesh_id: $a})-[:MENTIONED_IN]->(c:Chunk)<-[:MENTIONED_IN]-(:Entity {mesh_id: $b})
RETURN DISTINCT c.chunk_id AS chunk_id ORDER BY chunk_id LIMIT $limit
"""
BRIDGES: LiteralString = """
MATCH (:Entity {mesh_id: $a})-[:MENTIONED_IN]->(:Chunk)<-[:MENTIONED_IN]-(x:Entity)
WHERE NOT x.mesh_id IN [$a, $b]
WITH DISTINCT x
WHERE EXISTS { (x)-[:MENTIONED_IN]->(:Chunk)<-[:MENTIONED_IN]-(:Entity {mesh_id: $b}) }
RETURN x.mesh_id AS mesh_id ORDER BY mesh_id LIMIT $limit
"""
NEIGHBOURS: LiteralString = """
UNWIND $sources AS sid
CALL (sid) {
  MATCH (s:Entity {mesh_id: sid})-[:MENTIONED_IN]->(c:Chunk)<-[:MENTIONED_IN]-(t:Entity) WHERE t <> s
  WITH t.mesh_id AS target, count(DISTINCT c) AS shared
  RETURN target, shared ORDER BY shared DESC, target ASC LIMIT $limit
}
RETURN sid, target, shared
"""
PROJECT: LiteralString = """
CALL gds.graph.project($graph, ['Entity', 'Chunk'], {MENTIONED_IN: {orientation: 'UNDIRECTED',
     aggregation: 'SINGLE', properties: {weight: {property: '*', aggregation: 'COUNT'}}}})
YIELD graphName RETURN graphName
"""
DROP_STALE: LiteralString = """
CALL gds.graph.list() YIELD graphName WHERE graphName STARTS WITH $prefix AND graphName <> $keep
CALL gds.graph.drop(graphName, false) YIELD graphName AS dropped RETURN dropped
"""
PPR_CALL: LiteralString = """
CALL gds.pageRank.stream($graph, {sourceNodes: nodes, dampingFactor: $damping, maxIterations: $iterations,
                                  tolerance: $tolerance, concurrency: $concurrency, relationshipWeightProperty: 'weight'})
YIELD nodeId, score
"""
PPR_TOP: LiteralString = """
ORDER BY score DESC
WITH gds.util.asNode(nodeId) AS n, score WHERE n:Chunk
RETURN n.chunk_id AS chunk_id, score LIMIT $top_k
"""
PPR_SEEDS: LiteralString = """
UNWIND $seeds AS seed
MATCH (s:Entity {mesh_id: seed.id}) WHERE EXISTS { (s)-[:MENTIONED_IN]->() }
"""
# one weight for every seed: one PageRank; else one per weight group, summed (PPR is linear in the seeds)
PPR_UNIFORM: LiteralString = (PPR_SEEDS + "WITH collect(s) AS nodes WHERE size(nodes) > 0" + PPR_CALL
                               + "WITH nodeId, score / size(nodes) AS score WHERE score > 0" + PPR_TOP)
PPR_WEIGHTED: LiteralString = (PPR_SEEDS + """
WITH seed.w AS w, collect(s) AS nodes
WITH collect({w: w, nodes: nodes}) AS groups, sum(w * size(nodes)) AS total
UNWIND groups AS g
CALL (g) { WITH g.nodes AS nodes""" + PPR_CALL + """RETURN nodeId, score }
WITH nodeId, total, sum(score * g.w) AS mass
WITH nodeId, mass / total AS score WHERE mass > 0""" + PPR_TOP)
PATHS: LiteralString = """
UNWIND $ids AS id MATCH (e:Entity)-[m:MENTIONED_IN]->(:Chunk {chunk_id: id})
WITH id, e, count(m) AS w
RETURN id, e.mesh_id AS mesh_id, w, COUNT { (e)-[:MENTIONED_IN]->() } AS degree
"""


# --- communities (medgraph.community): (:Entity)-[:MEMBER_OF]->(:Community)-[:PART_OF]->(:Community)
COMMUNITY_PREFIX = "medgraph_communities_"
COMMUNITY_SCHEMA: LiteralString = (
    "CREATE CONSTRAINT medgraph_community IF NOT EXISTS FOR (n:Community) REQUIRE n.community_id IS UNIQUE")
ENTITY_CHUNK_PAIRS: LiteralString = """
MATCH (e:Entity)-[m:MENTIONED_IN]->(c:Chunk)
RETURN e.mesh_id AS mesh_id, c.chunk_id AS chunk_id, count(m) AS n ORDER BY mesh_id, chunk_id
"""
# the co-occurrence graph, derived from MENTIONED_IN at projection time (weight = shared chunks)
COOC_PROJECT: LiteralString = """
MATCH (a:Entity)-[:MENTIONED_IN]->(c:Chunk)<-[:MENTIONED_IN]-(b:Entity) WHERE a.mesh_id < b.mesh_id
WITH a, b, count(DISTINCT c) AS shared WHERE shared >= $min_weight
WITH gds.graph.project($graph, a, b, {relationshipProperties: {weight: toFloat(shared)}},
                       {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.nodeCount AS nodes
"""
LEIDEN: LiteralString = """
CALL gds.leiden.stream($graph, {relationshipWeightProperty: 'weight', includeIntermediateCommunities: true,
                                randomSeed: $seed, concurrency: 1, gamma: $gamma, theta: $theta,
                                maxLevels: $max_levels})
YIELD nodeId, communityId, intermediateCommunityIds
RETURN gds.util.asNode(nodeId).mesh_id AS mesh_id, communityId AS community,
       intermediateCommunityIds AS levels
"""
DROP_COMMUNITIES: LiteralString = "MATCH (c:Community) DETACH DELETE c"
CREATE_COMMUNITIES: LiteralString = """
UNWIND $rows AS row CREATE (c:Community) SET c = row
"""
LINK_PARENTS: LiteralString = """
UNWIND $rows AS row WITH row WHERE row.parent_id IS NOT NULL
MATCH (c:Community {community_id: row.community_id}), (p:Community {community_id: row.parent_id})
MERGE (c)-[:PART_OF]->(p)
"""
LINK_MEMBERS: LiteralString = """
UNWIND $rows AS row
MATCH (e:Entity {mesh_id: row.mesh_id}), (c:Community {community_id: row.community_id})
MERGE (e)-[:MEMBER_OF]->(c)
"""
SET_COMMUNITY_META: LiteralString = "MERGE (b:CommunityBuild {name: 'last'}) SET b.meta_json = $meta"
COMMUNITY_META: LiteralString = "MATCH (b:CommunityBuild {name: 'last'}) RETURN b.meta_json AS meta"
COMMUNITIES: LiteralString = """
MATCH (c:Community)
WHERE ($level IS NULL OR c.level = $level) AND ($ids IS NULL OR c.community_id IN $ids)
WITH c ORDER BY c.level, c.size DESC, c.community_id SKIP $offset LIMIT $limit
RETURN c {.*} AS c, CASE WHEN $members THEN [(e:Entity)-[:MEMBER_OF]->(c) | e.mesh_id] END AS members
"""
COMMUNITY_LEVELS: LiteralString = """
MATCH (c:Community) RETURN c.level AS level, count(*) AS n ORDER BY level
"""
ENTITY_COMMUNITIES: LiteralString = """
UNWIND $ids AS id MATCH (:Entity {mesh_id: id})-[:MEMBER_OF]->(c:Community)
RETURN id, c.community_id AS community_id ORDER BY c.level, community_id
"""
