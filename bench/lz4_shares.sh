#!/usr/bin/env bash
# lz4_shares.sh -- overhead compensation on a real code base: LZ4 1.9.4's HC
# compressor, five of its functions given a PROFILE_SCOPE, against the same
# program without the profiler: its own timing, and perf's samples.
#
#   BUILD=build BENCH_TMP=/tmp CC=cc bash bench/lz4_shares.sh [REPS] [RUNS]
#
# 1. LZ4's source: Debian's lz4_1.9.4.orig.tar.gz, downloaded once into
#    $BUILD/bench/lz4 and checked against the SHA-256 its .dsc lists. Nothing
#    of it is kept in this repository.
# 2. lib/lz4hc.c is edited the way a user instruments a library by hand:
#    LZ4HC_Insert, LZ4HC_InsertAndGetWiderMatch, LZ4HC_InsertAndFindBestMatch,
#    LZ4HC_encodeSequence and LZ4HC_compress_hashChain lose their forced
#    inlining (in both builds, so that perf sees the same functions) and get
#    a PROFILE_SCOPE. Called millions of times, the shortest last 7-20 ns.
#    Both builds use lz4's own warning flags (lib/Makefile) with -Werror.
# 3. bench/lz4/driver.c compresses a 24 MB corpus (the start of a tar of
#    /usr/include) REPS times at level 9, decompresses it, and times both.
#    RUNS runs, alternating the build without and with profiling.
# 4. perf record (cpu-clock, DWARF call chains) on the build
#    without profiling: each sample goes to the innermost instrumented
#    function on its stack, or to main; that is what the table calls self.
# Prints the program's own compress time against the table's compensated and
# raw totals, and the self shares against perf's, with the largest gap. A
# missing download or perf is said (SKIPPED); a time never makes this fail.
set -u
BUILD=${BUILD:-build}
TMPD=${BENCH_TMP:-/tmp}
CC=${CC:-cc}
REPS=${1:-6}
RUNS=${2:-3}
SP=$BUILD/scopeprof
DIR=$BUILD/bench/lz4
TARBALL=lz4_1.9.4.orig.tar.gz
URL=http://deb.debian.org/debian/pool/main/l/lz4/$TARBALL
SHA256=0b0e3aa07c8c063ddf40b082bdf7e37a1562bda40a0ff5272957f3e987e0e54b
LZ4_FLAGS="-Wall -Wextra -Wcast-qual -Wcast-align -Wshadow -Wswitch-enum -Wdeclaration-after-statement
           -Wstrict-prototypes -Wundef -Wpointer-arith -Wstrict-aliasing=1"
mkdir -p "$DIR"

if ! echo "$SHA256  $DIR/$TARBALL" | sha256sum -c --status 2>/dev/null; then
    curl -fsSL "$URL" -o "$DIR/$TARBALL" 2>/dev/null || wget -q "$URL" -O "$DIR/$TARBALL" 2>/dev/null
    if ! echo "$SHA256  $DIR/$TARBALL" | sha256sum -c --status 2>/dev/null; then
        echo "SKIPPED: could not download $URL (or its SHA-256 differs)"
        exit 0
    fi
fi
rm -rf "$DIR/src" && mkdir -p "$DIR/src" && tar xzf "$DIR/$TARBALL" -C "$DIR/src" --strip-components=1 || exit 1
LIB=$DIR/src/lib
perl -0777 -pi -e '
  my %scope = (LZ4HC_Insert => "insert", LZ4HC_InsertAndGetWiderMatch => "wider_match",
               LZ4HC_InsertAndFindBestMatch => "find_best_match",
               LZ4HC_encodeSequence => "encode_sequence", LZ4HC_compress_hashChain => "hash_chain");
  for my $f (sort keys %scope) {
      s/LZ4_FORCE_INLINE(\s+\w+\s+$f\s*\([^)]*\)\s*\{)/BENCH_NOINLINE$1\n    PROFILE_SCOPE("$scope{$f}");/
          or die "lz4hc.c: no inlined definition of $f\n";
  }
  $_ = "#include \"scopeprof.h\"\n#define BENCH_NOINLINE static __attribute__((noinline))\n" . $_;
' "$LIB/lz4hc.c" || exit 1
for v in plain prof; do
    def=""; [ $v = prof ] && def=-DPROFILE_ENABLE
    # shellcheck disable=SC2086
    $CC -std=c99 -O3 -g -fno-omit-frame-pointer $LZ4_FLAGS -Werror $def -Iinclude -I"$LIB" \
        bench/lz4/driver.c "$LIB/lz4.c" "$LIB/lz4hc.c" -o "$DIR/driver_$v" -lpthread || exit 1
done
CORPUS=$TMPD/lz4_corpus.$$.bin
tar cf - /usr/include 2>/dev/null | head -c 24000000 > "$CORPUS"
trap 'rm -f "$CORPUS" "$TMPD"/lz4_run.$$.*.sprof "$TMPD"/lz4_perf.$$.data "$TMPD"/lz4_shares.$$.txt' EXIT

