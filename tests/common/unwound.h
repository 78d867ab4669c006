/* unwound.h -- for test programs whose threads are cancelled: a cleanup
 * handler to push around the cancellable code,
 *     pthread_cleanup_push(unpoison_unwound, NULL); ... pthread_cleanup_pop(0);
 * Cancellation unwinds the thread's frames from inside libc, where no
 * instrumented code clears their AddressSanitizer redzones; clang 14's ASan
 * then trips over them in its own thread teardown (a false
 * "stack-buffer-overflow" in sigaltstack). The handler, which runs during
 * that unwind, clears them as a noreturn call would. Without ASan it does
 * nothing. */
#ifndef TESTS_COMMON_UNWOUND_H
#define TESTS_COMMON_UNWOUND_H
#if defined(__SANITIZE_ADDRESS__)
#define UNWOUND_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNWOUND_ASAN 1
#endif
#endif
#ifdef UNWOUND_ASAN
void __asan_handle_no_return(void);
static void unpoison_unwound(void *arg) {
    (void)arg;
    __asan_handle_no_return();
}
#else
static void unpoison_unwound(void *arg) { (void)arg; }
#endif
#endif
