"""Every language model behind one door (:func:`sims.lm.door.get_lm`): synthetic LMs with exact tables, and the real-LM adapter."""
