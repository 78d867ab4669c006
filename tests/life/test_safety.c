/* test_safety.c -- issue 25: a traced program stays as safe and as alive as
 * it was. Each test runs prog_safety of this build variant (and the
 * reporter) as a child process and checks what it left: exit status,
 * stdout, stderr, its files, and files it must not have touched. The
 * security tests need root: they set up a second user (nobody, 65534) and a
 * setuid-root copy of the program, as an attacker's machine would have them;
 * run as another user they are skipped. Timing is never asserted. */
#define SCOPEPROF_AGGREGATION
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "child.h"
#include "trace.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define ENV(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NOBODY 65534

/* ---- helpers ---------------------------------------------------------------- */

static void expect_exit(const child *r, int code) {
    if (r->timed_out) fail_msg("the program hung (killed after %d s); stderr:\n%s", CHILD_TIMEOUT_S, r->err);
    if (!r->exited || r->code != code)
        fail_msg("exit: exited=%d code=%d signal=%d, want exit code %d; stderr:\n%s", r->exited,
                 r->code, r->sig, code, r->err);
}

static void read_whole(const char *path, tr_trace *t) {
    if (!tr_read(path, t)) fail_msg("trace %s: %s", path, t->err);
    if (!t->has_end) fail_msg("trace %s has no END chunk", path);
    assert_int_equal(t->end_total, tr_end_expected(t));
}

static int summaries(const char *err) { return child_lines_with(err, "Self CPU time total:"); }

static char *path_in(const child *r, const char *name) {
    static char p[PATH_MAX + 300];
    snprintf(p, sizeof p, "%s/%s", r->dir, name);
    return p;
}

static void write_file(const char *path, const char *text, mode_t mode) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* The file holds exactly `text`. */
static void expect_content(const char *path, const char *text) {
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) fail_msg("%s: gone or not a regular file", path);
    char *got = child_slurp(path);
    if (strcmp(got, text) != 0) fail_msg("%s changed: %lld bytes, starting '%.8s'", path, (long long)st.st_size, got);
    free(got);
}

/* Root is needed to be two users. */
static int skip_unless_root(void) {
    if (geteuid() == 0) return 0;
    print_message("      (skipped: needs root, to run as nobody and make a setuid binary)\n");
    return 1;
}

/* A directory of its own, mode `mode`, for files the program must not
 * touch. */
static void make_dir(char *dir, mode_t mode) {
    snprintf(dir, 64, "/tmp/scopeprof-safety-XXXXXX");
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chmod(dir, mode), 0);
}

static void remove_dir(const char *dir) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The one regular .sprof file the run left (links and others aside): its
 * name in `name`. */
static void only_trace(const child *r, char name[256]) {
    char names[8][256];
    int n = child_list_files(r, ".sprof", names, 8), regular = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (lstat(path_in(r, names[i]), &st) == 0 && S_ISREG(st.st_mode)) {
            regular++;
            memcpy(name, names[i], 256);
        }
    }
    if (regular != 1) fail_msg("%d trace files, want 1; stderr:\n%s", regular, r->err);
}

/* ==== 1. Trace files are created, never followed ============================== */

/* A symbolic link planted by another user (nobody) at the trace's name, to a
 * root-owned file outside the directory: the program (root) leaves the file
 * as it was, says the name is taken, and writes its trace under another
 * name. Default name and explicit SCOPEPROF_OUTPUT. Before: the link was
 * followed and root's file overwritten with the trace. */
