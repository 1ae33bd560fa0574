"""The userData parts families share: problems (:mod:`.problems`), MIME (:mod:`.mime`), taints
(:mod:`.taints`) and the checks that hold for every family (:mod:`.common`)."""
