#!/usr/bin/env bash
# Code size of a program of many files (docs/PERFORMANCE.md "Code size"):
# with the recommended flags (-ffunction-sections -fdata-sections, linked
# with -Wl,--gc-sections) the implementation is kept once per executable, so
# a file that includes the header costs at most 1 KiB of code beyond its own
# scopes' inline code, and the implementation is at most 64 KiB.
# Measured: the executable's code sections (.text .init .fini .plt*) minus the
# program's own functions (main, partNN: they hold the scopes' inline code),
# for 2 files (main + 1 part) and 21 files (main + 20 parts):
#   per-file = (rest21 - rest2) / 19.  Sizes only, never times.
#   size.sh SCRATCH_DIR [CC]
set -eu
dir=$1 cc=${2:-${CC:-cc}}
flags="-std=gnu11 -O2 -DPROFILE_ENABLE -Iinclude -ffunction-sections -fdata-sections"
rm -rf "$dir" && mkdir -p "$dir/p20" "$dir/p1"
bash tests/dropin/gen_multi.sh "$dir/p20" 20
bash tests/dropin/gen_multi.sh "$dir/p1" 1
# shellcheck disable=SC2086
ls "$dir"/p20/*.c "$dir/p1/main.c" | xargs -P 2 -I{} sh -c "$cc $flags -c {} -o {}.o"
link() { # out objects... (extra flags in $lflags)
  local out=$1; shift
  # shellcheck disable=SC2086
  $cc $lflags "$@" -o "$out" -lpthread
}
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
for mode in gc plain; do
  if [ $mode = gc ]; then lflags="-Wl,--gc-sections"; else lflags=""; fi
  link "$dir/prog21.$mode" "$dir"/p20/*.o
  link "$dir/prog2.$mode" "$dir/p1/main.c.o" "$dir/p20/part00.c.o"
  r21=$(rest "$dir/prog21.$mode") r2=$(rest "$dir/prog2.$mode")
  per=$(( (r21 - r2) / 19 ))
  echo "$cc, ${lflags:-no --gc-sections}: 21 files: $(code "$dir/prog21.$mode") B of code, implementation $r21 B, per extra file $per B"
  if [ $mode = gc ]; then
    if [ "$per" -le 1024 ]; then echo "ok: at most 1 KiB of code per extra file"; else echo "FAILED: $per B per extra file"; fail=1; fi
    if [ "$r21" -le 65536 ]; then echo "ok: implementation at most 64 KiB"; else echo "FAILED: implementation $r21 B"; fail=1; fi
  elif [ "$per" -le 1024 ]; then
    # The control: without --gc-sections every file keeps its copy (the
    # measurement can tell the two apart).
    echo "FAILED: control: without --gc-sections the copies should remain"; fail=1
  else
    echo "ok: control: without --gc-sections each file keeps a copy"
  fi
done
# The deduplicated program still records, from all its files.
out=$(cd "$dir" && SCOPEPROF_OUTPUT=none SCOPEPROF_ROW_LIMIT=0 ./prog21.gc 2>&1 >/dev/null)
if grep -q "part19.loop" <<<"$out" && grep -q "part0.loop" <<<"$out"; then
  echo "ok: the --gc-sections program prints scopes of its first and last file"
else
  echo "FAILED: its table:"; printf '%s\n' "$out" | head -20; fail=1
fi
exit $fail
