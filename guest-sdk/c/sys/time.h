/*
 * weft's <sys/time.h>: wasi-libc's, and the interval timers, which
 * wasi-libc leaves out because WASI has no signals. weft runs the
 * real-time timer (`ITIMER_REAL`, `SIGALRM`) on its virtual clock
 * (guest-sdk/c/weft_signal.c).
 */
#ifndef WEFT_SYS_TIME_H
#define WEFT_SYS_TIME_H
#pragma GCC system_header

#include_next <sys/time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ITIMER_REAL 0
#define ITIMER_VIRTUAL 1
#define ITIMER_PROF 2

struct itimerval {
    struct timeval it_interval;
    struct timeval it_value;
};

int getitimer(int, struct itimerval *);
int setitimer(int, const struct itimerval *__restrict, struct itimerval *__restrict);

#ifdef __cplusplus
}
#endif

#endif