static void test_symlink_not_followed(void **state) {
    (void)state;
    if (skip_unless_root()) skip();
    char safe[64], victim[128];
    make_dir(safe, 0755);
    snprintf(victim, sizeof victim, "%s/root_file", safe);
    static const char text[] = "root's own content\n";
    for (int dflt = 0; dflt < 2; dflt++) {
        write_file(victim, text, 0644);
        child r;
        child_run_args(&r, "prog_safety", ARGS("plant", victim),
                       dflt ? ENV("SCOPEPROF_OUTPUT=-", "SCOPEPROF_SUMMARY=0") : ENV("SCOPEPROF_SUMMARY=0"));
        expect_exit(&r, 0);
        expect_content(victim, text);
        char planted[PATH_MAX];
        assert_int_equal(sscanf(r.out, "planted %4095s", planted), 1);
        struct stat st;
        assert_int_equal(lstat(dflt ? path_in(&r, planted) : planted, &st), 0);
        assert_true(S_ISLNK(st.st_mode)); /* left as it was */
        if (child_lines_with(r.err, "is taken (a symbolic link") != 1)
            fail_msg("want one line saying the name is taken:\n%s", r.err);
        char name[256];
        only_trace(&r, name);
        if (!strstr(r.err, name)) fail_msg("the message does not name the trace '%s':\n%s", name, r.err);
        tr_trace t;
        read_whole(path_in(&r, name), &t);
        assert_int_equal(tr_count(&t, "work"), 10);
        tr_free(&t);
        child_free(&r);
    }
    remove_dir(safe);
}

/* An explicit SCOPEPROF_OUTPUT that names something already there: a trace
 * of the user's own (an earlier run) is replaced, silently, as before; a
 * file of another user, or a FIFO another user made (opening it for writing
 * would wait for a reader for ever), is left alone and another name taken,
 * said on stderr. */
static void test_explicit_name_taken(void **state) {
    (void)state;
    child r;
    char dir[64], out[128], env[160];
    make_dir(dir, 0755);
    snprintf(out, sizeof out, "%s/run.sprof", dir);
    snprintf(env, sizeof env, "SCOPEPROF_OUTPUT=%s", out);
    /* An earlier run's trace: replaced. */
    for (int run = 0; run < 2; run++) {
        child_run_args(&r, "prog_safety", ARGS("record", run ? "7" : "3"), ENV(env, "SCOPEPROF_SUMMARY=0"));
        expect_exit(&r, 0);
        assert_int_equal(child_lines_with(r.err, "scopeprof:"), 0);
        child_free(&r);
    }
    tr_trace t;
    read_whole(out, &t);
    assert_int_equal(tr_count(&t, "work"), 7);
    tr_free(&t);
    if (geteuid() == 0) {
        static const char text[] = "nobody's notes\n";
        static const char *const what[] = {"another user's file", "not a regular file"};
        for (int k = 0; k < 2; k++) {
            unlink(out);
            if (k == 0) {
                write_file(out, text, 0666);
                assert_int_equal(chown(out, NOBODY, NOBODY), 0);
            } else {
                assert_int_equal(mkfifo(out, 0666), 0);
                assert_int_equal(chown(out, NOBODY, NOBODY), 0);
            }
            child_run_args(&r, "prog_safety", ARGS("record", "4"), ENV(env, "SCOPEPROF_SUMMARY=0"));
            expect_exit(&r, 0);
            if (k == 0) expect_content(out, text);
            char line[256];
            snprintf(line, sizeof line, "is taken (%s", what[k]);
            if (child_lines_with(r.err, line) != 1) fail_msg("want one line '%s':\n%s", line, r.err);
            char alt[160];
            snprintf(alt, sizeof alt, "%s/run.1.sprof", dir);
            read_whole(alt, &t);
            assert_int_equal(tr_count(&t, "work"), 4);
            tr_free(&t);
            unlink(alt);
            child_free(&r);
        }
    }
    remove_dir(dir);
}

/* ==== 2. Privileged programs ==================================================== */

/* A setuid-root copy of the program, run by nobody, with SCOPEPROF_OUTPUT
 * pointing into a directory only root may write, or at a file only root
 * may write, or unset (the working directory is nobody's to write, but a
 * file the privileged process made there would be root's): nothing is
 * created or changed anywhere, no exit table is printed (its times are the
 * privileged program's), and one line says why. The same program without
 * the setuid bit, run by nobody, writes its trace as usual. Before: the
 * variable was obeyed with root's rights. */
