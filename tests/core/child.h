/* child.h -- run a test program as a child process and read what it left:
 * its exit status, stdout, stderr, the exit summary table and the trace file.
 * Shared by test_record.c and known_bugs.c.
 *
 * Programs live next to the test binary and carry the same build variant
 * suffix (VARIANT: "", "_asan" or "_tsan", set by rules.mk), so the ASan run
 * of the tests runs ASan-built programs. Each run gets a fresh directory as
 * its working directory; SCOPEPROF_OUTPUT points into it unless the caller
 * says otherwise, and every SCOPEPROF_* variable of the test's own
 * environment is dropped so the outside cannot change the results. */
#ifndef TESTS_CORE_CHILD_H
#define TESTS_CORE_CHILD_H
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef VARIANT
#define VARIANT ""
#endif

extern char **environ;

typedef struct child {
    int status;          /* exit code, or 128 + signal */
    char *out, *err;     /* everything written to stdout / stderr */
    char dir[64];        /* working directory of the run */
    char trace[PATH_MAX];/* SCOPEPROF_OUTPUT given to it */
} child;

static inline char *child_slurp(const char *path) {
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

/* Run program `prog` (a name; the variant suffix is added) with the extra
 * environment `env` (NULL-terminated "NAME=value" strings; NULL for none).
 * "SCOPEPROF_OUTPUT=-" means: leave SCOPEPROF_OUTPUT unset. */
static inline void child_run(child *c, const char *prog, const char *const *env) {
    memset(c, 0, sizeof *c);
    snprintf(c->dir, sizeof c->dir, "/tmp/scopeprof-test-XXXXXX");
    if (!mkdtemp(c->dir)) { perror("mkdtemp"); abort(); }
    snprintf(c->trace, sizeof c->trace, "%s/trace.sprof", c->dir);

    char exe[PATH_MAX], path[PATH_MAX + 128];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) { perror("readlink"); abort(); }
    exe[n] = 0;
    snprintf(path, sizeof path, "%s/%s%s", dirname(exe), prog, VARIANT);

    /* Environment: ours minus SCOPEPROF_*, plus the caller's, plus a default
     * SCOPEPROF_OUTPUT. getenv returns the first match, so order is moot as
     * long as each name appears once. */
    static char out_var[PATH_MAX + 32];
    const char *envp[512];
    size_t k = 0;
    int has_output = 0;
    for (char **e = environ; *e && k < 400; e++)
        if (strncmp(*e, "SCOPEPROF_", 10) != 0) envp[k++] = *e;
    for (size_t i = 0; env && env[i]; i++) {
        if (strncmp(env[i], "SCOPEPROF_OUTPUT=", 17) == 0) {
            has_output = 1;
            if (strcmp(env[i], "SCOPEPROF_OUTPUT=-") == 0) continue;
            snprintf(c->trace, sizeof c->trace, "%s", env[i] + 17);
        }
        envp[k++] = env[i];
    }
    if (!has_output) {
        snprintf(out_var, sizeof out_var, "SCOPEPROF_OUTPUT=%s", c->trace);
        envp[k++] = out_var;
    }
    envp[k] = NULL;

    char out_path[128], err_path[128];
    snprintf(out_path, sizeof out_path, "%s.out", c->dir);
    snprintf(err_path, sizeof err_path, "%s.err", c->dir);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); abort(); }
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || chdir(c->dir) != 0) _exit(126);
        dup2(o, 1);
        dup2(e, 2);
        char *argv[] = {path, NULL};
        execve(path, argv, (char *const *)envp);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    c->out = child_slurp(out_path);
    c->err = child_slurp(err_path);
    unlink(out_path);
    unlink(err_path);
}

/* Files the run left in its directory (trace files, if any). */
static inline int child_files(const child *c) {
    int n = 0;
    DIR *d = opendir(c->dir);
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static inline void child_free(child *c) {
    DIR *d = opendir(c->dir);
    if (d) {
        char p[PATH_MAX + 300];
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            snprintf(p, sizeof p, "%s/%s", c->dir, e->d_name);
            unlink(p);
        }
        closedir(d);
        rmdir(c->dir);
    }
    free(c->out);
    free(c->err);
}

/* Lines of `s` that contain `needle`. */
static inline int count_lines_with(const char *s, const char *needle) {
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

/* ---- the exit summary ------------------------------------------------------ */

typedef struct trow {
    char name[64];
    double self_us, total_us, avg_us;
    unsigned long calls;
} trow;

/* "26.179ms" -> 26179.0 (microseconds); -1 if it is not a time. */
static inline double parse_time_us(const char *s) {
    char *end;
    double v = strtod(s, &end);
    if (end == s) return -1;
    if (strcmp(end, "us") == 0) return v;
    if (strcmp(end, "ms") == 0) return v * 1e3;
    if (strcmp(end, "s") == 0) return v * 1e6;
    return -1;
}

/* Rows of every table in `err`, in print order. Returns how many. A row is
 * a line of exactly 7 fields whose second is a percentage (or NaN) and
 * whose third is a time: the header, separators and warnings are not. */
static inline int parse_table(const char *err, trow *rows, int max) {
    int n = 0;
    for (const char *s = err; *s && n < max;) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        char line[512], name[64], sp[16], self[16], tp[16], total[16], avg[16], extra[8];
        unsigned long calls;
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), s);
        if (sscanf(line, "%63s %15s %15s %15s %15s %15s %lu %7s", name, sp, self, tp, total, avg,
                   &calls, extra) == 7 &&
            (strchr(sp, '%') || strcmp(sp, "NaN") == 0) && parse_time_us(self) >= 0) {
            trow *r = &rows[n++];
            snprintf(r->name, sizeof r->name, "%s", name);
            r->self_us = parse_time_us(self);
            r->total_us = parse_time_us(total);
            r->avg_us = parse_time_us(avg);
            r->calls = calls;
        }
        s += len + (nl ? 1 : 0);
    }
    return n;
}

static inline const trow *find_row(const trow *rows, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0) return &rows[i];
    return NULL;
}

/* Printed times have 3 decimals in their unit: equal up to that rounding. */
static inline int about_equal(double a, double b) {
    double m = a > b ? a : b;
    return a - b <= 1e-3 * m + 2e-3 && b - a <= 1e-3 * m + 2e-3;
}
#endif
