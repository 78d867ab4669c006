/* end.h: the last part. This inclusion's implementation is done; the
 * warnings the header silenced for its own lines are back. */
#undef SCOPEPROF__IMPL
#pragma GCC diagnostic pop /* pushed in api.h */
