"""The multi-question design of "Context Overloading in RAG Based Systems" (seed 004, §4.1-4.4, §5.1, §5.3).

A sweep with `design = "multi-question"` builds, for each K in `contexts` and Q in `questions_per_context`,
`n` documents (default 1, as the paper ran it) of K SQuAD paragraphs with (up to) Q questions from each
(components.tasks.squad.multi_documents), and asks their K x Q questions with each multi-question strategy
(components.strategies.multiq: mq-full, mq-chunked, mq-keyword).

One trial per question, with its own row: task (the SQuAD question id), K, Q, which document, the
question's number, strategy, answer, scores (every answer metric, `mq_match` the paper's, and a
`category`). A prompt asks many questions, so its call is shared: each call is sent (and cached) once,
linked to every trial whose question it asked, and its calls, tokens, seconds and cost are HELD BY THE
FIRST QUESTION IT ASKED (the other trials of that call count 0 of it), so the trials' totals add up exactly
to what was sent. A question whose answer line is missing from the response is scored (0), not an
error: its answer is "", its parse_error names the missing line and its category is not_specified (the
model did not answer it). A call that fails makes every question it asked an error (for mq-chunked,
every question of the document, since each needs every chunk).

The plan (plan_multi), the groups of trials that share prompts (groups), running a group (run_group) and
the estimate (estimate_units) are here; components/run/{config,plan,runner,estimate}.py call them through
one small hook each.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from components.core import words
from components.core.metrics import answer_scores
from components.core.scoring import mq_category
from components.providers.base import ProviderError, cache_key
from components.run.caller import BudgetExceeded, Cancelled
from components.run.schema import Trial, key_of, model_fields, params_json
from components.run.trial import add_totals
from components.strategies import ParamError, get_strategy
from components.strategies.multiq import MULTI_QUESTION
from components.tasks.squad import MultiDocument, multi_documents

log = logging.getLogger(__name__)

DESIGN = "multi-question"
DESIGN_KEYS = ("design", "contexts", "questions_per_context", "n")
OUT_PER_QUESTION = 12  # estimated output tokens of one answer line ("A7: Denver Broncos")


def _int_list(s: dict, key: str, example: str, fail) -> tuple[int, ...]:
    values = s.get(key)
    if not isinstance(values, list) or not values:
        fail(f"{key} must be a non-empty list of whole numbers, e.g. {example}")
    for x in values:
        if isinstance(x, bool) or not isinstance(x, int) or x < 1:
            fail(f"every value of {key} must be a positive whole number, got {x!r}")
    if len(set(values)) != len(values):
        fail(f"{key} lists a value twice")
    return tuple(values)


def check_design(s: dict, fail) -> dict:
    """The [sweep] table's multi-question keys, checked (fail(message) raises); the SweepConfig fields."""
    if s.get("design") != DESIGN:
        given = s.get("design")
        fail(
            f'design must be "{DESIGN}" (or left out for a grid of lengths or documents), got {given!r}'
            if given is not None
            else f'contexts, questions_per_context and n are for design = "{DESIGN}"'
        )
    for key in ("lengths", "positions", "documents", "gold_index", "n_tasks"):
        if key in s:
            fail(f'design = "{DESIGN}" takes contexts (K) and questions_per_context (Q), not {key}')
    contexts = _int_list(s, "contexts", "[8, 16, 32]", fail)
    per = _int_list(s, "questions_per_context", "[5]", fail)
    n = s.get("n", 1)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        fail(f"n (documents for each K) must be a positive whole number, got {n!r}")
    strategies = s.get("strategies")
    if isinstance(strategies, list):
        other = [x for x in strategies if x not in MULTI_QUESTION]
        if other:
            fail(
                f'design = "{DESIGN}" asks many questions at once: its strategies are {", ".join(MULTI_QUESTION)}; '
                f"not {', '.join(map(str, other))}"
            )
    if s.get("mode", "live") != "live":
        fail(f'design = "{DESIGN}" runs live (mode = "live"); the batch mode is not available for it')
    if s.get("measure", "answer") != "answer":
        fail(f'design = "{DESIGN}" measures answers (measure = "answer")')
    return {"design": DESIGN, "contexts": contexts, "questions_per_context": per, "n": n}


