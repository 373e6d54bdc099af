# twinlearn developer commands. `make demo` and `make test` set everything up
# on a fresh machine (a virtual environment in .venv, a CMake build in build/).
#
#   make demo       build, install into .venv, run examples/quickstart.py
#   make test       CPU (and, with nvcc, CUDA) build + ctest + pytest: what CI runs
#   make test-gpu   the same on a GPU machine with the system python3, offline;
#                   GPU tests must run there (TWINLEARN_REQUIRE_GPU=1)
#   make bench      the benchmark harness, quick suite: results in bench/results/,
#                   the table in docs/BENCHMARKS.md (BENCH_ARGS="--suite full" ...)
#   make bench-gpu  the same on a GPU machine with the system python3, offline
#   make bench-peers  fetch peer libraries (XGBoost's CUDA build) for bench-gpu
#                   on an offline GPU machine: packed under .whl/
#   make test-sklearn  scikit-learn's own tests of the accelerated estimators,
#                   accelerator installed (pass rate per module; make test runs
#                   a bounded part)
#   make test-sklearn-gpu  the same on a GPU machine with the system python3, offline
#   make test-sklearn-metrics  scikit-learn's own metric tests against twinlearn.metrics
#                   (pass rate per module; make test runs them with --ci)
#   make sanitize   the CPU side built with AddressSanitizer and
#                   UndefinedBehaviorSanitizer (build/sanitize, CUDA off):
#                   ctest + a bounded pytest subset (docs/SANITIZERS.md)
#   make sanitize-gpu  compute-sanitizer (memcheck, racecheck, initcheck,
#                   synccheck) over the CUDA C++ tests and a bounded set of
#                   GPU tests, on a GPU machine with the system python3, offline
#   make docs       the documentation site (Sphinx, warnings as errors; the
#                   examples gallery runs on the CPU) into build/docs/html;
#                   installs requirements-docs.txt into .venv
#   make wheel      the wheel users install (scikit-build-core, then
#                   auditwheel: manylinux tag, the CUDA libraries left to
#                   NVIDIA's pip packages) into dist/, with its size and
#                   architectures; WHEEL_ARCHS picks the CUDA architectures
#                   (RELEASE_ARCHS for a release)
#   make test-wheel the wheel installed into a fresh virtual environment
#                   (build/wheel-venv) and part of the suite run against it,
#                   not against the checkout (WHEEL_TESTS)
#   make sdist      the source distribution into dist/
#   make stubs      regenerate the type stubs of the native modules
#                   (python/twinlearn/_core.pyi, _cuda.pyi) after a binding change;
#                   tests/test_stubs.py fails while they are stale

SHELL  := /bin/bash
PYTHON ?= python3
VENV   ?= .venv
VPY    := $(VENV)/bin/python
JOBS   ?= $(shell nproc)
CUDA   ?= AUTO
GEN    := $(shell command -v ninja >/dev/null 2>&1 && echo -G Ninja)
GTEST_SRC := $(wildcard $(CURDIR)/.deps/googletest/CMakeLists.txt)
GTEST_FLAG := $(if $(GTEST_SRC),-DTWINLEARN_GTEST_SOURCE_DIR=$(CURDIR)/.deps/googletest,)
PYTEST_ARGS ?=
BENCH_ARGS ?=

.PHONY: wheel test-wheel sdist _wheel _test_wheel docs stubs venv build test test-gpu test-sklearn test-sklearn-gpu test-sklearn-metrics demo bench bench-gpu bench-peers format clean \
	sanitize sanitize-gpu _build _test _peers _sanitize _sanitize_gpu

$(VENV)/.stamp: requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -r requirements-dev.txt
	touch $@

venv: $(VENV)/.stamp

# _build / _test take PY (the interpreter) and BUILD (the CMake build folder).
_build:
	cmake -S . -B $(BUILD) $(GEN) -DCMAKE_BUILD_TYPE=Release -DTWINLEARN_CUDA=$(CUDA) \
	  -DTWINLEARN_BUILD_TESTS=ON -DPython_EXECUTABLE=$(shell command -v $(PY) || echo $(PY)) $(GTEST_FLAG) \
	  $(if $(SANITIZE),-DTWINLEARN_SANITIZE=$(SANITIZE))
	cmake --build $(BUILD) -j $(JOBS)

