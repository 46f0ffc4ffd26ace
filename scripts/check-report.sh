#!/usr/bin/env bash
# Looks at a `sparsetune report` page as a person would, in headless Chromium: every image
# loads, and the table has one row per line of matrices.csv. With --screenshot, saves the page.
#   scripts/check-report.sh DIR [--screenshot FILE.png] [--width PX] [--height PX]
set -euo pipefail
dir="" shot="" width=1400 height=2600
while [ $# -gt 0 ]; do
  case $1 in
    --screenshot) shot=${2:?}; shift ;;
    --width) width=${2:?}; shift ;;
    --height) height=${2:?}; shift ;;
    -*) echo "check-report: unknown option $1" >&2; exit 2 ;;
    *) dir=$1 ;;
  esac
  shift
done
[ -n "$dir" ] || { echo "usage: scripts/check-report.sh DIR [--screenshot FILE.png]" >&2; exit 2; }
[ -f "$dir/index.html" ] || { echo "check-report: $dir/index.html: no such page" >&2; exit 2; }
[ -f "$dir/matrices.csv" ] || { echo "check-report: $dir/matrices.csv: missing" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "check-report: no Chromium (apt-get install chromium)" >&2; exit 2; }

page="file://$(cd "$dir" && pwd)/index.html"
flags=(--headless=new --no-sandbox --disable-gpu --hide-scrollbars --allow-file-access-from-files
       --virtual-time-budget=10000 "--window-size=$width,$height")
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags+=("--user-data-dir=$profile")

# The page writes what it sees into #selfcheck once loaded (images-ok, images-bad, rows).
dom=$("$browser" "${flags[@]}" --dump-dom "$page" 2>/dev/null)
seen=$(sed -n 's/.*<pre id="selfcheck">\([^<]*\)<\/pre>.*/\1/p' <<<"$dom")
# Data lines of the CSV: records, not physical lines (a quoted field may hold a newline).
want=$(python3 -c 'import csv, sys; print(sum(1 for _ in csv.reader(open(sys.argv[1]))) - 1)' \
  "$dir/matrices.csv")
images=$(grep -o '<img ' <<<"$dom" | wc -l)
ok=$(sed -n 's/.*images-ok=\([0-9]*\).*/\1/p' <<<"$seen")
bad=$(sed -n 's/.*images-bad=\([0-9]*\).*/\1/p' <<<"$seen")
rows=$(sed -n 's/.*rows=\([0-9]*\).*/\1/p' <<<"$seen")
if [ -z "$seen" ]; then
  echo "check-report: FAILED: the page did not report itself (JavaScript did not run?)" >&2
  exit 1
fi
if [ -n "$shot" ]; then
  "$browser" "${flags[@]}" "--screenshot=$(realpath -m "$shot")" "$page" >/dev/null 2>&1
  [ -s "$shot" ] || { echo "check-report: FAILED: no screenshot written" >&2; exit 1; }
fi
if [ "$bad" = 0 ] && [ "$ok" = "$images" ] && [ "$ok" -gt 0 ] && [ "$rows" = "$want" ]; then
  echo "check-report: OK: $ok of $images images loaded, $rows table rows for $want matrices${shot:+, screenshot $shot}"
else
  echo "check-report: FAILED: $ok of $images images loaded ($bad broken), $rows table rows for $want matrices" >&2
  exit 1
fi
