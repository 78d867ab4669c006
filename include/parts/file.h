/* file.h: the trace file's life: its name, opening, chunk framing, the
 * chunks of sites, threads, devices, GPU intervals, memory and steps, and its
 * end. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* ---- Naming ----------------------------------------------------------------
 * Every name a trace file gets comes from here: the default
 * (scopeprof__default_path), a second process's on a path taken
 * (scopeprof__pid_path), a schedule's cycle (scopeprof__cycle_path), an
 * exec'd image's and the next one when a name is taken (scopeprof__create,
 * "Creating the file"); each is a word put before the ".sprof" of another
 * name (scopeprof__path_insert). */

/* The program's name (/proc/self/comm), for the default name and the file's
 * header. */
SCOPEPROF__INTERNAL void scopeprof__read_prog(char prog[256]) {
    prog[0] = 0;
    FILE *f = fopen("/proc/self/comm", "r");
    if (f) {
        if (fgets(prog, 256, f)) prog[strcspn(prog, "\n")] = 0;
        fclose(f);
    }
    if (!prog[0]) snprintf(prog, 256, "scopeprof");
}

/* <program>.<pid>.sprof, or <program>.rank<R>.<pid>.sprof when the rank is
 * known, in g->out.dir: the working directory at the first scope, kept by a
 * forked child (relative, to the working directory of the moment, if that
 * could not be read or is too long). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__default_path(scopeprof__state *g) {
    char prog[256], name[320];
    scopeprof__read_prog(prog);
    for (char *p = prog; *p; p++)
        if (*p == '/' || *p == ' ') *p = '_';
    if (g->out.rank >= 0) snprintf(name, sizeof name, "%s.rank%d.%d.sprof", prog, g->out.rank, (int)getpid());
    else snprintf(name, sizeof name, "%s.%d.sprof", prog, (int)getpid());
    size_t dl = strlen(g->out.dir), nl = strlen(name);
    if (dl && g->out.dir[dl - 1] == '/') dl--; /* "/" */
    if (g->out.dir[0] && dl + 1 + nl < sizeof g->out.path) {
        memcpy(g->out.path, g->out.dir, dl);
        g->out.path[dl] = '/';
        memcpy(g->out.path + dl + 1, name, nl + 1);
    } else {
        memcpy(g->out.path, name, nl + 1);
    }
}

/* base with ".<word>" put before its ".sprof" ("run.sprof" -> "run.7.sprof"),
 * or after it when it has none (then ".sprof" is added if `ext`). */
static inline void scopeprof__path_insert(char *dst, size_t n, const char *base, const char *word,
                                          int ext) {
    size_t l = strlen(base);
    int has = l > 6 && strcmp(base + l - 6, ".sprof") == 0;
    snprintf(dst, n, "%.*s.%s%s", (int)(has ? l - 6 : l), base, word, has || ext ? ".sprof" : "");
}

/* "run.sprof" -> "run.<pid>.sprof": the name of a second process's trace
 * when the path it was given belongs to another. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__pid_path(scopeprof__state *g) {
    char buf[sizeof g->out.path], word[16];
    snprintf(word, sizeof word, "%d", g->pid);
    scopeprof__path_insert(buf, sizeof buf, g->out.path, word, 0);
    memcpy(g->out.path, buf, sizeof buf);
}

/* "run.sprof" -> "run.rank3.sprof": an explicit SCOPEPROF_OUTPUT once the
 * rank is known (launcher variables, or MPI_Init: mpi.h), as the default
 * name has it, so ranks never share a path, whatever node or network
 * namespace they run in (the claim below is per network namespace). Rank 0
 * says the rule once on stderr. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__rank_path(scopeprof__state *g) {
    char buf[sizeof g->out.path], word[24];
    snprintf(word, sizeof word, "rank%d", g->out.rank);
    scopeprof__path_insert(buf, sizeof buf, g->out.path, word, 0);
    if (g->out.rank == 0) {
        char rule[sizeof g->out.path];
        scopeprof__path_insert(rule, sizeof rule, g->out.path, "rank<R>", 0);
        scopeprof__warn("scopeprof: SCOPEPROF_OUTPUT='%s' is shared by the ranks: each writes "
                        "'%s' (rank 0: '%s')", g->out.path, rule, buf);
    }
    memcpy(g->out.path, buf, sizeof buf);
}

/* "run.json" or "run.json.gz" -> "run.sprof": the recorder writes its own
 * format, never JSON, and a binary file under a JSON name (or an
 * uncompressed one under .gz) would be read as a broken JSON file by every
 * viewer. The trace keeps its data under the right name, and one line says
 * where it went and how to make the JSON (the reporter's `trace`). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__json_path(scopeprof__state *g) {
    size_t l = strlen(g->out.path), cut = 0;
    if (l > 5 && strcmp(g->out.path + l - 5, ".json") == 0) cut = 5;
    else if (l > 8 && strcmp(g->out.path + l - 8, ".json.gz") == 0) cut = 8;
    if (!cut) return;
    char buf[sizeof g->out.path], ranks[sizeof g->out.path + 8];
    snprintf(buf, sizeof buf, "%.*s.sprof", (int)(l - cut), g->out.path);
    /* A job's ranks each write NAME.rankR.sprof (scopeprof__rank_path):
     * rank 0 says it once, naming all of them. */
    snprintf(ranks, sizeof ranks, "%.*s.rank*.sprof", (int)(l - cut), g->out.path);
    const char *files = g->out.rank >= 0 ? ranks : buf;
    if (g->out.rank <= 0)
        scopeprof__warn("scopeprof: SCOPEPROF_OUTPUT='%s': the recorder writes its own trace format, not "
                        "JSON; writing '%s' instead (for Chrome or Perfetto JSON: scopeprof trace -o %s %s)",
                        g->out.path, files, g->out.path, files);
    memcpy(g->out.path, buf, sizeof buf);
}

/* The path of cycle c: "run.sprof" -> "run.cycle0003.sprof". */
SCOPEPROF__INTERNAL void scopeprof__cycle_path(scopeprof__state *g, int c) {
    char word[24];
    snprintf(word, sizeof word, "cycle%04d", c);
    scopeprof__path_insert(g->out.path, sizeof g->out.path, g->sched.base_path, word, 1);
}

