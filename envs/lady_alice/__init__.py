"""Lady Alice: pure rules (:mod:`.rules`) and the AEC environment (:mod:`.env`)."""
