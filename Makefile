# Everything a fresh machine needs: `make demo` and `make test` create .venv, install, and run.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# three test processes (much of a test waits on a JVM, a server or a child process: two cores stay busy), each test
# module kept whole in one (its module-scoped tables and Spark work built once)
PYTEST_ARGS ?= -n 3 --dist loadfile --durations=25

.PHONY: demo test test-peer lint bench java-check jar jar-check browser s3a-jars hudi-peer clean

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

java-check:
	@$(PYTHON) tools/check_java.py

# the hudi-hive file index's jar, built from java/ with javac against the installed pyspark (cached by source hash
# and Spark version under ~/.cache/hive-bridge/jars; a session that needs it would otherwise build it at first use)
jar: $(STAMP) java-check
	$(BIN)/python -c "from hive_bridge.spark.jar import jar_path; print(jar_path())"

# headless Chromium and its driver for the HTML report's browser tests (Debian packages): installed once when
# missing and running as root; otherwise those tests skip and say why
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing chromium and chromium-driver (apt-get)"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			chromium chromium-driver >/dev/null; } || echo "could not install chromium: the browser tests will skip"; \
	else echo "chromium or chromedriver missing (not root): the browser tests will skip"; fi

# the same jar built against other pyspark installations: make jar-check PYSPARKS="/venvs/ps40/bin/python ..."
# (each a Python interpreter with that pyspark installed; tools/check_spark_jar.py)
jar-check: $(STAMP) java-check
	$(BIN)/python tools/check_spark_jar.py $(PYSPARKS)

# Hadoop's S3A connector (hadoop-aws and the AWS SDK v2 bundle it declares, versions pinned in tools/s3a_jars.py)
# for the tests reading tables on S3 through Spark's parquet reader: fetched once with Maven into .cache/jars/
# (git-ignored); a failed fetch is reported and those tests skip saying why (under CI they fail). Not for the demo.
s3a-jars:
	$(PYTHON) tools/s3a_jars.py

# Hudi's own Spark data source, the peer and test oracle of tests/hive_bridge/peer/ and bench_hudi_reader.py: a
# separate venv in .cache/hudi-peer/ with pyspark 3.5 (Hudi publishes no Spark 4 bundle) and Hudi's Spark 3.5 bundle
# fetched with Maven into .cache/jars/ (versions and checksum pinned in tools/hudi_peer.py; git-ignored, cached). A
# failed set-up is reported. Not for the demo, not in `make test` (Hudi's writes take minutes): `make test-peer` runs
# the peer's test module (marker `peer`).
hudi-peer:
	$(PYTHON) tools/hudi_peer.py

test-peer: $(STAMP) java-check jar hudi-peer
	$(BIN)/python -m pytest -m peer tests/hive_bridge/peer

demo: $(STAMP) java-check jar
	$(BIN)/hive-bridge demo

test: $(STAMP) java-check jar browser s3a-jars
	$(BIN)/python -m ruff check sarg hive_bridge tests benchmarks
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP) java-check
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
