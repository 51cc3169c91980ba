"""6 Suspects: pure rules (:mod:`.rules`) and the AEC environment (:mod:`.env`)."""
