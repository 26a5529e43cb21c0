"""The re-rankers of a search: after fusion, each takes the hits and returns them re-ordered.

``Searcher.search`` runs them in order (``base.Reranker``, each reading the
search's ``base.RerankContext``):

    speaker       the turns of a speaker the question names gain
    time_boost    the hits that happened in the range named, or that tell a time, gain; cut to top_k
    lead_in       after the best hit of a "when" question, the turns before it that said when
    newer_first   of two contradicting memories, the newer first (not for a question about the past)
    budget        the hits in rank order within ``max_tokens``
"""
