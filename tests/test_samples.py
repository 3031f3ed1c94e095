import json

import pytest

from components.core.documents import find_pages, paginate
from components.core.tokens import tokenizer
from components.tasks.importers import read_tasks
from components.tasks.samples import list_samples, list_task_sets


def test_samples_have_questions_answered_in_exactly_one_paragraph():
    samples = list_samples()
    assert len(samples) >= 3
    for s in samples:
        assert s.source == "written for LITM Explorer" and s.title and s.description
        doc = paginate(s.text, "paragraph")
        assert 1800 <= doc.tokens <= 15000, (s.name, doc.tokens)
        assert len(s.questions) >= 4
        where = []
        for question, answers in s.questions:
            pages = find_pages(doc, answers[0])
            assert len(pages) == 1, (s.name, question, answers[0], pages)
            where.append(pages[0] / len(doc.pages))
        # spread over the beginning, middle and end
        assert min(where) < 0.34 and max(where) > 0.66 and any(0.25 < w < 0.75 for w in where)


def test_task_sets_listed_and_readable():
    sets = {t.name: t for t in list_task_sets()}
    for name in ("facts", "facts-multihop", "kv", "niah"):
        assert name in sets and sets[name].description
    assert sets["facts"].n >= 100
    for info in sets.values():
        ts = read_tasks(info.path)
        assert len(ts.tasks) == info.n and not ts.errors


def test_haystack_is_long_and_free_of_digits():
    from components.tasks.haystack import HAYSTACK_PATH, haystack_paragraphs

    text = HAYSTACK_PATH.read_text(encoding="utf-8")
    assert len(text.split()) >= 14000
    assert not any(ch.isdigit() for ch in text)  # 7-digit needle values stay unique
    assert "magic number" not in text and "pass key" not in text
    assert len(haystack_paragraphs()) > 100
    assert sum(tokenizer().count_many(list(haystack_paragraphs()))) > 15000


def test_sidecars_are_valid_json():
    for s in list_samples():
        meta = json.loads(open(s.path[:-4] + ".json", encoding="utf-8").read())
        assert {"title", "description", "source", "questions"} <= set(meta)


def test_a_bundled_sweep_config_is_found_by_name_from_any_folder(tmp_path, monkeypatch):
    from components.core.resources import sample_path
    from components.tasks.samples import bundled_configs, config_path

    monkeypatch.chdir(tmp_path)
    assert config_path("quick-local") == sample_path("configs", "quick-local.toml")
    assert config_path("local-qwen-facts.toml") == sample_path("runs", "local-qwen-facts.toml")
    own = tmp_path / "quick-local.toml"  # a file of that name in the current folder wins
    own.write_text("[sweep]\n")
    assert config_path("quick-local.toml").resolve() == own
    with pytest.raises(FileNotFoundError, match="bundled config .*quick-local"):
        config_path("nope")
    assert set(bundled_configs()) >= {"quick-local", "local-qwen-facts", "local-qwen-nq-litm"}
