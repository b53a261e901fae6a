"""Turn a workload's `pairs` entry into concrete (src, dst) host pairs."""

from __future__ import annotations

import random
import re

from .basic_config import AllToOne, Pairs, Permutation


def _natural_key(name: str) -> list:
    # "h2" before "h10", so listings read the way people count hosts.
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def resolve_pairs(pairs: Pairs, host_names: list[str], seed: int) -> list[tuple[str, str]]:
    """Concrete (src, dst) pairs; raises ValueError naming any host the network lacks.

    - explicit list: as given;
    - all_to_one = H: every other host -> H, in natural host order;
    - permutation = N: a derangement (random permutation with no host sent to itself) of
      all hosts, drawn from `seed`; N of its pairs are taken. Each host therefore sends at
      most once and receives at most once. The same seed and hosts give the same pairs, so
      every architecture and repetition of a study sees identical traffic.
    """
    hosts = sorted(set(host_names), key=_natural_key)
    known = set(hosts)
    if isinstance(pairs, AllToOne):
        _require_known([pairs.all_to_one], known)
        return [(h, pairs.all_to_one) for h in hosts if h != pairs.all_to_one]
    if isinstance(pairs, Permutation):
        return _permutation_pairs(pairs.permutation, hosts, seed)
    resolved = [(str(src), str(dst)) for src, dst in pairs]
    _require_known([h for pair in resolved for h in pair], known)
    return resolved


def _require_known(names: list[str], known: set[str]) -> None:
    unknown = sorted({n for n in names if n not in known}, key=_natural_key)
    if unknown:
        sample = ", ".join(sorted(known, key=_natural_key)[:8])
        more = ", ..." if len(known) > 8 else ""
        raise ValueError(
            f"unknown host(s) in pairs: {', '.join(unknown)} "
            f"(the network has {len(known)} hosts: {sample}{more})"
        )


def _permutation_pairs(n: int, hosts: list[str], seed: int) -> list[tuple[str, str]]:
    if len(hosts) < 2:
        raise ValueError(f"permutation needs at least 2 hosts, the network has {len(hosts)}")
    if n > len(hosts):
        raise ValueError(
            f"permutation = {n} asks for more pairs than the {len(hosts)} hosts allow "
            f"(each host sends once)"
        )
    rng = random.Random(seed)
    targets = list(hosts)
    # Rejection sampling gives a uniform derangement; about e ~ 2.7 shuffles on average.
    while True:
        rng.shuffle(targets)
        if all(src != dst for src, dst in zip(hosts, targets)):
            break
    chosen = sorted(rng.sample(range(len(hosts)), n))
    return [(hosts[i], targets[i]) for i in chosen]
