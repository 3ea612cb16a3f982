"""Detection, in sub-rooms lowest first: stats -> anytime -> multiple (keys, texts) -> families (and their detectors) -> documents."""