@dataclass(frozen=True)
class MQSpec:
    """One planned trial of the design (shaped like run.plan.TrialSpec where the runner reads it)."""

    index: int
    key: str
    task: object  # components.tasks.model.Task
    strategy: str
    params: dict
    model: object  # run.config.ModelConfig
    contexts: int  # K
    per_context: int  # Q
    doc_index: int  # d, from 0
    number: int  # the question's number in the document (from 1)
    page: int  # its context's page (from 1)
    length: None = None
    position: None = None
    documents: None = None
    gold_index: None = None

    @property
    def cell(self) -> tuple:
        return (DESIGN, self.contexts, self.per_context, self.doc_index)


@dataclass
class Group:
    """The trials of one strategy setting, model and document: they share its prompts."""

    model: object
    strategy: str
    params: dict
    built: MultiDocument
    specs: list[MQSpec]  # every question of the document, in order
    todo: set[str] = field(default_factory=set)  # keys of the trials to write
    multi: bool = True  # what the runner's hook looks for


def mq_key(config, spec_task_id: str, k: int, q: int, d: int, strategy: str, params: dict, model) -> str:
    fields = {
        "task": spec_task_id,
        "design": DESIGN,
        "contexts": k,
        "questions_per_context": q,
        "document": d,
    }
    return key_of({**fields, "strategy": strategy, "params": params, **model_fields(config, model)})


def documents(config, tasks: list) -> dict[tuple[int, int], list[MultiDocument]]:
    """(K, Q) -> the n documents of the sweep."""
    return {
        (k, q): multi_documents(tasks, k, q, config.n or 1, encoding=config.encoding)
        for k in config.contexts
        for q in config.questions_per_context
    }


def plan_multi(config, tasks: list, docs: dict | None = None) -> list[MQSpec]:
    """Every trial in order: model, strategy, parameter setting, K, Q, document, question."""
    docs = documents(config, tasks) if docs is None else docs
    out: list[MQSpec] = []
    for model in config.models:
        for strategy in config.strategies:
            for params in config.params_for(strategy):
                for (k, q), built in docs.items():
                    for md in built:
                        for number, (task, page) in enumerate(zip(md.tasks, md.pages, strict=True), 1):
                            key = mq_key(config, task.id, k, q, md.index, strategy, params, model)
                            out.append(
                                MQSpec(
                                    len(out), key, task, strategy, params, model, k, q, md.index, number, page
                                )
                            )
    if len({s.key for s in out}) != len(out):
        raise ValueError(
            f"sweep {config.name!r}: two trials of the plan have the same key (a question asked "
            "twice in one document?)"
        )
    return out


def groups(config, tasks: list, specs: list[MQSpec], todo: list[MQSpec]) -> list[Group]:
    """The groups holding a trial still to run, in plan order (each runs whole: its calls come from the
    store when they were sent before)."""
    docs = documents(config, tasks)
    wanted = {s.key for s in todo}
    out: dict[tuple, Group] = {}
    for s in specs:
        gkey = (s.model.label, s.strategy, params_json(s.params), s.contexts, s.per_context, s.doc_index)
        g = out.get(gkey)
        if g is None:
            built = docs[(s.contexts, s.per_context)][s.doc_index]
            g = out[gkey] = Group(s.model, s.strategy, s.params, built, [])
        g.specs.append(s)
        if s.key in wanted:
            g.todo.add(s.key)
    return [g for g in out.values() if g.todo]


def _stamp(trial: Trial, spec: MQSpec, md: MultiDocument) -> None:
    trial.trial_key, trial.task, trial.question = spec.key, spec.task.id, spec.task.question
    trial.answers, trial.strategy, trial.params = (
        list(spec.task.answers),
        spec.strategy,
        params_json(spec.params),
    )
    trial.model, trial.metric = spec.model.label, get_strategy(spec.strategy).metric
    trial.contexts, trial.questions_per_context = spec.contexts, spec.per_context
    trial.mq_document, trial.question_number = spec.doc_index, spec.number
    doc = md.document
    trial.actual_length, trial.actual_position = doc.tokens, doc.offsets[spec.page - 1]
    trial.gold_pages = [spec.page]


def score_answer(trial: Trial, answer: str, answers) -> None:
    """The project's answer metrics, the paper's match (§4.2) and the category, of one parsed answer."""
    answers = list(answers)
    for column, value in answer_scores(answer, answers).items():
        setattr(trial, column, value)
    trial.category = mq_category(answer, answers)