/* An explicit SCOPEPROF_OUTPUT reaches every program this one execs, and
 * every process a launcher starts with it: each would truncate the others'
 * trace. So the first process claims the path, by binding an abstract socket
 * named after it (Linux: no file is made, the name goes when the process
 * does, and SOCK_CLOEXEC keeps an exec'd program from inheriting it); a
 * process that finds the path claimed writes "<path>.<pid>.sprof". */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__claim_output(scopeprof__state *g) {
    char abs[2 * sizeof g->out.path];
    size_t l = 0;
    if (g->out.path[0] != '/' && getcwd(abs, sizeof g->out.path)) l = strlen(abs), abs[l++] = '/';
    snprintf(abs + l, sizeof abs - l, "%s", g->out.path);
    /* The file is opened later, maybe after a chdir: it must be the path
     * claimed, so a relative path is made absolute now. */
    if (strlen(abs) < sizeof g->out.path) memcpy(g->out.path, abs, strlen(abs) + 1);
    /* A union, not a cast of &sockaddr_un: no type-punned pointer. */
    union { struct sockaddr_un un; struct sockaddr any; } addr;
    struct sockaddr_un *a = &addr.un;
    memset(&addr, 0, sizeof addr);
    a->sun_family = AF_UNIX; /* sun_path[0] = 0: the abstract namespace */
    int len = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "scopeprof/%016llx",
                       (unsigned long long)scopeprof__hash(abs));
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return; /* cannot tell: write the path as given */
    if (bind(fd, &addr.any, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len)) == 0) {
        struct stat st;
        g->out.claim_fd = fd;
        g->out.claim_ino = fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
        return;
    }
    int taken = errno == EADDRINUSE;
    close(fd);
    if (!taken) return;
    scopeprof__pid_path(g);
    scopeprof__warn("scopeprof: '%s' is claimed by another live process: this one (pid %d) "
                    "writes '%s'", abs, g->pid, g->out.path);
}

/* The rank became known (PROFILE_SET_RANK, MPI_Init) before the file was
 * opened: the names take it, as at start-up: the default name, or an
 * explicit path's with the rank in it (claimed again); a schedule's cycles
 * are named after that. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__rank_rename(scopeprof__state *g) {
    if (g->out.no_output) return;
    if (g->sched.on) memcpy(g->out.path, g->sched.base_path, sizeof g->out.path); /* the rank goes in the base, not a cycle's name */
    if (g->out.path_is_default) {
        scopeprof__default_path(g);
    } else if (g->out.rank >= 0) {
        if (g->out.claim_fd >= 0) close(g->out.claim_fd);
        g->out.claim_fd = -1;
        scopeprof__rank_path(g);
        scopeprof__claim_output(g);
    }
    if (g->sched.on) scopeprof__sched_base(g);
}



/* ---- Writing the trace file (lock held) ------------------------------------ */


/* Whether descriptor fd still names the trace file we opened (fstat is
 * async-signal-safe). A program may close descriptors it did not open
 * (daemons close 3..1023) and get our number for a file of its own, or
 * dup2 a file onto it: then the number is the program's, never ours to
 * write to or close. */
SCOPEPROF__INTERNAL int scopeprof__fd_ours(const scopeprof__state *g, int fd) {
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_dev == g->out.fd_dev &&
           (uint64_t)st.st_ino == g->out.fd_ino;
}

/* Before each write: our file still behind g->out.fd, or reopened by its path
 * (appending; the file must be the same one). Else the trace stops, and
 * says so. */
SCOPEPROF__INTERNAL int scopeprof__fd_check(scopeprof__state *g) {
    if (scopeprof__fd_ours(g, g->out.fd)) return 0;
    int fd = open(g->out.fd_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (scopeprof__fd_ours(g, fd)) { /* a regular file: O_NONBLOCK changes nothing */
        g->out.fd = fd; /* the old number is left to the program */
        return 0;
    }
    if (fd >= 0) close(fd);
    g->out.fd = -2;
    g->out.write_err = -2;
    scopeprof__sig_say("scopeprof: the trace file '", g->out.fd_path,
                       "' was closed and its path no longer names it; the rest of the trace is "
                       "lost\n");
    return -1;
}

/* A write past the file size limit (`ulimit -f`, RLIMIT_FSIZE) fails with
 * EFBIG and sends the writing thread SIGXFSZ, whose default action kills the
 * process (exit 153 in a shell). Every write of ours runs with it blocked:
 * the registry's lock holds signals (scopeprof__lock), the writer thread
 * blocks them all, and a handler's write blocks it (scopeprof__signal_write).
 * So it is still pending here, and taken back: it was the trace's, not the
 * program's (a SIGXFSZ of the program's own, pending and blocked meanwhile,
 * is one with it: standard signals do not queue). */
static inline void scopeprof__xfsz_take_back(void) {
    sigset_t set, now;
    sigemptyset(&set);
    sigaddset(&set, SIGXFSZ);
    if (pthread_sigmask(SIG_BLOCK, NULL, &now) != 0 || sigismember(&now, SIGXFSZ) != 1) return;
    struct timespec zero = {0, 0};
    sigtimedwait(&set, NULL, &zero); /* EAGAIN when the program ignores it */
}

/* Write all of the nv pieces at v, in order, with one system call where it
 * can (writev; a signal handler's write goes piece by piece: write is the
 * one on the async-signal-safe list). The checks that the file is still
 * ours are made once per call: a system call each, which per piece made
 * the writer's work per chunk mostly system calls. On failure report once
 * with the path and the reason and stop writing (the summary is still
 * printed). v is consumed. */
SCOPEPROF__INTERNAL int scopeprof__write_vec(scopeprof__state *g, struct iovec *v, int nv) {
    if (g->out.batch_n && v != g->out.batch_v) scopeprof__write_held(g); /* the file keeps the order of writes */
    size_t n = 0;
    for (int i = 0; i < nv; i++) n += v[i].iov_len;
    if (n && g->out.fd >= 0 && scopeprof__cloned(g)) g->out.fd = -2; /* the parent's file */
    if (n && g->out.fd >= 0 && scopeprof__fd_check(g) != 0) return -1;
    while (n && g->out.fd >= 0) {
        while (v->iov_len == 0) v++, nv--;
        ssize_t w = g->life.in_signal ? write(g->out.fd, v->iov_base, v->iov_len) : writev(g->out.fd, v, nv);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int err = w < 0 ? errno : 0;
            g->out.write_err = err ? err : -1;
            if (err == EFBIG) scopeprof__xfsz_take_back();
            if (g->life.in_signal)
                scopeprof__sig_say("scopeprof: cannot write trace file '", g->out.path,
                                   err == EFBIG ? "': File too large\n" : "'\n");
            else
                scopeprof__warn("scopeprof: cannot write trace file '%s': %s; the summary is still "
                                "printed", g->out.path, err ? strerror(err) : "short write");
            scopeprof__close_output(g);
            return -1;
        }
        n -= (size_t)w;
        for (; nv && (size_t)w >= v->iov_len; v++, nv--) w -= (ssize_t)v->iov_len;
        if (nv) v->iov_base = (char *)v->iov_base + w, v->iov_len -= (size_t)w;
    }
    return g->out.fd >= 0 ? 0 : -1;
}

