/* peak_rss.h -- a test program prints its own peak RSS, the VmHWM line of
 * /proc/self/status ("VmHWM:  2856 kB"), for a runner to read from its
 * stdout: wait4's figure for a child includes what the runner's fork held
 * before the exec. */
#ifndef TESTS_COMMON_PEAK_RSS_H
#define TESTS_COMMON_PEAK_RSS_H
#include <stdio.h>
#include <string.h>

static inline void peak_rss_print(void) {
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) printf("%s", line);
    if (f) fclose(f);
}
#endif
