#!/usr/bin/env bash
# Build the book strictly (-W -n --keep-going) in a temporary folder, executing only the named chapters: every other
# page is rendered from its stored outputs, so cross-references, glossary terms and {doc} links resolve as in the
# full build, in about a minute instead of the full build's several.
# Usage: tools/check_chapter.sh chapters/04_parallelism.ipynb [chapters/06_memory.ipynb ...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ "$#" -ge 1 ] || { echo "usage: $0 chapters/NN_x.ipynb [...]" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "$root/_toc.yml" "$tmp/"
cp -r "$root/book" "$root/chapters" "$root/labs" "$root/figures" "$tmp/"
[ -d "$root/_site_assets" ] && ln -s "$root/_site_assets" "$tmp/_site_assets"
# every notebook but the named ones keeps its stored outputs (jupyter-book's execute.exclude_patterns)
"$root/.venv/bin/python" - "$root/_config.yml" "$tmp/_config.yml" "$@" <<'PY'
import sys, glob, os
import yaml
src, dst, *named = sys.argv[1:]
config = yaml.safe_load(open(src, encoding="utf-8"))
keep = {os.path.basename(n) for n in named}
root = os.path.dirname(src)
others = sorted(os.path.basename(p) for p in glob.glob(os.path.join(root, "chapters", "*.ipynb"))
                + glob.glob(os.path.join(root, "labs", "*.ipynb")) + glob.glob(os.path.join(root, "book", "*.ipynb"))
                if os.path.basename(p) not in keep)
missing = keep - {os.path.basename(p) for p in glob.glob(os.path.join(root, "*", "*.ipynb"))}
if missing:
    sys.exit(f"check_chapter: no such notebook: {', '.join(sorted(missing))}")
config.setdefault("execute", {})["exclude_patterns"] = ["*" + name for name in others]
yaml.safe_dump(config, open(dst, "w", encoding="utf-8"), sort_keys=False, allow_unicode=True)
PY
for nb in "$@"; do cp "$root/$nb" "$tmp/$nb"; done
cd "$tmp"
status=0
CHIPCHAIN_STATIC=${CHIPCHAIN_STATIC:-1} "$root/.venv/bin/jupyter-book" build . -W -n --keep-going \
  > build.log 2>&1 || status=$?
grep -v "^$" build.log | grep -v "IPKernelApp" | grep -E "WARNING|ERROR|CRITICAL|build finished|succeeded" | tail -25
if [ "$status" -eq 0 ] && test -f _build/html/index.html; then
  echo "check_chapter: built $(ls _build/html/chapters/*.html | wc -l) chapter pages strictly, executing $*"
else
  echo "check_chapter: the strict build failed (exit $status)"; exit 1
fi
