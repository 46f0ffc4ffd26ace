#!/usr/bin/env bash
# Looks at a `sparsetune report` page as a person would, in headless Chromium: every image
# loads, and the table has one row per line of matrices.csv. With --screenshot, also saves
# the whole page as a PNG.
#   scripts/check-report.sh DIR [--screenshot FILE.png] [--width PX] [--height PX]
# --height fixes the screenshot's height (default: the page's full height).
# Exit status: 0 the page is fine, 1 it is not, 2 a bad argument or no Chromium.
set -euo pipefail

usage() {
  echo "usage: scripts/check-report.sh DIR [--screenshot FILE.png] [--width PX] [--height PX]" >&2
  exit 2
}

dir="" shot="" width=1400 height=""
while [ $# -gt 0 ]; do
  case $1 in
    --screenshot) [ $# -ge 2 ] || usage; shot=$2; shift ;;
    --screenshot=*) shot=${1#*=} ;;
    --width) [ $# -ge 2 ] || usage; width=$2; shift ;;
    --height) [ $# -ge 2 ] || usage; height=$2; shift ;;
    -h | --help) usage ;;
    -*) echo "check-report: unknown option $1" >&2; usage ;;
    *) [ -z "$dir" ] || usage; dir=$1 ;;
  esac
  shift
done
[ -n "$dir" ] || usage
[[ $width =~ ^[0-9]+$ && ( -z $height || $height =~ ^[0-9]+$ ) ]] ||
  { echo "check-report: --width and --height take pixels" >&2; exit 2; }
[ -f "$dir/index.html" ] || { echo "check-report: $dir/index.html: no such page" >&2; exit 2; }
[ -f "$dir/matrices.csv" ] || { echo "check-report: $dir/matrices.csv: missing" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] ||
  { echo "check-report: Chromium is not installed (apt-get install chromium)" >&2; exit 2; }
python=$(command -v /usr/bin/python3 || command -v python3 || true)
[ -n "$python" ] || { echo "check-report: python3 is needed to count the CSV's rows" >&2; exit 2; }

page="file://$(cd "$dir" && pwd)/index.html"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Root needs --no-sandbox; a profile of its own keeps runs apart. Virtual time lets the page
# load its images and run its load handler before the DOM is dumped.
flags=(--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars
       --no-first-run --no-default-browser-check --allow-file-access-from-files
       --user-data-dir="$work/profile" --virtual-time-budget=10000)

# Runs Chromium with a time limit; its chatter goes to a log shown only on failure.
browse() {
  if ! timeout 120 "$browser" "${flags[@]}" "$@" 2>>"$work/log"; then
    echo "check-report: FAILED: Chromium did not finish ($browser); its messages:" >&2
    tail -n 20 "$work/log" >&2
    exit 1
  fi
}

# The page writes what it saw into #selfcheck once loaded: images-ok, images-bad, rows, height.
browse --window-size="$width,${height:-1600}" --dump-dom "$page" >"$work/dom"
seen=$(sed -n 's/.*<pre id="selfcheck">\([^<]*\)<\/pre>.*/\1/p' "$work/dom" | head -n 1)
field() { sed -n "s/.*$1=\\([0-9][0-9]*\\).*/\\1/p" <<<"$seen"; }
ok=$(field images-ok) bad=$(field images-bad) rows=$(field rows) page_height=$(field height)
if [ -z "$ok" ] || [ -z "$bad" ] || [ -z "$rows" ]; then
  echo "check-report: FAILED: the page did not report itself (its JavaScript did not run?)" >&2
  echo "  #selfcheck reads: ${seen:-(no such element)}" >&2
  exit 1
fi
images=$(grep -o '<img ' "$work/dom" | wc -l)
# Records, not physical lines: a quoted field may hold a newline.
want=$("$python" -c 'import csv, sys
with open(sys.argv[1], newline="", encoding="utf-8-sig") as f:
    print(max(0, sum(1 for r in csv.reader(f) if r) - 1))' "$dir/matrices.csv")

if [ -n "$shot" ]; then
  shot_height=${height:-${page_height:-2400}}
  [ "$shot_height" -le 30000 ] || shot_height=30000  # Chromium refuses larger surfaces
  mkdir -p "$(dirname "$shot")"
  rm -f "$shot"
  browse --window-size="$width,$shot_height" --screenshot="$(realpath -m "$shot")" "$page" \
    >/dev/null
  [ -s "$shot" ] || { echo "check-report: FAILED: no screenshot written to $shot" >&2; exit 1; }
fi

problems=()
[ "$bad" -eq 0 ] || problems+=("$bad image(s) did not load")
[ "$ok" -eq "$images" ] || problems+=("$ok of $images <img> elements loaded")
[ "$ok" -gt 0 ] || problems+=("no images on the page")
[ "$rows" -eq "$want" ] || problems+=("$rows table rows, but matrices.csv has $want")
if [ ${#problems[@]} -eq 0 ]; then
  verdict="check-report: OK: $ok of $images images loaded, $rows table rows for $want CSV rows"
  [ -z "$shot" ] || verdict+=", screenshot $shot (${width}x$shot_height)"
  echo "$verdict"
else
  msg=$(printf '%s; ' "${problems[@]}")
  echo "check-report: FAILED: ${msg%; } ($dir/index.html)" >&2
  exit 1
fi