static void test_setuid_program(void **state) {
    (void)state;
    if (skip_unless_root()) skip();
    char bin[64], root_only[64], prog[PATH_MAX], suid[128], root_file[160], cmd[PATH_MAX + 512];
    make_dir(bin, 0755);
    make_dir(root_only, 0700);
    child_prog_path(prog, sizeof prog, "prog_safety", 1);
    snprintf(suid, sizeof suid, "%s/suid_prog", bin);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chown root:root '%s' && chmod 4755 '%s'", prog, suid, suid, suid);
    assert_int_equal(system(cmd), 0);
    snprintf(root_file, sizeof root_file, "%s/secret", root_only);
    static const char text[] = "root only\n";
    write_file(root_file, text, 0600);
    char in_dir[200], at_file[200];
    snprintf(in_dir, sizeof in_dir, "SCOPEPROF_OUTPUT=%s/made.sprof", root_only);
    snprintf(at_file, sizeof at_file, "SCOPEPROF_OUTPUT=%s", root_file);
    const char *const *envs[] = {ENV(in_dir), ENV(at_file), ENV("SCOPEPROF_OUTPUT=-"),
                                 ENV("SCOPEPROF_OUTPUT=-", "SCOPEPROF_SUMMARY=all")};
    for (size_t i = 0; i < sizeof envs / sizeof *envs; i++) {
        child r;
        child_run_user(&r, suid, NOBODY, NOBODY, ARGS("record", "20"), envs[i]);
        expect_exit(&r, 0);
        assert_string_equal(r.out, "done\n");
        assert_int_equal(child_count_files(&r), 0);
        assert_int_equal(summaries(r.err), 0);
        if (child_lines_with(r.err, "scopeprof: privileged process") != 1)
            fail_msg("want one line about the privileged process:\n%s", r.err);
        child_free(&r);
        DIR *d = opendir(root_only);
        int n = 0;
        for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
        closedir(d);
        assert_int_equal(n, 1); /* the secret alone */
        expect_content(root_file, text);
    }
    /* The same binary, not setuid: profiled as usual, as nobody. */
    snprintf(cmd, sizeof cmd, "chmod 0755 '%s'", suid);
    assert_int_equal(system(cmd), 0);
    child r;
    child_run_user(&r, suid, NOBODY, NOBODY, ARGS("record", "20"), ENV("SCOPEPROF_OUTPUT=-"));
    expect_exit(&r, 0);
    assert_int_equal(summaries(r.err), 1);
    char name[256];
    only_trace(&r, name);
    struct stat st;
    assert_int_equal(stat(path_in(&r, name), &st), 0);
    assert_int_equal(st.st_uid, NOBODY);
    child_free(&r);
    remove_dir(bin);
    remove_dir(root_only);
}

/* ==== 3 and 5. The environment is the program's ================================ */

/* The profiler neither changes the environment (setenv is not thread-safe:
 * a thread's getenv could read a freed array) nor passes anything to the
 * programs it runs: /usr/bin/env, run after scopes were recorded, shows no
 * SCOPEPROF_INTERNAL_STATE, and the 16 AT_RANDOM bytes (the stack canary's
 * and the pointer guard's seed) appear only where the program printed them.
 * Before: the variable was set at the first scope, with those bytes in it. */
static void test_environment_untouched(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_safety", ARGS("environ"), ENV("SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    if (child_lines_with(r.out, "environ unchanged") != 1) fail_msg("stdout:\n%s", r.out);
    assert_null(strstr(r.out, "SCOPEPROF_INTERNAL_STATE"));
    char hex[40] = "";
    const char *p = strstr(r.out, "random ");
    assert_non_null(p);
    assert_int_equal(sscanf(p, "random %32s", hex), 1);
    assert_int_equal(strlen(hex), 32);
    assert_int_equal(child_lines_with(r.out, hex), 1);
    assert_null(strstr(r.err, "Sanitizer"));
    child_free(&r);
}

/* ==== 6. Cancellation =========================================================== */

/* A thread cancelled while it records and flushes (the flush's write(2) is
 * a cancellation point) or writes past the budget: it is cancelled where
 * the program allows it, never inside the profiler, so no lock stays held:
 * the join returns, the program records on and exits with every event
 * after the join in a whole trace. Before: the registry's lock stayed held
 * by the dead thread and the program hung. */
static void expect_cancelled(const char *how, const char *const *env) {
    child r;
    child_run_args(&r, "prog_safety", ARGS("cancel", how), env);
    expect_exit(&r, 0);
    assert_string_equal(r.out, "joined\n");
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "after"), 10);
    assert_true(tr_count(&t, "cancelled") > 0);
    tr_free(&t);
    assert_null(strstr(r.err, "Sanitizer"));
    child_free(&r);
}

