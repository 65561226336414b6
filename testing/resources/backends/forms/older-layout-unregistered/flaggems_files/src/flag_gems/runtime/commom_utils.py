from enum import Enum


class vendors(Enum):
    NVIDIA = 0
    ACME = 1
