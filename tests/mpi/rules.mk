# MPI (issue 23): real jobs under Debian's Open MPI (openmpi-bin,
# libopenmpi-dev: tests/deps.sh installs them). Builds under $(BUILD)/tests/mpi:
#   prog_mpi[_asan]   a user's MPI program, mpicc -DPROFILE_ENABLE (mpi.h
#                     before the header): the job table at MPI_Finalize, the
#                     clock offsets, a straggler rank; _asan: ASan+UBSan
#   prog_rank         a program without MPI, its rank from the launcher's
#                     variable: a shared SCOPEPROF_OUTPUT, realtime alignment
#   prog_unseen       an MPI program linked with impl_plain.o (its implementation
#                     never saw mpi.h): rank 0 says so at exit
#   prog_mixed        the same with the implementation in main (mpi.h first)
#                     and a library's own copy without it: nothing to say
#   impl_*.o          the implementation compiled three ways, for nm: without
#                     mpi.h (nothing MPI), with it (the PMPI wrappers), with it
#                     and SCOPEPROF_NO_MPI (nothing MPI)
#   mpi.sh            the jobs, and what the reporter makes of their files
# mpicc compiles with $(CC) (OMPI_CC), so the clang pass builds them with clang.
MPI_T := $(BUILD)/tests/mpi
MPICC ?= mpicc
MPI_CC = OMPI_CC=$(CC) $(MPICC)

$(MPI_T)/prog_mpi: tests/mpi/prog_mpi.c $(HEADER)
	@mkdir -p $(@D)
	$(MPI_CC) $(ALL_CFLAGS) -DPROFILE_ENABLE $< -o $@ $(LDLIBS)

$(MPI_T)/prog_mpi_asan: tests/mpi/prog_mpi.c $(HEADER)
	@mkdir -p $(@D)
	$(MPI_CC) $(CSTD) $(WARN) $(ASAN_FLAGS) -Iinclude -DPROFILE_ENABLE $< -o $@ $(LDLIBS)

$(MPI_T)/prog_rank: tests/mpi/prog_rank.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE $< -o $@ $(LDLIBS)

$(MPI_T)/prog_unseen: tests/mpi/prog_unseen.c $(MPI_T)/impl_plain.o $(HEADER)
	@mkdir -p $(@D)
	$(MPI_CC) $(ALL_CFLAGS) -DPROFILE_ENABLE $< $(MPI_T)/impl_plain.o -o $@ $(LDLIBS)

# The same program with the implementation in main (mpi.h first) and a
# library's own copy built without mpi.h: the process takes part in MPI.
$(MPI_T)/libimpl_plain.so: tests/mpi/impl.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -fPIC -shared $< -o $@ $(LDLIBS)
$(MPI_T)/prog_mixed: tests/mpi/prog_unseen.c $(MPI_T)/libimpl_plain.so $(HEADER)
	@mkdir -p $(@D)
	$(MPI_CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -DSCOPEPROF_IMPLEMENTATION $< -o $@ -L$(MPI_T) -limpl_plain \
	  -Wl,-rpath,$(abspath $(MPI_T)) $(LDLIBS)

# One translation unit that defines the implementation: plain C, then with
# <mpi.h> first, then with <mpi.h> and SCOPEPROF_NO_MPI.
$(MPI_T)/impl_plain.o: tests/mpi/impl.c $(HEADER)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -c $< -o $@
$(MPI_T)/impl_mpi.o: tests/mpi/impl.c $(HEADER)
	@mkdir -p $(@D)
	$(MPI_CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -DWITH_MPI_H -c $< -o $@
$(MPI_T)/impl_nompi.o: tests/mpi/impl.c $(HEADER)
	@mkdir -p $(@D)
	$(MPI_CC) $(ALL_CFLAGS) -DPROFILE_ENABLE -DWITH_MPI_H -DSCOPEPROF_NO_MPI -c $< -o $@

TEST_BINS += $(MPI_T)/prog_mpi $(MPI_T)/prog_mpi_asan $(MPI_T)/prog_rank $(MPI_T)/prog_unseen $(MPI_T)/prog_mixed $(BUILD)/scopeprof \
             $(MPI_T)/impl_plain.o $(MPI_T)/impl_mpi.o $(MPI_T)/impl_nompi.o
TEST_CMDS += tests/mpi/mpi.sh
