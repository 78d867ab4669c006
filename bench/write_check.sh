#!/bin/sh
# write_check.sh OLD_HEADER_DIR -- build bench/write_check.c against the
# header in OLD_HEADER_DIR and against include/, run both, and compare the
# trace bytes and the summary (rows' sums and the table). Exit 0 when they
# are the same. Example, against main's header:
#   mkdir -p /tmp/old && git show main:include/scopeprof.h > /tmp/old/scopeprof.h
#   sh bench/write_check.sh /tmp/old
set -e
old=${1:?usage: write_check.sh OLD_HEADER_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}
for v in old new; do
    inc=include
    [ "$v" = old ] && inc=$old
    $CC -O2 -Wall -Wextra -Werror -DPROFILE_ENABLE -I"$inc" bench/write_check.c -o "$tmp/$v" -lpthread -ldl
    SCOPEPROF_OUTPUT=none SCOPEPROF_SUMMARY=0 "$tmp/$v" "$tmp/$v.sprof" > "$tmp/$v.txt"
done
ls -l "$tmp"/*.sprof | awk '{print $5, $NF}'
cmp "$tmp/old.sprof" "$tmp/new.sprof"
diff "$tmp/old.txt" "$tmp/new.txt"
echo "write_check: same bytes ($(wc -c < "$tmp/new.sprof")), same summary ($(wc -l < "$tmp/new.txt") lines)"
