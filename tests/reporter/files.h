/* files.h -- what the reporter's cmocka suites share: a scratch folder
 * (`dir`, made by each suite's setup), the text a stream received, and the
 * reporter run in-process. Include it after cmocka.h and cli.h. */
#ifndef FILES_H
#define FILES_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static char dir[64];

/* Make the scratch folder, /tmp/SUITE.XXXXXX (each suite's setup); 0 or -1. */
static int files_setup(const char *suite) {
    snprintf(dir, sizeof dir, "/tmp/%s.XXXXXX", suite);
    return mkdtemp(dir) ? 0 : -1;
}

/* Remove it, as a cmocka group teardown. */
static int files_teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* DIR/NAME, in one of 8 rotating buffers (a call may take several). */
static const char *path(const char *name) {
    static char p[8][256];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* The whole of a temporary stream, malloc'd; the stream is closed. */
static char *slurp(FILE *f) {
    fflush(f);
    long n = ftell(f);
    char *s = malloc((size_t)n + 1);
    rewind(f);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

/* Run `scopeprof ARGS...` (NULL-terminated); *out and *err are malloc'd. */
static int run(char **out, char **err, ...) {
    char *argv[32] = {"scopeprof"};
    int argc = 1;
    va_list ap;
    va_start(ap, err);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;) argv[argc++] = a;
    va_end(ap);
    FILE *o = tmpfile(), *e = tmpfile();
    assert_non_null(o);
    assert_non_null(e);
    int rc = sp_main(argc, argv, o, e);
    *out = slurp(o);
    *err = slurp(e);
    return rc;
}

#endif
