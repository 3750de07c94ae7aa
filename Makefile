# Two commands for a fresh machine: `make run` and `make test` (see README).
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
# Django 6 needs Python 3.12+; take the first interpreter that is new enough.
PYTHON ?= $(shell for p in python3.13 python3.12 python3 $$HOME/.pyenv/versions/3.13*/bin/python \
	$$HOME/.pyenv/versions/3.12*/bin/python; do \
	$$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && command -v $$p && break; done)
# Every process `make test` and `make run` start (hundreds in a test run:
# web, workers, manage.py commands, test workers) imports Django and its
# libraries. With PYTHONDONTWRITEBYTECODE set in the shell, each compiled them
# from source again: 4.2 CPU-s for a manage.py command instead of 1.6. Here
# they are compiled once, into __pycache__ (ignored by git), and uv compiles
# the venv's as it installs it.
unexport PYTHONDONTWRITEBYTECODE
# The part of the suite that exercises production settings runs against these.
TEST_PG_PASSWORD := kmqadmin
TEST_DATABASE_URL ?= postgres://postgres:$(TEST_PG_PASSWORD)@127.0.0.1:5432/kmqadmin
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0
VENDOR := static/vendor
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Jars from Maven Central (jvm/*/pom.xml): Apache Kafka for the embedded broker,
# Spark's Kafka source for the pipeline's local session, and SoftwareMill kmq's
# Java client for the tests that run it against ours (tests/peers), ElasticMQ,
# the SQS server bench/sqs.py holds our SQS endpoint to, and Keycloak, the OIDC
# tests' identity provider.
JARS := .jars
# Maven 3.8 prints colour resets even with -q -B: its output goes to a log
# beside the jars, shown only when it fails (scripts/quiet).
MVN := scripts/quiet mvn -q -B

.PHONY: run test setup chaos sqs-conformance lint format deps services browser clients promtool java maven clean

run: deps
	$(BIN)/python manage.py kmq run

# The suite runs on TEST_WORKERS processes sharing one broker (tests/broker.py);
# tests/parallel.py keeps each JVM-starting fixture's tests on one of them, and
# hands the longest groups out first (hence --no-loadscope-reorder: xdist's
# own order is by test count). Five, on two cores: the suite's second half
# waits (on brokers, timeouts, redeliveries) more than it computes, and five
# take 18 minutes where three took 23 (issue 56).
# Every test's time is kept in .pytest_cache/junit.xml, to see where it goes.
# The production-settings part runs beside it (its own broker, PostgreSQL and
# Redis), its output kept until the suite is done; either failing fails.
TEST_WORKERS ?= 5
PRODUCTION_LOG := .pytest_cache/production.log
test: setup lint services browser clients promtool
	@mkdir -p .pytest_cache
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) \
		$(BIN)/pytest -m production -p no:cacheprovider >$(PRODUCTION_LOG) 2>&1 & production=$$!; \
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=20 \
		--junit-xml=.pytest_cache/junit.xml; suite=$$?; \
	wait $$production; production=$$?; cat $(PRODUCTION_LOG); \
	exit $$(( suite || production ))

# Not part of CI: the crash tests with 300 kills each, and the fuzz suite (tests/fuzz)
# with 200 random examples per test instead of `make test`'s few fixed ones; each
# prints its counts as JSON.
CHAOS_KILLS ?= 300
FUZZ_EXAMPLES ?= 200
chaos: deps
	KMQ_CHAOS_KILLS=$(CHAOS_KILLS) $(BIN)/pytest -s -q --timeout 0 2>/dev/null \
		tests/kmq/test_crashes.py tests/scheduler/test_crashes.py -k "mid_redelivery or while_firing"
	KMQ_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest -s -q --timeout 0 tests/fuzz \
		tests/sqs/test_hostile_requests.py

# Not part of CI (about ten minutes): moto's own SQS tests against the endpoint,
# compared with conformance/sqs/known_differences.txt; prints the counts as JSON.
sqs-conformance: deps
	conformance/sqs/run .pytest_cache/sqs-conformance

lint: deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: deps
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# PostgreSQL and Redis on loopback serve the production-settings part of the suite;
# installed from Debian's packages when missing, started when down.
APT_INSTALL := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q
services:
	@command -v pg_ctlcluster >/dev/null || { $(SUDO) apt-get update -q && $(APT_INSTALL) postgresql; }
	@command -v redis-server >/dev/null || { $(SUDO) apt-get update -q && $(APT_INSTALL) redis-server; }
	@pg_isready -q -h 127.0.0.1 -p 5432 || $(SUDO) pg_ctlcluster --skip-systemctl-redirect \
		$$(ls /etc/postgresql | sort -V | tail -1) main start
	@cd / && $(SUDO) su postgres -c "psql -q -c \"ALTER USER postgres PASSWORD '$(TEST_PG_PASSWORD)'\""
	@redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 || redis-server --daemonize yes \
		--bind 127.0.0.1 --port 6379 --save "" --appendonly no

# The SQS endpoint's clients in other languages (tests/sqs): the AWS SDK for
# JavaScript v3, from npm.
SQS_NODE := tests/sqs/node
clients: $(SQS_NODE)/node_modules/.installed

$(SQS_NODE)/node_modules/.installed: $(SQS_NODE)/package.json $(SQS_NODE)/package-lock.json
	npm ci --prefix $(SQS_NODE) --no-audit --no-fund
	touch $@

# The alerting rules (prometheus/alerts.yml) are checked and unit-tested with
# Debian's promtool (tests/test_alert_rules.py); the package brings the server too.
promtool:
	@command -v promtool >/dev/null || { $(SUDO) apt-get update -q && \
		$(APT_INSTALL) --no-install-recommends prometheus; }

# The browser tests drive Debian's chromium (Playwright cannot download one here).
browser:
	@test -x /usr/bin/chromium || { $(SUDO) apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q chromium; }

# The embedded Apache Kafka and PySpark run on a Java runtime; Maven fetches the jars;
# the tests compile kmq's peer program (jvm/kmq/src) with javac, hence the JDK.
java:
	@command -v java >/dev/null && command -v javac >/dev/null || { $(SUDO) apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q openjdk-17-jdk-headless; }

maven: java
	@command -v mvn >/dev/null || { $(SUDO) apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q maven; }

deps: $(VENV)/.installed $(VENDOR)/.installed $(JARS)/kafka/classes.jsa $(JARS)/spark/.installed \
	$(JARS)/kmq/.installed $(JARS)/schema-registry/.installed $(JARS)/elasticmq/.installed \
	$(JARS)/keycloak/.installed

# A fresh machine's set-up is mostly waiting on downloads and one-core builds:
# the Python, npm and Maven parts run side by side. The Maven builds stay one
# after another (each waits for the one before it, if that one has to run):
# they share ~/.m2, which Maven 3.8 does not lock. apt-get steps (services,
# browser, promtool) stay out of it: they share dpkg's lock.
SETUP_JOBS ?= 4
setup:
	@$(MAKE) --no-print-directory -j$(SETUP_JOBS) deps clients

$(JARS)/spark/.installed: | $(JARS)/kafka/.installed
$(JARS)/kmq/.installed: | $(JARS)/spark/.installed
$(JARS)/schema-registry/.installed: | $(JARS)/kmq/.installed
$(JARS)/elasticmq/.installed: | $(JARS)/schema-registry/.installed
$(JARS)/keycloak/.installed: | $(JARS)/elasticmq/.installed

$(JARS)/%/.installed: jvm/%/pom.xml | maven
	rm -rf $(@D)
	$(MVN) -f $< dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(@D)
	touch $@

# The tests' schema registry (jvm/schema-registry/pom.xml): Quarkus's build
# assembles a runnable Apicurio Registry, run as `java -jar` by tests/schema_registry.py.
$(JARS)/schema-registry/.installed: jvm/schema-registry/pom.xml \
		jvm/schema-registry/src/main/resources/application.properties | maven
	rm -rf $(@D)
	$(MVN) -f $< package -DskipTests -Dregistry.out=$(CURDIR)/$(@D)
	touch $@

# The OIDC tests' identity provider (jvm/keycloak/pom.xml): Keycloak's whole
# distribution, unpacked so that bin/kc.sh is at .jars/keycloak/bin/kc.sh, then
# built once here for its in-memory database. An unbuilt Keycloak rebuilds
# itself into lib/quarkus/ as it starts (some 20 s); tests/keycloak.py starts
# this build as it is (--optimized), so a run only reads the folder and test
# sessions running at once can share it.
$(JARS)/keycloak/.installed: jvm/keycloak/pom.xml | maven
	rm -rf $(@D)
	$(MVN) -f $< dependency:unpack -Dkeycloak.out=$(CURDIR)/$(@D)
	scripts/quiet $(@D)/bin/kc.sh build --db=dev-mem
	touch $@

# The embedded broker's class-data-sharing archive: one broker started and
# stopped, for every later one to start in two thirds of the CPU
# (kmqadmin/kafka/embedded/class_archive.py).
$(JARS)/kafka/classes.jsa: $(JARS)/kafka/.installed | $(VENV)/.installed
	$(BIN)/python -m kmqadmin.kafka.embedded.class_archive $(CURDIR)/$(@D) >/dev/null

# PYTHONWARNINGS: setuptools' "Editable installation" box warns of folders
# named like the package beside it, which a checkout has by design; it was the
# first thing a newcomer's log showed.
$(VENV)/.installed: pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: Python 3.12+ not found; set PYTHON=/path/to/python3.12"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check uv==0.13.9
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/uv pip install --quiet \
		--compile-bytecode --python $(BIN)/python -e '.[console,pipeline,dev]'
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci
	touch $@

# Third-party front-end files come from npm and are copied here, never committed.
$(VENDOR)/.installed: node_modules/.installed scripts/vendor-assets
	scripts/vendor-assets node_modules $(VENDOR)
	touch $@

clean:
	rm -rf $(VENV) node_modules $(SQS_NODE)/node_modules $(VENDOR) $(JARS) staticfiles
