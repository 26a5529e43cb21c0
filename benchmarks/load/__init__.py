"""The load benchmark (``run``): its agents (``agents``), the audit of every write (``audit``),
the tables and the plot (``report``)."""