/* Write the EVENTS chunks held for one writev (out.batch_*). */
SCOPEPROF__INTERNAL void scopeprof__write_held(scopeprof__state *g) {
    uint32_t n = g->out.batch_n;
    g->out.batch_n = 0;
    if (n) scopeprof__write_vec(g, g->out.batch_v, (int)(2 * n));
}

SCOPEPROF__INTERNAL int scopeprof__write_all(scopeprof__state *g, const void *buf, size_t n) {
    struct iovec v = {(void *)(uintptr_t)buf, n};
    return scopeprof__write_vec(g, &v, 1);
}

/* Every chunk begins so (docs/FORMAT.md): magic, type, payload length, and
 * the CRC of the payload continued over those 12 bytes, so it is written
 * once the payload's CRC is known (a chunk too long to hold is visited twice:
 * once for its CRC, once to write it). Returns 0, or -1 if the write failed
 * (the file is then closed). */
static inline void scopeprof__chunk_head(unsigned char h[SCOPEPROF_CHUNK_HEADER_SIZE], uint32_t type, uint32_t len,
                                         uint32_t payload_crc) {
    scopeprof__put32(h, SCOPEPROF_CHUNK_MAGIC);
    scopeprof__put32(h + 4, type);
    scopeprof__put32(h + 8, len);
    scopeprof__put32(h + 12, scopeprof_chunk_crc(payload_crc, h));
}
SCOPEPROF__INTERNAL int scopeprof__chunk_start(scopeprof__state *g, uint32_t type, uint32_t len,
                                               uint32_t payload_crc) {
    unsigned char h[SCOPEPROF_CHUNK_HEADER_SIZE];
    scopeprof__chunk_head(h, type, len, payload_crc);
    return scopeprof__write_all(g, h, sizeof h);
}

/* A chunk whose payload is in memory: header and payload in one write. */
SCOPEPROF__INTERNAL void scopeprof__write_chunk(scopeprof__state *g, uint32_t type,
                                                const void *payload, uint32_t len) {
    unsigned char h[SCOPEPROF_CHUNK_HEADER_SIZE];
    scopeprof__chunk_head(h, type, len, scopeprof_crc32(0, payload, len));
    struct iovec v[2] = {{h, sizeof h}, {(void *)(uintptr_t)payload, len}};
    scopeprof__write_vec(g, v, 2);
}

/* Whether `path` holds a trace whose header names process `pid`: an earlier
 * image of this process, before an exec (same pid, same path: the claim on
 * an explicit path goes with the exec, and a program that re-execs itself
 * gets the same default name). Only a regular file, never through a link,
 * never waiting (a FIFO); open, fstat and read(2): also from a handler. */
SCOPEPROF__INTERNAL int scopeprof__earlier_image(const char *path, int pid) {
    unsigned char h[24];
    struct stat st;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, h, sizeof h) : -1;
    close(fd);
    return n == (ssize_t)sizeof h && memcmp(h, SCOPEPROF_FILE_MAGIC, 8) == 0 &&
           scopeprof__get64(h + 16) == (uint64_t)pid;
}

/* ---- Creating the file -------------------------------------------------------
 * A trace's name is predictable (<program>.<pid>.sprof, or the explicit
 * path), so whoever else can write its directory can put something there
 * first: a symbolic link to a file of the user who runs the program (root's,
 * say), which an O_CREAT|O_TRUNC open follows and overwrites; a FIFO, whose
 * open for writing waits for a reader for ever; a file of their own, which
 * would receive the trace. So a trace file is created exclusively (O_EXCL,
 * which also refuses a link at the name, dangling or not) and never opened
 * through a link at its last component (O_NOFOLLOW). A name that is taken
 * is said on stderr, and the next one tried ("run.sprof": "run.1.sprof",
 * "run.2.sprof"...), except:
 * - an earlier image of this process wrote it (scopeprof__earlier_image):
 *   this image writes NAME.exec<k>.sprof instead, silently;
 * - an explicit SCOPEPROF_OUTPUT (and the names made from it: a cycle's, a
 *   forked child's) replaces a regular file of the effective user that has
 *   no other link (an earlier run's trace, the usual case), checked once
 *   open (no race with a swap), and writes into a character device
 *   (/dev/null, /dev/full: only root makes those).
 * The default name, which holds the pid, is never replaced: a file there is
 * another process's (another pid namespace's) or planted. */
#define SCOPEPROF__TAKEN (-2)

/* What is at the taken name `path`, for the message. */
static inline const char *scopeprof__taken_why(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return "it exists";
    if (S_ISLNK(st.st_mode)) return "a symbolic link, not followed";
    if (!S_ISREG(st.st_mode)) return "not a regular file";
    return st.st_uid != geteuid() ? "another user's file" : "a file of this user's";
}

/* Open the existing `path` to replace it (see above): the descriptor, -1
 * on an error to report (errno: a directory, no permission), or
 * SCOPEPROF__TAKEN with *why. */
SCOPEPROF__INTERNAL int scopeprof__replace(const char *path, const char **why) {
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ELOOP && errno != ENXIO) return -1; /* ENXIO: a FIFO without a reader */
        *why = errno == ELOOP ? "a symbolic link, not followed" : "not a regular file";
        return SCOPEPROF__TAKEN;
    }
    struct stat st;
    *why = "it exists";
    if (fstat(fd, &st) == 0) {
        int mine = S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_nlink == 1;
        if (S_ISCHR(st.st_mode) || (mine && ftruncate(fd, 0) == 0)) {
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
            return fd;
        }
        *why = !S_ISREG(st.st_mode)           ? "not a regular file"
               : st.st_uid != geteuid()       ? "another user's file"
               : st.st_nlink != 1             ? "a file with other links"
                                              : "it cannot be emptied";
    }
    close(fd);
    return SCOPEPROF__TAKEN;
}

