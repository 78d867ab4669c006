/* env.h: the environment variables: one table, its parser, the unknown-name
 * check. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* POSIX has a program declare environ itself; glibc also does under
 * _GNU_SOURCE. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wredundant-decls"
extern char **environ;
#pragma GCC diagnostic pop
/* Parse helpers for the environment: bad values are named and ignored.
 * scopeprof__env_bool: a 0/1 variable's value as a word: 0 for 0, off and
 * false, 1 for 1, on and true, -1 for anything else. */
SCOPEPROF__INTERNAL int scopeprof__env_bool(const char *v) {
    static const char *const w[] = {"0", "off", "false", "1", "on", "true"};
    for (int i = 0; i < 6; i++)
        if (strcmp(v, w[i]) == 0) return i / 3;
    return -1;
}

static inline int scopeprof__env_int(const char *var, long lo, long hi, int *out) {
    const char *v = getenv(var);
    if (!v) return 0;
    int b = lo == 0 && hi == 1 ? scopeprof__env_bool(v) : -1;
    if (b >= 0) return (void)(*out = b), 1;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    /* A sign or a digit first: strtol also takes " +5". */
    if (!(*v == '-' || (*v >= '0' && *v <= '9')) || *end != 0 || errno || x < lo || x > hi) {
        scopeprof__warn("scopeprof: ignoring %s='%s': expected an integer from %ld to %ld", var,
                        v, lo, hi);
        return 0;
    }
    *out = (int)x;
    return 1;
}

/* "skip_first=1,wait=1,warmup=1,active=3,repeat=2": keys in any order, each
 * once, omitted ones 0 (active: 1). A bad value, an empty one (the whole
 * value, or between commas) or a key given twice is named and the schedule
 * ignored. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__parse_schedule(scopeprof__state *g, const char *v) {
    static const char *const keys[] = {"skip_first", "wait", "warmup", "active", "repeat"};
    int val[5] = {0, 0, 0, 1, 0}, seen = 0;
    const char *p = v;
    do {
        int k = -1;
        for (int i = 0; i < 5; i++) {
            size_t l = strlen(keys[i]);
            if (strncmp(p, keys[i], l) == 0 && p[l] == '=') {
                k = i;
                p += l + 1;
                break;
            }
        }
        char *end = NULL; /* set only for a known key and a digit (strtol takes " +5") */
        long x = k >= 0 && *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1;
        if (!end || (seen >> k & 1) || x > 1000000 || (*end && (*end != ',' || !end[1])) || (k == 3 && x == 0)) {
            scopeprof__warn("scopeprof: ignoring SCOPEPROF_SCHEDULE='%s': expected "
                            "skip_first=N,wait=N,warmup=N,active=N(>0),repeat=N", v);
            return;
        }
        val[k] = (int)x;
        seen |= 1 << k;
        p = *end ? end + 1 : end;
    } while (*p);
    g->sched.on = 1;
    g->sched.skip_first = val[0], g->sched.wait = val[1], g->sched.warmup = val[2], g->sched.active = val[3], g->sched.repeat = val[4];
}

/* ---- Environment ----------------------------------------------------------
 * Every SCOPEPROF_ variable, in one table: X(NAME, DEFAULT, LO, HI, DOC).
 * An integer variable is parsed in [LO, HI] and DEFAULT is its value when it
 * is unset or bad; a text variable (LO > HI) is handed to scopeprof__read_env
 * as a string, and DEFAULT (-1) stands for the default that DOC names. The
 * header's first screen, README and scopeprof(3) list the same names and
 * defaults (tests/core/env_doc.sh checks them against this table). */
