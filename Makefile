# Steel and Silicon — build and test. `make book` and `make test` are the two commands a fresh machine needs.
SHELL := /bin/bash
PY := .venv/bin/python
VENV_STAMP := .venv/.installed-stamp
NODE_STAMP := node_modules/.installed-stamp
PYTEST := $(PY) -m pytest -p no:cacheprovider
BUILD_FLAGS := -W -n --keep-going
PORT ?= 8000

.PHONY: help book test test-unit test-nbval test-build test-browser test-pdf test-lite-run lab serve execute assets lock clean lite

help:
	@echo "make book   - set up .venv and node_modules, execute every chapter, build _build/html (strict),"
	@echo "              then the whole book as _build/html/steel-and-silicon.pdf and .epub (tools/build_pdf.py)"
	@echo "make test   - unit, property and doctests; nbval over every chapter; strict build; browser checks"
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

# The site's Chinese glyphs: a WOFF2 subset of Debian's fonts-wqy-microhei holding exactly the book's CJK characters
# (apt-get download + dpkg-deb -x, no root needed; cached in _build/cache/fonts). It follows vendor_assets.py, which
# empties _site_assets/.
CJK_FONT := _site_assets/fonts/steel-cjk.woff2
$(CJK_FONT): $(VENV_STAMP) _site_assets/widgets_shim.js tools/build_cjk_font.py \
		$(wildcard book/*.md book/*.bib chapters/*.ipynb labs/*.ipynb lib/chipchain/data/*.csv)
	$(PY) tools/build_cjk_font.py --out $@

assets: $(VENV_STAMP) _site_assets/widgets_shim.js $(CJK_FONT)

# The site build precomputes every explorable view (CHIPCHAIN_STATIC=1) so sliders work without a kernel.
book: assets
	rm -rf _build/html _build/.doctrees
	CHIPCHAIN_STATIC=1 .venv/bin/jupyter-book build . $(BUILD_FLAGS)
	$(PY) tools/build_lite.py --output-dir _build/html/lite   # every chapter, runnable in the browser, offline
	$(PY) tools/export_markdown.py _build/html/chapters        # every chapter as MyST Markdown text
	$(PY) tools/build_pdf.py --lang en                         # the book to keep: PDF and EPUB from the built pages
	if [ -f _build/html/zh-CN/index.html ]; then $(PY) tools/build_pdf.py --lang zh-CN; fi   # each edition: one more run

test-unit: $(VENV_STAMP)
	$(PYTEST) -q -n 2 --dist loadfile --doctest-modules tests lib/chipchain --ignore=tests/browser --ignore=tests/test_pdf.py

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

test: assets
	$(MAKE) test-unit
	$(MAKE) test-nbval
	$(MAKE) test-build
	$(MAKE) test-pdf
	$(MAKE) test-browser
	$(MAKE) test-lite-run

# Re-execute the committed notebooks in place (live widgets, light outputs) after editing a chapter.
execute: $(VENV_STAMP)
	for nb in chapters/*.ipynb; do .venv/bin/jupyter execute --inplace "$$nb" || exit 1; done

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
