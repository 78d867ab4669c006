#!/usr/bin/env bash
# The one-implementation build model (issue 21; docs/PERFORMANCE.md "Code
# size"), sizes only, never times. A program of 21 files (gen_multi.sh: main.c
# defines SCOPEPROF_IMPLEMENTATION, the 20 parts only include the header, half
# of them after system headers), linked WITHOUT any link flag:
#   - a file that is not the implementation adds at most 2 KiB of code to its
#     object beyond the same file built with profiling off;
#   - the implementation's code is at most 64 KiB (the executable's code
#     sections minus the program's own functions, which hold the inline hot
#     path), and a program of 21 files holds it once: per extra file, the
#     executable grows by its own functions only (at most 64 B of anything
#     else);
#   - the program records from its first and its last file;
#   - the parts linked without main.c's implementation fail to link, and the
#     linker's message names SCOPEPROF_IMPLEMENTATION.
#   size.sh SCRATCH_DIR [CC]
set -eu
dir=$1 cc=${2:-${CC:-cc}}
flags="-std=gnu11 -O2 -Iinclude"
rm -rf "$dir" && mkdir -p "$dir/p20" "$dir/p1" "$dir/off"
bash tests/dropin/gen_multi.sh "$dir/p20" 20
bash tests/dropin/gen_multi.sh "$dir/p1" 1
cp "$dir"/p20/part0[01].c "$dir/off/"
# shellcheck disable=SC2086
ls "$dir"/p20/*.c "$dir/p1/main.c" | xargs -P 2 -I{} sh -c "$cc $flags -DPROFILE_ENABLE -c {} -o {}.o"
# shellcheck disable=SC2086
for f in "$dir"/off/*.c; do $cc $flags -c "$f" -o "$f.o"; done
code() { size -A "$1" | awk '$1 ~ /^\.(text|init|fini|plt)/ {s += $2} END {print s}'; }
own() { # bytes of the program's own functions
  local s=0 addr size type name
  while read -r addr size type name; do
    case $name in main | part[0-9]*) s=$((s + 0x$size)) ;; esac
  done < <(nm -S "$1" | awk 'NF == 4')
  echo "$s"
}
rest() { echo $(( $(code "$1") - $(own "$1") )); }
fail=0
say() { if [ "$1" = ok ]; then echo "ok: $2"; else echo "FAILED: $2"; fail=1; fi; }
# Per file: the object with profiling on against off (one part that
# includes the header first, one after system headers).
for p in part00 part01; do
  on=$(code "$dir/p20/$p.c.o") off=$(code "$dir/off/$p.c.o")
  echo "$cc: $p.o: $on B of code with profiling on, $off B off"
  [ $((on - off)) -le 2048 ] && say ok "$p: at most 2 KiB more code than with profiling off" ||
    say no "$p: $((on - off)) B more code than with profiling off"
done
$cc "$dir"/p20/*.o -o "$dir/prog21" -lpthread
$cc "$dir/p1/main.c.o" "$dir/p20/part00.c.o" -o "$dir/prog2" -lpthread
r21=$(rest "$dir/prog21") r2=$(rest "$dir/prog2")
per=$(( (r21 - r2) / 19 ))
echo "$cc, no link flag: 21 files: $(code "$dir/prog21") B of code, implementation $r21 B, per extra file $per B"
[ "$r21" -le 65536 ] && say ok "implementation at most 64 KiB" || say no "implementation $r21 B"
[ "$per" -le 64 ] && say ok "the implementation once: $per B per extra file beyond its own code" ||
  say no "$per B per extra file beyond its own code"
out=$(cd "$dir" && SCOPEPROF_OUTPUT=none SCOPEPROF_ROW_LIMIT=0 ./prog21 2>&1 >/dev/null)
if grep -q "part19.loop" <<<"$out" && grep -q "part0.loop" <<<"$out"; then
  say ok "the program prints scopes of its first and last file"
else
  say no "its table:"; printf '%s\n' "$out" | head -20
fi
# Forgetting the implementation: a link error that says what to do.
if err=$($cc "$dir"/p20/part*.c.o -o "$dir/noimpl" -lpthread 2>&1); then
  say no "the parts linked without an implementation"
elif grep -q 'SCOPEPROF_IMPLEMENTATION' <<<"$err"; then
  say ok "without the implementation the link fails naming SCOPEPROF_IMPLEMENTATION"
else
  say no "the link error does not name SCOPEPROF_IMPLEMENTATION:"; printf '%s\n' "$err" | head -5
fi
exit $fail
