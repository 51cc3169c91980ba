"""Elevenses: The Guilty Party: pure rules (:mod:`.rules`) and the AEC environment (:mod:`.env`)."""
