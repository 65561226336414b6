from .heuristics_config_utils import HEURISTICS_CONFIGS

__all__ = ["HEURISTICS_CONFIGS"]
