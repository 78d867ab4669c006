#!/usr/bin/env bash
# lttng_bench.sh -- the real peer: LTTng-UST tracepoints recording the same
# begin/end pairs as PROFILE_SCOPE, measured in the same run as the floor and
# PROFILE_SCOPE (build/bench/scope_cost_lttng: scope_cost.c built with
# -DBENCH_LTTNG and linked with bench/lttng_tp.c, -llttng-ust -ldl).
#
#   BUILD=build BENCH_TMP=/tmp bash bench/lttng_bench.sh [N] [REPS]
#
# 1. LTTng-UST (liblttng-ust-dev) and lttng-tools: installed with apt-get if
#    missing and this runs as root (or sudo -n works); otherwise it prints
#    SKIPPED and exits 0. babeltrace2 is installed too where possible, to count
#    the events that reached the trace.
# 2. A session daemon: the running one, or one started here
#    (lttng-sessiond --daemonize) and stopped at the end (its pid file).
# 3. The driver runs every case round-robin; the LTTng "session" cases create,
#    start, stop and destroy a session of their own per repetition (untimed)
#    and report the events LTTng discarded. If no session can be started, the
#    driver says so and still reports the 'no session' case.
# A time never makes this fail; a missing package or session never does either.
set -u
BUILD=${BUILD:-build}
TMPD=${BENCH_TMP:-/tmp}
MAKE=${MAKE:-make}
N=${1:-10000000}
REPS=${2:-7}
BIN=$BUILD/bench/scope_cost_lttng
PKGS="liblttng-ust-dev lttng-tools babeltrace2"

have_ust() {
    command -v lttng >/dev/null 2>&1 && command -v lttng-sessiond >/dev/null 2>&1 &&
        echo '#include <lttng/ust-version.h>' | ${CC:-cc} -E -x c - >/dev/null 2>&1
}

if ! have_ust; then
    if [ "$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO=no; fi
    if [ "$SUDO" != no ] && command -v apt-get >/dev/null 2>&1; then
        echo "bench-lttng: installing $PKGS (apt-get)"
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PKGS >/dev/null 2>&1 ||
            { $SUDO apt-get update -qq >/dev/null 2>&1 &&
              $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PKGS >/dev/null 2>&1; }
    fi
    if ! have_ust; then
        echo "bench-lttng: SKIPPED: LTTng-UST is not installed (needs liblttng-ust-dev and lttng-tools;"
        echo "  not root and no 'sudo -n', or apt-get failed). Install them and run 'make bench-lttng'."
        exit 0
    fi
fi

ver=$(echo '#include <lttng/ust-version.h>
LTTNG_UST_VERSION' | ${CC:-cc} -E -P -x c - 2>/dev/null | tail -1 | tr -d '"')
case "$ver" in
    2.1[3-9]* | 2.[2-9][0-9]* | [3-9].*) ;;
    *) echo "bench-lttng: SKIPPED: LTTng-UST $ver found; the provider needs the 2.13 API"
       exit 0 ;;
esac
echo "bench-lttng: LTTng-UST $ver, lttng-tools $(lttng --version 2>/dev/null | head -1 | sed 's/^lttng (LTTng Trace Control) //')"

$MAKE --no-print-directory "$BIN" >/dev/null || { echo "bench-lttng: FAILED to build $BIN"; exit 1; }

# Session daemon: must run before the driver starts (the tracer registers at
# start-up).
started_pid=
rundir=/var/run/lttng; [ "$(id -u)" = 0 ] || rundir=$HOME/.lttng
if ! lttng list >/dev/null 2>&1 || [ ! -s "$rundir/lttng-sessiond.pid" ]; then
    if lttng-sessiond --daemonize >/dev/null 2>&1 && [ -s "$rundir/lttng-sessiond.pid" ]; then
        started_pid=$(cat "$rundir/lttng-sessiond.pid")
        echo "bench-lttng: started lttng-sessiond (pid $started_pid); it is stopped at the end"
    else
        echo "bench-lttng: could not start lttng-sessiond; measuring without a session"
    fi
