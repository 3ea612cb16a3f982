"""The real-LM adapter: load a transformers model and tokenizer, its next-token probabilities, prompt sets and padded batches (needs the ``[torch]`` extra)."""