# Every suite runs even when one fails, so one run shows every failure; the
# last lines repeat each suite's count (also in $(BUILD)/test-summary.txt).
_test: _build
	@set -o pipefail; rc=0; log=$(CURDIR)/$(BUILD)/test-logs; mkdir -p $$log; \
	(cd $(BUILD) && ctest --output-on-failure -j $(JOBS)) 2>&1 | tee $$log/ctest.txt || rc=1; \
	PYTHONPATH=$(CURDIR)/python $(PY) -m pytest -q $(PYTEST_ARGS) tests \
	  --doctest-modules python/twinlearn --ignore=python/twinlearn/__main__.py \
	  --ignore=python/twinlearn/identity/__main__.py --ignore=python/twinlearn/accel/__main__.py \
	  2>&1 | tee $$log/pytest.txt || rc=1; \
	PYTHONPATH=$(CURDIR)/python $(PY) tests/sklearn_conformance/run.py --ci 2>&1 | tee $$log/conformance.txt || rc=1; \
	PYTHONPATH=$(CURDIR)/python $(PY) tests/sklearn_metrics/run_metrics.py --ci 2>&1 | tee $$log/sklearn-metrics.txt || rc=1; \
	{ echo "== test summary ($(BUILD)) =="; \
	  echo "ctest: $$(grep -E 'tests passed|tests failed' $$log/ctest.txt | tail -1)"; \
	  echo "pytest: $$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' $$log/pytest.txt | tail -1)"; \
	  echo "$$(grep -E '^twinlearn.accel conformance:' $$log/conformance.txt | tail -1)"; \
	  echo "$$(grep -E '^twinlearn.metrics against scikit-learn' $$log/sklearn-metrics.txt | tail -1)"; \
	  echo "exit status: $$rc"; } | tee $(CURDIR)/$(BUILD)/test-summary.txt; \
	exit $$rc

# Host sanitizers (docs/SANITIZERS.md). _sanitize takes PY. The C++ tests
# link the runtimes themselves (leak checking on); Python does not, so pytest
# runs with them preloaded, leak checking off (the interpreter keeps objects
# alive at exit by design), on a copy of the package in $(SAN_BUILD)/python
# that holds the instrumented module (it is never copied beside the sources,
# where an uninstrumented interpreter would load it). The first finding
# stops its process: ctest names the test, pytest's log ends in the report.
SANITIZERS ?= address,undefined
SAN_BUILD  := build/sanitize
SANITIZE_PYTEST ?= $(wildcard tests/test_*.py) tests/core tests/cluster tests/neighbors tests/linear_model \
	tests/preprocessing tests/decomposition tests/naive_bayes tests/metrics tests/linalg tests/ensemble \
	-k 'not sklearn_check'
SAN_UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
SAN_LOGS = $(CURDIR)/$(SAN_BUILD)/test-logs

_sanitize:
	$(MAKE) _build PY=$(PY) BUILD=$(SAN_BUILD) CUDA=OFF SANITIZE=$(SANITIZERS)
	rm -rf $(SAN_BUILD)/python && mkdir -p $(SAN_BUILD)/python
	cp -r python/twinlearn $(SAN_BUILD)/python/
	find $(SAN_BUILD)/python -name __pycache__ -prune -exec rm -rf {} +
	rm -f $(SAN_BUILD)/python/twinlearn/_core.*.so $(SAN_BUILD)/python/twinlearn/_cuda.*.so
	cp $(SAN_BUILD)/_core.*.so $(SAN_BUILD)/python/twinlearn/
	@set -o pipefail; rc=0; log=$(SAN_LOGS); mkdir -p $$log; \
	export UBSAN_OPTIONS=$(SAN_UBSAN_OPTIONS); \
	(cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS)) 2>&1 | tee $$log/ctest.txt || rc=1; \
	preload="$$(ldd $(SAN_BUILD)/python/twinlearn/_core.*.so | awk '/lib(asan|ubsan)\./ {print $$3}' | tr '\n' ' ')"; \
	echo "preloaded: $$preload"; \
	LD_PRELOAD="$$preload" ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=$(CURDIR)/$(SAN_BUILD)/python \
	  $(PY) -m pytest -q -p no:cacheprovider $(SANITIZE_PYTEST) 2>&1 | tee $$log/pytest.txt || rc=1; \
	{ echo "== sanitize summary ($(SANITIZERS), $(SAN_BUILD)) =="; \
	  echo "ctest: $$(grep -E 'tests passed|tests failed' $$log/ctest.txt | tail -1)"; \
	  echo "pytest: $$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' $$log/pytest.txt | tail -1)"; \
	  echo "sanitizer reports: $$(cat $$log/ctest.txt $$log/pytest.txt | grep -cE '^SUMMARY: [A-Za-z]+Sanitizer|runtime error:')"; \
	  echo "exit status: $$rc"; } | tee $(CURDIR)/$(SAN_BUILD)/test-summary.txt; \
	exit $$rc

sanitize: venv
	$(MAKE) _sanitize PY=$(abspath $(VPY))

