# rules for reporter/ (see the top Makefile)
