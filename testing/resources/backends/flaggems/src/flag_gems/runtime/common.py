from enum import Enum


class vendors(Enum):
    NVIDIA = 0
    ACME = 1
    BETA = 2

    @classmethod
    def get_all_vendors(cls) -> dict:
        return {member.name.lower(): member for member in cls}
