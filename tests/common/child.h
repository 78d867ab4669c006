/* child.h -- run a test program as a child process, the way a user would, and
 * collect what it leaves: exit code or killing signal, stdout, stderr, peak
 * RSS, the files in its working directory; and read the exit table it
 * printed.
 *
 * Contract:
 * - Programs live next to the test binary (found through /proc/self/exe).
 *   child_run and child_run_args add the build variant suffix (VARIANT: "",
 *   "_asan", "_tsan", set by rules.mk), so the sanitizer run of the tests
 *   runs sanitizer-built programs; child_run_ex(..., plain = 1, ...) takes
 *   the name as it is.
 * - Each run gets a fresh working directory (child.dir, under /tmp). The
 *   child's environment is the test's own minus every SCOPEPROF_* and rank
 *   variable (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, RANK), so the
 *   outside cannot change results, plus the caller's "NAME=value" strings.
 *   SCOPEPROF_OUTPUT defaults to <dir>/trace.sprof (child.trace);
 *   "SCOPEPROF_OUTPUT=-" leaves it unset (child.trace ""). SIGINT and SIGTERM
 *   have their default dispositions in the child.
 * - child_run_user runs it as another user (uid and gid, as `setpriv` would:
 *   supplementary groups dropped), in a directory every user may write (mode
 *   0777, not sticky, as a shared working directory); a `prog` that starts
 *   with '/' is that file (a setuid copy, say), not a program of the build.
 * - Every run has a time limit: a hang is a failure, never a stuck suite
 *   (SIGKILL after CHILD_TIMEOUT_S seconds, reported as timed_out).
 * - child_free removes the directory and what the program left in it (not
 *   subdirectories); a test that fails before child_free leaves it for
 *   inspection.
 * - Everything is prefixed child_ / CHILD_. Functions are static inline. */
#ifndef TESTS_COMMON_CHILD_H
#define TESTS_COMMON_CHILD_H
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef VARIANT
#define VARIANT ""
#endif
#ifndef CHILD_TIMEOUT_S
#define CHILD_TIMEOUT_S 20
#endif

extern char **environ;

typedef struct child {
    int status;          /* exit code, or 128 + signal */
    int exited, code;    /* exited normally with `code` (-1 otherwise) */
    int signaled, sig;   /* or killed by `sig` */
    int timed_out;       /* killed by the runner after CHILD_TIMEOUT_S */
    int pid;
    long maxrss_kb;
    char *out, *err;     /* everything written to stdout / stderr */
    char dir[64];        /* its working directory */
    char trace[PATH_MAX];/* the SCOPEPROF_OUTPUT it was given ("" if unset) */
} child;

/* The whole file, NUL-terminated ("" if it cannot be read). Free it. */
static inline char *child_slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = (char *)malloc(n > 0 ? (size_t)n + 1 : 1);
    if (!b) abort();
    size_t got = fread(b, 1, n > 0 ? (size_t)n : 0, f);
    b[got] = 0;
    fclose(f);
    return b;
}

static inline int child_dropped(const char *e) {
    static const char *const drop[] = {"SCOPEPROF_", "OMPI_COMM_WORLD_RANK=", "PMI_RANK=",
                                       "SLURM_PROCID=", "RANK="};
    for (size_t i = 0; i < sizeof drop / sizeof *drop; i++)
        if (strncmp(e, drop[i], strlen(drop[i])) == 0) return 1;
    return 0;
}

/* The full path of program `prog`, with this variant's suffix if `variant`
 * (an absolute `prog` is taken as it is). */
static inline void child_prog_path(char *buf, size_t n, const char *prog, int variant) {
    if (prog[0] == '/') {
        snprintf(buf, n, "%s", prog);
        return;
    }
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k < 0) { perror("readlink"); abort(); }
    exe[k] = 0;
    snprintf(buf, n, "%s/%s%s", dirname(exe), prog, variant ? VARIANT : "");
}

