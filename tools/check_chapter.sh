#!/usr/bin/env bash
# Build one or more chapters as a small book, strictly (-W -n --keep-going), in a temporary folder.
# Usage: tools/check_chapter.sh chapters/04_parallelism.ipynb [chapters/06_memory.ipynb ...]
# Checks what the full build would reject (directives, glue keys, citations, cross-references) in ~30 s per chapter.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "$root/_config.yml" "$tmp/"
cp -r "$root/book" "$tmp/book"
mkdir -p "$tmp/chapters"
[ -d "$root/_site_assets" ] && ln -s "$root/_site_assets" "$tmp/_site_assets"
{
  echo "format: jb-book"; echo "root: book/intro"; echo "chapters:"
  echo "  - file: book/conventions"
  for nb in "$@"; do
    cp "$root/$nb" "$tmp/chapters/"
    echo "  - file: chapters/$(basename "${nb%.ipynb}")"
  done
  echo "  - file: book/references"
} > "$tmp/_toc.yml"
cd "$tmp"
CHIPCHAIN_STATIC=${CHIPCHAIN_STATIC:-1} "$root/.venv/bin/jupyter-book" build . -W -n --keep-going \
  2>&1 | grep -v "^$" | tail -25
test -f _build/html/index.html && echo "check_chapter: built $(ls _build/html/chapters/*.html | wc -l) chapter page(s)"
