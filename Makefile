# Everyday tasks. `make setup` once on a fresh machine, then the others.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
KSC    := tools/ksc
# The official Kaitai runtimes (one folder per language) that the cross-language tests and the parser
# packages build against; the tests read it as RMQFORMATS_KAITAI_RUNTIMES. Without it they are skipped,
# with one line naming the folder (under CI they fail).
KAITAI_RUNTIMES ?= $(abspath ../shared/kaitai/runtimes)
export RMQFORMATS_KAITAI_RUNTIMES ?= $(KAITAI_RUNTIMES)

.PHONY: setup setup-docs docs setup-spark setup-spark-old test-spark-old setup-browser setup-toolchains targets-table dist dist-python dist-parsers generate test bench sample clean

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

# The toolchains of every Kaitai target that Debian packages (tests/targets/), for
# tests/test_targets.py: installs only the packages that are missing; needs root.
TOOLCHAINS := golang-go golang-golang-x-text-dev default-jdk-headless g++ cmake zlib1g-dev mono-mcs lua5.3 \
	lua-dkjson nim php-cli ruby perl rustc cargo librust-encoding-dev librust-flate2-dev librust-unicode-segmentation-dev
setup-toolchains:
	@missing=$$(for p in $(TOOLCHAINS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

# The language table (docs/guides/parser-packages.md), from the last full run of tests/test_targets.py.
targets-table: setup
	$(PY) tests/targets/table.py

# Ready-to-use parsers for every Kaitai language under dist/parsers/<language>/ (Go module, Java
# sources and jar, C++ with CMake, npm package, Rust crate, Ruby, PHP, Lua, Perl, Nim, C#, Python),
# compiled from formats/ with the pinned compiler; the jar needs javac and $(KAITAI_RUNTIMES)/java. A language
# that cannot be packaged here is left out and named (under CI, where CI is set, that fails the target).
dist-parsers: setup
	$(PY) -m rmqformats.codegen.dist --out dist/parsers --runtimes $(RMQFORMATS_KAITAI_RUNTIMES) $(if $(CI),--strict)


# Regenerate generated/ from formats/ (Kaitai Python, construct schemas, layouts).
generate: setup
	$(PY) -m rmqformats.codegen --out generated
	$(PY) -m rmqformats.versions.docs --out docs/formats.md

# The documentation site's tools: the docs extra (MkDocs, Material, mkdocstrings) and Debian's graphviz,
# which draws the layouts from the compiler's graphviz output (installed only when `dot` is missing; needs root).
setup-docs: setup $(VENV)/.installed-docs
	@command -v dot >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz; }

$(VENV)/.installed-docs: pyproject.toml
	$(PY) -m pip install --quiet -e '.[dev,docs]'
	touch $@

# The site in site/: the CLI reference, the layout pages and their diagrams are generated first
# (rmqformats.codegen.docsite), so they cannot drift; --strict fails on a broken link or a warning.
docs: setup-docs
	$(PY) -m rmqformats.codegen.docsite --out docs
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

# PYTEST_ARGS narrows the run (files, -k expressions); empty runs every test.
PYTEST_ARGS ?=
test: setup
	$(PY) -m pytest -q $(PYTEST_ARGS)

# Commit logs to Arrow against the floor, the baseline, Kaitai and the object API; consume queues;
# index lookups. Generates ~2.3 GB of data into benchmarks/data/ on the first run (reused later).
# The older benchmarks still run on their own: benchmarks/bench_commitlog.py, benchmarks/bench_index.py.
bench: setup
	$(PY) benchmarks/bench_columnar.py

# What the project hands out, in dist/: one target per kind of artifact.
dist: dist-python dist-parsers

# The sdist and the wheel built from it, from the files git tracks (tools/dist_python.py).
dist-python: setup
	$(PY) tools/dist_python.py --out dist

sample: setup
	$(VENV)/bin/rmqformats inspect --sample

clean:
	rm -rf $(VENV) $(VENV_OLD) $(KSC)/node_modules .pytest_cache