/* Run `prog` (variant suffix added unless plain != 0) with arguments argv
 * (NULL-terminated, after argv[0]; NULL for none) and extra environment env
 * ("NAME=value", NULL-terminated; NULL for none), as user uid and group gid
 * (-1: the runner's own). */
static inline void child_run_as(child *c, const char *prog, int plain, int uid, int gid,
                                const char *const *argv, const char *const *env) {
    memset(c, 0, sizeof *c);
    snprintf(c->dir, sizeof c->dir, "/tmp/scopeprof-test-XXXXXX");
    if (!mkdtemp(c->dir)) { perror("mkdtemp"); abort(); }
    if (uid >= 0 && chmod(c->dir, 0777) != 0) { perror("chmod"); abort(); }
    char path[PATH_MAX + 64];
    child_prog_path(path, sizeof path, prog, !plain);

    /* Ours minus the dropped ones, the caller's, a default SCOPEPROF_OUTPUT.
     * getenv returns the first match, so order is moot as long as each name
     * appears once. */
    static char out_var[PATH_MAX + 32];
    const char *envp[600];
    size_t k = 0;
    int has_output = 0;
    for (char **e = environ; *e && k < 500; e++)
        if (!child_dropped(*e)) envp[k++] = *e;
    for (size_t i = 0; env && env[i] && k < 590; i++) {
        if (strncmp(env[i], "SCOPEPROF_OUTPUT=", 17) == 0) {
            has_output = 1;
            if (strcmp(env[i], "SCOPEPROF_OUTPUT=-") == 0) continue;
            snprintf(c->trace, sizeof c->trace, "%s", env[i] + 17);
        }
        envp[k++] = env[i];
    }
    if (!has_output) {
        snprintf(c->trace, sizeof c->trace, "%s/trace.sprof", c->dir);
        snprintf(out_var, sizeof out_var, "SCOPEPROF_OUTPUT=%s", c->trace);
        envp[k++] = out_var;
    }
    envp[k] = NULL;
    const char *args[64];
    size_t na = 0;
    args[na++] = path;
    for (size_t i = 0; argv && argv[i] && na < 63; i++) args[na++] = argv[i];
    args[na] = NULL;

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
        if (gid >= 0 && (setgroups(0, NULL) != 0 || setgid((gid_t)gid) != 0)) _exit(125);
        if (uid >= 0 && setuid((uid_t)uid) != 0) _exit(125);
        /* Default dispositions, whatever the test runner inherited (a
         * shell's background job ignores SIGINT and SIGQUIT: the SIGQUIT
         * case of test_hup_pipe_quit then waited for its timeout). */
        static const int sigs[] = {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE};
        for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) signal(sigs[k], SIG_DFL);
        execve(path, (char *const *)args, (char *const *)envp);
        _exit(127);
    }
    c->pid = (int)pid;
    int st = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) { /* poll, so that a hang is caught */
        pid_t w = wait4(pid, &st, WNOHANG, &ru);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) { perror("wait4"); abort(); }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!c->timed_out && now.tv_sec - t0.tv_sec >= CHILD_TIMEOUT_S) {
            c->timed_out = 1;
            kill(pid, SIGKILL);
        }
        struct timespec nap = {0, 2000000};
        nanosleep(&nap, NULL);
    }
    c->exited = WIFEXITED(st);
    c->code = c->exited ? WEXITSTATUS(st) : -1;
    c->signaled = WIFSIGNALED(st);
    c->sig = c->signaled ? WTERMSIG(st) : 0;
    c->status = c->exited ? c->code : 128 + c->sig;
    c->maxrss_kb = ru.ru_maxrss;
    c->out = child_slurp(out_path);
    c->err = child_slurp(err_path);
    unlink(out_path);
    unlink(err_path);
}

static inline void child_run_ex(child *c, const char *prog, int plain, const char *const *argv,
                                const char *const *env) {
    child_run_as(c, prog, plain, -1, -1, argv, env);
}

