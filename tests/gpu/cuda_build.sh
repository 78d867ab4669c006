#!/usr/bin/env bash
# The CUDA backend builds: include/scopeprof.h with -DPROFILE_CUDA as plain C
# under gcc and clang (-Wall -Wextra -Werror), linked without -lcudart (the
# header then finds libcudart with dlopen) and run: with no GPU it must print
# one "no CUDA ..." line and the CPU table. Then samples/gpu_spin.cu with nvcc
# (CUDA C++), when nvcc is installed. Nothing here needs a GPU.
set -eu
CUDA=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$CUDA/include/cuda_runtime_api.h" ]; then
  echo "no CUDA headers in $CUDA: skipped"; exit 0
fi
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
cat >"$dir/c.c" <<'C'
#include "scopeprof.h"
int main(void) {
    cudaStream_t s = 0;
    for (int i = 0; i < 3; i++) {
        PROFILE_GPU_SCOPE("cuda_scope", s);
        PROFILE_SCOPE("cpu");
    }
    return 0;
}
C
for cc in gcc clang; do
  $cc -std=gnu11 -Wall -Wextra -Werror -O2 -DPROFILE_ENABLE -DSCOPEPROF_IMPLEMENTATION -DPROFILE_CUDA -I"$CUDA/include" -Iinclude \
    "$dir/c.c" -o "$dir/c_$cc" -lpthread -ldl
  LD_LIBRARY_PATH="$CUDA/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" SCOPEPROF_OUTPUT=none \
    "$dir/c_$cc" 2>"$dir/err_$cc"
  n=$(grep -c '^scopeprof:' "$dir/err_$cc" || true)
  grep -q '^scopeprof: no CUDA' "$dir/err_$cc" && [ "$n" = 1 ] || { cat "$dir/err_$cc"; echo "FAIL: $cc fallback line"; exit 1; }
  grep -q '^ *cuda_scope .* 3 *$' "$dir/err_$cc" || { cat "$dir/err_$cc"; echo "FAIL: $cc CPU table"; exit 1; }
  echo "ok: $cc -DPROFILE_CUDA builds; without a GPU: $(grep '^scopeprof:' "$dir/err_$cc")"
done
if [ -x "$CUDA/bin/nvcc" ]; then
  "$CUDA/bin/nvcc" -Werror all-warnings -O2 -DPROFILE_ENABLE -DPROFILE_CUDA -Iinclude samples/gpu_spin.cu \
    -o "$dir/gpu_spin"
  echo "ok: nvcc -Werror all-warnings builds samples/gpu_spin.cu"
else
  echo "nvcc not found: samples/gpu_spin.cu not compiled"
fi
