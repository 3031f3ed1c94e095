"""The LLM judge in a sweep (`metric = "judge"`, `[sweep.judge]`): one judge call per answered trial,
through the judge model's own Caller (so it is cached in the run store like every call, and a rerun
sends nothing), its verdict and reply stored with the trial; the judge's calls in the dry-run estimate.

The prompt, the verdict's reading and the audit against a string metric are components/core/judge.py.
"""

from __future__ import annotations

from components.core.judge import judge_prompt, parse_verdict
from components.core.tokens import tokenizer
from components.providers.base import Settings
from components.providers.pricing import cost_usd

JUDGE_MAX_TOKENS = 8  # one word: CORRECT or INCORRECT
JUDGE_OUT = 3  # output tokens a verdict takes, for the estimate
ANSWER_GUESS = 24  # the answer's tokens, not known before the sweep (estimate.ANSWER_OUT)


def judges(config) -> bool:
    return getattr(config, "metric", None) == "judge" and getattr(config, "judge", None) is not None


def judge_key(config) -> dict:
    """The judge in a trial's key, only for a judged sweep: other keys stay as they were."""
    if not judges(config):
        return {}
    return {"judge": config.judge.label, "judge_base_url": config.judge.base_url or ""}


def judge_settings(config) -> Settings:
    """Greedy, short, the sweep's seed (the judge's own when it has one)."""
    seed = config.seed if config.judge.seed is None else config.judge.seed
    return Settings(max_tokens=config.judge.max_tokens or JUDGE_MAX_TOKENS, temperature=0.0, seed=seed)


async def judge_trial(trial, caller, config) -> str:
    """Ask the judge about one answered trial: its verdict (1, 0, or None when the reply is neither) and
    reply on the trial, the call's tokens and cost added to the trial's; the call's cache key."""
    prompt = judge_prompt(trial.question or "", list(trial.answers or ()), trial.raw_answer or "")
    completion, key = await caller.ask([{"role": "user", "content": prompt}], judge_settings(config))
    verdict = parse_verdict(completion.text)
    trial.judge = None if verdict is None else float(verdict)
    trial.judge_reply = completion.text
    trial.metric = "judge"
    trial.calls += 1
    trial.cached_calls += int(completion.cached)
    trial.input_tokens += completion.input_tokens
    trial.output_tokens += completion.output_tokens
    trial.latency_s += completion.latency_s
    spec = caller.spec
    cost = cost_usd(spec.provider, spec.model, completion.input_tokens, completion.output_tokens)
    trial.cost_usd = None if cost is None or trial.cost_usd is None else trial.cost_usd + cost
    return key


def judge_estimate(config, specs: list) -> tuple[int, int, int]:
    """(calls, input tokens, output tokens) the judge takes for these trials: one call each, its prompt
    counted with the question and references (the answer guessed at ANSWER_GUESS tokens)."""
    if not judges(config) or not specs:
        return 0, 0, 0
    count = tokenizer(config.encoding).count
    tin = sum(count(judge_prompt(s.task.question, list(s.task.answers), "")) + ANSWER_GUESS for s in specs)
    return len(specs), tin, len(specs) * JUDGE_OUT
