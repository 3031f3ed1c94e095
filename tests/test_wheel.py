"""The package installs from a wheel and works outside the checkout: `python -m build` makes the sdist
and, from it, the wheel; the wheel goes into a fresh venv in a temporary folder; from another folder,
with a fresh HOME and no PYTHONPATH, `litm sweep` runs a bundled config with the local model, resumes
a shipped run from a copy of its store, and `litm app` serves the app: Home, the Lesson and Results draw
their curves in chromium (Results: the shipped runs' curves).

Speed: the fresh venv is made without pip and gets the wheel with `pip install --no-deps`; its
dependencies (streamlit, pandas, llama-cpp-python, ...) come from this test venv's site-packages,
named by a .pth file, so nothing is downloaded or compiled and the test takes about a minute. A .pth
line only adds a folder to sys.path (the editable install's finder in that folder is not run), so
`components`, `webapp` and `sample_docs` can only come from the wheel: the test checks where they are
imported from. `python -m build` itself makes its isolated build venv as usual (pip installs
setuptools into it from its cache, or the registry).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.appserver import CHROMIUM, CHROMIUM_ARGS, free_port, wait_healthy

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.wheel, pytest.mark.timeout(900)]


def sh(args, **kw) -> subprocess.CompletedProcess:
    out = subprocess.run(args, capture_output=True, text=True, **kw)
    assert out.returncode == 0, (
        f"{args[:4]} exited {out.returncode}:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    )
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv bin folder, a folder outside the checkout, the environment to run in)."""
    tmp = tmp_path_factory.mktemp("wheel")
    built = sh([sys.executable, "-m", "build", "--outdir", str(tmp / "dist"), str(ROOT)], timeout=600)
    (tmp / "build.log").write_text(built.stdout + built.stderr)
    wheels = list((tmp / "dist").glob("litm_explorer-*.whl"))
    sdists = list((tmp / "dist").glob("litm_explorer-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    venv = tmp / "venv"
    sh([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    purelib = Path(
        sh([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    )
    (purelib / "litm_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    sh(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-deps",
            str(wheels[0]),
        ],
        timeout=300,
    )
    away, home = tmp / "elsewhere", tmp / "home"
    away.mkdir()
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "LITM_DB", "LITM_SHIPPED_RUNS", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
    }
    # HOME is fresh (the run store goes there); the local model's joined weights are reused from the cache
    env.update(HOME=str(home), XDG_CACHE_HOME=os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache")))
    env.pop("XDG_DATA_HOME", None)
    return venv / "bin", away, env, purelib


def test_the_packages_and_their_data_come_from_the_wheel(installed):
    bin_, away, env, purelib = installed
    code = (
        "import components, webapp.serve, sample_docs\n"
        "from components.core.resources import sample_path, package_path\n"
        "from components.tasks.samples import list_samples, list_task_sets, bundled_configs\n"
        "from components.run.store import shipped_paths\n"
        "print(components.__file__); print(webapp.serve.__file__); print(sample_docs.__file__)\n"
        "print(len(list_samples()), len(list_task_sets()), len(shipped_paths()), sorted(bundled_configs()))\n"
        "print(package_path('data', 'published_results.csv').is_file())\n"
        "from pathlib import Path; print((Path(webapp.serve.__file__).parent / 'assets' / 'icon.png').is_file())\n"
    )
    lines = sh([str(bin_ / "python"), "-c", code], cwd=away, env=env).stdout.splitlines()
    for line in lines[:3]:
        assert line.startswith(str(purelib)), line  # not the checkout
    samples, task_sets, shipped, configs = lines[3].split(" ", 3)
    assert int(samples) == len(list((ROOT / "sample_docs").glob("*.txt")))
    assert int(task_sets) == len(list((ROOT / "sample_docs" / "tasks").glob("*.jsonl*")))
    assert int(shipped) == len(list((ROOT / "sample_docs" / "runs").glob("*.sqlite")))
    assert "quick-local" in configs and "local-qwen-facts" in configs
    assert lines[4] == "True"
    assert lines[5] == "True"  # the app's own page icon


def test_the_build_prints_no_warning_of_the_projects_own(installed):
    """setuptools says nothing about the project's configuration (a licence table, data folders left out
    of `packages`) while it builds the sdist and the wheel; the wheel carries the licence text."""
    _, away, _, purelib = installed
    log = (away.parent / "build.log").read_text()
    assert "Successfully built" in log
    # (distutils' lower-case "warning: ... byte-compiling is disabled" comes from PYTHONDONTWRITEBYTECODE)
    noise = [
        line
        for line in log.splitlines()
        if re.search(r"^\s*WARNING|Warning:|[Dd]eprecat|is absent from", line)
    ]
    assert not noise, noise
    assert list(purelib.glob("litm_explorer-*.dist-info/licenses/LICENSE"))


def sweep_toml(text: str) -> str:
    """The README's example sweep (its first TOML block)."""
    return re.search(r"```toml\n(.*?)```", text, re.S).group(1)


def test_the_readmes_sweep_example_runs_from_any_folder(installed):
    """The README's sweep names its bundled task set by the bare name, which the wheel resolves anywhere;
    a path that is not there gets one line naming the bundled task sets."""
    bin_, away, env, _ = installed
    example = sweep_toml((ROOT / "README.md").read_text(encoding="utf-8"))
    assert 'tasks = "nq-open-30docs.jsonl.gz"' in example
    (away / "demo.toml").write_text(example)
    out = sh([str(bin_ / "litm"), "sweep", "demo.toml", "--dry-run"], cwd=away, env=env)
    assert "trials" in out.stdout and "to send" in out.stdout, out.stdout
    (away / "moved.toml").write_text(example.replace('"nq-open-30docs', '"sample_docs/tasks/nq-open-30docs'))
    bad = subprocess.run(
        [str(bin_ / "litm"), "sweep", "moved.toml", "--dry-run"],
        cwd=away,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1 and bad.stdout == "", (bad.stdout, bad.stderr)
    assert bad.stderr.startswith(
        "litm: no such file: sample_docs/tasks/nq-open-30docs.jsonl.gz; bundled task "
        "sets: facts-multihop.jsonl, facts.jsonl, "
    ), bad.stderr
    assert "nq-open-30docs.jsonl.gz, " in bad.stderr and bad.stderr.endswith(" (use the bare name)\n")
    assert len(bad.stderr.splitlines()) == 1


def test_litm_sweep_runs_a_bundled_config_with_the_local_model(installed):
    pytest.importorskip("llama_cpp")
    bin_, away, env, _ = installed
    out = sh([str(bin_ / "litm"), "sweep", "quick-local", "--quiet"], cwd=away, env=env, timeout=600)
    assert "trials 2/2 (ran 2, already present 0), errors 0, calls sent 2" in out.stdout
    again = sh([str(bin_ / "litm"), "results", "--sweep", "quick-local"], cwd=away, env=env)
    assert len(again.stdout.strip().splitlines()) == 3  # header + 2 trials, in the default store under HOME
    assert (Path(env["HOME"]) / ".local" / "share" / "litm-explorer" / "litm.sqlite").is_file()


def test_a_shipped_run_resumes_from_a_copy_of_its_store(installed):
    pytest.importorskip("llama_cpp")
    bin_, away, env, purelib = installed
    copy = away / "facts.sqlite"
    shutil.copy(purelib / "sample_docs" / "runs" / "local-qwen-facts.sqlite", copy)
    out = sh(
        [str(bin_ / "litm"), "sweep", "local-qwen-facts", "--db", str(copy), "--quiet"], cwd=away, env=env
    )
    assert "trials 300/300 (ran 0, already present 300), errors 0, calls sent 0" in out.stdout


def test_litm_app_serves_the_shipped_curves(installed):
    bin_, away, env, _ = installed
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no chromium at {CHROMIUM}")
    sync_api = pytest.importorskip("playwright.sync_api")
    port = free_port()
    proc = subprocess.Popen(
        [str(bin_ / "litm"), "app", "--port", str(port)],
        cwd=away,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(f"{url}/_stcore/health", proc, timeout=120)
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as r:
            assert r.read() == b"ok"
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            seen = {}
            shipped_run = urllib.parse.quote_plus("shipped local-qwen-nq-litm20#1")
            # Home (the root), the Lesson's first step, Results (it opens on the newest sweep of the user's
            # store, when a test above ran one) and Results on the shipped LITM run by a link
            for path in ("", "lesson", "results", f"results?sweep={shipped_run}"):
                page.goto(f"{url}/{path}")
                page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
                page.wait_for_selector(".js-plotly-plot .scatterlayer .trace", timeout=60_000)
                seen[path] = page.inner_text("body") + "\n".join(
                    page.locator(".js-plotly-plot .legendtext").evaluate_all(
                        "els => els.map(e => e.textContent)"
                    )
                )
            browser.close()
        # Home: the shipped run's curve beside the published one
        # a legend entry may break its line ('this app<br>n=150 per point': textContent joins the lines)
        per_point = re.compile(r"this app(?: · |\s*)n=(\d+) per point")
        assert per_point.search(seen[""]) and "LITM Table 6" in seen[""], seen[""][-600:]
        assert "Lost in the Middle, Table 6" in seen["lesson"]  # the Lesson's published curves
        text = seen[f"results?sweep={shipped_run}"]
        assert "shipped" in text and "local-qwen-nq" in text  # the shipped runs, read from the wheel
        assert "20 documents · this app" in text and per_point.search(
            text
        )  # a shipped curve's legend: the NQ run
        for shown in seen.values():
            assert "Traceback" not in shown and "Something went wrong" not in shown
    finally:
        proc.terminate()
        proc.wait(timeout=20)