/* Whether a failure to create the trace (errno, or -1: every name taken)
 * is to be said: once, not again for each of a schedule's cycles. */
static inline int scopeprof__create_said(scopeprof__state *g, int err) {
    if (g->out.create_err == err) return 0;
    g->out.create_err = err;
    return 1;
}

/* Create the file at g->out.path, or the first free name after it (see
 * "Creating the file"); g->out.path is then its name. The descriptor, or -1
 * (errno set; 0 when every name tried was taken). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL int scopeprof__create(scopeprof__state *g) {
    char base[sizeof g->out.path], first[sizeof g->out.path];
    memcpy(base, g->out.path, sizeof base);
    const char *why = NULL, *first_why = NULL;
    int fd = -1, replace = !g->out.path_is_default, execs = 0, others = 0;
    while (execs + others < 100) {
        fd = open(g->out.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST) break; /* made, or an error to report */
        char word[16];
        if (scopeprof__earlier_image(g->out.path, g->pid)) {
            snprintf(word, sizeof word, "exec%d", ++execs);
        } else {
            if (replace && (fd = scopeprof__replace(g->out.path, &why)) != SCOPEPROF__TAKEN) break;
            if (!replace) why = scopeprof__taken_why(g->out.path);
            if (!first_why) memcpy(first, g->out.path, sizeof first), first_why = why;
            snprintf(word, sizeof word, "%d", ++others);
        }
        fd = -1;
        errno = 0;
        scopeprof__path_insert(g->out.path, sizeof g->out.path, base, word, 1);
    }
    if (fd < 0 && errno == 0) memcpy(g->out.path, base, sizeof base); /* the name the failure is said by */
    if (first_why && fd >= 0) {
        if (g->life.in_signal) {
            scopeprof__sig_say("scopeprof: the trace name '", first, "' is taken; ");
            scopeprof__sig_say("writing '", g->out.path, "' instead\n");
        } else {
            scopeprof__warn("scopeprof: the trace name '%s' is taken (%s); writing '%s' instead",
                            first, first_why, g->out.path);
        }
    }
    return fd;
}

/* Close the trace descriptor if it is still ours (scopeprof__fd_ours). */
SCOPEPROF__INTERNAL int scopeprof__close_output(scopeprof__state *g) {
    int rc = 0;
    if (scopeprof__fd_ours(g, g->out.fd)) rc = close(g->out.fd);
    g->out.fd = -2;
    return rc;
}

/* OVERHEAD chunk (format 3.1), first after the header so that a reader has
 * it before any event: u32 inside_ps, u32 outside_ps, u32 scopes measured,
 * u32 short_below (ticks; 5.1, reserved before), u32 short_inside_ps, u32
 * short_outside_ps (5.1). With SCOPEPROF_COMPENSATE=0 (since 4.0): all 0,
 * nothing measured, so that the reporter's notes say compensation was off,
 * as the exit summary's do. */
SCOPEPROF__INTERNAL void scopeprof__write_overhead(scopeprof__state *g) {
    unsigned char b[24];
    uint32_t ps[4] = {0, 0, 0, 0};
    if (g->cfg.compensate) scopeprof__overhead_ps(g, ps);
    scopeprof__put32(b, ps[0]);
    scopeprof__put32(b + 4, ps[1]);
    scopeprof__put32(b + 8, g->cfg.compensate ? 2 * SCOPEPROF__CAL_BATCHES * SCOPEPROF__CAL_PER : 0); /* both classes */
    scopeprof__put32(b + 12, g->cfg.compensate ? (uint32_t)g->clock.comp_short_below : 0);
    scopeprof__put32(b + 16, ps[2]);
    scopeprof__put32(b + 20, ps[3]);
    scopeprof__write_chunk(g, SCOPEPROF_CHUNK_OVERHEAD, b, sizeof b);
}

/* TICKS chunk (format 4), before any event: the rate that turns the events'
 * ticks into ns (format.h, scopeprof_ticks_ns). */
SCOPEPROF__INTERNAL void scopeprof__write_ticks(scopeprof__state *g) {
    unsigned char b[SCOPEPROF_TICKS_SIZE];
    uint64_t bits;
    scopeprof__calibrate(g);
    memcpy(&bits, &g->clock.ns_per_tick, 8);
    scopeprof__put64(b, g->clock.tick0);
    scopeprof__put64(b + 8, g->clock.ns0);
    scopeprof__put64(b + 16, bits);
    scopeprof__write_chunk(g, SCOPEPROF_CHUNK_TICKS, b, sizeof b);
}

SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__open_output(scopeprof__state *g) {
    if (g->out.fd != -1) return;
    g->out.files++; /* a new file: it has no thread names yet */
    g->out.fd = scopeprof__create(g);
    g->out.created = g->out.fd >= 0;
    struct stat st;
    if (g->out.fd >= 0 && fstat(g->out.fd, &st) == 0) {
        g->out.fd_dev = (uint64_t)st.st_dev;
        g->out.fd_ino = (uint64_t)st.st_ino;
        /* Absolute, to reopen it after a chdir (the displayed path stays as given). */
        size_t cl = 0;
        if (g->out.path[0] != '/' && getcwd(g->out.fd_path, sizeof g->out.fd_path - 1)) {
            cl = strlen(g->out.fd_path);
            g->out.fd_path[cl++] = '/';
        }
        snprintf(g->out.fd_path + cl, sizeof g->out.fd_path - cl, "%s", g->out.path);
    }
    if (g->out.fd < 0) {
        if (g->life.in_signal) {
            g->out.fd = -2;
            return;
        }
        int e = errno; /* 0: every name tried was taken */
        /* A server's workers change user after they start (nginx's to
         * nobody), and a forked child creates its file at its end: in the
         * directory it started in, now not theirs to write. */
        char uid[160] = "";
        if (e == EACCES)
            snprintf(uid, sizeof uid, "; this process runs as uid %u: one that changes user after it starts (a "
                     "server's workers) needs a directory that user can write", (unsigned)geteuid());
        if (scopeprof__create_said(g, e ? e : -1))
            scopeprof__warn("scopeprof: cannot create trace file '%s': %s (SCOPEPROF_OUTPUT sets the path)%s%s",
                            g->out.path, e ? strerror(e) : "it and the 99 names after it are taken", uid,
                            !g->cfg.summary ? "" : g->sched.on ? "; the summaries are still printed"
                                                                : "; the summary is still printed at exit");
        g->out.fd = -2;
        return;
    }
    const char *prog = g->cfg.prog;
    uint32_t plen = (uint32_t)strnlen(prog, sizeof g->cfg.prog);
    unsigned char h[SCOPEPROF_FILE_HEADER_SIZE + 256 + 4];
    memset(h, 0, sizeof h);
    memcpy(h, SCOPEPROF_FILE_MAGIC, 8);
    scopeprof__put32(h + 8, SCOPEPROF_FORMAT_MAJOR | (SCOPEPROF_FORMAT_MINOR << 16));
    scopeprof__put32(h + 12, SCOPEPROF_FILE_HEADER_SIZE + plen + 4);
    scopeprof__put64(h + 16, (uint64_t)g->pid);
    scopeprof__put64(h + 24, scopeprof__to_ns(g, g->clock.tick0));
    scopeprof__put64(h + 32, (uint64_t)g->clock.realtime_minus_mono);
    scopeprof__put32(h + 40, g->out.rank >= 0 ? (uint32_t)g->out.rank : 0xFFFFFFFFu);
    scopeprof__put32(h + 44, plen);
    memcpy(h + SCOPEPROF_FILE_HEADER_SIZE, prog, plen);
    /* The header's own CRC (format 3): a flipped bit in the rank or the start
     * time would otherwise read as a valid value. */
    scopeprof__put32(h + SCOPEPROF_FILE_HEADER_SIZE + plen,
                     scopeprof_crc32(0, h, SCOPEPROF_FILE_HEADER_SIZE + plen));
    if (scopeprof__write_all(g, h, SCOPEPROF_FILE_HEADER_SIZE + plen + 4) == 0) {
        scopeprof__write_ticks(g);
        scopeprof__write_overhead(g);
        scopeprof__write_clock(g); /* the host and the job's clock offsets (mpi.h) */
    }
}

/* SITES chunk with every site not written yet. No allocation (it also runs
 * in a signal handler): the payload is visited twice, once for its length
 * and CRC, once to write it, in pieces. */
SCOPEPROF__INTERNAL void scopeprof__sites_pass(scopeprof__state *g, uint32_t upto, int write,
                                              uint32_t *len, uint32_t *crc) {
    unsigned char b[20];
    scopeprof__put32(b, upto - g->out.sites_written);
    *len = 4;
    *crc = scopeprof_crc32(0, b, 4);
    if (write) scopeprof__write_all(g, b, 4);
    for (uint32_t i = g->out.sites_written; i < upto; i++) {
        const scopeprof__siterec *s = scopeprof__site_at(g, i + 1);
        const char *str[3] = {s->name, s->file, s->func};
        uint32_t l[3] = {(uint32_t)strlen(s->name), (uint32_t)strlen(s->file),
                         (uint32_t)strlen(s->func)};
        scopeprof__put32(b, i + 1);
        scopeprof__put32(b + 4, s->line);
        for (int k = 0; k < 3; k++) scopeprof__put32(b + 8 + 4 * k, l[k]);
        *len += 20 + l[0] + l[1] + l[2];
        *crc = scopeprof_crc32(*crc, b, 20);
        if (write) scopeprof__write_all(g, b, 20);
        for (int k = 0; k < 3; k++) {
            *crc = scopeprof_crc32(*crc, str[k], l[k]);
            if (write) scopeprof__write_all(g, str[k], l[k]);
        }
    }
}

SCOPEPROF__INTERNAL void scopeprof__write_sites(scopeprof__state *g) {
    uint32_t upto = __atomic_load_n(&g->reg.nsites, __ATOMIC_ACQUIRE), len, crc;
    if (g->out.sites_written == upto || g->out.fd < 0) return;
    scopeprof__sites_pass(g, upto, 0, &len, &crc);
    if (scopeprof__chunk_start(g, SCOPEPROF_CHUNK_SITES, len, crc) == 0)
        scopeprof__sites_pass(g, upto, 1, &len, &crc);
    g->out.sites_written = upto;
}

/* The current name of a live thread (pthread_setname_np may have changed it
 * after its first scope), from /proc with open/read: no allocation. Read
 * again only `every` ns after the last read (three system calls: not one
 * per chunk); a thread's exit reads its final name itself. */
