"""`litm prompt`: show the exact prompt(s) a strategy builds, with spans, for a document or a task.

    litm prompt --doc notes.pdf --question "..." --strategy rr --param r=5000 --param k=3 --json
    litm prompt --task tasks.jsonl --index 2 --strategy litm
    litm prompt --task tasks.jsonl --index 2 --length 4000 --position 0.5      # as a sweep builds it
    litm prompt --task nq.jsonl.gz --documents 20 --position 9 --strategy litm # LITM §3.1: gold at index 9
    litm prompt --task nq.jsonl.gz --all --strategy litm > prompts.jsonl       # one JSON line per task
    litm prompt --task nq.jsonl.gz --documents 20 --position 0 --attention --dummy-probe --json
        # Hsieh et al. 2024 §3: a fixed dummy document at each of the 20 positions, its attention at each

With --length/--position or --documents/--position the document is built exactly as a sweep builds
it (components.tasks.sweepdocs.cell_document): the same prompt a sweep would send.
"""

from __future__ import annotations

import json

from components.cli.common import DB_HELP, db_path
from components.core.cells import Cell
from components.core.documents import paginate
from components.core.loaders import read_path
from components.core.tokens import DEFAULT_ENCODING, ENCODINGS
from components.strategies import STRATEGIES, get_strategy


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(
        name,
        help="build a strategy's prompt(s) and show them with their spans",
        description="Build the stage-1 prompt(s) of a strategy, with spans.",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--doc", help="document file (.txt .md .pdf .docx .html)")
    src.add_argument("--task", help="task file (LITM QA/KV JSONL, our JSONL, CSV)")
    p.add_argument("--index", type=int, default=0, help="which task in --task (from 0; default 0)")
    p.add_argument("--all", action="store_true", help="with --task: every task, one JSON line each")
    p.add_argument("--length", type=int, help="with --task: build a sweep document of about N tokens")
    p.add_argument(
        "--documents",
        type=int,
        help="with --task: build N documents, the gold one at --position "
        "(0-based; -1 the last), as LITM §3.1",
    )
    p.add_argument("--by-index", action="store_true", help="(with --documents; says --position is an index)")
    p.add_argument(
        "--position",
        type=float,
        help="where the gold page goes: with --length, <= 1 a fraction "
        "of the length, > 1 tokens; with --documents, the 0-based index",
    )
    p.add_argument("--question", help="the question (required with --doc; overrides the task's)")
    p.add_argument("--strategy", help=f"one of: {', '.join(STRATEGIES)} (default: baseline, kv for kv tasks)")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="strategy parameter, e.g. r=10000 (repeatable)",
    )
    p.add_argument("--pages", default="paragraph", help="with --doc: paragraph | sentence | tokens:N")
    p.add_argument(
        "--gold", type=int, nargs="+", default=[], metavar="N", help="with --doc: gold page number(s)"
    )
    p.add_argument("--encoding", default=DEFAULT_ENCODING, choices=ENCODINGS)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument(
        "--attention",
        action="store_true",
        help="also measure where the model's last prompt token looks, by page (the bundled local model only)",
    )
    p.add_argument(
        "--model",
        default="local:default",
        metavar="PROVIDER:MODEL",
        help="with --attention: the model (default local:default, the bundled model)",
    )
    p.add_argument(
        "--dummy-probe",
        action="store_true",
        help="with --attention: the positional bias as Hsieh et al. 2024 §3 measure it, a fixed irrelevant "
        "document put in each position's place in turn (one call per position; the LITM QA prompt, as "
        "calibrated-attention probes it); prints the dummy's attention per position",
    )
    p.add_argument("--db", default=None, help="with --attention: " + DB_HELP)
    p.set_defaults(func=run)


