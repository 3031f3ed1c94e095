"""Recent KV states of the local model, kept in memory, so a prompt that shares its start with one of the
last few (the answer moved, r changed, a strategy toggled and back, a run restarted) evaluates only the
rest, and the same prompt again evaluates nothing.

Runs in the model's own process (components/providers/localworker.py) with local.LocalProvider. What a
state holds (`Saved`): the prompt tokens whose KV cache it is (llama.cpp's `llama_state_seq_get_data` of
sequence 0: the cells, positions 0..n-1), how many of them lie in whole chunks of local.BATCH tokens (only
those may be kept as a prefix of another prompt: see local.keep_prefix) and, when the state was saved
right after a whole prompt was evaluated for generation, the logits of its last token (the same prompt
again then samples from them at once, as llama-cpp-python's generate does for a prompt it has just
evaluated). The bytes are copies of what llama.cpp computed, so a reused state gives the same numbers bit
for bit as evaluating the prompt whole.

The states are kept least recently used first, within a byte budget ($LITM_KV_CACHE_MB, default
DEFAULT_MB; 0 turns it off); a state larger than the budget is not kept.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

ENV_BUDGET = "LITM_KV_CACHE_MB"
DEFAULT_MB = 128  # 4 states of a 2,000-token prompt of Qwen2.5 0.5B (12 KB of KV a token, 26 MB a state)


def common_prefix_len(a: Sequence[int], b: Sequence[int]) -> int:
    """How many tokens two token lists share from their start."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def reusable(shared: int, chunked: int, batch: int) -> int:
    """Of `shared` tokens in common with a state whose first `chunked` tokens lie in whole chunks of `batch`
    tokens, how many may be kept: the shared part cut down to whole chunks."""
    n = min(shared, chunked)
    return n - n % batch


@dataclass(frozen=True)
class Saved:
    tokens: tuple[int, ...]  # the tokens whose KV cells `kv` holds, positions 0..len-1
    chunked: int  # of those, how many lie in whole chunks (a reusable prefix)
    kv: bytes  # llama_state_seq_get_data of sequence 0
    logits: bytes | None = None  # float32 logits after the last token (a whole prompt evaluated), else None

    @property
    def size(self) -> int:
        return len(self.kv) + len(self.logits or b"") + 8 * len(self.tokens)


def budget_bytes() -> int:
    value = os.environ.get(ENV_BUDGET, "").strip()
    try:
        mb = float(value) if value else DEFAULT_MB
    except ValueError:
        mb = DEFAULT_MB
    return max(0, int(mb * (1 << 20)))


class StateCache:
    """Saved states, least recently used first, their sizes summed at most `budget` bytes."""

    def __init__(self, budget: int | None = None):
        self.budget = budget_bytes() if budget is None else budget
        self.states: OrderedDict[tuple[int, ...], Saved] = OrderedDict()
        self.hits = 0  # states restored (a prefix or a whole prompt)

    @property
    def used(self) -> int:
        return sum(s.size for s in self.states.values())

    def __len__(self) -> int:
        return len(self.states)

    def put(self, saved: Saved) -> bool:
        """Keep a state (replacing one of the same tokens), dropping the least recently used ones to stay
        within the budget; False when it alone is larger than the budget (then nothing is dropped)."""
        if saved.size > self.budget:
            return False
        self.states.pop(saved.tokens, None)
        self.states[saved.tokens] = saved
        while self.used > self.budget:
            self.states.popitem(last=False)
        return True

    def exact(self, tokens: Sequence[int]) -> Saved | None:
        """The state of exactly this prompt with its last logits (nothing left to evaluate), else None."""
        saved = self.states.get(tuple(tokens))
        if saved is None or saved.logits is None:
            return None
        self.states.move_to_end(saved.tokens)
        return saved

    def best(self, tokens: Sequence[int], limit: int, batch: int) -> tuple[Saved | None, int]:
        """The state that lets the most of `tokens[:limit]` be kept, and how many tokens that is (0: none)."""
        head = tokens[:limit]
        found, most = None, 0
        for saved in self.states.values():
            n = reusable(common_prefix_len(saved.tokens, head), saved.chunked, batch)
            if n > most:
                found, most = saved, n
        if found is not None:
            self.states.move_to_end(found.tokens)
        return found, most

    def clear(self) -> None:
        self.states.clear()
        self.hits = 0
