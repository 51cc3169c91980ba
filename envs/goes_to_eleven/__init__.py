"""This Game Goes to Eleven: pure rules (:mod:`.rules`) and the AEC environment (:mod:`.env`)."""
