# Openloop. The README names two commands: `make run` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := run

VENV          := .venv
# What `make run` needs on the emulator: moto, in .venv/ (in memory it needs nothing of these).
RUN_TOOLS     := 'moto[server]==5.2.5'
# What `make test` adds: the template's linter, the OpenAPI validator and the property-based
# API tester (they check the served document).
TEST_TOOLS    := 'cfn-lint==1.58.0' 'openapi-spec-validator==0.9.0' 'schemathesis==4.32.5'
EMULATOR      ?= moto
RUN_PORT      ?= 4566
TEST_PORT     ?= 4599
export AWS_ENDPOINT_URL ?= http://127.0.0.1:$(RUN_PORT)
export AWS_REGION       ?= us-east-1
export CARGO_TERM_COLOR ?= never

.PHONY: run test lint bench build deploy demo pictures emulator stop-emulator tools run-tools test-tools browser spamassassin clean openapi

# Each stamp holds the list it installed: a venv made before a tool was added gets it too.
$(VENV)/.run-installed: FORCE
	@[ -f $@ ] && [ "$$(cat $@)" = "$(RUN_TOOLS)" ] || { \
	  [ -x $(VENV)/bin/pip ] || python3 -m venv $(VENV) || { echo "make run needs Python 3 with venv (Debian: apt-get install python3-venv)" >&2; exit 1; }; \
	  $(VENV)/bin/pip install --quiet --disable-pip-version-check $(RUN_TOOLS) && echo "$(RUN_TOOLS)" > $@; }
$(VENV)/.test-installed: $(VENV)/.run-installed FORCE
	@[ -f $@ ] && [ "$$(cat $@)" = "$(TEST_TOOLS)" ] || { \
	  $(VENV)/bin/pip install --quiet --disable-pip-version-check $(TEST_TOOLS) && echo "$(TEST_TOOLS)" > $@; }

# The IaC scanner, in a venv of its own (its dependencies would move moto's and cfn-lint's).
CHECKOV       := 'checkov==3.3.30'
$(VENV)/checkov/.installed: FORCE
	@[ -f $@ ] && [ "$$(cat $@)" = "$(CHECKOV)" ] || { \
	  python3 -m venv $(VENV)/checkov && \
	  $(VENV)/checkov/bin/pip install --quiet --disable-pip-version-check $(CHECKOV) && echo "$(CHECKOV)" > $@; }

FORCE:

## run-tools: what make run needs (moto, in .venv/). test-tools: what make test adds — the
## Python tools (cfn-lint, openapi-spec-validator, schemathesis, and checkov in a venv of its
## own); for the dashboard's browser
## test, Debian's chromium and chromium-driver; for the mail check, Debian's spamassassin
## (Apache SpamAssassin 4 with its shipped rules) — installed with apt-get where missing and
## allowed (root with apt); otherwise it says what to install.
run-tools: $(VENV)/.run-installed
test-tools: $(VENV)/.test-installed $(VENV)/checkov/.installed browser spamassassin
tools: run-tools test-tools

browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null || \
	      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; }; \
	  else echo "make test's browser check of the dashboard needs Chromium and its WebDriver on PATH (chromium, chromedriver): on Debian or Ubuntu, sudo apt-get install chromium chromium-driver" >&2; exit 1; fi; }

spamassassin:
	@command -v spamassassin >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq spamassassin >/dev/null || \
	      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq spamassassin >/dev/null; }; \
	  else echo "make test's mail check scores Openloop's mail with Apache SpamAssassin 4 (spamassassin on PATH): on Debian or Ubuntu, sudo apt-get install spamassassin; on macOS, brew install spamassassin" >&2; exit 1; fi; }

## run: the whole system on this machine, in the foreground; Ctrl-C stops what it started.
## `make run OPENLOOP_LOCAL_PORTS=memory`: every port in memory, no emulator.
run: $(if $(filter memory,$(OPENLOOP_LOCAL_PORTS)),,run-tools)
	cargo build --workspace --bins
ifeq ($(OPENLOOP_LOCAL_PORTS),memory)
	OPENLOOP_LOCAL_PORTS=memory ./target/debug/openloop-local
else ifeq ($(EMULATOR),localstack)
	docker compose -f infra/localstack-compose.yaml up -d
	./target/debug/openloop-local
else
	@infra/emulator.sh start $(RUN_PORT)
	@# Ctrl-C (or a clean exit) stops the emulator this started; a crash of the runtime
	@# leaves it running with its data, so `make run` again picks up where it stopped.
	@trap 'infra/emulator.sh stop $(RUN_PORT); exit 130' INT TERM; \
	  ./target/debug/openloop-local; status=$$?; \
	  if [ $$status -eq 0 ]; then infra/emulator.sh stop $(RUN_PORT); \
	  else echo "openloop-local exited with $$status; the emulator keeps running on :$(RUN_PORT) with its data (make run reuses it; infra/emulator.sh stop $(RUN_PORT) stops it)"; fi; \
	  exit $$status
