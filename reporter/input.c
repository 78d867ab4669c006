/* input.c -- see input.h. */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chrome.h"
#include "gz.h"

int sp_is_chrome(const void *head, size_t n) {
    const unsigned char *p = head;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t') continue;
        return p[i] == '{' || p[i] == '[';
    }
    return 0;
}

int sp_read_any_mem(const void *data, size_t n, const sp_callbacks *cb, sp_result *res) {
    return sp_is_chrome(data, n < 4096 ? n : 4096) ? sp_read_chrome_mem(data, n, cb, res)
                                                   : sp_read_mem(data, n, cb, res);
}

/* A gzip stream: inflated into a temporary file, then read as a regular
 * file of whichever format it holds. */
static int read_gz(int fd, const unsigned char *head, size_t n, const sp_callbacks *cb, sp_result *res) {
    int bad;
    char why[sizeof res->msg];
    int t = sp_gz_inflate(fd, head, n, res, &bad, why, sizeof why);
    if (t < 0) return res->status;
    unsigned char h[4096];
    ssize_t got;
    do got = read(t, h, sizeof h);
    while (got < 0 && errno == EINTR);
    int chrome = got > 0 && sp_is_chrome(h, (size_t)got), st;
    if (lseek(t, 0, SEEK_SET) != 0) {
        close(t);
        memset(res, 0, sizeof *res);
        snprintf(res->msg, sizeof res->msg, "gzip input: cannot rewind the temporary file");
        return res->status = SP_IOERR;
    }
    st = chrome ? sp_read_chrome_fd(t, NULL, 0, cb, res) : sp_read_fd(t, NULL, 0, cb, res);
    close(t);
    /* A damaged stream is named first, whatever the reader thought of what
     * inflated from it: a reader's complaint about that (garbage taken for a
     * version, an empty file) follows, and its status stands if worse. */
    if (bad != SP_OK) {
        char said[sizeof res->msg];
        int worse = st != SP_OK && st != SP_TRUNCATED;
        memcpy(said, res->msg, sizeof said);
        res->msg[0] = 0;
        const char *part[3] = {why, worse ? "; then: " : "", worse ? said : ""};
        for (int i = 0; i < 3; i++) { /* appended, cut to fit */
            size_t l = strlen(res->msg), k = strlen(part[i]);
            if (k > sizeof res->msg - 1 - l) k = sizeof res->msg - 1 - l;
            memcpy(res->msg + l, part[i], k);
            res->msg[l + k] = 0;
        }
        if (!worse) {
            res->status = st = bad;
            if (bad == SP_TRUNCATED) res->offset = res->good_end;
        }
    }
    return st;
}

int sp_read_any(const char *path, const sp_callbacks *cb, sp_result *res) {
    int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return sp_read_file(path, cb, res); /* its message */
    unsigned char head[4096];
    ssize_t got;
    size_t n = 0;
    struct stat sb;
    int regular = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
    if (!regular && S_ISDIR(sb.st_mode)) { /* read() fails with EISDIR: not "empty" */
        close(fd);
        memset(res, 0, sizeof *res);
        snprintf(res->msg, sizeof res->msg, "is a directory, not a trace file");
        return res->status = SP_IOERR;
    }
    /* Enough of the head to see the first non-space byte. */
    while (n < sizeof head) {
        do got = read(fd, head + n, sizeof head - n);
        while (got < 0 && errno == EINTR);
        if (got <= 0) break;
        size_t i = n;
        n += (size_t)got;
        while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) i++;
        if (i < n) break;
    }
    if (sp_gz_magic(head, n)) {
        int st = read_gz(fd, head, n, cb, res);
        if (fd > 0) close(fd);
        return st;
    }
    int chrome = sp_is_chrome(head, n), st;
    if (regular && (fd > 0 || lseek(fd, 0, SEEK_SET) == 0)) {
        /* The reader opens the file again; standard input is rewound, as
         * the head was taken from it. */
        if (fd > 0) close(fd);
        return chrome ? sp_read_chrome_file(path, cb, res) : sp_read_file(path, cb, res);
    }
    if (chrome) {
        st = sp_read_chrome_fd(fd, head, n, cb, res);
    } else {
        /* A native trace from a pipe: streamed, the head handed back first. */
        st = sp_read_fd(fd, head, n, cb, res);
    }
    if (fd > 0) close(fd);
    return st;
}

int sp_input_rereadable(const char *path) {
    struct stat sb;
    if (strcmp(path, "-") == 0) return 0;
    return stat(path, &sb) != 0 || !(S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode) || S_ISCHR(sb.st_mode));
}

/* ---- After reading ---------------------------------------------------------- */
void sp_warn_incomplete(const char *path, const sp_result *res, FILE *err) {
    if (res->unmatched)
        fprintf(err, "%s: warning: %llu begin (\"B\") or end (\"E\") event(s) without their other "
                "half, left out of the ranges\n", path, (unsigned long long)res->unmatched);
    if (res->backwards)
        fprintf(err, "%s: warning: offset %llu: %llu record(s) end before they start (scopes, GPU intervals "
                "or steps: a clock that went back), each taken as 0 long\n", path,
                (unsigned long long)res->backwards_offset, (unsigned long long)res->backwards);
    if (res->gpu_unpaired)
        fprintf(err, "%s: %llu GPU record(s) matched no scope (their GPU time is left out)\n", path,
                (unsigned long long)res->gpu_unpaired);
    if (res->notes & SP_NOTE_LATE)
        fprintf(err, "%s: warning: read once (a pipe), a thread's events came out of time order after "
                "some were counted: their self times and memory may be off; read the file itself "
                "(it is read twice) for PyTorch's numbers\n", path);
    if (res->notes & SP_NOTE_PIPE_GPU)
        fprintf(err, "%s: note: read once (a pipe), kernel and memcpy time is in the device rows only: "
                "no op has Self GPU or GPU total, no launch arrows; read the file itself (it is read "
                "twice) for them\n", path);
    if (res->notes & SP_NOTE_AMBIGUOUS)
        fprintf(err, "%s: note: runtime calls of more than one process share correlation ids (a merged "
                "trace): their kernels' time is in the device rows only, credited to no op\n", path);
    if (res->notes & SP_NOTE_CTRL)
        fprintf(err, "%s: warning: raw control characters (newlines) inside JSON strings, which "
                "strict JSON forbids, were taken as they are (as Python's json.loads(strict=False))\n",
                path);
    if (res->missing)
        fprintf(err, "%s: warning: %llu scope(s) that the program opened never closed, so they are not in "
                "this file (a longjmp, a computed goto or exit() out of them, or still open when the program "
                "ended: a thread's endless loop, a signal, a crash); a scope a jump left counts as self time "
                "of the scope around it (the run's exit lines said more)\n", path, (unsigned long long)res->missing);
    if (!res->native || res->saw_end || (res->status != SP_OK && res->status != SP_TRUNCATED))
        return;
    fprintf(err, "%s: warning: no end record: the run did not finish (killed, _exit, still "
            "running, or its writes failed: a full disk); read %llu event(s) up to byte %llu; "
            "missing: the events not yet flushed when it stopped, scopes still open then, and the "
            "final memory records\n",
            path, (unsigned long long)res->events, (unsigned long long)res->good_end);
}
