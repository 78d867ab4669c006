#!/usr/bin/env bash
# disasm_check.sh -- the disabled build must leave no trace: compile
# bench/loops.c without PROFILE_ENABLE (PROFILE_SCOPE written, compiled out)
# and with no macro written at all, then compare the machine code of each loop
# function (objdump -d) and the symbols the objects need (nm -u).
# Prints "identical" per function, or the diff (and exits 1 on a difference).
#
#   CC=clang CFLAGS="..." bash bench/disasm_check.sh
set -u
CC=${CC:-cc}
CFLAGS=${CFLAGS:--std=gnu11 -Wall -Wextra -Werror -O2 -g -Iinclude}
tmp=$(mktemp -d /tmp/scopeprof_disasm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# shellcheck disable=SC2086 # CFLAGS is a list of flags
$CC $CFLAGS -DLOOP_VARIANT=disabled -c bench/loops.c -o "$tmp/disabled.o" || exit 1
# shellcheck disable=SC2086
$CC $CFLAGS -DLOOP_VARIANT=nomacro -DBENCH_NO_MACRO -c bench/loops.c -o "$tmp/nomacro.o" || exit 1

# The function's instructions, with its own name replaced by FN so that the
# two variants (disabled_x, nomacro_x) can be compared line by line.
disasm() { # object variant function
    objdump -d --no-show-raw-insn --disassemble="$2_$3" "$1" |
        sed -n "/<$2_$3>:/,\$p" | sed "s/$2_$3/FN/g"
}

status=0
echo "compiler: $($CC --version | head -1)"
for fn in scope_loop scope_loop_dyn; do
    a=$(disasm "$tmp/disabled.o" disabled "$fn")
    b=$(disasm "$tmp/nomacro.o" nomacro "$fn")
    if [ -z "$a" ]; then
        echo "  $fn: not found in the object"; status=1
    elif [ "$a" = "$b" ]; then
        echo "  $fn: identical ($(printf '%s\n' "$a" | grep -c '^ *[0-9a-f]*:') instructions)"
    else
        echo "  $fn: DIFFERENT"; diff <(printf '%s\n' "$b") <(printf '%s\n' "$a") | sed 's/^/    /'
        status=1
    fi
done
# No reference to the library from the disabled object.
if nm "$tmp/disabled.o" | grep -q scopeprof; then
    echo "  nm: the disabled object names scopeprof symbols:"; nm "$tmp/disabled.o" | grep scopeprof
    status=1
else
    echo "  nm: no scopeprof symbol in the disabled object"
fi
exit $status
