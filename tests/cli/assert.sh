# Assertions shared by the end-to-end tests (sourced). They count into $pass and $fail and
# write the command's output to $tmp/out and $tmp/err; the caller sets $tmp.
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAILED: $*"; }

# expect_ok NAME CMD...: the command succeeds.
expect_ok() {
  local name=$1; shift
  if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else bad "$name (exit $?)"; sed 's/^/  /' "$tmp/err" | head -5; fi
}

# expect_fail NAME PATTERN CMD...: the command exits non-zero (not by a signal) and its stderr
# matches PATTERN (an extended regex).
expect_fail() {
  local name=$1 pattern=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ $rc -eq 0 ]; then bad "$name: exit 0, expected failure"; return; fi
  if [ $rc -ge 128 ]; then bad "$name: killed by signal $((rc - 128))"; return; fi
  if grep -Eq -- "$pattern" "$tmp/err"; then ok; else
    bad "$name: stderr does not match /$pattern/"; sed 's/^/  /' "$tmp/err" | head -5
  fi
}

