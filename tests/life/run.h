/* run.h -- run a test program as a child process, the way a user would, and
 * collect what it leaves: exit code or killing signal, stdout, stderr, peak
 * RSS, and the files in its working directory.
 *
 * Programs live next to the test binary with the same variant suffix
 * (VARIANT: "", "_asan", "_tsan"), so the sanitizer run of the tests runs
 * sanitizer-built programs. Each run gets a fresh working directory; the
 * caller's SCOPEPROF_* and rank variables are dropped so the outside cannot
 * change results. Every run has a time limit: a hang is a failure (SIGKILL
 * after RUN_TIMEOUT_S seconds, reported as timed_out), never a stuck suite. */
#ifndef TESTS_LIFE_RUN_H
#define TESTS_LIFE_RUN_H
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef VARIANT
#define VARIANT ""
#endif
#define RUN_TIMEOUT_S 20

extern char **environ;

typedef struct run {
    int exited, code;    /* exited normally with `code` */
    int signaled, sig;   /* or killed by `sig` */
    int timed_out;
    int pid;
    long maxrss_kb;
    char *out, *err;
    char dir[64];        /* its working directory */
    char trace[PATH_MAX];/* the SCOPEPROF_OUTPUT it was given ("" if unset) */
} run;

static inline char *run_slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = (char *)malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = 0;
    fclose(f);
    return b;
}

static inline int run_dropped(const char *e) {
    static const char *const drop[] = {"SCOPEPROF_", "OMPI_COMM_WORLD_RANK=", "PMI_RANK=",
                                       "SLURM_PROCID=", "RANK="};
    for (size_t i = 0; i < sizeof drop / sizeof *drop; i++)
        if (strncmp(e, drop[i], strlen(drop[i])) == 0) return 1;
    return 0;
}

/* The full path of program `prog` of this variant. */
static inline void run_prog_path(char *buf, size_t n, const char *prog, int variant) {
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k < 0) { perror("readlink"); abort(); }
    exe[k] = 0;
    snprintf(buf, n, "%s/%s%s", dirname(exe), prog, variant ? VARIANT : "");
}

/* Run `prog` (variant suffix added unless plain != 0) with arguments argv
 * (NULL-terminated, after argv[0]) and extra environment env ("NAME=value",
 * NULL-terminated). SCOPEPROF_OUTPUT defaults to <dir>/trace.sprof;
 * "SCOPEPROF_OUTPUT=-" leaves it unset. */
static inline void run_prog_ex(run *r, const char *prog, int plain, const char *const *argv,
                               const char *const *env) {
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "/tmp/scopeprof-life-XXXXXX");
    if (!mkdtemp(r->dir)) { perror("mkdtemp"); abort(); }
    char path[PATH_MAX + 64];
    run_prog_path(path, sizeof path, prog, !plain);

    static char out_var[PATH_MAX + 32];
    const char *envp[600];
    size_t k = 0;
    int has_output = 0;
    for (char **e = environ; *e && k < 500; e++)
        if (!run_dropped(*e)) envp[k++] = *e;
    for (size_t i = 0; env && env[i] && k < 590; i++) {
        if (strncmp(env[i], "SCOPEPROF_OUTPUT=", 17) == 0) {
            has_output = 1;
            if (strcmp(env[i], "SCOPEPROF_OUTPUT=-") == 0) continue;
            snprintf(r->trace, sizeof r->trace, "%s", env[i] + 17);
        }
        envp[k++] = env[i];
    }
    if (!has_output) {
        snprintf(r->trace, sizeof r->trace, "%s/trace.sprof", r->dir);
        snprintf(out_var, sizeof out_var, "SCOPEPROF_OUTPUT=%s", r->trace);
        envp[k++] = out_var;
    }
    envp[k] = NULL;
    const char *args[64];
    size_t na = 0;
    args[na++] = path;
    for (size_t i = 0; argv && argv[i] && na < 63; i++) args[na++] = argv[i];
    args[na] = NULL;

    char out_path[128], err_path[128];
    snprintf(out_path, sizeof out_path, "%s.out", r->dir);
    snprintf(err_path, sizeof err_path, "%s.err", r->dir);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); abort(); }
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || chdir(r->dir) != 0) _exit(126);
        dup2(o, 1);
        dup2(e, 2);
        /* Default dispositions, whatever the test runner inherited. */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execve(path, (char *const *)args, (char *const *)envp);
        _exit(127);
    }
    r->pid = (int)pid;
    int st = 0;
    struct rusage ru;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) { /* poll, so that a hang is caught */
        pid_t w = wait4(pid, &st, WNOHANG, &ru);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) { perror("wait4"); abort(); }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!r->timed_out && now.tv_sec - t0.tv_sec >= RUN_TIMEOUT_S) {
            r->timed_out = 1;
            kill(pid, SIGKILL);
        }
        struct timespec nap = {0, 2000000};
        nanosleep(&nap, NULL);
    }
    r->exited = WIFEXITED(st);
    r->code = r->exited ? WEXITSTATUS(st) : -1;
    r->signaled = WIFSIGNALED(st);
    r->sig = r->signaled ? WTERMSIG(st) : 0;
    r->maxrss_kb = ru.ru_maxrss;
    r->out = run_slurp(out_path);
    r->err = run_slurp(err_path);
    unlink(out_path);
    unlink(err_path);
}