static void test_cancel_in_flush(void **state) {
    (void)state;
    expect_cancelled("flush", ENV("SCOPEPROF_SUMMARY=0"));
}

static void test_cancel_while_writing(void **state) {
    (void)state;
    expect_cancelled("record", ENV("SCOPEPROF_SUMMARY=0", "SCOPEPROF_WRITER=0", "SCOPEPROF_BUFFER_MB=1"));
}

/* The process's first scope, on a thread with a cancel pending: it starts
 * the background writer and sleeps until it runs, holding the chunk lock.
 * Before: cancelled in that sleep, the thread ended with the lock held, and
 * the next scope anywhere hung. */
static void test_cancel_first_scope(void **state) {
    (void)state;
    expect_cancelled("first", ENV("SCOPEPROF_SUMMARY=0"));
}

/* ==== 7. A file size limit ====================================================== */

/* `ulimit -f`: the write that passes it fails with EFBIG and raises SIGXFSZ,
 * whose default action kills the program. Whoever writes (the program's
 * thread at exit, at a flush, past the budget, another thread, the
 * background writer, a signal handler), the trace ends there with one line
 * and the program lives on: exit 0 with the table, or, for SIGTERM, killed
 * by SIGTERM as without the profiler. Before: killed by SIGXFSZ (exit 153
 * in a shell) in 5 of these 6 cases. */
static void expect_fsize(const char *how, const char *const *env) {
    child r;
    child_run_args(&r, "prog_safety", ARGS("fsize", how), env);
    if (strcmp(how, "signal") == 0) {
        if (r.timed_out || !r.signaled || r.sig != SIGTERM)
            fail_msg("%s: exited=%d code=%d signal=%d, want SIGTERM; stderr:\n%s", how, r.exited,
                     r.code, r.sig, r.err);
    } else {
        expect_exit(&r, 0);
        assert_string_equal(r.out, "done\n");
        assert_int_equal(summaries(r.err), 1);
    }
    /* One line naming the error (and the summary's last line, if printed,
     * saying the file is incomplete: ", incomplete: File too large)"). */
    if (child_lines_with(r.err, "': File too large") != 1)
        fail_msg("%s: want one line naming the error:\n%s", how, r.err);
    struct stat st;
    assert_int_equal(stat(r.trace, &st), 0);
    assert_true(st.st_size <= 64 * 1024);
    child_free(&r);
}

static void test_file_size_limit(void **state) {
    (void)state;
    expect_fsize("exit", NULL);
    expect_fsize("flush", NULL);
    expect_fsize("writer", ENV("SCOPEPROF_FLUSH_MS=50"));
    expect_fsize("exit", ENV("SCOPEPROF_WRITER=0", "SCOPEPROF_BUFFER_MB=1"));
    expect_fsize("thread", NULL);
    expect_fsize("signal", NULL);
}

/* ==== 12. A daemon's working directory ========================================== */

/* The default name is relative to the directory the program was in at its
 * first scope: a chdir after it (a daemon's chdir("/")) moves neither the
 * program's trace nor a forked child's. Before: both landed in the new
 * directory (or were lost, said nowhere useful, where it was not
 * writable). And the forked child starts with the parent's signal mask and
 * cancelability: before, it had every signal blocked (the fork handlers
 * held them for the fork and the child's never gave them back), so SIGTERM
 * or Ctrl-C did not stop it. */