#define SCOPEPROF__ENV(X)                                                                  \
    X(OUTPUT, -1, 1, 0, "trace file path, or a directory for the default name (<program>.<pid>.sprof); none: no file")    \
    X(SUMMARY, -1, 1, 0, "0 silences the exit table, all prints it on every rank (default 1)") \
    X(SORT, -1, 1, 0, "sort key of the exit table (default cpu_time_total)")                 \
    X(GROUP_BY, -1, 1, 0, "rows of the exit table: name (default) or shape (input_shape)")    \
    X(ROW_LIMIT, 20, -1, 1000000, "rows of the exit table; 0 or -1: all")                     \
    X(BUFFER_MB, 64, 1, 1 << 20, "memory budget for event buffers, MiB")                      \
    X(SCHEDULE, -1, 1, 0, "skip_first=N,wait=N,warmup=N,active=N,repeat=N (default none)")    \
    X(COMPENSATE, 1, 0, 1, "0: no overhead compensation")                                     \
    X(WRITER, 1, 0, 1, "0: no background writer thread")                                      \
    X(FLUSH_MS, 100, 1, 3600000, "the writer writes at least this often, ms")                  \
    X(SIGNALS, 1, 0, 1, "0: no signal handlers")                                          \
    X(CLOCK, -1, 1, 0, "tsc (default: the TSC where the CPU says it is invariant) or monotonic")

#define SCOPEPROF__ENV_ENUM(name, def, lo, hi, doc) SCOPEPROF__ENV_##name,
enum { SCOPEPROF__ENV(SCOPEPROF__ENV_ENUM) SCOPEPROF__ENV_COUNT };
#undef SCOPEPROF__ENV_ENUM

/* The environment as read: integers, and the text variables' strings
 * (NULL: unset). */
typedef struct scopeprof__env {
    int num[SCOPEPROF__ENV_COUNT];
    const char *text[SCOPEPROF__ENV_COUNT];
} scopeprof__env;

/* The variable older versions left for their modules (the registry's
 * address, registry.h "Finding the registry" says why no more): a program
 * they traced passes it on, so it is no typo. Never read. */
#define SCOPEPROF__OLD_STATE_ENV "SCOPEPROF_INTERNAL_STATE"