SCOPEPROF__INTERNAL void scopeprof__refresh_name(scopeprof__thread *t, uint64_t every) {
    char path[64], buf[64];
    if (t->explicit_name || !t->alive) return;
    uint64_t now = scopeprof__mono_ns();
    if (t->name_read_ns && now - t->name_read_ns < every) return;
    t->name_read_ns = now;
    snprintf(path, sizeof path, "/proc/self/task/%llu/comm", (unsigned long long)t->tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return;
    buf[n] = 0;
    buf[strcspn(buf, "\n")] = 0;
    memcpy(t->name, buf, (size_t)n + 1);
}

/* A THREAD chunk for t where this file lacks its current name: before its
 * first EVENTS chunk in the file, and when the name has changed since
 * (docs/FORMAT.md). `every`: how old the name read from /proc may be (0:
 * read it now, for the file's end). */
SCOPEPROF__INTERNAL void scopeprof__write_thread(scopeprof__state *g, scopeprof__thread *t, uint64_t every) {
    unsigned char b[16 + 64];
    scopeprof__refresh_name(t, every);
    if (t->name_file == g->out.files && strncmp(t->name_written, t->name, sizeof t->name) == 0) return;
    t->name_file = g->out.files;
    memcpy(t->name_written, t->name, sizeof t->name);
    uint32_t n = (uint32_t)strnlen(t->name, sizeof t->name);
    scopeprof__put32(b, t->index);
    scopeprof__put32(b + 4, n);
    scopeprof__put64(b + 8, t->tid);
    memcpy(b + 16, t->name, n);
    scopeprof__write_chunk(g, SCOPEPROF_CHUNK_THREAD, b, 16 + n);
}

SCOPEPROF__INTERNAL void scopeprof__write_devices(scopeprof__state *g) {
    uint32_t todo = g->gpu.named & ~g->out.gpu_names_written;
    for (uint32_t d = 0; d < 16 && g->out.fd >= 0; d++) {
        if (!(todo >> d & 1)) continue;
        unsigned char b[8 + 64];
        uint32_t n = (uint32_t)strnlen(g->gpu.names[d], 64);
        scopeprof__put32(b, d);
        scopeprof__put32(b + 4, n);
        memcpy(b + 8, g->gpu.names[d], n);
        scopeprof__write_chunk(g, SCOPEPROF_CHUNK_DEVICE, b, 8 + n);
        g->out.gpu_names_written |= 1u << d;
    }
}

/* GPU chunk: the records paired with the GPU scopes of the EVENTS chunk that
 * follows, in the same order. */
SCOPEPROF__INTERNAL void scopeprof__write_gpu(scopeprof__state *g, const scopeprof__thread *t,
                                              const scopeprof_gpu_record *r, uint32_t n) {
    unsigned char b[48];
    uint32_t len = 8 + n * 48, crc = 0;
    scopeprof__write_devices(g);
    for (int pass = 0; pass < 2; pass++) { /* 0: CRC, 1: write (no allocation) */
        scopeprof__put32(b, t->index);
        scopeprof__put32(b + 4, n);
        if (pass) {
            if (scopeprof__chunk_start(g, SCOPEPROF_CHUNK_GPU, len, crc) ||
                scopeprof__write_all(g, b, 8))
                return;
        } else {
            crc = scopeprof_crc32(0, b, 8);
        }
        for (uint32_t i = 0; i < n; i++) {
            scopeprof__put64(b, r[i].start_ns);
            scopeprof__put64(b + 8, r[i].end_ns);
            scopeprof__put64(b + 16, r[i].launch_ns);
            scopeprof__put64(b + 24, r[i].stream);
            scopeprof__put32(b + 32, r[i].site);
            scopeprof__put32(b + 36, r[i].device);
            scopeprof__put32(b + 40, r[i].status);
            scopeprof__put32(b + 44, 0);
            if (pass && scopeprof__write_all(g, b, 48)) return;
            if (!pass) crc = scopeprof_crc32(crc, b, 48);
        }
    }
}

/* In a signal handler the lock is only tried (the interrupted thread may hold
 * it): then the copy is best effort. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__mem_snapshot(scopeprof__state *g, scopeprof__memsnap *s, int reset) {
    int locked = g->life.in_signal ? pthread_mutex_trylock(&g->mem.lock) == 0 : pthread_mutex_lock(&g->mem.lock) == 0;
    s->used = g->mem.used;
    memcpy(s->peak, g->mem.peak, sizeof s->peak);
    memcpy(s->cur, g->mem.cur, sizeof s->cur);
    s->unknown_frees = g->mem.unknown_frees;
    if (reset) {
        memcpy(g->mem.peak, g->mem.cur, sizeof s->peak);
        g->mem.unknown_frees = 0;
    }
    if (locked) pthread_mutex_unlock(&g->mem.lock);
}

SCOPEPROF__INTERNAL void scopeprof__write_memory(scopeprof__state *g, const scopeprof__memsnap *s) {
    unsigned char b[4 + 32 * 32];
    uint32_t n = 0;
    for (uint32_t d = 0; d < 32; d++) {
        if (!(s->used >> d & 1)) continue;
        unsigned char *p = b + 4 + n++ * 32;
        scopeprof__put32(p, d);
        scopeprof__put32(p + 4, 0);
        scopeprof__put64(p + 8, (uint64_t)s->peak[d]);
        scopeprof__put64(p + 16, (uint64_t)s->cur[d]);
        scopeprof__put64(p + 24, d == 0 ? s->unknown_frees : 0);
    }
    if (!n && !s->unknown_frees) return;
    scopeprof__put32(b, n);
    scopeprof__write_chunk(g, SCOPEPROF_CHUNK_MEMORY, b, 4 + n * 32);
}

/* After the table: peak memory per device, and frees we could not match. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__print_memory(scopeprof__state *g, const scopeprof__memsnap *s, FILE *out) {
    char b[64];
    for (uint32_t d = 0; d < 32; d++) {
        if (!(s->used >> d & 1)) continue;
        if (d == 0) fprintf(out, "Peak CPU memory: %s\n", scopeprof_format_mem(b, sizeof b, s->peak[d]));
        else fprintf(out, "Peak GPU %u memory: %s\n", d - 1, scopeprof_format_mem(b, sizeof b, s->peak[d]));
    }
    if (s->unknown_frees) {
        uint32_t id = g->mem.unknown_free_site;
        const scopeprof__siterec *r = scopeprof__site_find(g, id);
        fprintf(out, "scopeprof: %" PRIu64 " free(s) of pointers not recorded by PROFILE_ALLOC "
                "(first at %s:%u)\n", s->unknown_frees, r ? r->file : "?", r ? r->line : 0);
    }
}

/* STEPS chunk: u32 count, u32 reserved, then per step u64 number, u64
 * start_ns, u64 end_ns. Only steps not written yet (those scopeprof__step_kept
 * keeps). Three passes, no allocation: count, CRC, write. */
SCOPEPROF__INTERNAL void scopeprof__write_steps(scopeprof__state *g) {
    uint32_t n = 0, crc = 0;
    unsigned char b[24];
    if (g->out.fd < 0) return;
    for (uint32_t i = g->out.steps_written; i < g->sched.nsteps; i++) n += (uint32_t)scopeprof__step_kept(g, i);
    if (n) {
        scopeprof__calibrate(g);
        for (int pass = 0; pass < 2; pass++) {
            scopeprof__put32(b, n);
            scopeprof__put32(b + 4, 0);
            if (pass == 0) {
                crc = scopeprof_crc32(0, b, 8);
            } else {
                if (scopeprof__chunk_start(g, SCOPEPROF_CHUNK_STEPS, 8 + n * 24, crc) ||
                    scopeprof__write_all(g, b, 8))
                    return;
            }
            for (uint32_t i = g->out.steps_written; i < g->sched.nsteps; i++) {
                if (!scopeprof__step_kept(g, i)) continue;
                scopeprof__put64(b, g->sched.steps[i].n);
                scopeprof__put64(b + 8, scopeprof__to_ns(g, g->sched.steps[i].start));
                scopeprof__put64(b + 16, scopeprof__to_ns(g, g->sched.steps[i].end));
                if (pass == 0) crc = scopeprof_crc32(crc, b, 24);
                else if (scopeprof__write_all(g, b, 24)) return;
            }
        }
    }
    g->out.steps_written = g->sched.nsteps;
}

/* Write everything, close the file. Lock held. Safe in a signal handler
 * when g->life.in_signal is set (no allocation, no stdio). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__write_all_and_close(scopeprof__state *g) {
    g->life.ending = 1; /* the clock rate, if still unknown, is measured over the whole run now */
    scopeprof__write_queued(g, 1);
    scopeprof__write_partials(g);
    int l = scopeprof__qlock(g); /* chunk_next reads it under the chunk lock */
    g->life.finalized = 1;
    scopeprof__qunlock(g, l);
    if (!g->life.in_signal) pthread_cond_signal(&g->wr.wake); /* the writer stops */
    /* Scopes that close after this point (other threads, later destructors)
     * are dropped: the chunk_next slow path recycles the buffer. */
    if (g->out.fd == -1 && g->out.events_written) scopeprof__open_output(g);
    scopeprof__memsnap mem;
    scopeprof__mem_snapshot(g, &mem, 0);
    scopeprof__file_end(g, &mem);
}