static void test_daemon_chdir(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_safety", ARGS("daemon"), ENV("SCOPEPROF_OUTPUT=-", "SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    int pid = 0, st = -1;
    assert_int_equal(sscanf(r.out, "child %d status %d", &pid, &st), 2);
    assert_int_equal(st, 0);
    char names[8][256], sub[PATH_MAX + 300];
    int n = child_list_files(&r, ".sprof", names, 8);
    if (n != 2) fail_msg("%d trace files where the program started, want 2; stderr:\n%s", n, r.err);
    for (int i = 0; i < 2; i++) {
        tr_trace t;
        read_whole(path_in(&r, names[i]), &t);
        if ((int)t.pid == pid) {
            assert_int_equal(tr_count(&t, "child_work"), 3);
        } else {
            assert_int_equal(t.pid, r.pid);
            assert_int_equal(tr_count(&t, "before"), 1);
            assert_int_equal(tr_count(&t, "after"), 2);
        }
        tr_free(&t);
    }
    snprintf(sub, sizeof sub, "%s/sub", r.dir);
    child in_sub = r;
    snprintf(in_sub.dir, sizeof in_sub.dir, "%.40s/sub", r.dir);
    assert_int_equal(child_count_files(&in_sub), 0);
    rmdir(sub);
    child_free(&r);
}

/* ==== 4. Control characters in names ============================================ */

/* No byte of a C0 control (but the newline ending a line), DEL, or the C1
 * control CSI (U+009B) in `text`. */
static void expect_no_controls(const char *what, const char *text) {
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            fail_msg("%s: a raw control byte 0x%02x at offset %ld:\n%s", what, *p,
                     (long)((const char *)p - text), text);
}

/* The table in `text` has the hostile names escaped, each row on one line,
 * with its count. */
static void expect_escaped_table(const char *what, const char *text) {
    expect_no_controls(what, text);
    static const struct { const char *shown; const char *calls; } rows[] = {
        {"title\\x1b]0;owned\\x07", "2"}, {"clear\\x1b[2J", "1"}, {"two\\x0alines", "3"},
        {"csi\\u009b", "1"}, {"plain", "1"}};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char cells[20][64];
        int n = child_table_row(text, rows[i].shown, cells, 20);
        if (n < 2) fail_msg("%s: no row '%s':\n%s", what, rows[i].shown, text);
        if (strcmp(cells[n - 1], rows[i].calls) != 0)
            fail_msg("%s: row '%s' has %s calls, want %s", what, rows[i].shown, cells[n - 1], rows[i].calls);
    }
}

/* The reporter, built beside the tests (build/scopeprof). */
static void reporter_path(char *buf, size_t n) {
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(k > 0);
    exe[k] = 0;
    snprintf(buf, n, "%s/../../scopeprof", dirname(exe));
}

/* Names (and a thread name) that would retitle or clear the terminal, or
 * break the table with a newline: the exit table and `scopeprof table` (of
 * the .sprof, by name and by thread, and of Chrome JSON) print them escaped
 * (\xNN, \u009b). Before: printed raw. */
static void test_control_chars_escaped(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_safety", ARGS("names"), ENV("SCOPEPROF_ROW_LIMIT=0"));
    expect_exit(&r, 0);
    expect_escaped_table("exit table", r.err);
    char rep[PATH_MAX];
    reporter_path(rep, sizeof rep);
    child t;
    child_run_ex(&t, rep, 1, ARGS("table", r.trace), NULL);
    expect_exit(&t, 0);
    expect_escaped_table("scopeprof table", t.out);
    child_free(&t);
    child_run_ex(&t, rep, 1, ARGS("table", "--group-by", "thread", r.trace), NULL);
    expect_exit(&t, 0);
    expect_no_controls("scopeprof table --group-by thread", t.out);
    if (!strstr(t.out, "th\\x1b[1m")) fail_msg("no escaped thread name:\n%s", t.out);
    child_free(&t);
    /* The same names in Chrome trace JSON (\u escapes there). */
    char json[PATH_MAX + 300];
    snprintf(json, sizeof json, "%s/names.json", r.dir);
    write_file(json,
               "{\"traceEvents\":["
               "{\"ph\":\"X\",\"name\":\"title\\u001b]0;owned\\u0007\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":5},"
               "{\"ph\":\"X\",\"name\":\"title\\u001b]0;owned\\u0007\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5},"
               "{\"ph\":\"X\",\"name\":\"clear\\u001b[2J\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":5},"
               "{\"ph\":\"X\",\"name\":\"two\\nlines\",\"pid\":1,\"tid\":1,\"ts\":30,\"dur\":5},"
               "{\"ph\":\"X\",\"name\":\"two\\nlines\",\"pid\":1,\"tid\":1,\"ts\":40,\"dur\":5},"
               "{\"ph\":\"X\",\"name\":\"two\\nlines\",\"pid\":1,\"tid\":1,\"ts\":50,\"dur\":5},"
               "{\"ph\":\"X\",\"name\":\"csi\\u009b\",\"pid\":1,\"tid\":1,\"ts\":60,\"dur\":5},"
               "{\"ph\":\"X\",\"name\":\"plain\",\"pid\":1,\"tid\":1,\"ts\":70,\"dur\":5}]}",
               0644);
    child_run_ex(&t, rep, 1, ARGS("table", json), NULL);
    expect_exit(&t, 0);
    expect_escaped_table("scopeprof table (Chrome JSON)", t.out);
    child_free(&t);
    child_free(&r);
}

