# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the top-level test drivers (make-test.sh, kunit.sh's callers,
# tools/debug-kernel/test-debug.sh), on the host: count build steps and
# test suites into one "N passed, N failed[, N skipped]" line.
#
#   STEP_LOGS=DIR          where step and suite logs go (set before use)
#   step NAME CMD...       a build or check step: one test, its output to
#                          $STEP_LOGS/NAME.log, shown (the end) on failure
#   suite NAME CMD...      a run that prints its own "N passed, N failed[,
#                          N skipped]" last: its counts are added; one that
#                          died without that line, or failed without
#                          saying so, counts as one failure
#   within_budget NAME MIN false (and one skip counted) if a part of about
#                          MIN minutes would take the driver past
#                          $STEP_BUDGET_MIN minutes
#   steps_summary          print the total; false if anything failed

STEP_PASSED=0
STEP_FAILED=0
STEP_SKIPPED=0

# _steps_log NAME: the log file of a step or suite (no slashes or spaces).
_steps_log() {
	local name=${1//[^A-Za-z0-9._-]/-}
	mkdir -p "$STEP_LOGS"
	echo "$STEP_LOGS/$name.log"
}

step() {
	local name=$1 log start=$SECONDS
	shift
	log=$(_steps_log "$name")
	if "$@" >"$log" 2>&1; then
		STEP_PASSED=$((STEP_PASSED + 1))
		printf '%-28s ok (%ds)\n' "$name" $((SECONDS - start))
		return 0
	fi
	STEP_FAILED=$((STEP_FAILED + 1))
	printf '%-28s FAILED (%ds), log: %s\n' "$name" $((SECONDS - start)) "$log"
	tail -n 30 "$log" | sed 's/^/    /'
	return 1
}

suite() {
	local name=$1 log summary p=0 f=0 s=0 rc start=$SECONDS
	shift
	log=$(_steps_log "$name")
	echo "== $name (at $(_steps_clock))"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	echo "== $name took $((SECONDS - start))s"
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -n "$summary" ]; then
		p=${summary%% passed*}
		f=${summary#*passed, }
		f=${f%% failed*}
		s=$(sed -n 's/.*, \([0-9]*\) skipped$/\1/p' <<<"$summary")
	fi
	if [ -z "$summary" ] || { [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; }; then
		f=$((f + 1))
	fi
	STEP_PASSED=$((STEP_PASSED + p))
	STEP_FAILED=$((STEP_FAILED + f))
	STEP_SKIPPED=$((STEP_SKIPPED + ${s:-0}))
	[ "$f" -eq 0 ]
}

# within_budget NAME MINUTES: may a part that takes about MINUTES still
# run?  Not if the driver would then pass $STEP_BUDGET_MIN minutes (unset:
# no budget); the part then counts as skipped and says so.
within_budget() {
	local name=$1 mins=$2

	[ -n "${STEP_BUDGET_MIN:-}" ] || return 0
	[ $((SECONDS / 60 + mins)) -gt "$STEP_BUDGET_MIN" ] || return 0
	STEP_SKIPPED=$((STEP_SKIPPED + 1))
	printf '%-28s SKIPPED: %s gone, ~%d min more would pass the %d-minute budget\n' \
		"$name" "$(_steps_clock)" "$mins" "$STEP_BUDGET_MIN"
	return 1
}

# _steps_clock: minutes:seconds since the driver started.
_steps_clock() {
	printf '%d:%02d' $((SECONDS / 60)) $((SECONDS % 60))
}

steps_summary() {
	local line="$STEP_PASSED passed, $STEP_FAILED failed"
	[ "$STEP_SKIPPED" -eq 0 ] || line+=", $STEP_SKIPPED skipped"
	echo
	echo "all steps took $(_steps_clock)"
	echo "$line"
	[ "$STEP_FAILED" -eq 0 ]
}
