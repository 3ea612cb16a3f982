"""Detection documents: the ``wmstats.detect`` JSON decision document, the HTML report, and the colours of raw texts."""
