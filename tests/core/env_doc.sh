#!/usr/bin/env bash
# The environment table (include/parts/env.h, SCOPEPROF__ENV) is the one list
# of SCOPEPROF_ variables: the header's first screen, README and scopeprof(3)
# must each name every variable in it, and name none that it lacks (a renamed
# or removed variable left in the docs). Reads files only.
set -u
names=$(sed -n 's/^ *X(\([A-Z_]*\), .*/SCOPEPROF_\1/p' include/parts/env.h | sort -u)
[ -n "$names" ] || { echo "FAILED: no table found in include/parts/env.h"; exit 1; }
fail=0
# The header's first screen: the comment before the first line of code.
first=$(awk '/^#/ && !/^# *$/ {exit} {print}' include/parts/api.h)
for doc in "first screen:$first" "README.md:$(cat README.md)" "packaging/scopeprof.3:$(cat packaging/scopeprof.3)"; do
  where=${doc%%:*} text=${doc#*:}
  for n in $names; do
    grep -q -- "$n" <<<"$text" || { echo "FAILED: $where does not name $n"; fail=1; }
  done
  for n in $(grep -o 'SCOPEPROF_[A-Z][A-Z_]*[A-Z]' <<<"$text" | sort -u); do
    case $n in SCOPEPROF_IMPLEMENTATION | SCOPEPROF_AGGREGATION | SCOPEPROF_EVENTS_PER_CHUNK | \
      SCOPEPROF_WRAP_MALLOC | SCOPEPROF_WRAP_GPU_MALLOC | SCOPEPROF_INTERNAL_STATE | SCOPEPROF_NO_CLMUL | \
      SCOPEPROF_VERSION_STRING | SCOPEPROF_FORMAT_MAJOR | SCOPEPROF_FORMAT_MINOR | SCOPEPROF_H | \
      SCOPEPROF_MPI | SCOPEPROF_NO_MPI | \
      SCOPEPROF_OUT) continue ;; # SCOPEPROF_OUT: README's example of a misspelt name
    esac
    grep -qx -- "$n" <<<"$names" || { echo "FAILED: $where names $n, which the table lacks"; fail=1; }
  done
  [ $fail = 0 ] && echo "ok: $where names the $(wc -w <<<"$names") variables of the table"
done
exit $fail
