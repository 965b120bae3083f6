# Steel and Silicon — build and test. `make book` and `make test` are the two commands a fresh machine needs.
SHELL := /bin/bash
PY := .venv/bin/python
VENV_STAMP := .venv/.installed-stamp
NODE_STAMP := node_modules/.installed-stamp
PYTEST := $(PY) -m pytest -p no:cacheprovider
BUILD_FLAGS := -W -n --keep-going
PORT ?= 8000

.PHONY: help book test test-unit test-nbval test-build test-browser test-pdf test-lite-run test-thorough quick \
	quick-lib lab serve execute assets lock clean lite book-zh

help:
	@echo "make book   - set up .venv and node_modules, execute every chapter, build _build/html (strict),"
	@echo "              then the whole book as _build/html/steel-and-silicon.pdf and .epub (tools/build_pdf.py)"
	@echo "make test   - unit, property and doctests; nbval over every chapter; strict build; browser checks"
	@echo "make quick CH=chapters/04_parallelism.ipynb - the contributor's loop: library tests, one chapter (< 3 min)"
	@echo "make test-thorough - property tests under fresh random Hypothesis seeds and 2,000 examples a property"
	@echo "make lab    - JupyterLab on a reader's copy of the chapters (prose rendered, notebooks trusted)"
	@echo "make serve  - serve _build/html on http://127.0.0.1:$(PORT)"

$(VENV_STAMP): requirements.lock pyproject.toml
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

_site_assets/widgets_shim.js: $(NODE_STAMP) tools/vendor_assets.py book/site.css
	$(PY) tools/vendor_assets.py

