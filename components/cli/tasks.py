"""`litm tasks`: generate task files, inspect them, and build sweep documents from them.

    litm tasks generate KIND --n N --seed S --out PATH [--param name=value ...] [--control PATH]
    litm tasks info PATH
    litm tasks build --task PATH --length D [D ...] --position X [X ...] [--by-index]
                     [--strategy NAME] [--n N] [--no-texts] --out PATH

`build` writes one JSON line per (task, length, position) with the requested and actual length and
position, the gold pages and their token positions, and the pages' texts; with --strategy also the
stage-1 prompt(s) that strategy would send. Positions <= 1 are fractions of the length, > 1 tokens
(R&R §4.1). With --by-index, length is the number of documents and position the 0-based gold index
("Lost in the Middle" §3.1). Distractors beyond a task's own come from the file's other passages.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from components.tasks.generators import KINDS, generate
from components.tasks.harder import GENERATORS as CONTROLLED
from components.tasks.importers import read_tasks, write_tasks
from components.tasks.sweepdocs import build_by_index, build_document, shared_pool


def add_parser(sub, name):
    p = sub.add_parser(name, help="generate, inspect and build task files")
    tsub = p.add_subparsers(dest="tasks_command", required=True, parser_class=type(p))

    g = tsub.add_parser("generate", help="write synthetic tasks as JSON lines")
    g.add_argument("kind", choices=KINDS)
    g.add_argument("--n", type=int, default=20, help="number of tasks (default 20)")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="generator parameter, e.g. pairs=140 (kv), paragraphs=40 (niah), distractors=29 (facts), "
        "hops=2 (latent), distance=2000 (spaced: tokens between the two facts), near_misses=8 (near-miss)",
    )
    g.add_argument("--out", required=True, help="output .jsonl (or .jsonl.gz)")
    g.add_argument(
        "--control",
        metavar="PATH",
        help=f"also write the literal control of the same tasks, built from the same facts ({', '.join(CONTROLLED)})",
    )
    g.set_defaults(func=run)

    i = tsub.add_parser("info", help="count the tasks in a file and list its bad rows")
    i.add_argument("path")
    i.set_defaults(func=run)

    d = tsub.add_parser(
        "distract",
        help="give each task retrieved distractors (LITM §2.1 style, BM25)",
        description="Write a Lost-in-the-Middle QA file (.jsonl or .jsonl.gz) in which every "
        "task has its gold passage first and then the N passages of OTHER tasks most "
        "relevant to its question (BM25), none holding one of its answers.",
    )
    d.add_argument("--task", required=True, help="task file (e.g. nq-open-oracle.jsonl.gz)")
    d.add_argument(
        "--distractors", type=int, required=True, help="distractors per task (e.g. 29 for 30 documents)"
    )
    d.add_argument("--n", type=int, help="only the first N tasks (all tasks stay in the distractor pool)")
    d.add_argument("--out", required=True)
    d.set_defaults(func=run)

    b = tsub.add_parser("build", help="build sweep documents (JSON lines with gold positions)")
    b.add_argument("--task", required=True, help="task file (any supported format)")
    b.add_argument(
        "--length",
        type=float,
        nargs="+",
        required=True,
        help="document length(s) in tokens (with --by-index: number of documents)",
    )
    b.add_argument(
        "--position",
        type=float,
        nargs="+",
        required=True,
        help="answer position(s): <= 1 a fraction of the length, > 1 tokens "
        "(with --by-index: 0-based gold index)",
    )
    b.add_argument(
        "--by-index", action="store_true", help="Lost in the Middle style: N documents, gold at index i"
    )
    b.add_argument("--strategy", help="also write this strategy's stage-1 prompt(s)")
    b.add_argument("--n", type=int, help="use only the first N tasks")
    b.add_argument("--encoding", default="cl100k_base")
    b.add_argument("--no-texts", action="store_true", help="leave the page texts out of the records")
    b.add_argument("--out", required=True)
    b.set_defaults(func=run)


def _params(pairs: list[str]) -> dict:
    out: dict[str, int | str] = {}
    for item in pairs:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--param must look like name=value, got {item!r}")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            out[name.strip()] = value
    return out


def _whole(x: float, what: str) -> int:
    if x != int(x):
        raise ValueError(f"{what} must be a whole number, got {x}")
    return int(x)


def run(args) -> int:
    cmd = args.tasks_command
    if cmd == "generate":
        return _generate(args)
    if cmd == "info":
        ts = read_tasks(args.path)
        kinds = sorted({t.kind for t in ts.tasks})
        print(
            f"{ts.source}: {len(ts.tasks)} tasks, format {ts.format}, kinds {', '.join(kinds)}; "
            f"{len(ts.errors)} bad rows"
        )
        for line, msg in ts.errors[:20]:
            print(f"  line {line}: {msg}")
        if ts.duplicates:
            from components.tasks.model import duplicates_text

            print(
                f"  duplicate task ids: {duplicates_text(ts.duplicates)} (a sweep refuses tasks that share an id)"
            )
        return 0
    if cmd == "distract":
        return _distract(args)
    return _build(args)


def _generate(args) -> int:
    params = _params(args.param)
    if args.control and args.kind not in CONTROLLED:
        raise ValueError(f"--control: {args.kind} has no literal control; {', '.join(CONTROLLED)} do")
    if "literal" in params and args.control:
        raise ValueError("--control writes the literal control itself: leave out --param literal")
    tasks = generate(args.kind, args.n, args.seed, **params)
    path = write_tasks(tasks, args.out)
    print(f"wrote {len(tasks)} {args.kind} tasks to {path}")
    if args.control:
        control = write_tasks(generate(args.kind, args.n, args.seed, **params, literal=1), args.control)
        print(f"wrote their literal control to {control}")
    return 0


def _distract(args) -> int:
    import gzip

    from components.tasks.distractors import litm_record, with_retrieved_distractors

    ts = read_tasks(args.task)
    tasks = with_retrieved_distractors(ts.tasks, args.distractors, limit=args.n)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    lines = "".join(json.dumps(litm_record(t), ensure_ascii=False) + "\n" for t in tasks).encode("utf-8")
    if out.suffix == ".gz":
        tmp.write_bytes(gzip.compress(lines, compresslevel=9, mtime=0))
    else:
        tmp.write_bytes(lines)
    tmp.replace(out)
    print(f"wrote {len(tasks)} tasks with {args.distractors} distractors each to {out}")
    return 0


def _build(args) -> int:
    ts = read_tasks(args.task)
    for line, msg in ts.errors[:5]:
        print(f"litm: {args.task} line {line}: {msg} (skipped)", file=sys.stderr)
    tasks = ts.tasks[: args.n] if args.n else ts.tasks
    pool = ts.pool or shared_pool(ts.tasks)
    strategy = None
    if args.strategy:
        from components.strategies import get_strategy

        strategy = get_strategy(args.strategy)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for task in tasks:
            for length in args.length:
                for position in args.position:
                    if args.by_index:
                        built = build_by_index(
                            task,
                            _whole(length, "--length"),
                            _whole(position, "--position"),
                            encoding=args.encoding,
                            pool=pool,
                        )
                    else:
                        built = build_document(
                            task, _whole(length, "--length"), position, encoding=args.encoding, pool=pool
                        )
                    rec = {
                        "task": task.id,
                        "kind": task.kind,
                        "question": task.question,
                        "answers": list(task.answers),
                        **built.to_record(texts=not args.no_texts),
                    }
                    if strategy is not None:
                        prompts = strategy.first_prompts(built.document, task.question, {})
                        rec["strategy"] = strategy.name
                        rec["prompts"] = [
                            {"stage": p.stage, "label": p.label, "tokens": p.tokens, "text": p.text}
                            for p in prompts
                        ]
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    n += 1
    tmp.replace(out)
    print(
        f"wrote {n} documents ({len(tasks)} tasks x {len(args.length)} lengths x {len(args.position)} "
        f"positions) to {out}"
    )
    return 0
