# swaycam: two commands on a fresh machine.
#   make run    set up what running needs, then run the main job on embedded defaults
#   make test   set up that and what the tests need, then run the test suite
# Set-up is idempotent, in two levels, each with its stamp in .venv/ (so `make test` after
# `make run` installs only the rest):
#   run   apt packages for running where missing (.ci/system-deps.sh run), a virtual environment
#         in .venv/, swaycam with its pinned dependencies (no dev extras), and the MediaPipe face
#         model (cached, sha256-verified)
#   test  that, plus the apt packages only the tests need (.ci/system-deps.sh test: Xvfb, Chromium,
#         chromium-driver, Node.js/npm, espeak-ng, sox), the dev extras (pytest, pytest-benchmark,
#         selenium, pytest-xdist) and the hand/pose landmarker models of --hands (assembled from
#         MediaPipe's npm packages, cached, sha256-verified: tracking/hand_model.py)
# The tests run on TEST_WORKERS pytest-xdist workers (auto: one per core; 0: one process), a
# file per worker at a time, the files holding a `slow` test first (tests/conftest.py), so the
# 2-minute soak and the matrix run beside the short files instead of after them.
# Before the workers start, tests/conftest.py compiles numba's kernels once (tests/kernel_warmup.py):
# on a fresh clone each worker and subprocess compiled them at the same time. Compiled kernels are
# kept per user in ~/.cache/swaycam/kernels/, named by their sources (avatars/kernel_cache.py), so
# another checkout of the same sources loads them instead of compiling (the warm-up: 37 s cold, 3 s warm).
# pip installs with --no-compile: Python writes the bytecode of what is imported on first import
# instead of pip compiling every file of every dependency (Ray, pyarrow, scipy...): 46 -> 32 s.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
RUN_STAMP  := $(VENV)/.swaycam-run
TEST_STAMP := $(VENV)/.swaycam-test
TEST_WORKERS ?= auto

.PHONY: setup setup-test run test bench clean-venv

setup: $(RUN_STAMP)
	@$(PY) -m tracking.face_model --ensure

setup-test: setup $(TEST_STAMP)
	@$(PY) -m tracking.hand_model --ensure

$(RUN_STAMP): pyproject.toml .ci/system-deps.sh
	@sh .ci/system-deps.sh run
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --upgrade pip
	@$(PY) -m pip install --quiet --no-compile -e .
	@touch $@

$(TEST_STAMP): $(RUN_STAMP)
	@sh .ci/system-deps.sh test
	@$(PY) -m pip install --quiet --no-compile -e '.[dev,cluster]'
	@touch $@

run: setup
	@$(VENV)/bin/swaycam run

test: setup-test
	@$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

bench: setup
	@$(VENV)/bin/swaycam bench all

clean-venv:
	rm -rf $(VENV)
