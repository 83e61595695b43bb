# swaycam: two commands on a fresh machine.
#   make run    set everything up, then run the main job on embedded defaults
#   make test   set everything up, then run the test suite
# Set-up is idempotent: apt packages where missing, a virtual environment in .venv/,
# the pinned Python dependencies, and the MediaPipe face model (cached, sha256-verified).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.swaycam-installed

.PHONY: setup run test bench clean-venv

setup: $(STAMP)
	@$(PY) -m tracking.face_model --ensure

$(STAMP): pyproject.toml
	@sh .ci/system-deps.sh
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --upgrade pip
	@$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

run: setup
	@$(VENV)/bin/swaycam run

test: setup
	@$(PY) -m pytest -q

bench: setup
	@$(VENV)/bin/swaycam bench all

clean-venv:
	rm -rf $(VENV)
