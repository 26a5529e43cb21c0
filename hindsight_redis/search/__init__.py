"""A search of a namespace: the query analysed once, the legs, fusion, the re-rankers.

``searcher`` (the legs in one round trip, fusion, the hits), ``query``
(keyword terms and the legs' commands), ``ranking`` (fusion), ``term_stats``
(which terms select), and the re-rankers of time and conflicts.
"""