/* ==== 8. A single-threaded program's unshare(CLONE_NEWUSER) ===================== */

/* The kernel refuses unshare(CLONE_NEWUSER) (EINVAL) to a process with more
 * than one thread, and the background writer is one: documented, with the
 * way out, SCOPEPROF_WRITER=0, under which the call works after scopes were
 * recorded. (TSan runs a thread of its own: not there.) */
static void test_unshare_without_writer(void **state) {
    (void)state;
    if (strcmp(VARIANT, "_tsan") == 0) skip();
    child r;
    child_run_args(&r, "prog_safety", ARGS("unshare"), ENV("SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    assert_string_equal(r.out, "unshare: Invalid argument\n"); /* the documented limit */
    child_free(&r);
    child_run_args(&r, "prog_safety", ARGS("unshare"), ENV("SCOPEPROF_SUMMARY=0", "SCOPEPROF_WRITER=0"));
    expect_exit(&r, 0);
    if (strcmp(r.out, "unshare ok\n") != 0 && strstr(r.out, "Operation not permitted")) {
        child_free(&r); /* user namespaces are not allowed here at all */
        skip();
    }
    assert_string_equal(r.out, "unshare ok\n");
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "work"), 10);
    tr_free(&t);
    child_free(&r);
}

/* ==== 9. longjmp out of scopes =================================================== */

/* A longjmp out of three open scopes: they never close, which the scope
 * around them finds when it closes. The count and that scope are said at
 * exit; the depth is right again after it: later scopes are at depth 0. A
 * range left open across a scope's close is not counted. The scopes that
 * closed after the jump, at the depth it left, are the catching scope's
 * children: its self time leaves them out (exit table and reporter alike),
 * and `scopeprof stacks` puts them under it. Before: nothing said; then
 * their time was in "outer"'s self time as well as in their own rows, and
 * they were stacks of their own. */