# The site's Chinese glyphs: a WOFF2 subset of Debian's fonts-wqy-microhei holding exactly the book's CJK characters,
# the zh-CN edition's translations (locale/**/*.po) included
# (apt-get download + dpkg-deb -x, no root needed; cached in _build/cache/fonts). It follows vendor_assets.py, which
# empties _site_assets/.
CJK_FONT := _site_assets/fonts/steel-cjk.woff2
$(CJK_FONT): $(VENV_STAMP) _site_assets/widgets_shim.js tools/build_cjk_font.py \
		$(wildcard book/*.md book/*.bib chapters/*.ipynb labs/*.ipynb lib/chipchain/data/*.csv) \
		$(wildcard locale/*/LC_MESSAGES/*.po locale/*/LC_MESSAGES/*/*.po lib/chipchain/locale/*/LC_MESSAGES/*.po) \
		$(wildcard book/_ext/*.py) tools/build_pdf.py
	$(PY) tools/build_cjk_font.py --out $@

assets: $(VENV_STAMP) _site_assets/widgets_shim.js $(CJK_FONT)

# The site build precomputes every explorable view (CHIPCHAIN_STATIC=1) so sliders work without a kernel.
book: assets
	rm -rf _build/html _build/.doctrees
	CHIPCHAIN_STATIC=1 .venv/bin/jupyter-book build . $(BUILD_FLAGS)
	$(PY) tools/build_lite.py --output-dir _build/html/lite   # every chapter, runnable in the browser, offline
	cp _build/html/lite/favicon.ico _build/html/favicon.ico     # browsers ask the host's root for it
	$(PY) tools/export_markdown.py _build/html/chapters        # every chapter as MyST Markdown text
	$(MAKE) --no-print-directory book-zh                        # the 简体中文 edition, into _build/html/zh-CN
	$(PY) tools/build_pdf.py --lang en                         # the book to keep: PDF and EPUB from the built pages
	if [ -f _build/html/zh-CN/index.html ]; then $(PY) tools/build_pdf.py --lang zh-CN; fi   # each edition: one more run

# The 简体中文 edition (issue 25), after the English one: the translated copy of the source (tools/i18n.py build: every
# prose block replaced by its current translation, English where none exists yet; code, outputs and data shared) is
# built with the same strict flags and environment, the library told the reader's language, and placed under
# _build/html/zh-CN (relative links to and from the English pages; its own _static from the same _site_assets). Its
# JupyterLite copy loads the English lite site's Pyodide runtime and packages instead of a second copy.
ZH_SRC := _build/zh-CN-src
ZH_HTML := _build/html/zh-CN
ZH_MISSING := _build/zh-CN-missing.txt   # words the library drew in English while the zh edition executed (_i18n)
I18N_FLAGS ?=            # e.g. I18N_FLAGS="--locale /tmp/scratch/locale" to try a build with scratch catalogs
book-zh:
	$(PY) tools/i18n.py build --lang zh-CN --out $(ZH_SRC) --allow-missing $(I18N_FLAGS)
	rm -rf $(ZH_HTML) $(ZH_MISSING)
	CHIPCHAIN_STATIC=1 CHIPCHAIN_LANG=zh_CN CHIPCHAIN_I18N_MISSING=$(abspath $(ZH_MISSING)) \
	  .venv/bin/jupyter-book build $(ZH_SRC) $(BUILD_FLAGS)
	$(PY) tools/i18n.py lib-check --lang zh-CN --missing $(ZH_MISSING)   # nothing the library drew stayed English
	mv $(ZH_SRC)/_build/html $(ZH_HTML)
	$(PY) tools/build_lite.py --output-dir $(ZH_HTML)/lite --chapters $(ZH_SRC)/chapters --pyodide-from _build/html/lite \
	  --lang zh-CN
	$(PY) tools/export_markdown.py $(ZH_HTML)/chapters $(ZH_SRC)/chapters

# Deterministic: Hypothesis is derandomised (tests/conftest.py, profile "book"), so every run draws the same examples.
# The time budgets (marker "budget") run afterwards, alone: on this VM's two vCPUs a busy neighbour worker slows even
# a process's own CPU time by half again, which is the suite's load, not the reader's.
test-unit: $(VENV_STAMP)
	$(PYTEST) -q -n 2 --dist loadfile --doctest-modules tests lib/chipchain --ignore=tests/browser --ignore=tests/test_pdf.py \
	  -m "not budget"
	$(PYTEST) -q -p no:xdist -m budget tests --ignore=tests/browser --ignore=tests/test_pdf.py

# Exploring (issue 23): the property tests under $(SEEDS) fresh random seeds, then once with 2,000 examples a property.
# Run it before a submission that changes the library or its tests; a failure prints the seed and the example, which
# then becomes an @example in the test. About 10-15 minutes on 2 cores.
SEEDS ?= 5
PROPERTY_TESTS = $(shell grep -l "from hypothesis" tests/test_*.py)
test-thorough: $(VENV_STAMP)
	@for i in $$(seq $(SEEDS)); do \
	  seed=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); echo "test-thorough: Hypothesis seed $$seed"; \
	  HYPOTHESIS_PROFILE=explore $(PYTEST) -q -n 2 --dist loadfile $(PROPERTY_TESTS) --hypothesis-seed=$$seed \
	    || { echo "test-thorough: failed under --hypothesis-seed=$$seed"; exit 1; }; \
	done
	HYPOTHESIS_PROFILE=thorough $(PYTEST) -q -n 2 --dist loadfile $(PROPERTY_TESTS)

# The contributor's quick loop (under 3 minutes on 2 cores): the library's unit, property and doctests without the
# two slow families that make test runs anyway — the JupyterLite build (test_lite.py, ~60 s) and the labs' real
# torch.distributed ranks (test_labs.py, ~55 s) — and the time budgets (test-unit measures them alone), then one
# chapter's nbval and its strict one-chapter build.
CH ?= chapters/04_parallelism.ipynb
QUICK_SKIP = --ignore=tests/browser --ignore=tests/test_lite.py --ignore=tests/test_labs.py --ignore=tests/test_pdf.py
quick-lib: $(VENV_STAMP)
	$(PYTEST) -q -n 2 --dist loadfile --doctest-modules tests lib/chipchain $(QUICK_SKIP) -m "not budget"

quick: quick-lib
	$(PYTEST) -q --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg $(CH)
	tools/check_chapter.sh $(CH)

test-nbval: $(VENV_STAMP)
	$(PYTEST) -q -n 2 --dist loadfile --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg chapters labs

test-build: book

# The PDF and EPUB `make book` wrote (after it): titles, glued numbers, fonts, page boxes, epubcheck, budgets.
test-pdf: $(VENV_STAMP)
	$(PYTEST) -q tests/test_pdf.py

test-browser: $(VENV_STAMP)
	$(PYTEST) -q -n 2 --dist loadgroup -m "not lite_run" tests/browser

# Every chapter run to the end in the built JupyterLite site (after `make book`), two chapters at a time: about
# 6-8 minutes on 2 cores; a dead or stalled kernel fails within 2-4 minutes, naming the cell.
test-lite-run: $(VENV_STAMP)
	$(PYTEST) -q -n 2 -m lite_run tests/browser

# Each stage prints its wall time, so a slow stage is visible in CI's log.
TEST_STAGES := test-unit test-nbval test-build test-pdf test-browser test-lite-run
test: assets
	@for stage in $(TEST_STAGES); do \
	  start=$$(date +%s); $(MAKE) --no-print-directory $$stage || exit 1; \
	  echo "make test: $$stage took $$(( $$(date +%s) - start )) s"; \
	done

# Re-execute the committed notebooks in place (live widgets, light outputs) after editing a chapter: every chapter,
# the numbers page and the labs, i.e. every notebook whose stored outputs nbval or tests/test_stored_outputs.py read.
# NB=chapters/04_parallelism.ipynb re-executes one.
NB ?= chapters/*.ipynb book/numbers.ipynb labs/*.ipynb
execute: $(VENV_STAMP)
	for nb in $(NB); do .venv/bin/jupyter execute --inplace "$$nb" || exit 1; done

# JupyterLab on a reader's copy of the chapters (_build/lab): glued numbers, glossary links, citations and collapsed
# solutions rendered by jupyterlab-myst, notebooks trusted; --allow-root only when run as root (tools/lab_book.py).
lab: $(VENV_STAMP)
	$(PY) tools/lab_book.py --output-dir _build/lab --serve

serve:
	$(PY) -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

lock: $(VENV_STAMP)
	{ echo "# Exact pins for the book, its build and its tests (pip freeze on Python 3.11). Update with: make lock"; \
	  $(PY) -m pip freeze --exclude-editable | grep -v '^chipchain'; } > requirements.lock

clean:
	rm -rf _build _site_assets

# JupyterLite: every chapter plus a chipchain wheel, runnable in the browser with the Pyodide kernel (book/lite.md);
# the Pyodide runtime comes from node_modules (npm pyodide), its packages from the venv, each checked by sha256.
lite: $(VENV_STAMP) $(NODE_STAMP)
	$(PY) tools/build_lite.py --output-dir _lite
