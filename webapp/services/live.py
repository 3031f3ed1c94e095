"""One live trial for the Playground: through components.run.runner.run_one, cached in the user's run
store (a repeated run is answered from the cache), its result as plain values for the page.

The run happens in the calling session's script thread (Streamlit gives every session its own), so
other sessions are never blocked; its inputs, result and errors live in that session's state only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from components.core.documents import Document
from components.providers.base import CallCancelled, ProviderError
from components.providers.localworker import LocalRun
from components.strategies import get_strategy
from webapp.services.engine import first_pages
from webapp.services.names import count
from webapp.services.stores import user_db

__all__ = ["CallCancelled", "LocalRun", "ProviderError", "RunView", "call_line", "execute", "local_queue"]


@dataclass
class RunView:
    """What the page shows after a run (plain values: safe to keep in session state)."""

    answer: str
    metric: str
    correct: bool | None
    gold: tuple[int, ...]
    retrieved: tuple[int, ...] | None
    cited: tuple[int, ...]
    calls: int
    input_tokens: int
    output_tokens: int
    latency_s: float
    usd: float | None
    model: str
    raw: list[tuple[str, str]] = field(default_factory=list)  # (prompt label, response text)
    notes: list[str] = field(default_factory=list)
    prompts: list = field(default_factory=list)  # every stage's prompt as sent (the map draws them all)
    first_pages: bool = False  # retrieval was just pages 1, 2, ..., k in order


def execute(
    doc: Document,
    question: str,
    answers: tuple[str, ...],
    strategy_name: str,
    params: dict,
    choice,
    on_call=None,
) -> RunView:
    """One trial, live, through components.run.runner.run_one, cached in the user's run store (a repeated
    run is answered from the cache). Raises ProviderError (e.g. MissingKey) or ParamError."""
    from components.run.runner import run_one
    from components.run.store import RunStore

    strategy = get_strategy(strategy_name)
    checked = strategy.check(doc, question, params)
    spec = choice.spec
    store = RunStore(user_db())
    try:
        result = run_one(
            doc,
            question,
            list(answers),
            strategy_name,
            checked,
            spec,
            store=store,
            api_key=choice.api_key,
            on_call=on_call,
        )
    finally:
        store.close()
    trial = result.trial
    if trial.error:  # a cancelled call stays cancelled: the page says so, without the error's red
        raise (CallCancelled if trial.error_kind == CallCancelled.kind else ProviderError)(trial.error)
    outcome = result.outcome
    raw = [
        (p.label or f"prompt {i + 1}", c.text)
        for i, (p, c) in enumerate(zip(outcome.prompts, outcome.completions, strict=False))
    ]
    # the verdict is the stored trial's own primary metric: the same value Results reads
    correct = None if not answers or trial.primary is None else bool(trial.primary)
    notes = [f"parse: {trial.parse_error}"] if trial.parse_error else []
    if trial.cached_calls:
        notes.append(f"{trial.cached_calls} of {count(trial.calls, 'call')} answered from the cache")
    return RunView(
        trial.answer,
        trial.metric,
        correct,
        tuple(doc.gold),
        trial.retrieved_pages,
        tuple(trial.cited_pages or ()),
        trial.calls,
        trial.input_tokens,
        trial.output_tokens,
        trial.latency_s,
        trial.cost_usd,
        spec.label,
        raw,
        notes,
        list(outcome.prompts),
        first_pages(trial.retrieved_pages),
    )


def call_line(prompt, completion, ahead: int = 0) -> str:
    """One progress line per call: before it is sent (with the local model's queue ahead of it, when
    other sessions are using it), and when its answer is back."""
    what = prompt.label or f"stage {prompt.stage}"
    if completion is None:
        queue = (
            f"; the local model has {count(ahead, 'run')} ahead of yours (it answers one "
            "at a time, for every session)"
            if ahead
            else ""
        )
        return f"{what}: sending {prompt.tokens:,} tokens, waiting for the model{queue}…"
    source = "from the cache" if completion.cached else f"in {completion.latency_s:.1f} s"
    return f"{what}: answered {source} ({completion.output_tokens:,} tokens out)."


def local_queue(spec) -> int:
    """Calls ahead of a new one on the local model, in the worker every session and sweep on this machine
    shares (0 for any other provider, and when no worker runs)."""
    if spec.provider != "local":
        return 0
    from components.providers.localworker import queue_length

    return queue_length(spec)
