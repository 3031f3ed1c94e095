"""`litm prompt`: show the exact prompt(s) a strategy builds, with spans, for a document or a task.

    litm prompt --doc notes.pdf --question "..." --strategy rr --param r=5000 --param k=3 --json
    litm prompt --task tasks.jsonl --index 2 --strategy litm
"""

from __future__ import annotations

import json

from components.core.documents import Document, paginate
from components.core.loaders import read_path
from components.core.tokens import DEFAULT_ENCODING, ENCODINGS
from components.strategies import STRATEGIES, get_strategy


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(name, help="build a strategy's prompt(s) and show them with their spans",
                       description="Build the stage-1 prompt(s) of a strategy, with spans.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--doc", help="document file (.txt .md .pdf .docx .html)")
    src.add_argument("--task", help="task file (LITM QA/KV JSONL, our JSONL, CSV)")
    p.add_argument("--index", type=int, default=0, help="which task in --task (from 0; default 0)")
    p.add_argument("--question", help="the question (required with --doc; overrides the task's)")
    p.add_argument("--strategy", help=f"one of: {', '.join(STRATEGIES)} (default: baseline, kv for kv tasks)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="strategy parameter, e.g. r=10000 (repeatable)")
    p.add_argument("--pages", default="paragraph", help="with --doc: paragraph | sentence | tokens:N")
    p.add_argument("--gold", type=int, nargs="+", default=[], metavar="N", help="with --doc: gold page number(s)")
    p.add_argument("--encoding", default=DEFAULT_ENCODING, choices=ENCODINGS)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
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


def load_source(args) -> tuple[Document, str, str]:
    """(document, question, default strategy) from --doc or --task."""
    if args.doc:
        if not args.question or not args.question.strip():
            raise ValueError("--question is required with --doc")
        doc = paginate(read_path(args.doc), args.pages, args.encoding, name=args.doc)
        return doc.with_gold(args.gold), args.question, "baseline"
    if args.gold:
        raise ValueError("--gold goes with --doc; a task marks its own gold pages")
    from components.tasks.importers import read_tasks
    from components.tasks.sweepdocs import task_document

    tasks = read_tasks(args.task).tasks
    if not tasks:
        raise ValueError(f"{args.task}: no tasks could be read")
    if not 0 <= args.index < len(tasks):
        raise ValueError(f"--index {args.index} is outside 0..{len(tasks) - 1}")
    task = tasks[args.index]
    default = "kv" if task.kind == "kv" else "baseline"
    return task_document(task, args.encoding), args.question or task.question, default


def run(args) -> int:
    doc, question, default = load_source(args)
    strategy = get_strategy(args.strategy or default)
    prompts = strategy.first_prompts(doc, question, parse_params(args.param))
    if args.json:
        print(json.dumps({
            "strategy": strategy.name,
            "stages": strategy.stages,
            "pages": len(doc.pages),
            "gold": list(doc.gold),
            "document_tokens": doc.tokens,
            "prompts": [p.to_dict() for p in prompts],
        }, ensure_ascii=False))
        return 0
    print(f"{strategy.label} ({strategy.name}; {strategy.paper}): {len(doc.pages)} pages, "
          f"{doc.tokens:,} document tokens, gold {list(doc.gold) or 'none'}")
    for p in prompts:
        print(f"\n=== stage {p.stage}: {p.label} ({p.tokens:,} tokens) ===")
        print(p.text)
        print(f"--- spans ({len(p.spans)}) ---")
        for s in p.spans:
            where = f" page {s.page}" if s.page is not None else ""
            where += f" chunk {s.chunk}" if s.chunk is not None else ""
            print(f"{s.kind}{where}: chars {s.start_char}-{s.end_char}, tokens {s.start_token}-{s.end_token}")
    if strategy.stages > 1:
        print(f"\n(later stages depend on the model's answers; {strategy.stages} stages in all)")
    return 0
