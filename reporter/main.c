/* main.c -- the scopeprof reporter. The command line is sp_main (cli.c), so
 * that the tests can run the same commands in-process. */
#include <stdio.h>

#include "cli.h"

int main(int argc, char **argv) { return sp_main(argc, argv, stdout, stderr); }
