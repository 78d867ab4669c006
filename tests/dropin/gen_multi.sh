#!/usr/bin/env bash
# gen_multi.sh DIR N -- writes a program of N+1 files into DIR: part00.c ..
# part<N-1>.c each define one function with three scopes (PROFILE_FUNCTION,
# PROFILE_SCOPE in a loop, PROFILE_SCOPE_DYN), half of them including
# scopeprof.h first and half after system headers; main.c calls them all
# and holds the implementation (SCOPEPROF_IMPLEMENTATION).
# Used by the code-size test (tests/dropin/size.sh) and bench-size.
set -eu
dir=$1 n=$2
mkdir -p "$dir"
for ((i = 0; i < n; i++)); do
  f=$(printf '%s/part%02d.c' "$dir" "$i")
  {
    if ((i % 2)); then printf '#include <stdio.h>\n#include <time.h>\n#include <signal.h>\n#include "scopeprof.h"\n'
    else printf '#include "scopeprof.h"\n#include <stdio.h>\n'; fi
    cat <<C
int part$i(int n);
int part$i(int n) {
    PROFILE_FUNCTION();
    int s = 0;
    for (int k = 0; k < n; k++) {
        PROFILE_SCOPE("part$i.loop");
        s += k * $i;
    }
    {
        PROFILE_SCOPE_DYN(n > 1 ? "many" : "one");
        s ^= n;
    }
    return s;
}
C
  } >"$f"
done
{
  printf '#define SCOPEPROF_IMPLEMENTATION /* the one copy, in main.c */\n#include "scopeprof.h"\n#include <stdio.h>\n'
  for ((i = 0; i < n; i++)); do printf 'int part%d(int n);\n' "$i"; done
  printf 'int main(void) {\n    int s = 0;\n'
  for ((i = 0; i < n; i++)); do printf '    s += part%d(10);\n' "$i"; done
  printf '    printf("%%d\\n", s);\n    return 0;\n}\n'
} >"$dir/main.c"