async def run_group(group: Group, caller, config) -> list[tuple[Trial, list[str]]]:
    """Ask the group's prompts one after the other (§4.4: "made to run on the LLM sequentially") through
    the caller (the store's cache, limits, budget), read each question's answer, and return the trials
    to write with the keys of their calls. BudgetExceeded and Cancelled pass through (nothing written)."""
    strategy = get_strategy(group.strategy)
    md = group.built
    questions = [t.question for t in md.tasks]
    n = len(questions)
    fail_all: tuple[str, str] | None = None
    texts, completions, keys, errors = [], [], [], []
    plan = []
    try:
        plan = strategy.plan(md.document, questions, group.params)
        for ask in plan:
            try:
                completion, key = await caller.ask(
                    ask.prompt.messages, config.settings(group.model, ask.prompt.max_tokens)
                )
            except ProviderError as exc:
                texts.append(None), completions.append(None), keys.append(None)
                errors.append((str(exc) or exc.__class__.__name__, exc.kind))
                continue
            (
                texts.append(completion.text),
                completions.append(completion),
                keys.append(key),
                errors.append(None),
            )
        answered = strategy.combine(plan, texts, n)
    except (BudgetExceeded, Cancelled):
        raise
    except ParamError as exc:
        fail_all = (f"invalid parameters: {exc}", "params")
    except Exception as exc:  # a bug must not stop a sweep; every trial of the group records it
        log.debug("multi-question group failed", exc_info=True)
        fail_all = (f"{exc.__class__.__name__}: {exc}", "bug")
    out = []
    for spec in group.specs:
        if spec.key not in group.todo:
            continue
        i = spec.number - 1
        trial = Trial()
        _stamp(trial, spec, md)
        asked = [j for j, ask in enumerate(plan) if i in ask.questions]
        held = [
            completions[j]
            for j, ask in enumerate(plan)
            if fail_all is None and ask.questions and ask.questions[0] == i and completions[j] is not None
        ]
        add_totals(trial, held, group.model.spec)
        failed = [errors[j] for j in asked if errors[j] is not None] if fail_all is None else [fail_all]
        if failed:
            trial.error, trial.error_kind = failed[0]
        else:
            got = answered[i]
            trial.answer, trial.raw_answer, trial.parse_error = got.answer, got.line, got.error or None
            score_answer(trial, got.answer, spec.task.answers)
        out.append((trial, [keys[j] for j in asked if keys[j] is not None]))
    return out


def estimate_units(config, specs: list[MQSpec], store, done: set[str]):
    """(model, (calls, input tokens, output tokens), cached call rows) of each group with a trial not
    done: its prompts are all known before any answer (even mq-keyword's assignment), so calls and input
    tokens are exact; output is estimated at OUT_PER_QUESTION tokens an answer (at most max_tokens). A
    prompt the store holds, or one an earlier group of the sweep sends, counts as cached."""
    tasks = config.load_tasks()
    seen: set[str] = (
        set()
    )  # a prompt sent earlier in the sweep (K = 8 fits one chunk: three strategies, one prompt)
    for g in groups(config, tasks, specs, [s for s in specs if s.key not in done]):
        md = g.built
        try:
            plan = get_strategy(g.strategy).plan(md.document, [t.question for t in md.tasks], g.params)
        except ParamError:
            continue  # its trials will be errors
        calls = tin = tout = 0
        hits = []
        for ask in plan:
            settings = config.settings(g.model, ask.prompt.max_tokens)
            out = min(settings.max_tokens, OUT_PER_QUESTION * len(ask.questions))
            calls, tin, tout = calls + 1, tin + ask.prompt.tokens, tout + out
            key = cache_key(g.model.spec, ask.prompt.messages, settings)
            row = store.get_call(key) if store is not None else None
            if row is None and key in seen:  # the run answers it from the store by then
                row = {"input_tokens": ask.prompt.tokens, "output_tokens": out}
            seen.add(key)
            if row is not None:
                hits.append(row)
        yield g.model, (calls, tin, tout), hits


def describe(config) -> str:
    """The one-line summary `litm sweep` prints for the design."""
    arms = sum(len(config.params_for(s)) for s in config.strategies)
    n = config.n or 1
    return (
        f"sweep {config.name!r}: design {DESIGN}: {words.count(len(config.models), 'model')} x "
        f"{words.count(arms, 'strategy setting')} x K in {list(config.contexts)} x Q in "
        f"{list(config.questions_per_context)} x {words.count(n, 'document')} each"
    )