endif

## test: every test and the linters, in phases (build, unit, mail, then emulator, commands and
## lint side by side) with a timing summary; the emulator tests' moto runs on TEST_PORT, the
## commands' on TEST_PORT+1, each stopped afterwards (infra/test.sh).
test: tools
	@TEST_PORT=$(TEST_PORT) infra/test.sh

lint: test-tools
	cargo fmt --all -- --check
	cargo clippy --workspace --lib --bins --tests --quiet -- -D warnings
	cargo clippy --workspace --test emulator --quiet -- -D warnings
	$(VENV)/bin/cfn-lint infra/template.yaml
	$(VENV)/checkov/bin/checkov -f infra/template.yaml --framework cloudformation --compact --quiet
	python3 infra/doc-links.py

## bench: DynamoDB requests per task step, tick and attribution cost with 1,000 vs 5,000 stored
## tasks, the import, the dashboard's pages with 5,000 tasks; then the local runtime: idle
## /_local/run, the outbox after 10,000 mails, a simulated month (in memory; its first day
## on the emulator). About 10 minutes on a busy two-core machine.
## `make bench QUICK=1`: every table at a small size (the same code paths, in a minute or so).
bench: run-tools
	cargo build --workspace --bins
	@infra/emulator.sh start $(TEST_PORT)
	@trap 'infra/emulator.sh stop $(TEST_PORT)' EXIT; \
	  $(if $(QUICK),export OPENLOOP_BENCH_QUICK=1;) \
	  AWS_ENDPOINT_URL=http://127.0.0.1:$(TEST_PORT) ./target/debug/bench && \
	  AWS_ENDPOINT_URL=http://127.0.0.1:$(TEST_PORT) ./target/debug/local-bench

## demo: plays a month for a new demo gym against the running stack (`make run` first; another
## address with OPENLOOP_URL=…), told day by day; `make demo DAYS=3` plays three days.
demo:
	cargo build --workspace --bins
	./target/debug/demo $(if $(DAYS),--days $(DAYS))

## pictures: the README's pictures (docs/dashboard-overview.png, -review.png, -phone.png), taken
## in headless Chromium from the current dashboard on the demo gym's month; on an in-memory
## stack of its own, or on the running one OPENLOOP_URL names.
pictures: browser
	cargo build --workspace --bins
	$${CARGO_TARGET_DIR:-target}/debug/pictures

# The Lambda binaries; each is its crate's (openloop-fn-<name>).
LAMBDAS := webhooks api dashboard signals tick execute followup dormant attribution analysis evaluation

## openapi: writes functions/api/openapi.json, the owner API's document the api serves, from the
## handlers' types (a unit test fails when the file is behind them).
openapi:
	OPENLOOP_WRITE_OPENAPI=1 cargo test -p openloop-fn-api --lib openapi::tests

## build: Lambda binaries with cargo-lambda (x86_64, zig from PyPI), into target/lambda/<fn>/bootstrap;
## then each one's size (at most 8 MB: 8,000,000 bytes, so under 8 MiB too) and its cold start on
## this machine (infra/cold-start.py).
build: run-tools
	$(VENV)/bin/pip install --quiet --disable-pip-version-check cargo-lambda ziglang
	@start=$$SECONDS; \
	  PATH=$(CURDIR)/$(VENV)/bin:$$PATH \
	    cargo lambda build --release $(addprefix -p openloop-fn-,$(LAMBDAS)) && \
	  echo "built in $$(( (SECONDS - start) / 60 )) min $$(( (SECONDS - start) % 60 )) s"
	@over=0; for fn in $(LAMBDAS); do \
	  size=$$(stat -c %s target/lambda/$$fn/bootstrap); \
	  printf '%-12s %10d bytes  %5.2f MB  %5.2f MiB\n' $$fn $$size $$(echo "$$size / 1000000" | bc -l) $$(echo "$$size / 1048576" | bc -l); \
	  [ $$size -le 8000000 ] || { printf '%s is over 8 MB (8,000,000 bytes) by %d bytes\n' $$fn $$((size - 8000000)) >&2; over=1; }; \
	done; \
	python3 infra/cold-start.py $(foreach fn,$(LAMBDAS),target/lambda/$(fn)/bootstrap) || over=1; \
	exit $$over

## deploy: build with SAM (cargo-lambda) and deploy infra/template.yaml (asks for parameters).
deploy: run-tools
	$(VENV)/bin/pip install --quiet --disable-pip-version-check aws-sam-cli cargo-lambda ziglang
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH SAM_CLI_TELEMETRY=0 \
	  sam build -t infra/template.yaml --beta-features
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH SAM_CLI_TELEMETRY=0 sam deploy --guided

emulator: run-tools
	@infra/emulator.sh start $(RUN_PORT)

stop-emulator:
	@infra/emulator.sh stop $(RUN_PORT)

clean:
	cargo clean
	rm -rf $(VENV) .emulator