/* The end of a trace file: what it still lacks (new sites, every thread's
 * current name, memory, steps), the END chunk, the close. Lock held; no
 * allocation, no stdio in a signal handler. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__file_end(scopeprof__state *g, const scopeprof__memsnap *mem) {
    if (g->out.fd < 0) return;
    scopeprof__write_sites(g);
    for (scopeprof__thread *t = scopeprof__threads_head(g); t; t = t->next) scopeprof__write_thread(g, t, 0);
    scopeprof__write_memory(g, mem);
    scopeprof__write_steps(g);
    /* Format 5.2: the scopes this file lacks, that the program opened
     * since it began: left without closing (survival.h), and at the run's
     * end those still open on any thread. A reader says so. */
    uint32_t threads = 0;
    const scopeprof__thread *first = NULL;
    uint64_t missing = __atomic_load_n(&g->life.scopes_left, __ATOMIC_RELAXED) - g->out.left_base;
    if (g->life.finalized) missing += scopeprof__open_scopes(g, NULL, &threads, &first);
    uint64_t stranded = __atomic_load_n(&g->life.stranded, __ATOMIC_RELAXED) - g->out.stranded_base;
    missing = missing > stranded ? missing - stranded : 0; /* a range's level, counted in both: no scope */
    unsigned char b[16];
    scopeprof__put64(b, g->out.events_written);
    scopeprof__put64(b + 8, missing);
    scopeprof__write_chunk(g, SCOPEPROF_CHUNK_END, b, sizeof b);
    if (g->out.fd >= 0 && scopeprof__close_output(g) != 0) {
        g->out.write_err = errno;
        if (!g->life.in_signal)
            scopeprof__warn("scopeprof: cannot write trace file '%s': %s", g->out.path, strerror(errno));
    }
    g->out.fd = -2;
}

/* Whether the current trace file holds what was recorded: created, events
 * in it, no write failed (the lines that say where a trace went after a
 * signal or MPI_Abort, which must not name a file that was never made). */
static inline int scopeprof__trace_written(const scopeprof__state *g) {
    return g->out.created && g->out.events_written && !g->out.write_err;
}

/* A new trace file follows (a schedule's next cycle, a forked child's own):
 * its summary and what was written of each kind start afresh, and a
 * descriptor still open (a parent's, in a child) is closed, never written. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__file_reset(scopeprof__state *g) {
    scopeprof__sum_reset(g);
    scopeprof_agg_free(&g->sum.agg);
    scopeprof_agg_init(&g->sum.agg);
    g->out.sites_written = 0;
    g->out.gpu_names_written = 0;
    g->out.events_written = 0;
    g->out.fd_path[0] = 0; /* a forked child that cannot create its own must not name its parent's */
    g->out.left_base = __atomic_load_n(&g->life.scopes_left, __ATOMIC_RELAXED);
    g->out.stranded_base = __atomic_load_n(&g->life.stranded, __ATOMIC_RELAXED);
    g->out.write_err = 0;
    g->out.created = 0;
    g->out.steps_written = g->sched.nsteps; /* a forked child's file has its own steps, as its table */
    if (g->out.fd >= 0) scopeprof__close_output(g);
    g->out.fd = g->out.no_output ? -2 : -1;
}

/* A table made in memory and written to stderr with one write(2):
 * processes that share a stream (a server's workers, an MPI job's ranks
 * with SCOPEPROF_SUMMARY=all) interleaved their tables line by line, and a
 * program may have made stderr buffered. begin: where to print (stderr
 * itself when memory is short); end: out, then freed. */
typedef struct scopeprof__text {
    char *p;
    size_t n;
    FILE *m;
} scopeprof__text;
static inline FILE *scopeprof__text_begin(scopeprof__text *t) {
    t->p = NULL, t->n = 0;
    t->m = open_memstream(&t->p, &t->n);
    return t->m ? t->m : stderr;
}
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__text_end(scopeprof__text *t) {
    fflush(stderr); /* what came before it */
    if (t->m) fclose(t->m);
    for (size_t at = 0; t->p && at < t->n;) {
        ssize_t w = write(2, t->p + at, t->n - at);
        if (w <= 0) break;
        at += (size_t)w;
    }
    free(t->p);
}

/* The summary's last line at exit: where the trace went and its size, and
 * why it is incomplete if a write failed (a full disk: the file then ends
 * in a cut chunk and has no end record). A trace named after the program
 * and its pid, in the working directory, is easy to miss (issue 24: a new
 * 512 MB file every run, nothing said). Part of the summary, printed only
 * with it; a cycle's title names its file. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__print_trace_file(const scopeprof__state *g, FILE *out) {
    struct stat st;
    if (g->out.write_err == -2) { /* its size now would be another file's */
        fprintf(out, "Trace file: %s (lost: the path names another file now)\n", g->out.path);
        return;
    }
    if (g->out.no_output || !g->out.fd_path[0] || stat(g->out.fd_path, &st) != 0) return;
    char size[64];
    scopeprof_format_mem(size, sizeof size, (int64_t)st.st_size);
    size[strlen(size) - 1] = 'B'; /* bytes: "Mb" is PyTorch's in the table, but a file's reads as megabits */
    int e = g->out.write_err;
    fprintf(out, "Trace file: %s (%s%s%s)\n", g->out.path, size, e ? ", incomplete: " : "",
            e ? (e > 0 ? strerror(e) : "a short write") : "");
}