# compute-sanitizer over the CUDA side (docs/SANITIZERS.md), on a GPU machine
# with the system python3, over the build/gpu build of make test-gpu:
# tests/sanitize_gpu.py runs its steps (a tool over part of the CUDA C++
# suites or a GPU pytest subset) several at a time, each under a time limit;
# any finding, failure or time-out fails the target. SAN_GPU_ARGS passes its
# options (--tools, --only, --jobs, --timeout, --flags, --list);
# _sanitize_gpu reruns the steps over the build as it is.
SAN_GPU_ARGS ?=

sanitize-gpu:
	$(MAKE) _build PY=$(PYTHON) BUILD=build/gpu CUDA=ON
	$(MAKE) _sanitize_gpu

_sanitize_gpu:
	$(PYTHON) tests/sanitize_gpu.py $(SAN_GPU_ARGS)

build: venv
	$(MAKE) _build PY=$(abspath $(VPY)) BUILD=build/dev

test: venv
	$(MAKE) _test PY=$(abspath $(VPY)) BUILD=build/dev

# pytest runs in parallel workers when pytest-xdist is there (each worker
# gets its share of the cores: tests/conftest.py); PYTEST_ARGS overrides.
GPU_PYTEST_ARGS = $(or $(PYTEST_ARGS),$(shell $(PYTHON) -c 'import xdist' 2>/dev/null && printf '%s' '-n auto'))

test-gpu:
	TWINLEARN_REQUIRE_GPU=1 $(MAKE) _test PY=$(PYTHON) BUILD=build/gpu CUDA=ON \
	  PYTEST_ARGS="$(GPU_PYTEST_ARGS)"

test-sklearn: venv
	$(MAKE) _build PY=$(abspath $(VPY)) BUILD=build/dev
	PYTHONPATH=$(CURDIR)/python $(VPY) tests/sklearn_conformance/run.py

test-sklearn-gpu:
	$(MAKE) _build PY=$(PYTHON) BUILD=build/gpu CUDA=ON
	PYTHONPATH=$(CURDIR)/python $(PYTHON) tests/sklearn_conformance/run.py

test-sklearn-metrics: venv
	$(MAKE) _build PY=$(abspath $(VPY)) BUILD=build/dev
	PYTHONPATH=$(CURDIR)/python $(VPY) tests/sklearn_metrics/run_metrics.py

demo: venv
	$(VPY) -m pip install -q --no-build-isolation --no-deps .
	cd examples && ../$(VPY) quickstart.py

bench: venv
	$(MAKE) build
	PYTHONPATH=$(CURDIR)/python:$(CURDIR) $(VPY) -m bench --suite quick $(BENCH_ARGS)

bench-gpu: _peers
	$(MAKE) _build PY=$(PYTHON) BUILD=build/gpu CUDA=ON
	PYTHONPATH=$(CURDIR)/python:$(CURDIR):$(CURDIR)/$(PEER_SITE) $(PYTHON) -m bench --suite quick --device cuda $(BENCH_ARGS)

# Peer libraries for a GPU machine without network, for Python $(PEER_PYTHON):
# each wheel unpacked and packed again as .whl/<name>-<version>.tar.xz (xz
# makes XGBoost's CUDA build smaller than its wheel). _peers unpacks whatever
# is there into $(PEER_SITE), which bench-gpu puts on PYTHONPATH.
PEER_PYTHON ?= 3.12
PEERS ?= xgboost==3.4.1
PEER_SITE := build/peers