static void test_longjmp_counted(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_safety", ARGS("longjmp"), ENV("SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    if (child_lines_with(r.err, "scopeprof: 3 scope(s) were left without closing") != 1 ||
        child_lines_with(r.err, "when 'outer' at") != 1)
        fail_msg("want one line counting 3 scopes, found when 'outer' closed:\n%s", r.err);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "outer"), 1);
    assert_int_equal(tr_count(&t, "after_jump"), 2);
    assert_int_equal(tr_count(&t, "pixel"), 0);
    for (uint64_t i = 0; i < t.nev; i++)
        if (strcmp(tr_name(&t, t.ev[i].site), "clean") == 0 || strcmp(tr_name(&t, t.ev[i].site), "outer") == 0)
            assert_int_equal(t.ev[i].depth & TR_DEPTH_MASK, 0);
    assert_int_equal(tr_count(&t, "range"), 1);
    assert_int_equal(t.end_missing, 3); /* the file says it lacks them (format 5.2) */
    tr_free(&t);
    child_free(&r);

    child_run_args(&r, "prog_safety", ARGS("longjmp"), ENV("SCOPEPROF_COMPENSATE=0"));
    expect_exit(&r, 0);
    child_row rows[16];
    int n = child_table_rows(r.err, rows, 16);
    const child_row *outer = child_find_row(rows, n, "outer"), *after = child_find_row(rows, n, "after_jump");
    assert_non_null(outer);
    assert_non_null(after);
    if (!child_about_equal(outer->self_us + after->total_us, outer->total_us))
        fail_msg("outer: self %.3f + after_jump %.3f != total %.3f:\n%s", outer->self_us, after->total_us,
                 outer->total_us, r.err);
    char rep[PATH_MAX];
    reporter_path(rep, sizeof rep);
    child s;
    child_run_ex(&s, rep, 1, ARGS("stacks", r.trace), NULL);
    expect_exit(&s, 0);
    if (!strstr(s.out, "outer;after_jump ") || strstr(s.out, "\nafter_jump ") || strncmp(s.out, "after_jump ", 11) == 0)
        fail_msg("after_jump not under outer:\n%s", s.out);
    /* and so does the reporter, from the file alone */
    if (child_lines_with(s.err, ": warning: 3 scope(s) that the program opened never closed, so they are not in "
                                "this file (a longjmp, a computed goto or exit() out of them") != 1)
        fail_msg("stacks, stderr:\n%s", s.err);
    child_free(&s);
    child_free(&r);

    /* A range that ends inside a scope it holds: every scope is in the file,
     * so the END chunk counts none missing (diff review: it counted the
     * range's level, and the reporter warned of a scope not in the file). */
    child_run_args(&r, "prog_safety", ARGS("range_inside"), ENV("SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "M") + tr_count(&t, "S") + tr_count(&t, "R"), 3);
    assert_int_equal(t.end_missing, 0);
    tr_free(&t);
    child_free(&r);

    /* A schedule: each file counts the scopes it lacks since it began. */
    child_run_args(&r, "prog_safety", ARGS("longjmp_steps"), ENV("SCOPEPROF_SCHEDULE=active=1,repeat=2"));
    expect_exit(&r, 0);
    char names[4][256];
    assert_int_equal(child_list_files(&r, ".sprof", names, 4), 2);
    for (int k = 0; k < 2; k++) {
        read_whole(path_in(&r, names[k]), &t);
        assert_int_equal(tr_count(&t, "outer"), k == 0);
        assert_int_equal(tr_count(&t, "clean"), k == 0 ? 0 : 3);
        assert_int_equal(t.end_missing, k == 0 ? 3 : 0);
        tr_free(&t);
    }
    child_free(&r);

    /* Not a range that outlived its scope: main{ f{ BEGIN R } g{} END R }
     * keeps R out of main's children (it overlaps f and g), in the table
     * (main's self leaves out f and g only) and in the stacks. */
    child_run_args(&r, "prog_safety", ARGS("range_over"), ENV("SCOPEPROF_COMPENSATE=0"));
    expect_exit(&r, 0);
    n = child_table_rows(r.err, rows, 16);
    const child_row *m = child_find_row(rows, n, "main"), *f = child_find_row(rows, n, "f"),
                    *g = child_find_row(rows, n, "g");
    assert_non_null(m);
    assert_non_null(f);
    assert_non_null(g);
    if (!child_about_equal(m->self_us + f->total_us + g->total_us, m->total_us))
        fail_msg("main: self %.3f + f %.3f + g %.3f != total %.3f:\n%s", m->self_us, f->total_us, g->total_us,
                 m->total_us, r.err);
    child_run_ex(&s, rep, 1, ARGS("stacks", r.trace), NULL);
    expect_exit(&s, 0);
    if (strstr(s.out, "main;R ") || !strstr(s.out, "main;f ") || !strstr(s.out, "main;g "))
        fail_msg("R under main, or f or g not:\n%s", s.out);
    child_free(&s);
    child_free(&r);
}

/* ==== 13. clone() without fork(); a pipe given to `scopeprof html` =========== */

/* A child made by clone() (no CLONE_VM) has a copy of the registry but no
 * fork handler ran: its scopes cannot be recorded; one line says so, and
 * nothing of it reaches the parent's trace. Before: dropped without a
 * word. */
static void test_clone_said(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_safety", ARGS("clone"), ENV("SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    int pid = 0, st = -1;
    assert_int_equal(sscanf(r.out, "clone %d status %d", &pid, &st), 2);
    assert_int_equal(st, 0);
    char line[96];
    snprintf(line, sizeof line, "scopeprof: process %d was made by clone() without fork()", pid);
    if (child_lines_with(r.err, line) != 1) fail_msg("want one line '%s':\n%s", line, r.err);
    tr_trace t;
    read_whole(r.trace, &t);
    assert_int_equal(tr_count(&t, "parent"), 10);
    assert_int_equal(tr_count(&t, "clone_child"), 0);
    tr_free(&t);
    child_free(&r);
}

/* `scopeprof html` reads each input twice (the table, then stacks and the
 * timeline), and so does `--steps`: a pipe (`<(cat x.sprof)`, a FIFO) is
 * refused, naming it, exit 2, as standard input is. Before: html exited 0
 * with an empty flame graph and timeline (here, with a FIFO, its second
 * pass waited for a writer for ever). */
/* A child that writes the file `path` into the FIFO, as `cat` would. */
static pid_t feed_fifo(const char *fifo, const char *path) {
    pid_t feeder = fork();
    if (feeder == 0) {
        char *data = child_slurp(path);
        struct stat st;
        int fd = open(fifo, O_WRONLY);
        if (fd >= 0 && stat(path, &st) == 0) {
            ssize_t w = write(fd, data, (size_t)st.st_size);
            (void)w;
        }
        _exit(0);
    }
    return feeder;
}

static void test_html_refuses_pipe(void **state) {
    (void)state;
    child r;
    child_run_args(&r, "prog_safety", ARGS("record", "50"), ENV("SCOPEPROF_SUMMARY=0"));
    expect_exit(&r, 0);
    char fifo[PATH_MAX + 300], out[PATH_MAX + 300], rep[PATH_MAX];
    snprintf(fifo, sizeof fifo, "%s/pipe.sprof", r.dir);
    snprintf(out, sizeof out, "%s/page.html", r.dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t feeder = feed_fifo(fifo, r.trace);
    reporter_path(rep, sizeof rep);
    child h;
    child_run_ex(&h, rep, 1, ARGS("html", fifo, "-o", out), NULL);
    kill(feeder, SIGKILL); /* unblocked if the reporter never opened it */
    waitpid(feeder, NULL, 0);
    expect_exit(&h, 2);
    char want[PATH_MAX + 400];
    snprintf(want, sizeof want, "%s: not a regular file", fifo);
    if (child_lines_with(h.err, want) != 1) fail_msg("want a line '%s':\n%s", want, h.err);
    assert_int_equal(access(out, F_OK), -1);
    child_free(&h);
    /* `table --steps` also reads each file twice. */
    child_run_ex(&h, rep, 1, ARGS("table", "--steps", "0:1", fifo), NULL);
    expect_exit(&h, 2);
    if (child_lines_with(h.err, want) != 1) fail_msg("want a line '%s':\n%s", want, h.err);
    child_free(&h);
    /* `table` and `stacks` read a FIFO once, as a pipe: the probes that read
     * files twice (each rank once, clocks) do not open it (one that did
     * took the feeder's data, and the command waited for ever). */
    for (int c = 0; c < 2; c++) {
        pid_t f = feed_fifo(fifo, r.trace);
        child_run_ex(&h, rep, 1, c ? ARGS("stacks", fifo) : ARGS("table", fifo), NULL);
        kill(f, SIGKILL);
        waitpid(f, NULL, 0);
        expect_exit(&h, 0);
        if (!strstr(h.out, "work")) fail_msg("%s of a FIFO: no scope 'work':\n%s", c ? "stacks" : "table", h.out);
        child_free(&h);
    }
    unlink(fifo);
    child_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_symlink_not_followed),
        cmocka_unit_test(test_explicit_name_taken),
        cmocka_unit_test(test_setuid_program),
        cmocka_unit_test(test_environment_untouched),
        cmocka_unit_test(test_cancel_in_flush),
        cmocka_unit_test(test_cancel_while_writing),
        cmocka_unit_test(test_cancel_first_scope),
        cmocka_unit_test(test_file_size_limit),
        cmocka_unit_test(test_daemon_chdir),
        cmocka_unit_test(test_control_chars_escaped),
        cmocka_unit_test(test_unshare_without_writer),
        cmocka_unit_test(test_longjmp_counted),
        cmocka_unit_test(test_clone_said),
        cmocka_unit_test(test_html_refuses_pipe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