/* The summary's line at exit on what the profiler itself cost: on the
 * recording threads, each call's calibrated cost (its class's inside +
 * outside: what compensation takes out of the rows above, docs/DESIGN.md;
 * the steps' row is no calls of scopes, and nothing is taken out of it);
 * and the background writer's CPU (scopeprof__writer_main notes it at each
 * look), which runs beside the program: on a machine whose cores are all
 * busy it comes out of the program's time. Either part only when known
 * (compensation on; a writer that ran). Then, when they apply, the two
 * lines that say how far to trust the times against that: the process's
 * CPU beside self times that pass it, and scopes too dense for their
 * calibrated cost to be all they cost. Lock held. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__print_own_cost(scopeprof__state *g, FILE *out) {
    const scopeprof_agg *a = &g->sum.agg;
    const scopeprof_row *most = NULL; /* the row of most calls */
    double rec_ps = 0;
    uint64_t calls = 0;
    for (uint32_t i = 0; i < a->nrows; i++) {
        const scopeprof_row *r = &a->rows[i];
        if (strcmp(r->name, SCOPEPROF__STEPS_ROW) == 0) continue;
        calls += r->count;
        if (!most || r->count > most->count) most = r;
        rec_ps += (double)(r->count - r->count_short) * (a->comp_inside_ps + a->comp_outside_ps) +
                  (double)r->count_short * (a->comp_short_inside_ps + a->comp_short_outside_ps);
    }
    pthread_mutex_lock(&g->buf.lock);
    uint64_t wr_ns = g->wr.cpu_ns;
    pthread_mutex_unlock(&g->buf.lock);
    if (!calls) return;
    if (rec_ps > 0 || wr_ns) {
        char rec[32], wr[32];
        fprintf(out, "Profiler's own cost: %llu call%s", (unsigned long long)calls, calls == 1 ? "" : "s");
        if (rec_ps > 0)
            fprintf(out, ", about %s of the recording threads' time (taken out above)",
                    scopeprof_format_time(rec, sizeof rec, rec_ps / 1e6));
        if (wr_ns)
            fprintf(out, ", %s of CPU in the background writer",
                    scopeprof_format_time(wr, sizeof wr, (double)wr_ns / 1e3));
        fputc('\n', out);
    }
    /* Self CPU time is wall time in scopes: a process whose threads waited
     * or were preempted inside them shows more of it than it used CPU (an
     * OpenMP loop on a busy node: 8.7 s of it, 4.7 s of CPU, the rest in
     * the innermost scope). Said with the process's CPU beside it. */
    struct rusage ru;
    double cpu_ns = getrusage(RUSAGE_SELF, &ru) != 0 ? 0 :
        ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
        ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
    const double self_ns = (double)scopeprof_agg_self_total(a);
    if (cpu_ns > 0 && self_ns > 1.2 * cpu_ns) {
        char cpu[32];
        fprintf(out, "The self times add up to more than the process used: %s of CPU (user + sys, all threads, the "
                     "writer's included); the rest is the threads' waits and preemption inside scopes\n",
                scopeprof_format_time(cpu, sizeof cpu, cpu_ns / 1e3));
    }
    /* Scopes so dense that their calibrated cost is over 5% of the time in
     * scopes (as measured: the self times with that cost put back), and at
     * least a millisecond (not a few calls around little work): their clock
     * reads then also slow the code around them, which no calibration sees
     * (XSBench, a 60 ns function scoped 15M times: 0.44 s taken out, the
     * run 2.4 s longer, its parent's self time tripled). */
    double in_ns = self_ns + rec_ps / 1e3;
    if (rec_ps / 1e3 > 0.05 * in_ns && rec_ps >= 1e9) {
        char every[32], name[SCOPEPROF__NAME_W + 1];
        fprintf(out, "Dense scopes: their calibrated cost is over 5%% of the time in scopes (one every %s); so dense, "
                     "their clock reads also slow the code around them, past what is taken out (their parents' times "
                     "grow most): for times to trust, leave out the most called, %s (%llu calls)\n",
                scopeprof_format_time(every, sizeof every, in_ns / 1e3 / (double)calls),
                scopeprof__name_cell(name, most->name, SCOPEPROF__NAME_W), (unsigned long long)most->count);
    }
}

/* After a table of `rows` rows cut by SCOPEPROF_ROW_LIMIT, the line that
 * says so, as the reporter's --limit does (the exit table's, the MPI
 * job's): into b, which it returns; NULL when nothing was cut. */
static inline const char *scopeprof__more_rows(const scopeprof__state *g, uint32_t rows, char *b, size_t n) {
    return scopeprof_more_rows(b, n, rows, g->cfg.row_limit, "SCOPEPROF_ROW_LIMIT=", "0");
}

/* The table at exit (and at each schedule's cycle, after `title`): PyTorch's
 * layout, the notes under it, peak memory, and at exit the trace file. On
 * rank 0, or every rank with SCOPEPROF_SUMMARY=all, when something was
 * recorded. Lock held. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__summary_print(scopeprof__state *g, const scopeprof__memsnap *mem,
                                                  int recorded, const char *title, int at_exit) {
    if (!g->cfg.summary || !recorded || (g->out.rank > 0 && !g->cfg.summary_all)) return;
    scopeprof__sum_fold(g, g->cfg.group_shape);
    fflush(stdout);
    scopeprof__text text;
    FILE *out = scopeprof__text_begin(&text);
    if (title) fprintf(out, "%s\n", title);
    scopeprof_table_print(out, &g->sum.agg, g->cfg.sort, g->cfg.row_limit);
    char more[96];
    if (scopeprof__more_rows(g, g->sum.agg.nrows, more, sizeof more)) fprintf(out, "%s\n", more);
    scopeprof_table_notes_shown(out, &g->sum.agg, g->cfg.sort, g->cfg.row_limit);
    scopeprof__print_memory(g, mem, out);
    if (at_exit) scopeprof__print_trace_file(g, out);
    if (at_exit) scopeprof__print_own_cost(g, out); /* after the lines `scopeprof table` prints too */
    scopeprof__text_end(&text);
}

#ifdef __cplusplus
}
#endif
#endif /* file.h */