bench-peers:
	rm -rf build/peer-wheels && mkdir -p build/peer-wheels .whl
	$(PYTHON) -m pip download -q --no-deps --only-binary=:all: --python-version $(PEER_PYTHON) \
	  --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d build/peer-wheels $(PEERS)
	set -e; for w in build/peer-wheels/*.whl; do \
	  name=$$(basename $$w | cut -d- -f1-2); rm -rf build/peer-unpacked; mkdir -p build/peer-unpacked; \
	  $(PYTHON) -m zipfile -e $$w build/peer-unpacked; \
	  tar -C build/peer-unpacked -cf - . | xz -T0 -6 > .whl/$$name.tar.xz; done
	rm -rf build/peer-unpacked

_peers:
	@rm -rf $(PEER_SITE) && mkdir -p $(PEER_SITE); \
	for f in .whl/*.tar.xz; do [ -e "$$f" ] && tar -C $(PEER_SITE) -xJf "$$f" && echo "peer: $$f"; done; true

# Wheels (docs/RELEASING.md). pip builds in build/<wheel tag> (pyproject.toml),
# beside build/dev, so with ccache (CMAKE_<LANG>_COMPILER_LAUNCHER, base dir
# the checkout: .ci/run) the wheel reuses make test's objects. auditwheel
# grafts libgomp into the wheel and leaves the CUDA libraries to the
# nvidia-* dependencies (the module's RPATH finds them in site-packages).
# CXX=c++ as CMake picks for make test (scikit-build-core would take Python's
# g++, a different compiler name to ccache).
WHEEL_ARCHS   ?= 90
RELEASE_ARCHS := 75-real;80-real;86-real;89-real;90-real;100-real;120
WHEEL_DIR     ?= dist
WHEEL_EXCLUDE := $(foreach l,libcublas.so.13 libcublasLt.so.13 libcusolver.so.12 libcusparse.so.12 libnvJitLink.so.13 libcuda.so.1,--exclude $(l))
WHEEL_VENV    ?= build/wheel-venv
# The installed wheel runs the tests of its install and a cross-section of
# the estimators (the full suite runs from the checkout in make test).
WHEEL_TESTS   ?= tests/test_installed.py tests/test_imports.py tests/test_version.py tests/test_doctor.py \
	tests/test_show_versions.py tests/test_identity.py tests/cluster/test_kmeans.py tests/linear_model \
	tests/preprocessing tests/decomposition tests/naive_bayes tests/metrics/test_regression.py

_wheel:
	rm -rf build/wheel-raw && mkdir -p build/wheel-raw $(WHEEL_DIR)
	rm -f $(WHEEL_DIR)/twinlearn-*.whl
	CXX=$${CXX:-c++} TWINLEARN_CUDA=$(CUDA) TWINLEARN_CUDA_ARCH="$(WHEEL_ARCHS)" CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) \
	  $(PY) -m pip wheel --no-build-isolation --no-deps -w build/wheel-raw .
	PATH="$(dir $(PY)):$$PATH" $(PY) -m auditwheel repair $(WHEEL_EXCLUDE) -w $(WHEEL_DIR) build/wheel-raw/twinlearn-*.whl
	$(PY) tools/wheel_report.py $(WHEEL_DIR)/twinlearn-*.whl

wheel: venv
	$(MAKE) _wheel PY=$(abspath $(VPY))

# The wheel's own tests, in a fresh venv outside the checkout's import path:
# its dependencies from the index (the NVIDIA libraries left out: --no-deps,
# the toolkit or driver of the machine serves them), or with
# WHEEL_VENV_FLAGS=--system-site-packages and OFFLINE=1 from the system
# (the GPU machine).
WHEEL_VENV_FLAGS ?=
OFFLINE ?=
_test_wheel:
	rm -rf $(WHEEL_VENV) && $(PY) -m venv $(WHEEL_VENV_FLAGS) $(WHEEL_VENV)
	$(if $(OFFLINE),,$(WHEEL_VENV)/bin/python -m pip install -q numpy scipy scikit-learn pytest hypothesis pandas)
	$(WHEEL_VENV)/bin/python -m pip install -q --no-deps $(if $(OFFLINE),--no-index) $(WHEEL_DIR)/twinlearn-*.whl
	cd $(WHEEL_VENV) && bin/python -m twinlearn doctor
	env -u PYTHONPATH TWINLEARN_EXPECT_INSTALLED=1 $(WHEEL_VENV)/bin/python -m pytest -q -p no:cacheprovider \
	  $(PYTEST_ARGS) $(WHEEL_TESTS)

test-wheel: wheel
	$(MAKE) _test_wheel PY=$(abspath $(VPY))

sdist: venv
	mkdir -p $(WHEEL_DIR) && $(VPY) -m build --sdist --no-isolation -o $(WHEEL_DIR) .

# The documentation site. Its own requirements go into the same venv, once;
# the extension modules are built first (autodoc imports the package, the
# gallery runs its examples). The API pages and the gallery are generated
# under docs/ (ignored by git) at every build.
DOCS_OUT ?= build/docs

$(VENV)/.docs-stamp: requirements-docs.txt $(VENV)/.stamp
	$(VPY) -m pip install -q -r requirements-docs.txt
	touch $@

docs: venv $(VENV)/.docs-stamp
	$(MAKE) build
	PYTHONPATH=$(CURDIR)/python $(VPY) -m sphinx -b html -W --keep-going -j $(JOBS) \
	  -d $(DOCS_OUT)/doctrees docs $(DOCS_OUT)/html
	@echo "documentation: $(DOCS_OUT)/html/index.html"

stubs: build
	set -e; for m in _core _cuda; do \
	  [ -n "$$(ls python/twinlearn/$$m.*.so 2>/dev/null)" ] || continue; \
	  PYTHONPATH=$(CURDIR)/python $(VPY) -m twinlearn._stubs python/twinlearn/$$m.pyi twinlearn.$$m; done

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')

clean:
	rm -rf build python/twinlearn/_core.*.so python/twinlearn/_cuda.*.so
