# rules for samples/ (see the top Makefile)
