/* output.c -- see output.h. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exit.h"
#include "gz.h" /* sp_output_open: plain or gzip (OUT.gz) */

/* Whether `st` is the file an input names ("-": standard input). */
static int is_input(const struct stat *st, const char *input) {
    struct stat in;
    int ok = strcmp(input, "-") == 0 ? fstat(0, &in) : stat(input, &in);
    return ok == 0 && in.st_dev == st->st_dev && in.st_ino == st->st_ino;
}

/* The temporary file beside `final`: same directory, so that rename() is
 * atomic and never crosses file systems. */
static char *temp_name(const char *final) {
    char *d = strdup(final), *b = strdup(final), *t = NULL;
    if (d && b) {
        const char *dir = dirname(d), *base = basename(b);
        size_t n = strlen(dir) + strlen(base) + 32;
        t = malloc(n);
        if (t) snprintf(t, n, "%s/.%s.tmp.XXXXXX", dir, base);
    }
    free(d);
    free(b);
    return t;
}

int sp_dest_open(sp_dest *o, const char *path, char *const *inputs, int ninputs, FILE *err) {
    memset(o, 0, sizeof *o);
    o->path = path;
#ifdef SP_NO_ZLIB
    if (sp_output_is_gz(path)) {
        fprintf(err, "scopeprof: cannot write '%s' gzip-compressed: this scopeprof was built without "
                "zlib (Debian package zlib1g-dev); write it plain and gzip it\n", path);
        return SP_EXIT_OUTPUT;
    }
#endif
    struct stat st;
    int exists = o->existed = stat(path, &st) == 0;
    for (int i = 0; exists && i < ninputs; i++)
        if (is_input(&st, inputs[i])) {
            fprintf(err, "scopeprof: the output '%s' is the input '%s': refusing to overwrite it\n",
                    path, inputs[i]);
            return SP_EXIT_USAGE;
        }
    /* Devices, pipes and the /dev/stdout kind of name: written in place
     * (there is nothing to keep, or no directory to put a temporary in). */
    if ((exists && !S_ISREG(st.st_mode)) || strncmp(path, "/dev/", 5) == 0 ||
        strncmp(path, "/proc/", 6) == 0) {
        o->f = sp_output_open(path, sp_output_is_gz(path));
        if (!o->f) {
            fprintf(err, "scopeprof: cannot open the output '%s': %s\n", path, strerror(errno));
            return SP_EXIT_OUTPUT;
        }
        return 0;
    }
    /* A symbolic link stays one: its target is replaced. */
    char real[PATH_MAX];
    o->final = strdup(exists && realpath(path, real) ? real : path);
    o->tmp = o->final ? temp_name(o->final) : NULL;
    int fd = o->tmp ? mkstemp(o->tmp) : -1;
    if (fd < 0) {
        int e = o->tmp ? errno : ENOMEM;
        fprintf(err, "scopeprof: cannot create the output '%s': %s\n", path, strerror(e));
        free(o->final);
        free(o->tmp);
        return SP_EXIT_OUTPUT;
    }
    /* The mode a plain create would give (mkstemp makes 0600), or the
     * replaced file's; best effort: the output is good without it. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask) != 0) errno = 0;
    close(fd);
    /* Compressed or not by OUT's name, whatever the temporary's. */
    o->f = sp_output_open(o->tmp, sp_output_is_gz(path));
    if (!o->f) {
        fprintf(err, "scopeprof: cannot create the output '%s': %s\n", path, strerror(errno));
        unlink(o->tmp);
        free(o->final);
        free(o->tmp);
        return SP_EXIT_OUTPUT;
    }
    return 0;
}

void sp_output_failed(FILE *err, const char *name, int e) {
    fprintf(err, "scopeprof: cannot write the output '%s': %s\n", name,
            e ? strerror(e) : "a write failed");
}

int sp_dest_close(sp_dest *o, int keep, FILE *err) {
    /* errno names the cause only when this flush or close is what failed
     * (an earlier failed write leaves just the error flag). */
    int e = 0, bad = ferror(o->f);
    if (fflush(o->f) != 0) bad = 1, e = errno;
    if (fclose(o->f) != 0 && !e) bad = 1, e = errno;
    int rc = 0;
    if (bad) {
        if (err)
            fprintf(err, "scopeprof: cannot write the output '%s': %s%s\n", o->path,
                    e ? strerror(e) : "a write failed", o->tmp ? " (left unchanged)" : "");
        rc = -1;
    } else if (o->tmp && keep && rename(o->tmp, o->final) != 0) {
        if (err)
            fprintf(err, "scopeprof: cannot write the output '%s': %s (left unchanged)\n", o->path,
                    strerror(errno));
        rc = -1;
    } else if (o->tmp && !keep && err) {
        fprintf(err, "scopeprof: the output '%s' is left unchanged (see the errors above)\n", o->path);
    }
    if (o->tmp && (rc || !keep)) unlink(o->tmp);
    free(o->final);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return rc;
}
