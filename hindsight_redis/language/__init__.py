"""Pure language rules, no I/O: what a text or a question says, in several languages.

``when`` (dates and relative times as ranges), ``answer_type`` (questions
that ask for a time or about the past, texts that tell one), ``facts``
(the checkable facts of a text, and whether two texts disagree; its Chinese
tables and patterns in ``chinese_values``),
``speaker`` (a chat turn's speaker label), ``stopwords``, ``tokens``
(tiktoken counts).
"""
