/* cells.h -- the formats `table` and `diff` write (--format), and text put
 * into one cell of a CSV or Markdown table, escaped as each format needs, so
 * that a scope's name (any bytes a program gave it) stays one cell and is
 * shown as text. */
#ifndef SP_CELLS_H
#define SP_CELLS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { SP_FORMAT_TEXT, SP_FORMAT_CSV, SP_FORMAT_JSON, SP_FORMAT_MARKDOWN };
/* --format F (NULL: text): SP_FORMAT_*, or -1 after saying which there are. */
int sp_format_parse(const char *f, FILE *err);
/* Text and Markdown are read by people (a default row limit applies). */
#define SP_FORMAT_HUMAN(f) ((f) == SP_FORMAT_TEXT || (f) == SP_FORMAT_MARKDOWN)

/* The line that says a table was cut by --limit (0: not cut):
 * "... N more rows (--limit L of M; --limit 0 shows all)" ("1 more row"),
 * without a line break, into b; returns 0 when no row was cut (b is then
 * empty). */
int sp_more_rows(char *b, size_t n, uint32_t nrows, long limit);

/* RFC 4180: a field holding a comma, quote or line break is quoted, its
 * quotes doubled. */
void sp_csv_field(FILE *out, const char *s);
/* A cell of a GitHub/CommonMark table: '|' and the characters that start
 * emphasis, code, links or HTML (\ ` * _ [ ] < > ~ &) backslash-escaped, so
 * that a name is never markup in a pull-request comment; line breaks and
 * other control characters, which would end the row, become spaces. */
void sp_md_cell(FILE *out, const char *s);

#endif
