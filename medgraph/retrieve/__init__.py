"""The query path, Ray-free: query analysis (``query``), graph retrieval (``ppr``), hybrid vector
retrieval and fusion (``retriever``, ``fusion``) and reranking (``rerank``)."""