secs() { sed -n 's/.*compress \([0-9.]*\) s,.*/\1/p'; }
echo "$CC, lz4 1.9.4 HC level 9, $(stat -c %s "$CORPUS") bytes, $REPS reps a run, $RUNS runs alternating"
printf '%-4s %14s %16s %16s %12s\n' run "plain compress" "table compensated" "table raw" "compensated"
SHARES=$TMPD/lz4_shares.$$.txt
: > "$SHARES"
for i in $(seq 1 "$RUNS"); do
    plain=$("$DIR/driver_plain" "$CORPUS" "$REPS" | secs)
    out=$TMPD/lz4_run.$$.$i.sprof
    SCOPEPROF_SUMMARY=0 SCOPEPROF_OUTPUT=$out "$DIR/driver_prof" "$CORPUS" "$REPS" > /dev/null
    comp=$("$SP" table --format csv "$out" | awk -F, '$1 == "compress" { print $4 / 1e9 }')
    raw=$("$SP" table --format csv --no-compensate "$out" | awk -F, '$1 == "compress" { print $4 / 1e9 }')
    printf '%-4s %13.3fs %15.3fs %15.3fs %+11.1f%%\n' "$i" "$plain" "$comp" "$raw" \
        "$(awk -v a="$comp" -v b="$plain" 'BEGIN { print 100 * (a - b) / b }')"
    "$SP" table --format csv "$out" | awk -F, -v r="$i" 'NR > 1 { print "comp", r, $1, $6 }' >> "$SHARES"
    "$SP" table --format csv --no-compensate "$out" | awk -F, -v r="$i" 'NR > 1 { print "raw", r, $1, $6 }' >> "$SHARES"
    rm -f "$out"
done
echo "(the program's own timing of LZ4_compress_HC without profiling, and the compress row's total)"

# Kernel time too where allowed (the table's times are wall times: reading
# the corpus and first touching the buffers are in main's self time); user
# space only otherwise, said.
perf_run() {
    perf record -q -F 2000 -e "$1" --call-graph dwarf,16384 -o "$TMPD/lz4_perf.$$.data" \
        "$DIR/driver_plain" "$CORPUS" "$REPS" > /dev/null 2>&1
}
if ! command -v perf > /dev/null 2>&1; then
    echo "SKIPPED the comparison with perf: no perf here (Debian: linux-perf)"
    exit 0
elif perf_run cpu-clock; then
    event="cpu-clock, user and kernel"
elif perf_run cpu-clock:u; then
    event="cpu-clock:u, user space only (kernel.perf_event_paranoid): main's reading and page faults are not in it"
else
    echo "SKIPPED the comparison with perf: perf record does not run here"
    exit 0
fi
perf script -i "$TMPD/lz4_perf.$$.data" 2>/dev/null | awk '
    BEGIN { s["LZ4HC_InsertAndGetWiderMatch"] = "wider_match"; s["LZ4HC_Insert"] = "insert"
            s["LZ4HC_InsertAndFindBestMatch"] = "find_best_match"; s["LZ4HC_encodeSequence"] = "encode_sequence"
            s["LZ4HC_compress_hashChain"] = "hash_chain"; s["LZ4_decompress_safe"] = "decompress"
            s["LZ4_compress_HC"] = "compress"; s["main"] = "main" }
    /^[^ \t]/ { open = 1; got = ""; next }                 # a sample: its call chain follows
    /^[ \t]/  { split($2, f, "+"); if (open && got == "" && (f[1] in s)) got = s[f[1]]; next }
    /^$/      { if (open) { n++; c[got == "" ? "(elsewhere)" : got]++ } open = 0 }
    END       { if (open) { n++; c[got == "" ? "(elsewhere)" : got]++ }
                for (k in c) printf "perf 0 %s %.2f\n", k, 100 * c[k] / n }' >> "$SHARES"
echo
echo "self shares, % (perf: $event, samples of the build without profiling; table: Self CPU %, each run)"
awk -v runs="$RUNS" '
    { v[$1, $2, $3] = $4; if (!($3 in seen)) { seen[$3] = 1; order[++n] = $3 } }
    END {
        printf "%-16s %7s | %-*s | %s\n", "row", "perf", runs * 7, "compensated", "raw"
        for (i = 1; i <= n; i++) {
            k = order[i]; line = sprintf("%-16s %7.2f |", k, v["perf", 0, k])
            for (m = 1; m <= 2; m++) {
                mode = m == 1 ? "comp" : "raw"
                for (r = 1; r <= runs; r++) {
                    x = v[mode, r, k]; line = line sprintf(" %6.2f", x)
                    d = x - v["perf", 0, k]; if (d < 0) d = -d
                    if (d > worst[mode]) worst[mode] = d
                }
                if (m == 1) line = line " |"
            }
            print line
        }
        printf "largest gap to perf: compensated %.2f points, raw %.2f points\n", worst["comp"], worst["raw"]
    }' "$SHARES"
rm -f "$SHARES"
