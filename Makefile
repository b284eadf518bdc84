# FocusGate: every task a person runs is a target here.
FUZZ_SECONDS ?= 60
SWIFT ?= swift
PORT ?= 9092
PARTITIONS ?= 8

.PHONY: fuzz soak all deps build release run test test-compat bench format lint clean

all: build

## deps: install missing system packages (apt-get as root; otherwise prints what to install)
deps:
	@scripts/install-deps.sh

## build: debug build of everything
build: deps
	$(SWIFT) build

## release: optimized build
release: deps
	$(SWIFT) build -c release

## run: serve with the embedded broker and the SQLite store (a debug build of the focusgate
## executable only: the quickest first start; `make release` builds the optimized one)
run: deps
	$(SWIFT) build --product focusgate --disable-default-traits
	FOCUSGATE_KAFKA_EMBEDDED_PORT=$(PORT) FOCUSGATE_KAFKA_EMBEDDED_PARTITIONS=$(PARTITIONS) .build/debug/focusgate serve

## test: every test (unit and integration against the embedded broker over TCP), then the fuzz
## targets' committed corpus and a fixed-seed run (open-ended fuzzing is `make fuzz`)
test:
	@scripts/install-deps.sh --test
	$(SWIFT) build --build-tests
	@SWIFT=$(SWIFT) scripts/test.sh
	@scripts/fuzz.sh --replay

## test-compat: the suite again against librdkafka 2.8 (built from Debian 13's source package into
## .build-compat) and its mock cluster, and the gateway on Tansu, an independent broker, where
## exactly-once is audited with read_committed readers
test-compat:
	@SWIFT=$(SWIFT) scripts/test-compat.sh

## bench: benchmarks, release build; prints rates and ratios
bench: release
	.build/release/CoreBenchmark
	.build/release/KafkaPipeBenchmark
	.build/release/ContextBenchmark
	.build/release/GatewayBenchmark

## soak: steady load through focusgate serve for SOAK_SECONDS (600) at SOAK_RATE (5000/s); memory and lag over time
soak: release
	.build/release/Soak

## fuzz: libFuzzer targets (event decoder, predicate parser, context decoder), FUZZ_SECONDS each
fuzz:
	@scripts/fuzz.sh $(FUZZ_SECONDS)

## format: rewrite sources with swift-format (.swift-format)
format:
	$(SWIFT) format --in-place --recursive --parallel Sources Tests Benchmarks Harness Fuzz Package.swift

## lint: check formatting without changing files, and that no type holds too many stored properties
lint:
	$(SWIFT) format lint --recursive --parallel Sources Tests Benchmarks Harness Fuzz Package.swift
	@scripts/stored-properties.py

clean:
	rm -rf .build
