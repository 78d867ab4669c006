# rules for bench/ (see the top Makefile)
