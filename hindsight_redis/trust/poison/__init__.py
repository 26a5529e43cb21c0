"""The signals of memory poisoning, by family (``trust.poisoning`` scans with them).

``signal`` (what a signal is, and the cheap test before its pattern), then one
module per move an attack makes: ``override`` (drop the reader's rules),
``markup`` (speak as the system), ``reader`` (address whoever reads the
memory), ``exfiltration`` (send data away, hide from the user), ``authority``
(claim a rank above the rules), ``actions`` (ask for what harms the user:
skip the safeguards, act without asking). Pure data and small grading
functions, no I/O; the patterns describe the moves, in English and Chinese,
not the words of any example.

``structure`` reads the same moves another way: from cues (``rule_cues``: the
reader, its rules, its goal; ``send_cues``: data that must not leave, where to;
``claim_cues``: a rank claimed, a frame drawn; ``hide_cues``: hiding from the
user, talk about attacks) that ``passage`` finds and that must meet in one
sentence, so that a phrasing no signal knows is held when its pieces are there,
and a sentence with one piece alone ("the admin password policy") is not.
"""
