#!/usr/bin/env bash
# Built as users build (issue 13), run on this machine, which has no GPU:
#   - plain C calling the runtime itself, with the documented link lines
#     (-lamdhip64 / -lcudart) under gcc and clang, whose linkers drop a
#     library that is only weakly referenced (--as-needed);
#   - the same file as C++ (g++ -Wall -Wextra -Werror);
#   - a HIP C++ program with kernels on several streams through hipcc
#     -Wall -Wextra -Werror (Debian's hipcc);
#   - its CUDA twin through nvcc -Werror all-warnings (CUDA 13).
# Each must build, run, print the one fallback line, keep its own exit
# status (3: "no device", from the program) and write the CPU profile.
# Missing hipcc / CUDA: that part is skipped, with a line saying so.
set -u
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
U=tests/gpu/user
CUDA=${CUDA_HOME:-/usr/local/cuda}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# check NAME WANT_LINE ROW CALLS -- cmd...: run, then check exit status 3,
# exactly one scopeprof: line containing WANT_LINE, the table row ROW with
# CALLS calls, and a trace file.
check() {
  local name=$1 want=$2 row=$3 calls=$4; shift 5
  local out="$dir/$name"
  SCOPEPROF_OUTPUT="$out.sprof" "$@" >"$out.out" 2>"$out.err"
  local rc=$?
  local n; n=$(grep -c '^scopeprof:' "$out.err")
  if [ "$rc" != 3 ]; then fail "$name: exit status $rc, want the program's 3"; cat "$out.err"; return; fi
  if [ "$n" != 1 ] || ! grep -q "^scopeprof: .*$want" "$out.err"; then
    fail "$name: want one line with '$want'"; cat "$out.err"; return; fi
  if ! grep -q "^ *$row .* $calls *\$" "$out.err"; then fail "$name: no table row $row ($calls calls)"; cat "$out.err"; return; fi
  if [ "$(head -c 8 "$out.sprof" 2>/dev/null)" != SCOPEPRF ]; then fail "$name: no trace file"; return; fi
  echo "ok: $name: exit 3, $(grep '^scopeprof:' "$out.err")"
}

# Plain C / C++ with the runtime linked as documented (HIP).
for cc in gcc clang g++; do
  x=; [ "$cc" = g++ ] && x="-x c++"
  if $cc $x -Wall -Wextra -Werror -O2 -DPROFILE_ENABLE -DPROFILE_HIP -Iinclude $U/c_runtime_calls.c \
      -x none -o "$dir/c_hip_$cc" -Wl,--as-needed -lamdhip64 -lpthread; then
    check "c_hip_$cc" "no HIP device" c_gpu 3 -- "$dir/c_hip_$cc"
  else fail "c_hip_$cc: does not build"; fi
done

# hipcc: HIP C++ with kernels and streams. An explicit offload target, as on
# a build machine without a GPU (hipcc would otherwise ask the driver).
if command -v hipcc >/dev/null; then
  if hipcc --offload-arch=gfx90a -Wall -Wextra -Werror -O2 -DPROFILE_ENABLE -DPROFILE_HIP -Iinclude \
      $U/hip_streams.cpp -o "$dir/hip_streams" 2>"$dir/hipcc.err"; then
    check hip_streams "no HIP device" scale 12 -- "$dir/hip_streams"
  else fail "hipcc -Wall -Wextra -Werror: does not build"; cat "$dir/hipcc.err"; fi
else
  echo "hipcc not found (Debian package hipcc): HIP C++ build skipped"
fi

# CUDA: plain C with -lcudart, and a .cu through nvcc.
if [ -f "$CUDA/include/cuda_runtime_api.h" ]; then
  for cc in gcc clang; do
    if $cc -std=gnu11 -Wall -Wextra -Werror -O2 -DPROFILE_ENABLE -DPROFILE_CUDA -I"$CUDA/include" -Iinclude \
        $U/c_runtime_calls.c -o "$dir/c_cuda_$cc" -Wl,--as-needed -L"$CUDA/lib64" -lcudart -lpthread; then
      check "c_cuda_$cc" "no CUDA device" c_gpu 3 -- env LD_LIBRARY_PATH="$CUDA/lib64" "$dir/c_cuda_$cc"
    else fail "c_cuda_$cc: does not build"; fi
  done
else
  echo "no CUDA headers in $CUDA: CUDA C builds skipped"
fi
if [ -x "$CUDA/bin/nvcc" ]; then
  if "$CUDA/bin/nvcc" -Werror all-warnings -Xcompiler -Wall,-Wextra -O2 -DPROFILE_ENABLE -DPROFILE_CUDA \
      -Iinclude $U/cuda_streams.cu -o "$dir/cuda_streams" 2>"$dir/nvcc.err"; then
    check cuda_streams "no CUDA device" scale 12 -- "$dir/cuda_streams"
  else fail "nvcc -Werror all-warnings: does not build"; cat "$dir/nvcc.err"; fi
else
  echo "nvcc not found in $CUDA/bin: the .cu build skipped"
fi
[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