def parse_params(items: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            raise ValueError(f"--param {item!r}: write NAME=VALUE, e.g. r=10000")
        try:
            out[name] = int(value.replace("_", "").replace(",", ""))
        except ValueError:
            raise ValueError(f"--param {name}: {value!r} is not a whole number") from None
    return out


def _cell(args) -> Cell | None:
    """The cell asked for, or None (the task's own pages)."""
    if args.by_index and args.documents is None:
        raise ValueError("--by-index needs --documents N")
    if args.length is not None and args.documents is not None:
        raise ValueError("give --length (tokens) or --documents (LITM), not both")
    if args.length is None and args.documents is None:
        if args.position is not None:
            raise ValueError("--position goes with --length or --documents")
        return None
    if args.position is None or args.position != args.position:  # NaN is not a position
        raise ValueError("--position is needed with --length or --documents (a number)")
    if args.documents is not None:
        if args.documents < 1 or args.position != int(args.position):
            raise ValueError("--documents must be positive and --position a whole index")
        i = int(args.position)
        j = i if i >= 0 else args.documents + i
        if not 0 <= j < args.documents:
            raise ValueError(f"--position {i} is not an index of {args.documents} documents")
        return Cell(documents=args.documents, gold_index=j)
    if args.length < 1 or args.position < 0:
        raise ValueError("--length must be positive and --position 0 or more")
    if args.position > 1 and args.position > args.length:
        raise ValueError(
            f"--position {args.position:g} tokens is past the end of a {args.length}-token document"
        )
    return Cell(length=args.length, position=args.position)


def task_prompts_source(args):
    """(tasks to show, every task of the file, cell)."""
    from components.tasks.importers import read_tasks

    if args.gold:
        raise ValueError("--gold goes with --doc; a task marks its own gold pages")
    ts = read_tasks(args.task)
    if ts.errors:
        import sys

        print(
            f"litm: {args.task}: {len(ts.errors)} row(s) could not be read and are left out "
            f"(first: line {ts.errors[0][0]}: {ts.errors[0][1]})",
            file=sys.stderr,
        )
    if not args.all and not 0 <= args.index < len(ts.tasks):
        raise ValueError(f"--index {args.index} is outside 0..{len(ts.tasks) - 1}")
    chosen = ts.tasks if args.all else [ts.tasks[args.index]]
    return chosen, ts.tasks, _cell(args)


def task_document_for(task, all_tasks, cell: Cell | None, encoding):
    """(the document a sweep builds for this task and cell, or the task's own pages (no cell); its pages'
    token offsets as the cell counts them: in a token cell, as R&R's prompt holds the pages, PAGE tags
    included (R&R §4.1's d: sweepdocs.Built.offsets), else of the pages' text)."""
    from components.tasks.sweepdocs import cell_document, file_position, task_document

    if cell is None:
        doc = task_document(task, encoding, file_index=file_position(task, all_tasks))
        return doc, doc.offsets
    built = cell_document(task, cell, encoding=encoding, tasks=all_tasks)
    return built.document, built.offsets


def record(strategy, doc, prompts, task=None, offsets=None) -> dict:
    offsets = doc.offsets if offsets is None else offsets
    out = {
        "strategy": strategy.name,
        "stages": strategy.stages,
        "pages": len(doc.pages),
        "gold": list(doc.gold),
        "document_tokens": offsets[-1],
        "gold_token_positions": [offsets[g - 1] for g in doc.gold],
        "prompts": [p.to_dict() for p in prompts],
    }
    if task is not None:
        out = {"task": task.id, **out}
    return out


def attention_spec(args):
    """The --model of an attention measurement; the one-line refusal for a provider that gives none."""
    from components.providers.attention import check_provider
    from components.providers.base import ModelSpec

    provider, sep, model = args.model.partition(":")
    if not sep or not provider or not model:
        raise ValueError(f"--model {args.model!r}: write PROVIDER:MODEL, e.g. local:default")
    check_provider(provider)
    return ModelSpec(provider, model)


def attend_all(args, prompts) -> list:
    """The attention by page of each prompt (providers/attention.py), every call cached in the run store."""
    import asyncio

    from components.providers.attention import regions_of
    from components.providers.factory import make_provider
    from components.run.caller import Caller
    from components.run.store import RunStore

    spec = attention_spec(args)

    async def each(caller):
        return [(await caller.attention(p.messages, regions_of(p)))[0] for p in prompts]

    with RunStore(db_path(args)) as store:
        return asyncio.run(each(Caller(make_provider(spec), store)))


def measure_attention(args, prompts) -> dict:
    """The attention by page of the one prompt (providers/attention.py), cached in the run store."""
    attention_spec(args)
    if args.all or len(prompts) != 1:
        raise ValueError("--attention measures one prompt: one task (no --all), a strategy of one prompt")
    return attend_all(args, prompts)[0].summary()


def dummy_probe(args, doc, question: str) -> dict:
    """Hsieh et al. 2024 §3's probe of the positional bias on this document: the fixed dummy document in each
    position's place in turn (strategies.attention: calibrated-attention's probe prompts, the same
    definition), its attention per position (dummy_reading: all layers, the last half, per token)."""
    from components.strategies.attention import DUMMY, CalibratedAttention, dummy_reading

    attention_spec(args)  # refused before any prompt is built or any call made
    if args.strategy not in (None, "litm", "calibrated-attention"):
        raise ValueError(
            "--dummy-probe measures the LITM QA prompt (as calibrated-attention does): leave out --strategy "
            "or use litm"
        )
    prompts = CalibratedAttention().probe_prompts(doc, list(doc.pages), question)
    found = attend_all(args, prompts)
    return {
        "model": found[0].model if found else "",
        "dummy": DUMMY.text,
        "documents": len(prompts),
        "method": "Hsieh et al. 2024 §3: the dummy document in each position's place, the rest as given; "
        "mass: its share of the last prompt token's attention over all layers; late: over the last half "
        "of the layers (§4); late_per_token: late over its tokens (what calibrated-attention subtracts)",
        "positions": [{"position": k, **dummy_reading(f)} for k, f in enumerate(found)],
    }


def print_text(strategy, doc, offsets, prompts, attention: dict | None) -> None:
    """The prompt(s) as text, with their spans (and the attention by page, when measured)."""
    tagged = f" ({doc.tokens:,} of text)" if offsets[-1] != doc.tokens else ""
    print(
        f"{strategy.label} ({strategy.name}; {strategy.paper}): {len(doc.pages)} pages, "
        f"{offsets[-1]:,} document tokens{tagged}, gold {list(doc.gold) or 'none'}"
    )
    for p in prompts:
        print(f"\n=== stage {p.stage}: {p.label} ({p.tokens:,} tokens) ===")
        print(p.text)
        print(f"--- spans ({len(p.spans)}) ---")
        for s in p.spans:
            where = f" page {s.page}" if s.page is not None else ""
            where += f" chunk {s.chunk}" if s.chunk is not None else ""
            print(f"{s.kind}{where}: chars {s.start_char}-{s.end_char}, tokens {s.start_token}-{s.end_token}")
    if attention is not None:
        print(f"--- attention of the last prompt token ({attention['model']}) ---")
        for row in attention["pages"]:
            print(f"page {row['page']}: {row['mass']:.4f}")
        print(f"other (instructions, question, template): {attention['other']:.4f}")
    if strategy.stages > 1:
        print(f"\n(later stages depend on the model's answers; {strategy.stages} stages in all)")


def run(args) -> int:
    params = parse_params(args.param)
    if args.attention and args.all:
        raise ValueError("--attention measures one prompt: leave out --all")
    if args.dummy_probe and not args.attention:
        raise ValueError("--dummy-probe goes with --attention")
    if args.doc:
        if args.all or args.length is not None or args.documents is not None:
            raise ValueError("--all, --length and --documents go with --task")
        if not args.question or not args.question.strip():
            raise ValueError("--question is required with --doc")
        doc = paginate(read_path(args.doc), args.pages, args.encoding, name=args.doc).with_gold(args.gold)
        strategy = get_strategy(args.strategy or "baseline")
        jobs = [(None, doc, doc.offsets, args.question.strip())]
    else:
        tasks, all_tasks, cell = task_prompts_source(args)
        jobs = [
            (
                t,
                *task_document_for(t, all_tasks, cell, args.encoding),
                args.question.strip() if args.question else t.question,
            )
            for t in tasks
        ]
        strategy = get_strategy(args.strategy or ("kv" if tasks[0].kind == "kv" else "baseline"))
    if args.all:
        for task, doc, offsets, question in jobs:
            prompts = strategy.first_prompts(doc, question, params)
            print(json.dumps(record(strategy, doc, prompts, task, offsets), ensure_ascii=False))
        return 0
    task, doc, offsets, question = jobs[0]
    if args.dummy_probe:
        probe = dummy_probe(args, doc, question)
        if args.json:
            print(json.dumps({"task": task.id if task else None, "dummy_probe": probe}, ensure_ascii=False))
            return 0
        print(f"--- the dummy document's attention at each position ({probe['model']}) ---")
        for row in probe["positions"]:
            print(
                f"position {row['position']}: {row['mass']:.4f} (last half of the layers {row['late']:.4f})"
            )
        return 0
    prompts = strategy.first_prompts(doc, question, params)
    attention = measure_attention(args, prompts) if args.attention else None
    if args.json:
        out = record(strategy, doc, prompts, task, offsets)
        if attention is not None:
            out["attention"] = attention
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print_text(strategy, doc, offsets, prompts, attention)
    return 0