/* Read every variable of the table into *env, and name once on stderr each
 * SCOPEPROF_ variable that is not in it: most likely a typo (SCOPEPROF_OUT
 * for SCOPEPROF_OUTPUT), with which the run would quietly go on with the
 * default. In a privileged process (`secure`) nothing is read: the defaults. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__env_read_all(scopeprof__env *env, int secure) {
    static const char *const names[] = {
#define SCOPEPROF__ENV_NAME(name, def, lo, hi, doc) "SCOPEPROF_" #name,
        SCOPEPROF__ENV(SCOPEPROF__ENV_NAME)
#undef SCOPEPROF__ENV_NAME
    };
    static const long lo[] = {
#define SCOPEPROF__ENV_LO(name, def, lo, hi, doc) lo,
        SCOPEPROF__ENV(SCOPEPROF__ENV_LO)
#undef SCOPEPROF__ENV_LO
    };
    static const long hi[] = {
#define SCOPEPROF__ENV_HI(name, def, lo, hi, doc) hi,
        SCOPEPROF__ENV(SCOPEPROF__ENV_HI)
#undef SCOPEPROF__ENV_HI
    };
    static const int def[] = {
#define SCOPEPROF__ENV_DEF(name, def, lo, hi, doc) def,
        SCOPEPROF__ENV(SCOPEPROF__ENV_DEF)
#undef SCOPEPROF__ENV_DEF
    };
    for (int i = 0; i < SCOPEPROF__ENV_COUNT; i++) {
        env->num[i] = def[i];
        env->text[i] = NULL;
        if (secure) continue;
        if (lo[i] > hi[i]) env->text[i] = getenv(names[i]);
        else scopeprof__env_int(names[i], lo[i], hi[i], &env->num[i]);
    }
    for (char **e = environ; e && *e && !secure; e++) {
        if (strncmp(*e, "SCOPEPROF_", 10) != 0) continue;
        size_t len = strcspn(*e, "="), i = 0;
        while (i < SCOPEPROF__ENV_COUNT && !(strlen(names[i]) == len && memcmp(names[i], *e, len) == 0)) i++;
        if (i < SCOPEPROF__ENV_COUNT || (len == strlen(SCOPEPROF__OLD_STATE_ENV) &&
                                         memcmp(*e, SCOPEPROF__OLD_STATE_ENV, len) == 0))
            continue;
        char list[256] = "";
        for (int k = 0; k < SCOPEPROF__ENV_COUNT; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", names[k],
                     k + 2 < SCOPEPROF__ENV_COUNT ? ", " : k + 2 == SCOPEPROF__ENV_COUNT ? " and " : "");
        scopeprof__warn("scopeprof: ignoring unknown variable %.*s: the header reads %s",
                        (int)(len < 74 ? len : 74), *e, list);
    }
}

enum { SCOPEPROF__WRITER_NONE, SCOPEPROF__WRITER_RUNNING, SCOPEPROF__WRITER_NEVER };
/* The configuration from the environment (at the registry's creation).
 *
 * A privileged process (setuid, setgid, or file capabilities: the kernel
 * sets AT_SECURE) runs with rights its user does not have, in an
 * environment that user wrote: SCOPEPROF_OUTPUT would let the user create or
 * overwrite files with the program's rights. So, as secure_getenv does, no
 * variable is read there; and nothing is written either: no trace file (one
 * made with the real user's rights would still hand that user the
 * privileged program's internals and timings), no exit table (the same
 * times, on the user's terminal), and no signal handler is installed. One
 * line says so. To profile
 * such a program, run it as the user it runs as (root runs a setuid-root
 * program without AT_SECURE). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__read_env(scopeprof__state *g) {
    scopeprof__env env;
    const char *v;
    g->out.rank = -1;
    g->cfg.secure = getauxval(AT_SECURE) != 0;
    if (!g->cfg.secure) { /* rank from the usual launchers' variables */
        static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"};
        for (int i = 0; i < 4 && g->out.rank < 0; i++)
            if (getenv(vars[i])) scopeprof__env_int(vars[i], 0, 1 << 30, &g->out.rank);
    }
    scopeprof__env_read_all(&env, g->cfg.secure);
    g->cfg.summary = 1;
    if ((v = env.text[SCOPEPROF__ENV_SUMMARY]) != NULL) {
        if (strcmp(v, "all") == 0) g->cfg.summary = g->cfg.summary_all = 1;
        else if ((g->cfg.summary = scopeprof__env_bool(v)) < 0) {
            g->cfg.summary = 1;
            scopeprof__warn("scopeprof: ignoring SCOPEPROF_SUMMARY='%s': expected 0, 1 or all", v);
        }
    }
    g->cfg.sort = SCOPEPROF_SORT_CPU_TIME_TOTAL;
    if ((v = env.text[SCOPEPROF__ENV_SORT]) != NULL && scopeprof_sort_parse(v, &g->cfg.sort) != 0)
        scopeprof__warn("scopeprof: ignoring SCOPEPROF_SORT='%s': valid keys are %s", v,
                        scopeprof_sort_keys());
    if ((v = env.text[SCOPEPROF__ENV_GROUP_BY]) != NULL) {
        if (strcmp(v, "shape") == 0 || strcmp(v, "input_shape") == 0) g->cfg.group_shape = 1;
        else if (strcmp(v, "name") != 0)
            scopeprof__warn("scopeprof: ignoring SCOPEPROF_GROUP_BY='%s': expected name or shape (per thread "
                            "or rank: scopeprof table --group-by on the trace)", v);
    }
    g->cfg.row_limit = env.num[SCOPEPROF__ENV_ROW_LIMIT];
    g->cfg.budget = (size_t)env.num[SCOPEPROF__ENV_BUFFER_MB] << 20;
    g->cfg.signals = env.num[SCOPEPROF__ENV_SIGNALS];
    g->cfg.compensate = env.num[SCOPEPROF__ENV_COMPENSATE];
    g->wr.state = env.num[SCOPEPROF__ENV_WRITER] ? SCOPEPROF__WRITER_NONE : SCOPEPROF__WRITER_NEVER;
    g->cfg.flush_ms = env.num[SCOPEPROF__ENV_FLUSH_MS];
    if ((v = env.text[SCOPEPROF__ENV_CLOCK]) != NULL) {
        if (strcmp(v, "monotonic") == 0) g->cfg.clock_mono = 1;
        else if (strcmp(v, "tsc") != 0)
            scopeprof__warn("scopeprof: ignoring SCOPEPROF_CLOCK='%s': expected tsc or monotonic", v);
    }
    scopeprof__read_prog(g->cfg.prog);
    v = env.text[SCOPEPROF__ENV_OUTPUT];
    const char *dir = NULL; /* SCOPEPROF_OUTPUT names a directory: the default names go there */
    struct stat st;
    if (g->cfg.secure) {
        g->out.fd = -2;
        g->out.no_output = 1;
        g->cfg.summary = 0;
        g->cfg.signals = 0;
        scopeprof__warn("scopeprof: privileged process (setuid, setgid or file capabilities): "
                        "no SCOPEPROF_ variable is read and nothing is written (no trace, no "
                        "table); profile it as the user it runs as");
    } else if (v && v[0] == 0) { /* most likely an unset shell variable: the default file */
        scopeprof__warn("scopeprof: SCOPEPROF_OUTPUT is empty: writing the default file (SCOPEPROF_OUTPUT=none writes none)");
        v = NULL;
    } else if (v && strcmp(v, "none") == 0) {
        g->out.fd = -2;
        g->out.no_output = 1;
    } else if (v && (v[strlen(v) - 1] == '/' || (stat(v, &st) == 0 && S_ISDIR(st.st_mode)))) {
        dir = v; /* one file per process (and rank) in it, as in the working directory */
        v = NULL;
    } else if (v) {
        if (strlen(v) >= sizeof g->out.path) {
            scopeprof__warn("scopeprof: ignoring SCOPEPROF_OUTPUT: path longer than %zu bytes",
                            sizeof g->out.path - 1);
            v = NULL;
        } else {
            snprintf(g->out.path, sizeof g->out.path, "%s", v);
            scopeprof__json_path(g); /* a JSON name: the trace goes to NAME.sprof, said */
            if (g->out.rank >= 0) scopeprof__rank_path(g); /* ranks never share a path */
            scopeprof__claim_output(g);
        }
    }
    if (!v && !g->cfg.secure) {
        /* Where the default name lives: the working directory now (or
         * SCOPEPROF_OUTPUT's directory, from there), at the first scope, not
         * at the first write, after a daemon's chdir("/") (or a forked
         * child's: it keeps this one). */
        if (!getcwd(g->out.dir, sizeof g->out.dir)) g->out.dir[0] = 0; /* then relative */
        if (dir) {
            char d[sizeof g->out.dir];
            int n = dir[0] == '/' || !g->out.dir[0] ? snprintf(d, sizeof d, "%s", dir)
                                                    : snprintf(d, sizeof d, "%s/%s", g->out.dir, dir);
            if (n > 0 && (size_t)n < sizeof d) memcpy(g->out.dir, d, (size_t)n + 1);
            else scopeprof__warn("scopeprof: ignoring SCOPEPROF_OUTPUT: path longer than %zu bytes", sizeof d - 1);
        }
        scopeprof__default_path(g);
        g->out.path_is_default = 1;
    }
    if ((v = env.text[SCOPEPROF__ENV_SCHEDULE]) != NULL) scopeprof__parse_schedule(g, v);
}

#ifdef __cplusplus
}
#endif
#endif /* env.h */
