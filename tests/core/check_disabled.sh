#!/usr/bin/env bash
# The disabled build leaves nothing behind. Run through the wrapper rules.mk
# writes ($(BUILD)/tests/core/check_disabled), which passes the directory
# holding the objects compiled from disabled_use.c:
#   off.o   without PROFILE_ENABLE       zero.o  with -DPROFILE_ENABLE=0
#   ref.o   the same file, macro lines deleted
#   on.o    with -DPROFILE_ENABLE (the control: the check must be able to fail)
set -u
dir=$1
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
text() { objcopy -O binary --only-section=.text "$1" "$1.text" && cat "$1.text"; }
# Code and data sections with their sizes (debug info names the file: skipped).
sections() { size -A "$1" | awk '$1 ~ /^\.(text|data|bss|rodata)/ {print $1, $2}'; }
for o in off zero; do
  check "$o.o has no scopeprof symbol" '! nm "$dir/$o.o" | grep -qi scopeprof'
  check "$o.o references no symbol at all" '[ -z "$(nm -u "$dir/$o.o")" ]'
  check "$o.o .text is byte-identical to ref.o" 'cmp -s <(text "$dir/$o.o") <(text "$dir/ref.o")'
  check "$o.o has the same code and data sizes as ref.o" '[ "$(sections "$dir/$o.o")" = "$(sections "$dir/ref.o")" ]'
done
check "control: on.o does reference scopeprof" 'nm "$dir/on.o" | grep -qi scopeprof'
check "control: on.o .text differs from ref.o" '! cmp -s <(text "$dir/on.o") <(text "$dir/ref.o")'
exit $fail