else
    echo "bench-lttng: using the running lttng-sessiond (pid $(cat "$rundir/lttng-sessiond.pid"))"
fi

work=$(mktemp -d "$TMPD/scopeprof_lttng.XXXXXX")
cleanup() {
    rm -rf "$work"
    if [ -n "$started_pid" ]; then
        kill "$started_pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$started_pid" 2>/dev/null || break; sleep 0.1; done
    fi
}
trap cleanup EXIT

# In memory, as section 1a: nothing of scopeprof's is written while timing.
echo "SCOPEPROF_BUFFER_MB=1024 SCOPEPROF_OUTPUT=none SCOPEPROF_SUMMARY=0 $BIN -n $N -r $REPS" \
     "--only floor16,floor24,scope,scopex2,naive,lttng_off,lttng_on,lttng_onx2 --lttng-session $work"
SCOPEPROF_BUFFER_MB=1024 SCOPEPROF_OUTPUT=none SCOPEPROF_SUMMARY=0 "$BIN" -n "$N" -r "$REPS" \
    --only floor16,floor24,scope,scopex2,naive,lttng_off,lttng_on,lttng_onx2 --lttng-session "$work"

# Count what reached the trace of the last repetition of each session case
# (events in the trace + the driver's discarded count of that repetition
# should equal what it emitted).
if command -v babeltrace2 >/dev/null 2>&1; then
    for d in "$work"/lttng_on.* "$work"/lttng_onx2.*; do
        [ -d "$d" ] || continue
        out=$(babeltrace2 "$d" -c sink.utils.counter -p step=+0 2>&1)
        ev=$(printf '%s\n' "$out" | awk '/ Event messages/ {print $1; exit}')
        de=$(printf '%s\n' "$out" | awk '/ Discarded event messages/ {print $1; exit}')
        echo "babeltrace2 (sink.utils.counter) on the last repetition's trace, $(basename "$d"):" \
             "${ev:-?} events in the trace, ${de:-?} discarded-events notices"
    done
else
    echo "(babeltrace2 not installed: events in the trace not counted)"
fi

# The regimes of section 0 (issue 15), scopeprof and LTTng-UST side by side:
# for each, scopeprof's default settings, then LTTng's begin/end pair in the
# same loop shape inside a session of its own (default channel: per-user
# ring buffers, discard mode), each against the floor of its own process.
# LTTng drops events when its consumer falls behind (counted here); scopeprof
# never drops.
RBIN=$BUILD/bench/regimes
LBIN=$BUILD/bench/regimes_lttng
if $MAKE --no-print-directory "$RBIN" "$LBIN" >/dev/null; then
    echo
    echo "== regimes, scopeprof (default) and LTTng-UST (lttng) side by side"
    for m in ${REGIMES:-fresh past threads stream}; do
        SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT="$work/regime.sprof" "$RBIN" "$m"
        echo "   scopeprof trace: $(du -m "$work/regime.sprof" | cut -f1) MiB"
        rm -f "$work/regime.sprof"
        s=scopeprof_regime_$$_$m
        if lttng create "$s" --output="$work/$s" >/dev/null 2>&1 &&
           lttng enable-event -u -s "$s" 'scopeprof_bench:*' >/dev/null 2>&1 &&
           lttng start "$s" >/dev/null 2>&1; then
            "$LBIN" "$m"
            lttng stop "$s" >/dev/null 2>&1
            disc=$(lttng list "$s" 2>/dev/null | awk '/Discarded events:/ {d += $3} END {print d + 0}')
            echo "   LTTng: $disc events discarded; trace $(du -sm "$work/$s" | cut -f1) MiB"
        else
            echo "   LTTng: no session could be started for '$m'"
        fi
        lttng destroy "$s" >/dev/null 2>&1
        rm -rf "${work:?}/$s"
    done
else
    echo "bench-lttng: could not build $RBIN and $LBIN; regimes skipped"
fi
exit 0
