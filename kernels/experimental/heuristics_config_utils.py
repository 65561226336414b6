"""Generated operators pick their launch parameters themselves: no heuristics here."""

HEURISTICS_CONFIGS: dict[str, dict[str, object]] = {}
