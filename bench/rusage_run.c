/* rusage_run.c -- run a command, then print its wall time and peak RSS.
 *
 *   rusage_run COMMAND [ARGS...]
 *   prints to stderr:  rusage_run: wall_s=1.234567 maxrss_kb=12345 status=0 cpu_s=2.345678
 *
 * cpu_s: user + system time of the command, all its threads (wait4).
 *
 * The fallback of bench/reporter_bench.sh when /usr/bin/time is missing; the
 * wall time comes from CLOCK_MONOTONIC, the peak RSS from wait4()'s rusage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: rusage_run COMMAND [ARGS...]\n");
        return 2;
    }
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        perror("rusage_run: fork");
        return 1;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        fprintf(stderr, "rusage_run: cannot run %s: %s\n", argv[1], strerror(errno));
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) {
            perror("rusage_run: wait4");
            return 1;
        }
    double wall = now_s() - t0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec / 1e6;
    fprintf(stderr, "rusage_run: wall_s=%.6f maxrss_kb=%ld status=%d cpu_s=%.6f\n", wall, ru.ru_maxrss, code, cpu);
    return code;
}
