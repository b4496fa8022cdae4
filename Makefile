# Everyday tasks. `make setup` once on a fresh machine, then the others.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
KSC    := tools/ksc

.PHONY: setup setup-spark setup-spark-old test-spark-old setup-browser generate test bench sample dist dist-python clean

setup: $(VENV)/.installed $(KSC)/node_modules/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	# The editable install maps generated/, spark/ and formats/ into the package with an import hook,
	# which type checkers do not run: a path entry for the checkout lets mypy (and editors) find it.
	$(PY) -c 'import os, sysconfig; open(os.path.join(sysconfig.get_paths()["purelib"], "rmqformats-checkout.pth"), "w").write(os.getcwd() + "\n")'
	touch $@

$(KSC)/node_modules/.installed: $(KSC)/package.json $(KSC)/package-lock.json
	npm ci --prefix $(KSC) --no-audit --no-fund --loglevel=error
	touch $@

# The optional PySpark adapter (rmqformats.spark) and its tests need Spark 4, pyarrow and Java 17+.
setup-spark: setup
	$(PY) -m pip install --quiet -e '.[dev,spark]'

# The Spark tests again on the oldest Spark the README promises, in a virtualenv of its own.
SPARK_OLD    ?= 4.0.5
VENV_OLD     := .venv-spark-old
$(VENV_OLD)/.installed-$(SPARK_OLD): pyproject.toml
	$(PYTHON) -m venv $(VENV_OLD)
	$(VENV_OLD)/bin/python -m pip install --quiet --upgrade pip
	$(VENV_OLD)/bin/python -m pip install --quiet -e '.[dev,spark]' 'pyspark==$(SPARK_OLD)'
	touch $@

setup-spark-old: setup $(VENV_OLD)/.installed-$(SPARK_OLD)

test-spark-old: setup-spark-old
	$(VENV_OLD)/bin/python -m pytest -q tests/test_spark.py

# Headless Chromium from the OS packages, for the test that opens the store report in a browser
# (the test is skipped without it, except under CI). Installs only when missing; needs root.
setup-browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

# Regenerate generated/ from formats/ (Kaitai Python, construct schemas, layouts).
generate: setup
	$(PY) -m rmqformats.codegen --out generated
	$(PY) -m rmqformats.versions.docs --out docs/formats.md

test: setup
	$(PY) -m pytest -q

# Commit logs to Arrow against the floor, the baseline, Kaitai and the object API; consume queues;
# index lookups. Generates ~2.3 GB of data into benchmarks/data/ on the first run (reused later).
# The older benchmarks still run on their own: benchmarks/bench_commitlog.py, benchmarks/bench_index.py.
bench: setup
	$(PY) benchmarks/bench_columnar.py

# What the project hands out, in dist/: one target per kind of artifact.
dist: dist-python

# The sdist and the wheel built from it, from the files git tracks (tools/dist_python.py).
dist-python: setup
	$(PY) tools/dist_python.py --out dist

sample: setup
	$(VENV)/bin/rmqformats inspect --sample

clean:
	rm -rf $(VENV) $(VENV_OLD) $(KSC)/node_modules .pytest_cache