static inline void run_prog(run *r, const char *prog, const char *const *argv,
                            const char *const *env) {
    run_prog_ex(r, prog, 0, argv, env);
}

/* Names of the files in the run's directory whose name ends with `suffix`
 * (all files for ""), sorted; returns how many (at most max). */
static inline int run_files(const run *r, const char *suffix, char names[][256], int max) {
    int n = 0;
    DIR *d = opendir(r->dir);
    if (!d) return 0;
    size_t sl = strlen(suffix);
    for (struct dirent *e; (e = readdir(d)) && n < max;) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l < sl || strcmp(e->d_name + l - sl, suffix) != 0) continue;
        snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(d);
    for (int i = 1; i < n; i++) /* insertion sort: a handful of names */
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char tmp[256];
            memcpy(tmp, names[j], 256);
            memcpy(names[j], names[j - 1], 256);
            memcpy(names[j - 1], tmp, 256);
        }
    return n;
}

static inline void run_free(run *r) {
    DIR *d = opendir(r->dir);
    if (d) {
        char p[PATH_MAX + 300];
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            snprintf(p, sizeof p, "%s/%s", r->dir, e->d_name);
            unlink(p);
        }
        closedir(d);
        rmdir(r->dir);
    }
    free(r->out);
    free(r->err);
}

/* Lines of `s` containing `needle`. */
static inline int lines_with(const char *s, const char *needle) {
    int n = 0;
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        const char *hit = strstr(s, needle);
        if (hit && (size_t)(hit - s) < len) n++;
        s += len + (nl ? 1 : 0);
    }
    return n;
}

/* The table row of `name` in `err`, split into cells on runs of two or more
 * spaces (memory cells such as "-700 b" hold single spaces). Returns the
 * number of cells (0: no such row). Cell 0 is the name. */
static inline int table_row(const char *err, const char *name, char cells[][64], int max) {
    for (const char *s = err; *s;) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        const char *p = s, *end = s + len;
        int n = 0;
        while (p < end && n < max) {
            while (p < end && *p == ' ') p++;
            if (p >= end) break;
            const char *q = p;
            while (q < end && !(q[0] == ' ' && (q + 1 >= end || q[1] == ' '))) q++;
            snprintf(cells[n++], 64, "%.*s", (int)(q - p), p);
            p = q;
        }
        if (n > 1 && strcmp(cells[0], name) == 0) return n;
        s += len + (nl ? 1 : 0);
    }
    return 0;
}

/* The column index of header `head` in the table of `err` (the line that
 * starts with "Name"), or -1. */
static inline int table_col(const char *err, const char *head) {
    char cells[32][64];
    int n = table_row(err, "Name", cells, 32);
    for (int i = 0; i < n; i++)
        if (strcmp(cells[i], head) == 0) return i;
    return -1;
}

/* "26.179ms" -> 26179.0 microseconds; -1 if not a time. */
static inline double time_us(const char *s) {
    char *end;
    double v = strtod(s, &end);
    if (end == s) return -1;
    if (strcmp(end, "us") == 0) return v;
    if (strcmp(end, "ms") == 0) return v * 1e3;
    if (strcmp(end, "s") == 0) return v * 1e6;
    return -1;
}
#endif
