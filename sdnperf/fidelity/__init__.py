"""Fidelity of a run: CPU use of processes and cores (the CPU-bound mark), environment record."""

from .cpu import CpuSampler
from .environment import collect as collect_environment

__all__ = ["CpuSampler", "collect_environment"]