/* `prog` of this variant, as user uid and group gid. */
static inline void child_run_user(child *c, const char *prog, int uid, int gid,
                                  const char *const *argv, const char *const *env) {
    child_run_as(c, prog, 0, uid, gid, argv, env);
}

/* `prog` of this variant with arguments. */
static inline void child_run_args(child *c, const char *prog, const char *const *argv,
                                  const char *const *env) {
    child_run_ex(c, prog, 0, argv, env);
}

/* `prog` of this variant without arguments. */
static inline void child_run(child *c, const char *prog, const char *const *env) {
    child_run_ex(c, prog, 0, NULL, env);
}

/* How many entries (files, whatever they are) the run left in its
 * directory, "." and ".." aside; -1 if it cannot be read. */
static inline int child_count_files(const child *c) {
    int n = 0;
    DIR *d = opendir(c->dir);
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Names of the files in the run's directory whose name ends with `suffix`
 * (all for ""), sorted; returns how many (at most max; 0 if the directory
 * cannot be read). */
static inline int child_list_files(const child *c, const char *suffix, char names[][256], int max) {
    int n = 0;
    DIR *d = opendir(c->dir);
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
    c->out = c->err = NULL;
}

/* Lines of `s` that contain `needle`. */
static inline int child_lines_with(const char *s, const char *needle) {
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

/* ---- the exit table ------------------------------------------------------- */

/* "26.179ms" -> 26179.0 (microseconds); -1 if it is not a time. */
static inline double child_time_us(const char *s) {
    char *end;
    double v = strtod(s, &end);
    if (end == s) return -1;
    if (strcmp(end, "us") == 0) return v;
    if (strcmp(end, "ms") == 0) return v * 1e3;
    if (strcmp(end, "s") == 0) return v * 1e6;
    return -1;
}

/* A row of the CPU-only table (7 columns, no memory or GPU columns). */
typedef struct child_row {
    char name[64];
    double self_us, total_us, avg_us;
    unsigned long calls;
} child_row;

/* Rows of every CPU-only table in `err`, in print order. Returns how many.
 * A row is a line of exactly 7 fields whose second is a percentage (or NaN)
 * and whose third is a time: the header, separators and warnings are not. */
static inline int child_table_rows(const char *err, child_row *rows, int max) {
    int n = 0;
    for (const char *s = err; *s && n < max;) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        char line[512], name[64], sp[16], self[16], tp[16], total[16], avg[16], extra[8];
        unsigned long calls;
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), s);
        if (sscanf(line, "%63s %15s %15s %15s %15s %15s %lu %7s", name, sp, self, tp, total, avg,
                   &calls, extra) == 7 &&
            (strchr(sp, '%') || strcmp(sp, "NaN") == 0) && child_time_us(self) >= 0) {
            child_row *r = &rows[n++];
            snprintf(r->name, sizeof r->name, "%s", name);
            r->self_us = child_time_us(self);
            r->total_us = child_time_us(total);
            r->avg_us = child_time_us(avg);
            r->calls = calls;
        }
        s += len + (nl ? 1 : 0);
    }
    return n;
}

static inline const child_row *child_find_row(const child_row *rows, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0) return &rows[i];
    return NULL;
}

/* Printed times have 3 decimals in their unit: equal up to that rounding. */
static inline int child_about_equal(double a, double b) {
    double m = a > b ? a : b;
    return a - b <= 1e-3 * m + 2e-3 && b - a <= 1e-3 * m + 2e-3;
}

/* The row of `name` in any table of `err`, split into cells on runs of two
 * or more spaces (memory cells such as "-700 b" hold single spaces). Returns
 * the number of cells (0: no such row). Cell 0 is the name. */
static inline int child_table_row(const char *err, const char *name, char cells[][64], int max) {
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
static inline int child_table_col(const char *err, const char *head) {
    char cells[32][64];
    int n = child_table_row(err, "Name", cells, 32);
    for (int i = 0; i < n; i++)
        if (strcmp(cells[i], head) == 0) return i;
    return -1;
}
#endif
